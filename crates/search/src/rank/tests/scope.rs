//! Which catalogs answer: connectors a word names, parts of a query,
//! services no catalog knows, searches the caller scoped.

use super::*;

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
