//! `search_tools` through the real binary: guides ride on matches, the
//! `safety` filter returns exactly what the call path admits (overrides
//! included), a connector-scoped search loads only that connector's catalog,
//! pages walk with `offset`/`nextOffset`, and a page over 256,000 bytes is
//! `result_too_large` rather than silently shrunk; a phrasal verb ("get rid
//! of") finds the operation it means, and a word naming one connector keeps
//! the answers to that connector; a query that asks to change something
//! gets no tool that only reads (the operator's overrides deciding), and
//! says so when nothing else matches; a connector's configured
//! `search_terms` find its tools by the operator's words, and a bad one
//! stops `connecta check` with its position; short forms, everyday words and
//! compounds written as two words find the reference server's tools and an
//! HTTP API's; a light verb's object says the change asked for ("issue a
//! refund"); a spelled name is the answer around its connector's id and
//! unknown words, and a part of a query naming no connector is answered by
//! the other catalogs.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::*;

const REPORTS: usize = 120;

/// The demo connector with a guide, and the wide peer (lazy: nothing loads
/// its catalog until a request needs it).
fn config() -> String {
    let wide = repo_root().join("tests/peers/wide_server.py");
    format!(
        r#"
{demo}guide = "Notes are small. Search notes before reading them; creating and deleting notes needs approval."
guide_summary = "A small notebook: search before reading."
guide_required = true

[[connector]]
id = "wide"
command = "python3"
args = [{wide}, "{REPORTS}"]
start = "lazy"
overrides.odd_overridden = {{ read_only = true }}
"#,
        demo = demo_connector(),
        wide = q(&wide.display().to_string()),
    )
}

/// A declared HTTP API connector: search reads its catalog from the
/// config and calls nothing. One `(name, description, read_only)` per
/// tool.
fn api_connector(id: &str, description: Option<&str>, tools: &[(&str, &str, bool)]) -> String {
    let mut out = format!("\n[[connector]]\nid = \"{id}\"\nkind = \"api\"\n");
    if let Some(d) = description {
        out.push_str(&format!("description = \"{d}\"\n"));
    }
    out.push_str("base_url = \"http://127.0.0.1:9\"\nallow_private_network = true\n");
    for (name, description, read_only) in tools {
        let method = if *read_only { "GET" } else { "POST" };
        out.push_str(&format!(
            r#"
[[connector.tool]]
name = "{name}"
description = "{description}"
read_only = {read_only}
method = "{method}"
path = "/{name}"
input_schema = {{ type = "object" }}
"#
        ));
    }
    out
}

/// `search_tools` with `args`, which must answer without an error.
async fn search_tools(client: &Client, args: Value) -> Value {
    let (page, err) = call(client, "search_tools", args.clone()).await;
    assert!(!err, "{args}: {page}");
    page
}

fn names(page: &Value) -> Vec<String> {
    page["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a page: {page}"))
        .iter()
        .map(|t| t["address"].as_str().expect("address").to_owned())
        .collect()
}

