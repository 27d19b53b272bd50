//! The relevance cut: spelled names, stronger evidence, tools that carry
//! more, and tools that match by their connector alone.

use super::*;

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
