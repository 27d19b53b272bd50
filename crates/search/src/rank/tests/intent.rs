//! What the query asks, and the tools a guessed mismatch demotes.

use super::*;

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
fn a_query_asking_to_change_leaves_out_readers_lacking_some_of_its_words() {
    let names = run_on(post_tools(), "delete a post from the board");
    assert_eq!(names.first().map(String::as_str), Some("delete_post"));
    assert!(!names.contains(&"get_posts".to_owned()), "{names:?}");
    assert!(!names.contains(&"search_posts".to_owned()), "{names:?}");
}

#[test]
fn a_query_asking_to_read_leaves_out_writers_lacking_some_of_its_words() {
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
fn mixed_or_unknown_operations_demote_nothing() {
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
fn a_query_asking_one_change_leaves_out_weak_tools_named_for_another() {
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
    // A subscription is not cancelled by creating one.
    assert!(!finds(
        "cancel the monthly subscription",
        "create_subscription"
    ));
}

#[test]
fn a_light_verbs_action_demotes_tools_of_another_kind() {
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
