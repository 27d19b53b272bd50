//! Ranking behaviour: tiers, connector words, no-match, partial analysis,
//! the safety filter and the window.

use super::*;
use crate::op::Op;
use connecta_core::catalog::{Catalog, ToolDef};
use connecta_core::policy::Annotations;
use serde_json::json;
use std::sync::Arc;

fn tool(name: &str, desc: &str, ro: bool) -> ToolDef {
    ToolDef {
        name: name.into(),
        title: None,
        description: Some(desc.into()),
        input_schema: connecta_core::Schema::from(json!({"type":"object"})),
        output_schema: None,
        annotations: Annotations {
            read_only_hint: Some(ro),
            ..Annotations::default()
        },
    }
}

fn fixture() -> Vec<CatalogIndex> {
    let gh = Catalog::new(
        "gh",
        vec![
            tool("list_issues", "List issues in a repository", true),
            tool("create_issue", "Create a new issue", false),
            tool("get_pull_request", "Get one pull request", true),
            tool("list_issue_comments", "List comments on an issue", true),
        ],
    );
    let notes = Catalog::new(
        "notes",
        vec![tool("search_notes", "Search notes by text", true)],
    );
    vec![
        CatalogIndex::with_description(Arc::new(gh), Some("GitHub code hosting")),
        CatalogIndex::build(Arc::new(notes)),
    ]
}

/// Every match of `query` over `indexes` (no safety filter, a 100-row window).
fn rank_all(indexes: &[&CatalogIndex], query: &str) -> Ranked {
    rank(
        indexes,
        &SearchQuery {
            query,
            safety: Safety::All,
            scoped: false,
        },
        100,
    )
}

fn tool_name<'a>(indexes: &[&'a CatalogIndex], hit: &Hit) -> &'a str {
    &indexes[hit.source].catalog().tools()[hit.tool as usize].name
}

/// The names of `r`'s hits, in rank order.
fn hit_names<'a>(indexes: &[&'a CatalogIndex], r: &Ranked) -> Vec<&'a str> {
    r.hits.iter().map(|h| tool_name(indexes, h)).collect()
}

fn run(query: &str) -> (Vec<String>, Ranked) {
    let idx = fixture();
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let r = rank_all(&refs, query);
    let names = r
        .hits
        .iter()
        .map(|h| tool_name(&refs, h).to_owned())
        .collect();
    (names, r)
}

#[test]
fn complete_name_outranks_longer_names() {
    let (names, r) = run("list issues");
    assert_eq!(names[0], "list_issues");
    assert_eq!(r.mode, MatchMode::All);
}

#[test]
fn exact_name_is_the_first_tier() {
    let (names, r) = run("create_issue");
    assert_eq!(names[0], "create_issue");
    assert_eq!(r.hits[0].tier, 0);
    let (names, _) = run("gh.create_issue");
    assert_eq!(names[0], "create_issue");
}

#[test]
fn connector_words_match_every_tool_of_the_connector() {
    let (names, _) = run("github");
    assert_eq!(names.len(), 4);
}

#[test]
fn stopword_only_query_is_no_match_and_empty_browses() {
    let (_, r) = run("how do I do it");
    assert_eq!(r.mode, MatchMode::None);
    assert_eq!(r.total, 0);
    assert!(r.analysis.ignored.contains(&"how".to_string()));
    let (names, r) = run("  ");
    assert_eq!(r.mode, MatchMode::Browse);
    assert_eq!(names.len(), 5);
}

#[test]
fn partial_reports_represented_and_unmatched_words() {
    let (names, r) = run("list issue comments zebra");
    assert_eq!(r.mode, MatchMode::Partial);
    assert_eq!(names[0], "list_issue_comments");
    assert_eq!(r.analysis.unmatched, vec!["zebra".to_string()]);
    assert!(r.analysis.represented.contains(&"comments".to_string()));
}

#[test]
fn weak_partial_matches_are_a_clear_no_match() {
    let (_, r) = run("zebra giraffe weather issue");
    assert_eq!(r.mode, MatchMode::None);
    assert_eq!(r.analysis.unmatched.len(), 4);
}

#[test]
fn safety_filter_uses_the_call_path_predicate() {
    let idx = fixture();
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    for safety in [Safety::ReadOnly, Safety::ApprovalRequired] {
        let r = rank(
            &refs,
            &SearchQuery {
                query: "issue",
                safety,
                scoped: false,
            },
            100,
        );
        for h in &r.hits {
            let def = &refs[h.source].catalog().tools()[h.tool as usize];
            assert!(safety.admits(&def.annotations));
        }
        assert!(r.total > 0);
    }
}

#[test]
fn numbers_score_when_present_and_never_count_as_missing() {
    let (names, r) = run("issue 177");
    assert_eq!(r.mode, MatchMode::All);
    assert!(names.contains(&"list_issues".to_string()));
}

#[test]
fn window_returns_the_same_prefix_as_a_full_sort() {
    let idx = fixture();
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let q = SearchQuery {
        query: "github issue",
        safety: Safety::All,
        scoped: false,
    };
    let full = rank(&refs, &q, 100);
    let two = rank(&refs, &q, 2);
    assert_eq!(two.total, full.total);
    assert_eq!(two.hits, full.hits[..2]);
}

fn run_on(tools: Vec<ToolDef>, query: &str) -> Vec<String> {
    let idx = CatalogIndex::build(Arc::new(Catalog::new("tasks", tools)));
    let refs = [&idx];
    let r = rank_all(&refs, query);
    r.hits
        .iter()
        .map(|h| tool_name(&refs, h).to_owned())
        .collect()
}

/// The first row `query` finds among `tools` is `expected`.
fn assert_first(tools: &[ToolDef], query: &str, expected: &str) {
    let names = run_on(tools.to_vec(), query);
    assert_eq!(
        names.first().map(String::as_str),
        Some(expected),
        "{query}: {names:?}"
    );
}

fn task_tools() -> Vec<ToolDef> {
    vec![
        tool("get_task", "Get one task by id.", true),
        tool("create_task", "Create a task in a project.", false),
        tool("update_task", "Change a task's fields.", false),
        tool("delete_task", "Delete a task.", false),
        tool("search_tasks", "Search tasks by text.", true),
    ]
}

#[test]
fn an_action_verb_finds_the_tool_named_with_its_synonym() {
    for (query, expected) in [
        ("remove a task", "delete_task"),
        ("erase the task", "delete_task"),
        ("add a task", "create_task"),
        ("insert task", "create_task"),
        ("edit a task", "update_task"),
        ("modify task", "update_task"),
        ("find tasks", "search_tasks"),
    ] {
        assert_first(&task_tools(), query, expected);
    }
}

#[test]
fn a_synonym_never_outranks_the_word_itself() {
    let tools = vec![
        tool("remove_member", "Take a member off the team.", false),
        tool("delete_member", "Erase a member record.", false),
    ];
    assert_eq!(run_on(tools.clone(), "delete member")[0], "delete_member");
    assert_eq!(run_on(tools, "remove member")[0], "remove_member");
}