fn wide_health(health: &Value) -> Value {
    health["connectors"]
        .as_array()
        .expect("connectors")
        .iter()
        .find(|c| c["id"] == "wide")
        .cloned()
        .expect("the wide connector in /health")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connector_scoped_search_loads_only_that_catalog() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;

    let page = search_tools(
        &client,
        json!({"query": "search notes", "connector": "demo"}),
    )
    .await;
    assert_eq!(page["tools"][0]["address"], "demo.search_notes", "{page}");
    let health = gw.wait_health("demo loaded", |_| true).await;
    let wide = wide_health(&health);
    assert!(
        wide.get("catalog").is_none() && wide.get("catalogError").is_none(),
        "a search scoped to demo touched the wide catalog: {wide}"
    );

    // Unscoped, every catalog is searched (and so loaded).
    let page = search_tools(&client, json!({"query": "ledger archive"})).await;
    assert!(
        names(&page).iter().all(|a| a.starts_with("wide.odd_")),
        "{page}"
    );
    let health = gw.wait_health("wide loaded", |_| true).await;
    assert_eq!(
        wide_health(&health)["catalog"]["tools"],
        REPORTS + 4,
        "{health}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn matches_carry_the_guide_summary_once_and_skills_serves_the_guide() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;

    let page = search_tools(&client, json!({"query": "notes", "connector": "demo"})).await;
    let tools = page["tools"].as_array().expect("tools");
    assert!(tools.len() > 1, "{page}");
    assert_eq!(
        tools[0]["guideSummary"],
        "A small notebook: search before reading."
    );
    assert_eq!(tools[0]["guideRequired"], true);
    assert!(tools[0].get("guide").is_none(), "full text only on request");
    assert!(
        tools[1..].iter().all(|t| t.get("guideSummary").is_none()),
        "once per connector per page: {page}"
    );

    let (full, _) = call(
        &client,
        "search_tools",
        json!({"query": "notes", "connector": "demo", "fullDescriptions": true}),
    )
    .await;
    assert!(
        full["tools"][0]["guide"]
            .as_str()
            .is_some_and(|g| g.starts_with("Notes are small.")),
        "{full}"
    );

    let (skill, err) = call(&client, "skills", json!({"name": "demo"})).await;
    assert!(!err, "{skill}");
    assert!(
        skill["text"]
            .as_str()
            .is_some_and(|t| t.contains("needs approval")),
        "{skill}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_safety_filter_returns_exactly_what_the_call_path_admits() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;

    let mut classes: Vec<BTreeSet<String>> = Vec::new();
    for safety in ["readOnly", "approvalRequired", "all"] {
        let mut seen = BTreeSet::new();
        for connector in ["demo", "wide"] {
            let page = search_tools(&client, json!({"connector": connector, "safety": safety, "limit": 100, "offset": 0, "query": ""})).await;
            let mut offset = 0;
            let mut page = page;
            loop {
                seen.extend(names(&page));
                let Some(next) = page["nextOffset"].as_u64() else {
                    break;
                };
                assert!(next as usize > offset, "{page}");
                offset = next as usize;
                let (p, err) = call(
                    &client,
                    "search_tools",
                    json!({"connector": connector, "safety": safety, "limit": 100, "offset": offset}),
                )
                .await;
                assert!(!err, "{p}");
                page = p;
            }
        }
        classes.push(seen);
    }
    let (read_only, approval, all) = (&classes[0], &classes[1], &classes[2]);
    assert_eq!(all.len(), 7 + REPORTS + 4);
    assert!(read_only.is_disjoint(approval));
    assert_eq!(
        &read_only.union(approval).cloned().collect::<BTreeSet<_>>(),
        all
    );
    assert!(
        read_only.contains("wide.odd_overridden"),
        "an override counts"
    );
    for odd in [
        "wide.odd_unannotated",
        "wide.odd_contradictory",
        "wide.odd_write",
    ] {
        assert!(approval.contains(odd), "{odd} is fail-closed");
    }

    // The call path agrees row by row: every read-only row passes the
    // boundary of `call_tool`, every other row is refused at it.
    let ro_sample = read_only
        .iter()
        .filter(|a| !a.starts_with("wide.quarterly_report_") || a.ends_with("_7"));
    for address in ro_sample {
        let args = json!({"field_00": "north"});
        let (v, err) = call(
            &client,
            "call_tool",
            json!({"address": address, "args": args}),
        )
        .await;
        assert_ne!(
            v["error"]["code"], "destructive_tool_requires_approval",
            "{address}: {v}"
        );
        if address.starts_with("wide.") {
            assert!(!err, "{address}: {v}");
        }
    }
    for address in approval {
        let (v, err) = call(&client, "call_tool", json!({"address": address})).await;
        assert!(err, "{address}: {v}");
        assert_eq!(
            v["error"]["code"], "destructive_tool_requires_approval",
            "{address}: {v}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_walk_by_offset_and_an_oversized_page_is_result_too_large() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;
    let query = json!({"connector": "wide", "query": "quarterly report", "limit": 100});

    // A hundred exact schemas of about 4 KB each pass the ceiling.
    let mut json_args = query.clone();
    json_args["includeSchemas"] = json!("json");
    let (e, err) = call(&client, "search_tools", json_args).await;
    assert!(err, "{e}");
    assert_eq!(e["error"]["code"], "result_too_large", "{e}");
    assert_eq!(e["error"]["retryable"], false, "{e}");
    let message = e["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("limit") && message.contains("compact"),
        "the hint names the ways to ask for less: {e}"
    );

    // The same page with compact shapes fits, and the rest follows it.
    let (first, err) = call(&client, "search_tools", query.clone()).await;
    assert!(!err, "{first}");
    assert_eq!(first["total"], REPORTS, "{first}");
    assert_eq!(first["tools"].as_array().map(Vec::len), Some(100));
    assert_eq!(first["hasMore"], true);
    assert_eq!(first["nextOffset"], 100);
    let bytes = serde_json::to_vec(&first).expect("serializes").len();
    assert!(bytes <= 256_000, "{bytes}");
    let mut rest_args = query;
    rest_args["offset"] = json!(100);
    let (rest, err) = call(&client, "search_tools", rest_args).await;
    assert!(!err, "{rest}");
    assert_eq!(rest["tools"].as_array().map(Vec::len), Some(REPORTS - 100));
    assert_eq!(rest["hasMore"], false);
    assert!(rest.get("nextOffset").is_none(), "{rest}");
    let mut all: BTreeSet<String> = names(&first).into_iter().collect();
    all.extend(names(&rest));
    assert_eq!(all.len(), REPORTS, "no row twice, none skipped");
}

#[tokio::test(flavor = "multi_thread")]
async fn phrasal_verbs_fold_and_a_named_connector_keeps_its_answers() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;

    let page = search_tools(&client, json!({"query": "get rid of a note"})).await;
    assert_eq!(page["tools"][0]["address"], "demo.delete_note", "{page}");
    let page = search_tools(&client, json!({"query": "please clean up the old note"})).await;
    assert_eq!(page["tools"][0]["address"], "demo.delete_note", "{page}");

    // "archive" is a word of the wide connector's ledger tools only…
    let page = search_tools(&client, json!({"query": "archive a note"})).await;
    assert!(
        names(&page).iter().any(|a| a.starts_with("wide.")),
        "{page}"
    );
    // …and naming the demo connector leaves them out.
    let page = search_tools(&client, json!({"query": "demo note archive"})).await;
    let found = names(&page);
    assert!(!found.is_empty(), "{page}");
    assert!(found.iter().all(|a| a.starts_with("demo.")), "{page}");
    // Asked as a command, none of the demo tools archives: they read,
    // create or delete.
    let page = search_tools(&client, json!({"query": "archive a demo note"})).await;
    assert_eq!(page["matchMode"], "none", "{page}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_asking_for_a_change_gets_no_tool_that_only_reads() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;
    let search = |query: &'static str| {
        let client = &client;
        async move { search_tools(client, json!({ "query": query })).await }
    };

    let page = search("delete a note").await;
    assert_eq!(page["tools"][0]["address"], "demo.delete_note", "{page}");
    for t in page["tools"].as_array().expect("tools") {
        assert_eq!(t["readOnly"], false, "{page}");
    }

    // The operator declares `odd_overridden` read-only: it cannot archive.
    let found = names(&search("archive a ledger").await);
    assert!(found.contains(&"wide.odd_write".to_owned()), "{found:?}");
    assert!(
        found.contains(&"wide.odd_unannotated".to_owned()),
        "{found:?}"
    );
    assert!(
        !found.contains(&"wide.odd_overridden".to_owned()),
        "{found:?}"
    );

    // Every report tool only reads: publishing one is a clear no-match
    // that says why; reading one finds it.
    let page = search("publish a quarterly report").await;
    assert_eq!(page["matchMode"], "none", "{page}");
    assert_eq!(page["tools"].as_array().map(Vec::len), Some(0), "{page}");
    let hint = page["hint"].as_str().expect("a hint");
    assert!(hint.contains("only read"), "{hint}");
    let page = search("fetch quarterly report 7").await;
    assert_eq!(
        page["tools"][0]["address"], "wide.quarterly_report_7",
        "{page}"
    );

    // Deleting or creating a note is no way to restore one: a clear
    // no-match that says so, where the words alone find `delete_note`.
    let page = search("restore the note I removed").await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let hint = page["hint"].as_str().expect("a hint");
    assert!(hint.contains("another kind of change"), "{hint}");
    let found = names(&search("the note I removed").await);
    assert!(found.contains(&"demo.delete_note".to_owned()), "{found:?}");
    // A query that has the tool's name in it, in order, keeps it, after
    // any answer that fits: the guess demotes, it never drops.
    let page = search("restore the deleted note").await;
    assert_eq!(names(&page), ["demo.delete_note"], "{page}");
    assert_eq!(
        page["queryAnalysis"]["unmatched"],
        json!(["restore"]),
        "{page}"
    );
    // Beside a request, a clause of context asks nothing and voids
    // nothing: the request still asks to restore.
    let page = search("hi! the standup moved, can you restore the note I removed?").await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let hint = page["hint"].as_str().expect("a hint");
    assert!(hint.contains("another kind of change"), "{hint}");

    // Two words find a note listing; asked of a notebook service that
    // nothing connected serves, they are not enough, and the no-match
    // names the service.
    let found = names(&search("notes tagged urgent").await);
    assert!(found.contains(&"demo.list_notes".to_owned()), "{found:?}");
    let page = search("notes tagged urgent in evernote").await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let hint = page["hint"].as_str().expect("a hint");
    assert!(
        hint.contains("names evernote, which no connector here serves"),
        "{hint}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_search_terms_find_tools_by_the_operators_words() {
    async fn search(client: &Client) -> Value {
        search_tools(client, json!({"query": "jot a note"})).await
    }
    let plain = Gateway::start(&demo_connector());
    let client = connect(&plain.url()).await;
    let page = search(&client).await;
    assert_ne!(page["tools"][0]["address"], "demo.create_note", "{page}");
    drop(client);
    drop(plain);

    let tuned = Gateway::start(&format!(
        "{}search_terms = {{ jot = \"create\" }}\n",
        demo_connector()
    ));
    let client = connect(&tuned.url()).await;
    let page = search(&client).await;
    assert_eq!(page["tools"][0]["address"], "demo.create_note", "{page}");
}

#[test]
fn a_bad_search_term_stops_check_with_its_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        format!(
            "{}search_terms = {{ jot = \"create a\" }}\n",
            demo_connector()
        ),
    )
    .expect("write");
    let (status, out, err) = check_config(&path);
    assert!(!status.success(), "stdout: {out}");
    let p = path.display().to_string();
    assert!(
        err.contains(&format!(
            "{p}:5:24: search_terms: \"jot\" = \"create a\" needs one word on each side"
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn short_forms_everyday_words_and_split_compounds_find_real_tools() {
    // The reference server over stdio, and an HTTP API declared in config
    // (search reads its catalog from the config; nothing is called).
    let config = everything_connector()
        + &api_connector(
            "forum",
            None,
            &[
                ("get_frontpage_posts", "Hot posts across all boards", true),
                (
                    "list_organizations",
                    "Every group that runs boards here",
                    true,
                ),
                ("get_checkout", "One checkout session", true),
                ("get_user_info", "One user's profile", true),
            ],
        );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    for (query, first) in [
        // `vars` is short for the description's "variables".
        ("show the env vars", "everything.get-env"),
        // `img` is the name's `image`, `orgs` its `organizations`.
        ("a tiny img", "everything.get-tiny-image"),
        ("list the orgs", "forum.list_organizations"),
        // "front page" is the name's one word `frontpage`.
        ("what's on the front page", "forum.get_frontpage_posts"),
        // "acme" is a value no catalog knows: it weighs half, and the one
        // known word still finds its tool.
        ("the organizations of acme", "forum.list_organizations"),
    ] {
        let page = search_tools(&client, json!({ "query": query })).await;
        assert_eq!(page["tools"][0]["address"], first, "{query}: {page}");
    }
    // A phrasal verb's particle joins nothing: "check out" is no
    // `checkout`, though the one word is.
    let page = search_tools(&client, json!({"query": "check out"})).await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let page = search_tools(&client, json!({"query": "checkout"})).await;
    assert_eq!(names(&page), ["forum.get_checkout"], "{page}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_light_verbs_object_says_what_is_asked() {
    let config = api_connector(
        "shop",
        None,
        &[
            ("update_customer", "Update a customer's details", false),
            ("get_orders", "Orders of a customer", true),
            ("add_post", "Add a new post to the shop's blog", false),
        ],
    );
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    // "Issue a refund" asks to refund: an update does not pay money back,
    // and reading orders changes nothing.
    let page = search_tools(
        &client,
        json!({"query": "issue a refund to the customer for their last order"}),
    )
    .await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let hint = page["hint"].as_str().expect("a hint");
    assert!(hint.contains("no tool here does that"), "{page}");
    // Asked without a light verb, the same words find the customer.
    let page = search_tools(&client, json!({"query": "update the customer"})).await;
    assert_eq!(
        page["tools"][0]["address"], "shop.update_customer",
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_naming_a_tool_by_its_words_or_as_written_gets_it_first() {
    // The shared development corpus's catalog shape: two tools named for
    // listing organizations, and tools whose boilerplate descriptions
    // carry every word of the queries; beside the reference server.
    // The tools that make or change something need approval.
    let config = everything_connector()
        + &api_connector(
            "analytics",
            Some("Product analytics projects and organizations"),
            &[
                (
                    "List-Organizations",
                    "List organizations available to the caller",
                    true,
                ),
                (
                    "List-All-Organizations",
                    "List organizations available to the caller",
                    true,
                ),
                (
                    "business_context_0",
                    "List organizations and projects configured for business analysis",
                    true,
                ),
                (
                    "business_context_1",
                    "List organizations and projects configured for business analysis",
                    true,
                ),
                ("project_note_0", "Inspect one project note", true),
                ("make_call", "Make a phone call to a number", false),
                ("create_board", "Create a board", false),
                (
                    "HassTurnOn",
                    "Turn on a device or the lights of an area",
                    false,
                ),
                (
                    "HassTurnOff",
                    "Turn off a device or the lights of an area",
                    false,
                ),
            ],
        );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    for (query, only) in [
        (
            "list organizations projects",
            "analytics.List-Organizations",
        ),
        (
            "list all organizations projects",
            "analytics.List-All-Organizations",
        ),
        // Articles may sit inside the spelled name.
        ("get the tiny image", "everything.get-tiny-image"),
    ] {
        let page = search_tools(&client, json!({ "query": query })).await;
        assert_eq!(names(&page), [only], "{query}: {page}");
        // A complete answer: no `matchMode` (it says only partial or none).
        assert!(page.get("matchMode").is_none(), "{query}: {page}");
        assert_eq!(page["total"], 1, "{query}: {page}");
    }
    // Without a spelled name, every tool carrying the words answers.
    let page = search_tools(
        &client,
        json!({"query": "organizations projects", "connector": "analytics"}),
    )
    .await;
    assert!(names(&page).len() >= 4, "{page}");

    // A name written as it is inside a longer query is spelled by it: that
    // tool is the answer ("poke" finds nothing).
    let page = search_tools(
        &client,
        json!({"query": "poke `analytics.List-All-Organizations` for the projects"}),
    )
    .await;
    assert_eq!(names(&page), ["analytics.List-All-Organizations"], "{page}");
    assert_eq!(page["matchMode"], "partial", "{page}");
    assert_eq!(
        page["queryAnalysis"]["unmatched"],
        json!(["poke"]),
        "{page}"
    );
    // Scoped by the caller, one word of many is enough to answer;
    // unscoped, it is not.
    let query = "which organisations and organizations are the most popular these days";
    let page = search_tools(&client, json!({ "query": query })).await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let page = search_tools(&client, json!({ "query": query, "connector": "analytics" })).await;
    assert_eq!(
        page["tools"][0]["address"], "analytics.List-Organizations",
        "{page}"
    );
    // "switch off" means what `HassTurnOff` spells.
    let page = search_tools(
        &client,
        json!({"query": "can you switch off the lights downstairs"}),
    )
    .await;
    assert_eq!(
        page["tools"][0]["address"], "analytics.HassTurnOff",
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_saying_no_kind_of_change_makes_no_particular_change() {
    let config = api_connector(
        "hosting",
        None,
        &[
            (
                "maintenance_on",
                "Enable maintenance mode for an app: visitors see a notice",
                false,
            ),
            (
                "update_app",
                "Update an app's maintenance settings, name or region",
                false,
            ),
            ("list_apps", "List the apps of the account", true),
        ],
    ) + &api_connector(
        "wms",
        None,
        &[
            (
                "wms_transfer_stock",
                "Shift the stock of a bin location to another bin",
                false,
            ),
            (
                "wms_adjust_stock",
                "Adjust the counted stock of a bin location",
                false,
            ),
        ],
    );
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    let search = |query: &'static str| {
        let client = &client;
        async move { search_tools(client, json!({ "query": query })).await }
    };

    // `maintenance_on` says no verb: it deletes nothing, and comes after
    // the update (which may), demoted, on its stronger evidence.
    let page = search("delete the app maintenance mode").await;
    assert_eq!(
        names(&page),
        ["hosting.update_app", "hosting.maintenance_on"],
        "{page}"
    );
    // Asked what its description says it does, it is an answer.
    let found = names(&search("enable maintenance for the app").await);
    assert!(
        found.contains(&"hosting.maintenance_on".to_owned()),
        "{found:?}"
    );

    // Names whose verbs the lexicon gives no kind (`wms_transfer_stock`,
    // `wms_adjust_stock`) delete nothing either.
    let page = search("delete the stock of a bin location").await;
    assert_eq!(page["matchMode"], "none", "{page}");
    let hint = page["hint"].as_str().expect("a hint");
    assert!(hint.contains("another kind of change"), "{hint}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_carrying_every_word_leaves_out_names_that_carry_less() {
    let config = api_connector(
        "code",
        None,
        &[
            (
                "get_pull_request_reviews",
                "List the reviews of a pull request",
                true,
            ),
            (
                "get_pull_request_files",
                "Get the files changed in a pull request",
                true,
            ),
            ("push_files", "Push changed files to a branch", false),
            ("get_file_contents", "Get the contents of files", true),
            (
                "list_commits",
                "List commits and the files they changed",
                true,
            ),
        ],
    );
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    let page = search_tools(&client, json!({"query": "pull request changed files"})).await;
    assert_eq!(names(&page), ["code.get_pull_request_files"], "{page}");
    // Asked in two parts, the reviews may answer one of them.
    let query = "the pull request, and its changed files";
    let found = names(&search_tools(&client, json!({ "query": query })).await);
    assert!(
        found.contains(&"code.get_pull_request_reviews".to_owned()),
        "{found:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_matching_only_by_its_connector_answers_no_query_it_leaves_words_of() {
    // The description says "database": with the id, two of the query's
    // words, but none of a tool's own.
    let config = api_connector(
        "mysql",
        Some("MySQL database access"),
        &[
            (
                "execute_write_query",
                "Execute an INSERT, UPDATE or DELETE statement",
                false,
            ),
            ("list_tables", "List the tables of the schema", true),
        ],
    );
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    let query = "restore the mysql database from last night's backup";
    let page = search_tools(&client, json!({ "query": query })).await;
    assert_eq!(page["matchMode"], "none", "{page}");
    // Asked for nothing but the connector, every tool answers.
    let page = search_tools(&client, json!({"query": "mysql"})).await;
    assert_eq!(page["total"], 2, "{page}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spelled_name_is_the_answer_around_its_connector_and_unknown_words() {
    let config = api_connector(
        "github",
        None,
        &[
            ("search_repositories", "Search GitHub repositories", true),
            (
                "search_issues",
                "Search issues and pull requests across repositories",
                true,
            ),
            ("search_code", "Search code across repositories", true),
        ],
    );
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    let page = search_tools(&client, json!({"query": "search github repositories"})).await;
    assert_eq!(names(&page), ["github.search_repositories"], "{page}");
    // "stars" is no word of the catalog: the page stays partial.
    let query = "search repositories by stars";
    let page = search_tools(&client, json!({ "query": query })).await;
    assert_eq!(names(&page), ["github.search_repositories"], "{page}");
    assert_eq!(page["matchMode"], "partial", "{page}");
    assert_eq!(
        page["queryAnalysis"]["unmatched"],
        json!(["stars"]),
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_part_naming_no_connector_is_answered_by_the_other_catalogs() {
    let mut config = api_connector(
        "vercel",
        None,
        &[
            ("deploy_site", "Deploy a site", false),
            ("list_projects", "List the projects", true),
        ],
    );
    config.push_str(&api_connector(
        "chat",
        None,
        &[
            ("post_update", "Post a release update to a channel", false),
            ("list_channels", "List the channels", true),
        ],
    ));
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    let query = "deploy the site to vercel and post the release update in the channel";
    let found = names(&search_tools(&client, json!({ "query": query })).await);
    assert!(
        found.contains(&"vercel.deploy_site".to_owned()),
        "{found:?}"
    );
    assert!(found.contains(&"chat.post_update".to_owned()), "{found:?}");
    // In one part, "vercel" keeps the answers to its connector.
    let query = "post an update about the vercel deploy";
    let found = names(&search_tools(&client, json!({ "query": query })).await);
    assert!(
        !found.is_empty() && found.iter().all(|a| a.starts_with("vercel.")),
        "{found:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verb_opening_a_name_is_its_verb_whatever_follows() {
    let config = api_connector(
        "crm",
        None,
        &[
            (
                "update_list_status_for_contact",
                "Subscribe or unsubscribe a contact to or from a list",
                false,
            ),
            ("list_contacts", "List contacts", true),
        ],
    );
    let gw = Gateway::start(&config);
    let client = connect(&gw.url()).await;
    let page = search_tools(&client, json!({"query": "unsubscribe a contact"})).await;
    assert_eq!(
        names(&page),
        ["crm.update_list_status_for_contact"],
        "{page}"
    );
}
