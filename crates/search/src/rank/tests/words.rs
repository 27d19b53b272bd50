//! Words: synonyms, phrasal verbs, compounds, short forms, a connector's
//! search terms, implied and unknown words.

use super::*;

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