#[test]
fn read_verbs_have_no_synonyms() {
    // `get` is in half of every catalog's names; "read" must not reach them.
    let idx = CatalogIndex::build(Arc::new(Catalog::new("tasks", task_tools())));
    assert_eq!(idx.term_id("read"), None);
    assert!(
        idx.term_id("remov").is_some(),
        "delete_task brings its synonyms"
    );
    assert!(Lexicon::builtin().name_synonyms("get").is_empty());
    let mut delete = Lexicon::builtin().name_synonyms("delet").to_vec();
    delete.sort();
    assert_eq!(
        delete,
        ["destroy", "discard", "drop", "eras", "purg", "remov"]
    );
    // Aliases go one way: a tool named `make_call` is not found by "create".
    assert!(
        Lexicon::builtin()
            .name_synonyms("creat")
            .contains(&"mak".to_owned())
    );
    assert!(Lexicon::builtin().name_synonyms("mak").is_empty());
}

#[test]
fn a_phrasal_verb_finds_the_operation_it_means() {
    let mut tools = task_tools();
    tools.push(tool("complete_task", "Close a task as done.", false));
    for (query, expected) in [
        ("get rid of the task", "delete_task"),
        ("wipe out that task", "delete_task"),
        ("purge the task", "delete_task"),
        ("open a task", "create_task"),
        ("set up a task", "create_task"),
    ] {
        assert_first(&tools, query, expected);
    }
}

#[test]
fn everyday_phrasal_verbs_find_their_operation() {
    let tools = vec![
        tool("list_meetings", "List scheduled meetings.", true),
        tool("cancel_meeting", "Cancel a scheduled meeting.", false),
        tool("list_subscribers", "List the subscribers of a list.", true),
        tool(
            "unsubscribe_member",
            "Take a member off a mailing list.",
            false,
        ),
        tool("remove_member", "Remove a member from a team.", false),
        tool("send_message", "Send a message to a member.", false),
        tool("create_backup", "Create a backup of a database.", false),
    ];
    for (query, expected) in [
        ("spin up a backup of the orders database", "create_backup"),
        (
            "pull up the subscribers of the mailing list",
            "list_subscribers",
        ),
    ] {
        assert_first(&tools, query, expected);
    }
}

#[test]
fn a_phrase_spelled_by_a_tool_name_is_not_folded() {
    // `turn_on_light` says "turn on" itself: folding it into "enable" would
    // lose the words that find it.
    let tools = vec![
        tool("turn_on_light", "Switch a light on.", false),
        tool("enable_schedule", "Enable a lighting schedule.", false),
    ];
    assert_eq!(
        run_on(tools.clone(), "turn on the kitchen light")[0],
        "turn_on_light"
    );
    assert_eq!(run_on(tools, "turn_on_light"), ["turn_on_light"]);
}

#[test]
fn a_folded_phrase_is_reported_in_the_callers_words() {
    let idx = CatalogIndex::build(Arc::new(Catalog::new("tasks", task_tools())));
    let r = rank_all(&[&idx], "get rid of the dentist task");
    assert_eq!(r.mode, MatchMode::Partial);
    assert_eq!(r.analysis.represented, ["get rid of", "task"]);
    assert_eq!(r.analysis.unmatched, ["dentist"]);
}

#[test]
fn a_noun_is_found_by_its_synonym_in_a_description() {
    let tools = vec![
        tool("skip_to_next", "Skip to the next track.", false),
        tool("pause_playback", "Pause playback on the device.", false),
        tool("get_now_playing", "The track playing now.", true),
    ];
    assert_eq!(run_on(tools.clone(), "skip this song")[0], "skip_to_next");
    assert_eq!(run_on(tools, "which song is playing")[0], "get_now_playing");
}

fn run_across(catalogs: Vec<(&str, Vec<ToolDef>)>, query: &str) -> Vec<String> {
    let idx: Vec<CatalogIndex> = catalogs
        .into_iter()
        .map(|(id, tools)| CatalogIndex::build(Arc::new(Catalog::new(id, tools))))
        .collect();
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let r = rank_all(&refs, query);
    r.hits
        .iter()
        .map(|h| format!("{}.{}", refs[h.source].connector(), tool_name(&refs, h)))
        .collect()
}

#[test]
fn a_word_that_only_names_a_connector_keeps_the_answers_to_that_connector() {
    let catalogs = || {
        vec![
            (
                "figma",
                vec![
                    tool("get_file", "Get a Figma file's layers.", true),
                    tool("read_comments", "Read the comments on a file.", true),
                ],
            ),
            (
                "vault",
                vec![tool("delete_file", "Delete a file from the vault.", false)],
            ),
        ]
    };
    // Figma cannot delete: the vault's `delete_file` is not an answer, and
    // Figma's file tools only read.
    let named = run_across(catalogs(), "delete a figma file");
    assert!(named.is_empty(), "{named:?}");
    assert_eq!(run_across(catalogs(), "figma file")[0], "figma.get_file");
    assert_eq!(
        run_across(catalogs(), "delete a file")[0],
        "vault.delete_file"
    );
    assert_eq!(
        run_across(catalogs(), "figma file comments")[0],
        "figma.read_comments"
    );
    // Two named connectors both answer.
    let both = run_across(catalogs(), "figma comments and vault delete");
    assert!(both.contains(&"figma.read_comments".to_owned()), "{both:?}");
    assert!(both.contains(&"vault.delete_file".to_owned()), "{both:?}");
}

#[test]
fn synonyms_do_not_count_as_occurrences_of_a_word() {
    // Three tools named `create_…` carry "add" only as a synonym: "add" is
    // still as rare as the one tool whose own text has it.
    let tools = vec![
        tool("create_issue", "Open an issue.", false),
        tool("create_label", "Make a label.", false),
        tool("create_milestone", "Plan a milestone.", false),
        tool("add_comment", "Comment on an issue.", false),
        tool("list_issues", "List issues.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("gh", tools)));
    let add = idx.term_id("add").expect("indexed");
    assert_eq!(
        idx.raw_postings(add).len(),
        4,
        "three synonyms and one word"
    );
    assert_eq!(idx.doc_freq(add), 1);
    let creat = idx.term_id("creat").expect("indexed");
    assert_eq!(
        idx.doc_freq(creat),
        3,
        "add_comment's synonym is not counted"
    );
}

#[test]
fn a_connector_word_that_another_catalog_uses_or_a_read_verb_names_nothing() {
    let catalogs = || {
        vec![
            (
                "files",
                vec![tool("upload", "Upload a document to the share.", false)],
            ),
            (
                "drive",
                vec![tool("list_files", "List the files in a folder.", true)],
            ),
            (
                "fetch",
                vec![tool("fetch_url", "Fetch a web page as markdown.", true)],
            ),
            (
                "mail",
                vec![tool("get_messages", "Get unread mail messages.", true)],
            ),
        ]
    };
    // "files" is the first connector's id, but the drive's tools say it too.
    let found = run_across(catalogs(), "list files");
    assert_eq!(found[0], "drive.list_files", "{found:?}");
    // A read verb names no connector, even one called `fetch`.
    let found = run_across(catalogs(), "fetch unread messages");
    assert_eq!(found[0], "mail.get_messages", "{found:?}");
}

fn unannotated(name: &str, desc: &str) -> ToolDef {
    ToolDef {
        annotations: Annotations::default(),
        ..tool(name, desc, false)
    }
}

/// A catalog about posts whose readers and writers share every noun.
fn post_tools() -> Vec<ToolDef> {
    vec![
        tool(
            "get_posts",
            "Get the newest posts of a board; deleted ones are left out.",
            true,
        ),
        tool(
            "search_posts",
            "Search the posts of a board, deleted ones too.",
            true,
        ),
        tool(
            "create_post",
            "Create a post on a board; it shows as the newest.",
            false,
        ),
        tool(
            "delete_post",
            "Delete a post from a board, even the newest.",
            false,
        ),
        unannotated("post_tools", "Maintenance for the posts of a board."),
    ]
}

#[test]
fn a_query_asking_to_change_something_drops_the_tools_that_only_read() {
    let names = run_on(post_tools(), "delete a post from the board");
    assert_eq!(names.first().map(String::as_str), Some("delete_post"));
    assert!(!names.contains(&"get_posts".to_owned()), "{names:?}");
    assert!(!names.contains(&"search_posts".to_owned()), "{names:?}");
}

#[test]
fn a_query_asking_to_read_drops_the_tools_named_for_a_change() {
    let names = run_on(post_tools(), "show me the newest posts of the board");
    assert_eq!(names.first().map(String::as_str), Some("get_posts"));
    for writer in ["create_post", "delete_post"] {
        assert!(!names.contains(&writer.to_owned()), "{names:?}");
    }
    // A tool whose name leads with no known verb, and that is not
    // read-only, is kept: what it does is not known.
    let names = run_on(post_tools(), "which maintenance runs on the posts");
    assert!(names.contains(&"post_tools".to_owned()), "{names:?}");
}

#[test]
fn a_change_nobody_offers_is_a_no_match_that_counts_the_readers() {
    let readers = vec![
        tool("list_videos", "List the videos of a channel.", true),
        tool("get_video", "Get one video of a channel.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("tube", readers)));
    let refs = [&idx];
    let r = rank_all(&refs, "upload a video to my channel");
    assert_eq!(r.mode, MatchMode::None);
    assert!(r.hits.is_empty());
    assert_eq!((r.asks, r.opposed), (Op::Write, 2));
    // Without the opposite operation, the same words find them.
    let r = rank_all(&refs, "videos of my channel");
    assert_eq!(r.hits.len(), 2);
    assert_eq!((r.asks, r.opposed), (Op::Unknown, 0));
}

#[test]
fn read_only_decides_over_a_write_verb_in_the_name() {
    // The operator (or the server) says it only reads: it answers reads.
    let tools = vec![
        tool(
            "create_report_preview",
            "Preview a report without saving it.",
            true,
        ),
        tool("delete_report", "Delete a report and its preview.", false),
    ];
    let names = run_on(tools, "show a report preview");
    assert_eq!(names, ["create_report_preview"]);
}

#[test]
fn an_update_in_everyday_words_asks_to_change() {
    let tickets = vec![
        tool(
            "search_tickets",
            "Search tickets by priority or status.",
            true,
        ),
        tool("get_ticket", "Get one ticket.", true),
        tool(
            "update_ticket",
            "Change a ticket's status, priority or assignee.",
            false,
        ),
    ];
    let names = run_on(tickets, "please bump the priority on the login ticket");
    assert_eq!(names, ["update_ticket"]);
}

#[test]
fn a_listed_request_naming_no_connector_is_answered_by_the_others() {
    let catalogs = || {
        vec![
            (
                "bamboohr",
                vec![
                    tool("get_employee", "Get an employee's profile.", true),
                    tool(
                        "update_employee",
                        "Update an employee's job title or department.",
                        false,
                    ),
                ],
            ),
            (
                "docusign",
                vec![
                    tool("listEnvelopes", "List envelopes sent.", true),
                    tool(
                        "createEnvelopeFromTemplate",
                        "Create and send an envelope from a saved template.",
                        false,
                    ),
                ],
            ),
        ]
    };
    for query in [
        "send her offer letter from our template, and update her job title in BambooHR",
        "update her job title in BambooHR, send her offer letter from our template",
    ] {
        let found = run_across(catalogs(), query);
        for want in [
            "bamboohr.update_employee",
            "docusign.createEnvelopeFromTemplate",
        ] {
            assert!(found.contains(&want.to_owned()), "{query}: {found:?}");
        }
    }
}

#[test]
fn a_match_whose_evidence_beats_a_plausible_one_is_plausible_too() {
    let catalogs = || {
        vec![
            (
                "code",
                vec![
                    tool("list_repositories", "List repositories.", true),
                    tool(
                        "list_pull_requests",
                        "List pull requests filtered by state (open, merged, declined).",
                        true,
                    ),
                    tool("create_pull_request", "Create a pull request.", false),
                ],
            ),
            (
                "billing",
                vec![
                    tool("list_subscriptions", "List subscriptions.", true),
                    tool("list_invoices", "List invoices by status.", true),
                    tool("retrieve_invoice", "Retrieve one invoice.", true),
                    tool("create_credit_note", "Credit an invoice.", false),
                    tool("find", "Find documents in a collection.", true),
                    tool("find_users", "Find users.", true),
                ],
            ),
        ]
    };
    // "open" is rarer than "invoices", so the pull requests' description
    // alone covered more of the query; the name carrying "invoices" is
    // the stronger evidence, and now an answer, first.
    let found = run_across(catalogs(), "which invoices are open");
    assert_eq!(
        found.first().map(String::as_str),
        Some("billing.list_invoices"),
        "{found:?}"
    );
    // The match that was plausible before stays an answer beside it.
    assert!(
        found.iter().any(|a| a == "code.list_pull_requests"),
        "{found:?}"
    );
}

#[test]
fn a_server_that_says_a_tool_writes_decides_a_name_led_by_a_noun_verb() {
    // `update` and `post` lead names as often as nouns; a server that
    // declares such a tool not read-only has said it changes something,
    // so a query asking to read leaves it out.
    let pages = |update_annotated: bool| {
        let update = if update_annotated {
            tool(
                "update_page",
                "Update a page's properties or replace its content.",
                false,
            )
        } else {
            unannotated(
                "update_page",
                "Update a page's properties or replace its content.",
            )
        };
        vec![
            update,
            tool(
                "fetch",
                "Fetch a page or database with its properties and content.",
                true,
            ),
            tool("post_comment", "Post a comment on a page.", false),
            tool(
                "manage_pages",
                "Manage pages: list, show, archive or restore them.",
                false,
            ),
        ]
    };
    let names = run_on(pages(true), "show the page content");
    assert_eq!(
        names.first().map(String::as_str),
        Some("fetch"),
        "{names:?}"
    );
    // It carries every word, so it stays, after the reader: a guessed
    // mismatch demotes.
    assert_eq!(
        names.last().map(String::as_str),
        Some("update_page"),
        "{names:?}"
    );
    let names = run_on(
        pages(true),
        "show the comments on the page about the launch",
    );
    assert!(!names.contains(&"post_comment".to_owned()), "{names:?}");
    // `manage` leads names that read too: it stays an answer to a read.
    let names = run_on(pages(true), "show the pages");
    assert!(names.contains(&"manage_pages".to_owned()), "{names:?}");
    // Without the server's word, the name alone decides nothing.
    let names = run_on(pages(false), "show the page content");
    assert!(names.contains(&"update_page".to_owned()), "{names:?}");
}

#[test]
fn an_exact_name_is_found_whatever_the_query_asks() {
    let names = run_on(post_tools(), "create_post");
    assert_eq!(names, ["create_post"]);
    let names = run_on(post_tools(), "get posts");
    assert_eq!(names.first().map(String::as_str), Some("get_posts"));
}

#[test]
fn mixed_or_unknown_operations_drop_nothing() {
    let idx = CatalogIndex::build(Arc::new(Catalog::new("board", post_tools())));
    let refs = [&idx];
    for query in [
        "find the post and delete it",
        "posts on the board",
        "see if you can create a post",
    ] {
        let r = rank_all(&refs, query);
        assert_eq!((r.asks, r.opposed), (Op::Unknown, 0), "{query}");
        assert!(!r.hits.is_empty(), "{query}");
    }
}

/// An app platform's writers: each name says which change it makes.
fn app_tools() -> Vec<ToolDef> {
    vec![
        tool("create_app", "Create a staging app in a region.", false),
        tool(
            "restart_app",
            "Restart every process of a staging or production app.",
            false,
        ),
        tool(
            "update_app",
            "Update a staging app's name or region.",
            false,
        ),
        tool(
            "create_backup",
            "Create a backup of an app's database that you can restore later.",
            false,
        ),
        tool(
            "create_restore_job",
            "Start a job that loads a backup into an app's database.",
            false,
        ),
        tool(
            "cancel_release",
            "Cancel a release that is rolling out.",
            false,
        ),
    ]
}

#[test]
fn a_query_asking_one_change_drops_the_tools_named_for_another() {
    let idx = CatalogIndex::build(Arc::new(Catalog::new("apps", app_tools())));
    let refs = [&idx];
    // Creating or restarting is no way to delete; an update may be.
    let r = rank_all(&refs, "delete the staging app");
    let names = hit_names(&refs, &r);
    assert!(!names.contains(&"create_app"), "{names:?}");
    assert!(!names.contains(&"restart_app"), "{names:?}");
    assert!(names.contains(&"update_app"), "{names:?}");
    assert!(r.other_change >= 2, "{}", r.other_change);
}

#[test]
fn the_tools_left_out_still_set_the_relevance_bar() {
    let tools = vec![
        tool(
            "create_staging_app_dynos",
            "Create a staging app with dynos.",
            false,
        ),
        unannotated("update_preferences", "Staging app and dynos preferences."),
        tool("list_regions", "List the regions.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("hosting", tools)));
    let refs = [&idx];
    // Nothing here deletes anything. The preferences (an update may make
    // any change) match three of the words, in their description only:
    // far below the creating tool's evidence, they do not become the
    // answer because it was left out.
    // The creating tool is demoted, and answers only because its evidence
    // beats every plausible answer's: the preferences are not shown.
    let r = rank_all(&refs, "delete the staging app dynos");
    assert_eq!(
        hit_names(&refs, &r),
        ["create_staging_app_dynos"],
        "{:?}",
        r.hits
    );
    assert!(r.hits[0].tier >= score::DEMOTED);
    assert_eq!(r.other_change, 1);
    // Asked without a verb, the same words find them.
    let r = rank_all(&refs, "staging app dynos preferences");
    assert_eq!(
        r.hits.first().map(|h| tool_name(&refs, h)),
        Some("update_preferences")
    );
}

#[test]
fn a_name_carrying_the_querys_verb_is_kept_whatever_its_leading_verb() {
    let names = run_on(app_tools(), "restore the app database from a backup");
    assert_eq!(
        names.first().map(String::as_str),
        Some("create_restore_job"),
        "{names:?}"
    );
    // A description that mentions the verb does not keep a tool named for
    // another change.
    assert!(!names.contains(&"create_backup".to_owned()), "{names:?}");
}

#[test]
fn a_name_saying_no_change_answers_no_particular_one_unless_its_words_carry_it() {
    let tools = vec![
        unannotated(
            "maintenance_on",
            "Enable maintenance mode for an app: visitors see a notice.",
        ),
        unannotated(
            "update_app",
            "Update an app's maintenance settings, name or region.",
        ),
        tool("list_apps", "List the apps of the account.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("hosting", tools)));
    let refs = [&idx];
    // Its name says no verb: it deletes nothing, whatever words it shares.
    // Its evidence beats the update's, so it stays, demoted after it.
    let r = rank_all(&refs, "delete the app maintenance mode");
    let names = hit_names(&refs, &r);
    assert_eq!(names, ["update_app", "maintenance_on"]);
    assert!(r.hits[1].tier >= score::DEMOTED);
    assert_eq!(r.other_change, 1);
    let found = |query| hit_names(&refs, &rank_all(&refs, query));
    // Asked for any change, it may be the one.
    assert!(found("change the app maintenance mode").contains(&"maintenance_on"));
    // Its description carries the asked verb.
    assert!(found("enable maintenance for the app").contains(&"maintenance_on"));
}

#[test]
fn a_match_carrying_every_word_leaves_out_partial_names_that_carry_less() {
    let mut tools = vec![
        tool(
            "get_pull_request_reviews",
            "List the reviews of a pull request.",
            true,
        ),
        tool(
            "get_pull_request_files",
            "Get the files changed in a pull request.",
            true,
        ),
        tool("push_files", "Push changed files to a branch.", false),
        tool("get_file_contents", "Get the contents of files.", true),
        tool(
            "list_commits",
            "List commits and the files they changed.",
            true,
        ),
    ];
    assert_eq!(
        run_on(tools.clone(), "pull request changed files"),
        ["get_pull_request_files"]
    );
    // A query of several parts keeps the partial matches: each may answer
    // one part.
    let names = run_on(tools.clone(), "the pull request, and its changed files");
    assert!(
        names.contains(&"get_pull_request_reviews".to_owned()),
        "{names:?}"
    );
    // A partial match whose name carries more of the query than the
    // complete match's name stays: the complete one has the words only in
    // its description.
    tools[1] = tool("audit_context", "Pull request files that changed.", true);
    let names = run_on(tools, "pull request changed files");
    assert!(
        names.contains(&"get_pull_request_reviews".to_owned()),
        "{names:?}"
    );
}

#[test]
fn a_tool_matching_only_by_its_connector_answers_no_query_it_leaves_words_of() {
    let mysql = Catalog::new(
        "mysql",
        vec![
            tool(
                "execute_write_query",
                "Execute an INSERT, UPDATE or DELETE statement.",
                false,
            ),
            tool("list_tables", "List the tables of the schema.", true),
        ],
    );
    // The connector's description says "database": with its id, two of
    // the query's words, but none of a tool's own.
    let mysql = CatalogIndex::with_description(Arc::new(mysql), Some("MySQL database access"));
    let refs = [&mysql];
    let query = "restore the mysql database from last night's backup";
    let r = rank_all(&refs, query);
    assert_eq!(r.mode, MatchMode::None, "{:?}", r.hits);
    // Asked for nothing but the connector, every tool answers.
    assert_eq!(rank_all(&refs, "mysql").hits.len(), 2);
    // Scoped by the caller to the connector, any of the query's words
    // makes an answer, the connector's among them.
    let scoped = rank(
        &refs,
        &SearchQuery::new("mysql backups", Safety::All).scoped(true),
        100,
    );
    assert_eq!(scoped.hits.len(), 2, "{scoped:?}");
    // A service's name in a tool's description is no word of its own.
    let github = Catalog::new(
        "github",
        vec![
            tool(
                "search_code",
                "Search code across GitHub repositories.",
                true,
            ),
            tool("list_issues", "List the issues of a repository.", true),
        ],
    );
    let github = CatalogIndex::with_description(Arc::new(github), Some("GitHub workspace"));
    let r = rank_all(&[&github], "github workspace backup");
    assert_eq!(r.mode, MatchMode::None, "{:?}", r.hits);
}

#[test]
fn a_name_of_no_known_change_answers_a_particular_one_by_its_words() {
    // The name's words carry the query's verb, or spell the name in order.
    for (name, description, query) in [
        (
            "label_issue",
            "Add a label to an issue.",
            "add a label to the issue",
        ),
        ("tag_contact", "Tag a contact.", "add a tag to the contact"),
        (
            "rotate_api_key",
            "Rotate an API key: revoke it and issue a new one.",
            "revoke the api key and create a new one",
        ),
        (
            "clear_cache",
            "Clear the build cache.",
            "clear the build cache",
        ),
    ] {
        let tools = vec![
            tool(name, description, false),
            tool("list_things", "List things.", true),
        ];
        let names = run_on(tools, query);
        assert!(names.contains(&name.to_owned()), "{query}: {names:?}");
    }
    // Otherwise a guessed mismatch demotes it, and two words of three are
    // too little for a demoted answer.
    let tools = vec![
        tool("clear_cache", "Clear the build cache.", false),
        tool("list_things", "List things.", true),
    ];
    assert!(run_on(tools, "delete the build cache").is_empty());
}

#[test]
fn joining_records_or_paying_back_is_not_an_update() {
    let tools = vec![
        tool("create_ticket", "Create a support ticket.", false),
        tool(
            "update_ticket",
            "Update a support ticket's status or assignee.",
            false,
        ),
        tool("get_ticket", "Get a support ticket.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("desk", tools)));
    let refs = [&idx];
    let r = rank_all(&refs, "merge the two duplicate support tickets");
    assert_eq!(r.mode, MatchMode::None, "{:?}", r.hits);
    assert_eq!((r.asks, r.opposed, r.other_change), (Op::Write, 1, 2));
    // Closing one is something an update does.
    let r = rank_all(&refs, "close the duplicate support ticket");
    let names = hit_names(&refs, &r);
    assert_eq!(names, ["update_ticket"]);
}

#[test]
fn kinds_of_change_that_do_the_same_work_admit_each_other() {
    let tools = vec![
        tool(
            "delete_subscription",
            "Delete a monthly subscription.",
            false,
        ),
        tool("cancel_build", "Cancel a running build.", false),
        tool("restart_timer", "Restart a stopped timer.", false),
        tool(
            "create_subscription",
            "Create a monthly subscription.",
            false,
        ),
    ];
    let finds = |query: &str, name: &str| run_on(tools.clone(), query).contains(&name.to_owned());
    assert!(finds(
        "cancel the monthly subscription",
        "delete_subscription"
    ));
    assert!(finds("stop the running build", "cancel_build"));
    assert!(finds("start the stopped timer", "restart_timer"));
    // A subscription is not cancelled by creating one.
    assert!(!finds(
        "cancel the monthly subscription",
        "create_subscription"
    ));
}

#[test]
fn a_service_no_catalog_knows_holds_the_query_to_a_stricter_bar() {
    let tools = vec![
        tool(
            "produce_message",
            "Produce a message to the topic of a channel.",
            false,
        ),
        tool(
            "get_provider_versions",
            "Get the published versions of a provider.",
            true,
        ),
        tool("create_channel", "Create a channel.", false),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("bus", tools)));
    let refs = [&idx];
    // Two shared words would do for a query about nothing in particular;
    // for one about Slack, which nothing here serves, they do not.
    let r = rank_all(&refs, "post a message in the support slack channel");
    assert_eq!(r.mode, MatchMode::None, "{:?}", r.hits);
    assert_eq!(r.missing_services, ["slack"]);
    let r = rank_all(&refs, "post a message in the support channel");
    assert!(!r.hits.is_empty());
    assert!(r.missing_services.is_empty());
    // A service named as an object, where the rest of the query is
    // answered well enough, still finds its tool.
    let r = rank_all(&refs, "get the published versions of the aws provider");
    assert_eq!(
        r.hits.first().map(|h| tool_name(&refs, h)),
        Some("get_provider_versions")
    );
    assert_eq!(r.missing_services, ["aws"]);
    // Beside a connected service, named in the query or chosen by the
    // caller, a missing one is an object of the query, not its subject.
    let r = rank_all(&refs, "post a message in the support slack channel on bus");
    assert!(!r.hits.is_empty());
    assert!(r.missing_services.is_empty());
    let scoped =
        SearchQuery::new("post a message in the support slack channel", Safety::All).scoped(true);
    let r = rank(&refs, &scoped, 100);
    assert!(!r.hits.is_empty());
    assert!(r.missing_services.is_empty());
}

#[test]
fn a_connector_word_that_other_catalogs_use_names_no_connector_beside_a_missing_service() {
    let bus = CatalogIndex::build(Arc::new(Catalog::new(
        "bus",
        vec![tool(
            "produce_message",
            "Produce a message to the topic of a channel.",
            false,
        )],
    )));
    let trips = CatalogIndex::build(Arc::new(Catalog::new(
        "trips",
        vec![tool("book_bus", "Book a bus seat on a channel.", false)],
    )));
    let refs = [&bus, &trips];
    // "bus" is also another catalog's word: it names no connector, so the
    // missing service still holds the query to the stricter bar.
    let r = rank_all(&refs, "post a message in the slack channel of the bus");
    assert_eq!(r.missing_services, ["slack"]);
}

#[test]
fn a_service_a_catalog_mentions_is_not_missing() {
    let tools = vec![tool(
        "send_alert",
        "Send an alert to a Slack channel through the webhook.",
        false,
    )];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("alerts", tools)));
    let refs = [&idx];
    let r = rank_all(&refs, "send an alert to slack");
    assert_eq!(r.hits.len(), 1);
    assert!(r.missing_services.is_empty());
}

#[test]
fn a_configured_search_term_finds_the_tools_named_with_its_word() {
    let tools = || {
        vec![
            tool("get_ticket", "Get a ticket by id.", true),
            tool("create_ticket", "Open a new support ticket.", false),
            tool(
                "update_ticket",
                "Change a ticket's status, assignee or tags.",
                false,
            ),
        ]
    };
    let plain = CatalogIndex::build(Arc::new(Catalog::new("desk", tools())));
    let tuned = CatalogIndex::with_config(
        Arc::new(Catalog::new("desk", tools())),
        None,
        &[connecta_core::config::SearchTerm {
            query: "close".into(),
            name: "update".into(),
            line: 1,
            column: 1,
        }],
    );
    let first = |ix: &CatalogIndex, query: &str| {
        let refs = [ix];
        let r = rank_all(&refs, query);
        r.hits
            .first()
            .map(|h| tool_name(&refs, h).to_owned())
            .unwrap_or_default()
    };
    // "close" is in no tool's text: the operator's word is what finds it.
    assert_ne!(first(&plain, "close ticket 812"), "update_ticket");
    assert_eq!(first(&tuned, "close ticket 812"), "update_ticket");
    // The term stands for the name word in the complete-name check, and
    // the name word itself still finds its tool.
    let refs = [&tuned];
    assert_eq!(rank_all(&refs, "close ticket").mode, MatchMode::All);
    assert_eq!(first(&tuned, "update ticket"), "update_ticket");
}

#[test]
fn an_everyday_word_or_short_form_finds_the_word_a_service_names() {
    let hiring = Catalog::new(
        "hiring",
        vec![
            tool("reject_application", "Reject an application", false),
            tool("create_candidate", "Create a candidate", false),
            tool("add_candidate_note", "Add a note to a candidate", false),
            tool("list_jobs", "List open jobs", true),
        ],
    );
    let sso = Catalog::new(
        "sso",
        vec![
            tool("list_applications", "List the applications", true),
            tool("list_users", "List users", true),
        ],
    );
    let idx = [
        CatalogIndex::build(Arc::new(hiring)),
        CatalogIndex::build(Arc::new(sso)),
    ];
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    // "applicant" is the everyday word for who sent an application.
    let r = rank_all(&refs, "reject this applicant");
    assert_eq!(tool_name(&refs, &r.hits[0]), "reject_application");
}

#[test]
fn two_words_a_catalog_writes_as_one_are_one_term() {
    let forum = Catalog::new(
        "forum",
        vec![
            tool("get_frontpage_posts", "Hot posts across all boards", true),
            tool("get_user_info", "One user's profile", true),
        ],
    );
    let idx = [CatalogIndex::build(Arc::new(forum))];
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let r = rank_all(&refs, "what's on the front page");
    assert_eq!(r.hits.len(), 1, "{r:?}");
    assert_eq!(tool_name(&refs, &r.hits[0]), "get_frontpage_posts");
    assert_eq!(r.mode, MatchMode::All);
    // Punctuation between them keeps them apart.
    let r = rank_all(&refs, "the front, page");
    assert_eq!(r.mode, MatchMode::None, "{r:?}");
}

#[test]
fn two_known_words_or_a_function_word_stay_apart() {
    let work = Catalog::new(
        "work",
        vec![
            tool("wit_get_work_item", "Get a work item by id", true),
            tool("search_workitem", "Search by text", true),
            tool("get_checkout", "One checkout session", true),
            tool("get_stories", "Top stories", true),
        ],
    );
    let idx = [CatalogIndex::build(Arc::new(work))];
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    // `work` and `item` are both words here: `workitem` would lose
    // the tool that names them apart.
    let r = rank_all(&refs, "get work item");
    assert_eq!(tool_name(&refs, &r.hits[0]), "wit_get_work_item");
    // "check out" is a verb, not the noun `checkout`.
    let r = rank_all(&refs, "check out");
    assert_eq!(r.mode, MatchMode::None, "{r:?}");
    let r = rank_all(&refs, "checkout");
    assert_eq!(tool_name(&refs, &r.hits[0]), "get_checkout");
}

#[test]
fn a_light_verbs_action_drops_tools_of_another_kind() {
    let shop = Catalog::new(
        "shop",
        vec![
            tool("update_customer", "Update a customer.", false),
            tool("get_orders", "Orders of a customer.", true),
            tool("refund_order", "Refund an order.", false),
        ],
    );
    let idx = [CatalogIndex::build(Arc::new(shop))];
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let names = |q: &str| -> Vec<String> {
        rank_all(&refs, q)
            .hits
            .iter()
            .map(|h| tool_name(&refs, h).to_owned())
            .collect()
    };
    // "issue a refund" asks to refund: an update does not pay money back,
    // and a read changes nothing.
    assert_eq!(
        names("issue a refund to the customer for the order"),
        ["refund_order"]
    );
    let without_refunds = Catalog::new(
        "shop",
        vec![
            tool("update_customer", "Update a customer.", false),
            tool("get_orders", "Orders of a customer.", true),
        ],
    );
    let idx = [CatalogIndex::build(Arc::new(without_refunds))];
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let r = rank_all(&refs, "issue a refund to the customer for their last order");
    assert_eq!(r.mode, MatchMode::None, "{:?}", r.hits);
}

/// The shared development corpus's catalog: two tools named for listing
/// organizations, and many whose boilerplate descriptions carry every
/// query word.
fn analytics_index() -> CatalogIndex {
    let mut tools = vec![
        tool(
            "List-Organizations",
            "List organizations available to the caller",
            true,
        ),
        tool(
            "List-All-Organizations",
            "List organizations available to the caller",
            true,
        ),
    ];
    for i in 0..8 {
        tools.push(tool(
            &format!("business_context_{i}"),
            "List organizations and projects configured for business analysis",
            true,
        ));
    }
    tools.push(tool("project_note_0", "Inspect one project note", true));
    CatalogIndex::with_description(
        Arc::new(Catalog::new("analytics", tools)),
        Some("Product analytics projects and organizations"),
    )
}

#[test]
fn a_spelled_name_that_carries_every_other_word_is_the_whole_answer() {
    let idx = analytics_index();
    let refs = [&idx];
    for (query, expected) in [
        ("list organizations projects", "List-Organizations"),
        ("list all organizations projects", "List-All-Organizations"),
        ("list the organizations", "List-Organizations"),
    ] {
        let r = rank_all(&refs, query);
        let names = hit_names(&refs, &r);
        assert_eq!(names, [expected], "{query}");
        assert_eq!((r.total, r.mode), (1, MatchMode::All), "{query}");
    }
    // Without a spelled name, every tool carrying the words still answers.
    let r = rank_all(&refs, "organizations projects");
    assert!(r.total >= 10, "{:?}", r.hits);
}

#[test]
fn a_spelled_name_leaves_out_its_siblings_only_when_it_carries_the_rest() {
    let tools = vec![
        tool("delete_item", "Delete an item from a board.", false),
        tool("delete_board", "Delete a board and its items.", false),
        tool("list_tables", "List the tables of the database.", true),
        tool("describe_table", "Columns and indexes of a table.", true),
    ];
    // Articles may sit inside the spelled name.
    assert_eq!(run_on(tools.clone(), "delete an item"), ["delete_item"]);
    // "list tables" is spelled, but `list_tables` does not describe a
    // table's columns: both halves of the question are answered.
    let names = run_on(tools.clone(), "list tables and describe the columns");
    assert!(
        names.contains(&"list_tables".to_string()) && names.contains(&"describe_table".to_string()),
        "{names:?}"
    );
    // A name spelled out of order is no spelled name: nothing is left out.
    let names = run_on(tools, "item delete");
    assert!(names.len() >= 2, "{names:?}");
}

#[test]
fn a_word_no_catalog_knows_weighs_half() {
    // "acme" is a value here: the one known word still finds its tool.
    assert_eq!(run_on(task_tools(), "search for acme"), ["search_tasks"]);
    // A tool of any change fits a change asked by a word it lacks.
    let tools = vec![
        tool("manage_invoice", "Manage an invoice's state.", false),
        tool("list_customers", "List customers.", true),
        tool("get_customer", "Get one customer.", true),
        tool("create_customer", "Create a customer.", false),
        tool("delete_customer", "Delete a customer.", false),
    ];
    assert_eq!(
        run_on(tools.clone(), "manage the invoice"),
        ["manage_invoice"]
    );
    assert_eq!(run_on(tools, "archive the invoice"), ["manage_invoice"]);
}

#[test]
fn a_search_the_caller_scoped_takes_any_of_the_querys_words() {
    let idx = CatalogIndex::build(Arc::new(Catalog::new(
        "product",
        vec![
            tool("get_top_events", "The most frequent events.", true),
            tool("query_funnel_report", "Conversion through a funnel.", true),
            tool("list_cohorts", "Saved cohorts.", true),
        ],
    )));
    let refs = [&idx];
    let query = "which events are the most popular today";
    // Unscoped, one word of five is no answer…
    let r = rank_all(&refs, query);
    assert_eq!(r.mode, MatchMode::None, "{:?}", r.analysis);
    // …but the caller said the answer is in this connector.
    let q = SearchQuery::new(query, Safety::All).scoped(true);
    let r = rank(&refs, &q, 10);
    assert_eq!(
        tool_name(&refs, &r.hits[0]),
        "get_top_events",
        "{:?}",
        r.hits
    );
    // A scoped query none of whose words the connector knows is still
    // a no-match.
    let q = SearchQuery::new("crash dumps", Safety::All).scoped(true);
    assert_eq!(rank(&refs, &q, 10).mode, MatchMode::None);
}

#[test]
fn a_service_name_another_catalog_shares_names_no_connector() {
    let run = |catalogs: Vec<(&str, Vec<ToolDef>)>, q: &str| run_across(catalogs, q);
    let zapier = |name: &str| {
        (
            "zapier",
            vec![tool(name, "An action through Zapier.", false)],
        )
    };
    assert_eq!(
        run(
            vec![
                (
                    "slack",
                    vec![tool("search_messages", "Search messages.", true)]
                ),
                zapier("slack_send_message"),
            ],
            "send a slack message"
        )[0],
        "zapier.slack_send_message"
    );
    // A service's own word too: another catalog that carries the
    // service's name answers.
    assert_eq!(
        run(
            vec![
                (
                    "reddit",
                    vec![tool("get_subreddit_top_posts", "Top posts.", true)]
                ),
                zapier("reddit_submit_post"),
            ],
            "submit a new post to a subreddit"
        )[0],
        "zapier.reddit_submit_post"
    );
}

#[test]
fn a_phrase_folds_to_its_operation_where_a_name_carries_it() {
    let catalogs = || {
        vec![
            (
                "home",
                vec![
                    tool("HassTurnOn", "Turn on a device.", false),
                    tool("HassTurnOff", "Turn off a device.", false),
                ],
            ),
            (
                "iot",
                vec![
                    tool("enable_sensor", "Enable a sensor.", false),
                    tool("disable_sensor", "Disable a sensor.", false),
                ],
            ),
        ]
    };
    assert_eq!(
        run_across(catalogs(), "switch on the sensor")[0],
        "iot.enable_sensor"
    );
    assert_eq!(
        run_across(
            vec![
                (
                    "ci",
                    vec![tool("set_up_runner", "Set up a CI runner.", false)]
                ),
                (
                    "cloud",
                    vec![tool("create_server", "Create a server.", false)]
                ),
            ],
            "spin up a server"
        )[0],
        "cloud.create_server"
    );
}

#[test]
fn the_connector_may_sit_inside_a_spelled_name() {
    let tools = vec![
        tool("search_repositories", "Search GitHub repositories.", true),
        tool(
            "search_issues",
            "Search issues and pull requests across repositories.",
            true,
        ),
        tool("search_code", "Search code across repositories.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("github", tools)));
    let refs = [&idx];
    let r = rank_all(&refs, "search github repositories");
    assert_eq!(hit_names(&refs, &r), ["search_repositories"]);
    // Without the connector between them, the words spell no name.
    let r = rank_all(&refs, "search across repositories");
    assert!(r.hits.len() >= 2, "{:?}", hit_names(&refs, &r));
}

#[test]
fn a_word_no_catalog_knows_does_not_keep_a_spelled_name_from_being_the_answer() {
    let tools = vec![
        tool(
            "search_deals",
            "Search deals by title; get each deal's owner.",
            true,
        ),
        tool("get_deals", "List deals, or search deals by stage.", true),
        tool("get_deal_owner", "Get the owner of a deal.", true),
    ];
    // "keyword" is no word of this catalog: `search_deals` is the answer,
    // and the page still says the word is unmatched.
    let idx = CatalogIndex::build(Arc::new(Catalog::new("crm", tools)));
    let refs = [&idx];
    let r = rank_all(&refs, "search deals by keyword");
    assert_eq!(hit_names(&refs, &r), ["search_deals"]);
    assert_eq!(r.mode, MatchMode::Partial);
    assert_eq!(r.analysis.unmatched, ["keyword"]);
    // In a query of several parts, every word still counts: the other
    // part may be another tool's.
    let r = rank_all(&refs, "search deals by keyword and the owner of each deal");
    assert!(
        hit_names(&refs, &r).contains(&"get_deal_owner"),
        "{:?}",
        hit_names(&refs, &r)
    );
}

#[test]
fn a_part_naming_no_connector_is_answered_by_any_catalog() {
    let catalogs = || {
        vec![
            (
                "vercel",
                vec![
                    tool("deploy_site", "Deploy a site.", false),
                    tool("list_teams", "List the teams you belong to.", true),
                ],
            ),
            (
                "teams",
                vec![
                    tool("post_update", "Post a release update to a channel.", false),
                    tool("get_history", "Release updates posted in a channel.", true),
                ],
            ),
        ]
    };
    // "Vercel" names its connector in the first part only; the second
    // part's update is the other catalog's.
    let names = run_across(
        catalogs(),
        "deploy the site to vercel and post the release update in the channel",
    );
    assert!(
        names.contains(&"vercel.deploy_site".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"teams.post_update".to_owned()), "{names:?}");
    // By name only: a tool whose description alone has the other part's
    // words is no answer from the other catalog.
    let names = run_across(
        catalogs(),
        "deploy to vercel and then updates posted in a channel",
    );
    assert!(
        names.contains(&"vercel.deploy_site".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"teams.get_history".to_owned()),
        "{names:?}"
    );
    // One part, or parts split by a comma only, stay the named connector's.
    let names = run_across(catalogs(), "post an update about the vercel deploy");
    assert!(names.iter().all(|n| n.starts_with("vercel.")), "{names:?}");
    let names = run_across(
        catalogs(),
        "the vercel site is down, can you post an update to the channel",
    );
    assert!(names.iter().all(|n| n.starts_with("vercel.")), "{names:?}");
}

/// Vercel's tools beside a chat catalog, a CI catalog, a code host and a
/// monitoring catalog that share their words.
fn several_catalogs() -> Vec<(&'static str, Vec<ToolDef>)> {
    vec![
        (
            "vercel",
            vec![
                tool("deploy_site", "Deploy a site.", false),
                tool("get_logs", "Build logs of a deployment.", true),
                tool("list_projects", "List the projects.", true),
                tool("delete_deployment", "Delete a deployment.", false),
            ],
        ),
        (
            "teams",
            vec![
                tool("post_update", "Post an update to a channel.", false),
                tool(
                    "post_site_deploy_update",
                    "Post a site deploy update.",
                    false,
                ),
                tool("get_history", "Release updates posted in a channel.", true),
            ],
        ),
        ("ci", vec![tool("run_tests", "Run the test suite.", false)]),
        (
            "github",
            vec![tool(
                "list_projects",
                "List the projects of a repository.",
                true,
            )],
        ),
        ("datadog", vec![tool("get_logs", "Search logs.", true)]),
        (
            "docs",
            vec![
                tool("delete_page", "Delete a page.", false),
                tool("get_page", "Get the stale release notes pages.", true),
            ],
        ),
    ]
}

#[test]
fn a_connector_named_in_several_parts_keeps_each_of_them() {
    // "vercel" names its connector in the first and third parts: the
    // logs are Vercel's, not Datadog's.
    let names = run_across(
        several_catalogs(),
        "deploy the site on vercel and post an update to the channel and get the vercel logs",
    );
    assert!(names.contains(&"teams.post_update".to_owned()), "{names:?}");
    assert!(!names.contains(&"datadog.get_logs".to_owned()), "{names:?}");
}

#[test]
fn a_part_the_named_connectors_names_carry_stays_theirs() {
    let names = run_across(
        several_catalogs(),
        "show vercel deployments and list projects",
    );
    assert!(names.iter().all(|n| n.starts_with("vercel.")), "{names:?}");
    // "Before" starts a time clause, not a request of its own.
    let names = run_across(
        several_catalogs(),
        "deploy the site to vercel before the tests run",
    );
    assert!(!names.contains(&"ci.run_tests".to_owned()), "{names:?}");
}

#[test]
fn the_other_catalogs_see_only_the_words_of_the_parts_naming_no_connector() {
    // Seeing every word, `post_site_deploy_update` ("site", "deploy")
    // came first; it answers the second part only by "post" and "update".
    let names = run_across(
        several_catalogs(),
        "deploy the site to vercel and post an update",
    );
    assert_eq!(
        names.first().map(String::as_str),
        Some("vercel.deploy_site"),
        "{names:?}"
    );
    assert!(names.contains(&"teams.post_update".to_owned()), "{names:?}");
    // A generic read verb in a name ("get") is no name of an answer.
    let names = run_across(
        several_catalogs(),
        "deploy to vercel and then get updates posted in a channel",
    );
    assert!(
        !names.contains(&"teams.get_history".to_owned()),
        "{names:?}"
    );
}

#[test]
fn a_catalog_answering_by_name_only_counts_nothing_else_as_left_out() {
    // The docs' reader and publisher match the second part by their
    // descriptions alone: no answers, and so not counted as tools the
    // request left out for their operation or kind (which would change
    // the no-match hint and the relevance cut's bar).
    let catalogs = [
        (
            "vercel",
            vec![tool("delete_deployment", "Delete a deployment.", false)],
        ),
        (
            "docs",
            vec![
                tool("delete_page", "Delete a page.", false),
                tool(
                    "publish_entry",
                    "Publish release notes to the stale pages.",
                    false,
                ),
                tool("get_entry", "Get the release notes of stale pages.", true),
            ],
        ),
    ];
    let idx: Vec<CatalogIndex> = catalogs
        .into_iter()
        .map(|(id, tools)| CatalogIndex::build(Arc::new(Catalog::new(id, tools))))
        .collect();
    let refs: Vec<&CatalogIndex> = idx.iter().collect();
    let r = rank_all(
        &refs,
        "delete the vercel deployment and then delete the stale release notes pages",
    );
    let names = hit_names(&refs, &r);
    assert!(names.contains(&"delete_page"), "{names:?}");
    assert_eq!((r.opposed, r.other_change), (0, 0), "{names:?}");
}

#[test]
fn a_word_only_a_catalog_left_out_knows_is_carried_by_no_answer() {
    let catalogs = || {
        vec![
            (
                "github",
                vec![
                    tool("search_repositories", "Search GitHub repositories.", true),
                    tool("search_issues", "Search issues across repositories.", true),
                    tool("search_code", "Search code across repositories.", true),
                ],
            ),
            (
                "reviews",
                vec![tool("get_rating", "Get stars and reviews.", true)],
            ),
        ]
    };
    assert_eq!(
        run_across(catalogs(), "search github repositories by stars"),
        ["github.search_repositories"]
    );
}

#[test]
fn a_verb_opening_a_name_makes_the_words_after_it_its_object() {
    // `update` opens the name: `list` after it is the thing updated, so
    // the tool does not only read, and a request to change may have it.
    let tools = vec![
        tool(
            "update_list_status_for_contact",
            "Subscribe or unsubscribe a contact to or from a list.",
            false,
        ),
        tool("list_contacts", "List contacts.", true),
    ];
    let idx = CatalogIndex::build(Arc::new(Catalog::new("crm", tools)));
    // Declared not read-only, the name led by `update` writes (it never
    // reads for the `list` in it).
    assert_eq!(idx.op(0), Op::Write);
    assert_eq!(idx.op(1), Op::Read);
    let refs = [&idx];
    let r = rank_all(&refs, "unsubscribe a contact");
    assert_eq!(hit_names(&refs, &r), ["update_list_status_for_contact"]);
    // Without annotations the name alone says no operation, and still
    // not a read.
    let bare = CatalogIndex::build(Arc::new(Catalog::new(
        "crm",
        vec![unannotated(
            "update_list_status_for_contact",
            "Subscribe or unsubscribe a contact to or from a list.",
        )],
    )));
    assert_eq!(bare.op(0), Op::Unknown);
}

#[test]
fn where_is_asks_for_a_location() {
    let idx = CatalogIndex::build(Arc::new(Catalog::new(
        "fleet",
        vec![
            tool(
                "list_drivers",
                "List drivers in the fleet with their phone number and assigned vehicle.",
                true,
            ),
            tool(
                "get_vehicle_stats",
                "Get fuel level, odometer and fault codes of a vehicle and its driver.",
                true,
            ),
            tool(
                "get_positions",
                "Get the current GPS location and speed of each vehicle.",
                true,
            ),
        ],
    )));
    let refs = [&idx];
    let r = rank_all(&refs, "where is the driver's vehicle right now?");
    assert_eq!(hit_names(&refs, &r).first(), Some(&"get_positions"));
    // Not a question of place: no location asked.
    let r = rank_all(&refs, "the driver's vehicle, where fuel is low");
    assert_ne!(hit_names(&refs, &r).first(), Some(&"get_positions"));
}

/// Two real servers' tools: a Python SDK server's `add` and
/// server-everything's `get-sum`, both read-only, beside other tools.
fn arithmetic() -> Vec<(&'static str, Vec<ToolDef>)> {
    vec![
        (
            "calc",
            vec![
                tool("add", "Add two integers.", true),
                tool("echo", "Echo a message back.", true),
            ],
        ),
        (
            "everything",
            vec![
                tool("echo", "Echoes back the input string", true),
                tool("get-sum", "Returns the sum of two numbers", true),
                tool("get-env", "Returns all environment variables", true),
                tool(
                    "toggle-simulated-logging",
                    "Toggles simulated, random-leveled logging on or off.",
                    false,
                ),
                tool(
                    "trigger-elicitation-request",
                    "Trigger a Request from the Server for User Elicitation",
                    false,
                ),
            ],
        ),
    ]
}

#[test]
fn a_tool_the_query_names_is_demoted_by_a_guessed_intent_never_dropped() {
    // "add" asks to change something, and `add` only reads: its name and
    // words are the query's, so it stays the answer.
    assert_eq!(run_across(arithmetic(), "add two integers")[0], "calc.add");
    // Adding numbers is a sum: the lexicon says "add" and "plus" find it.
    assert_eq!(
        run_across(arithmetic(), "add two numbers")[0],
        "everything.get-sum"
    );
    assert_eq!(
        run_across(arithmetic(), "sum of two numbers")[0],
        "everything.get-sum"
    );
    assert_eq!(
        run_across(arithmetic(), "what is 2 plus 3")[0],
        "everything.get-sum"
    );
}

#[test]
fn an_exact_tool_name_is_the_first_row_whatever_verb_it_starts_with() {
    for (query, first) in [
        ("add", "calc.add"),
        ("get-sum", "everything.get-sum"),
        ("get sum", "everything.get-sum"),
        (
            "toggle-simulated-logging",
            "everything.toggle-simulated-logging",
        ),
        (
            "trigger-elicitation-request",
            "everything.trigger-elicitation-request",
        ),
        ("everything.get-env", "everything.get-env"),
    ] {
        assert_eq!(run_across(arithmetic(), query)[0], first, "{query}");
    }
}
