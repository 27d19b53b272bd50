//! Page builder behaviour: bounds, pagination, key lists, guides, sizes.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use connecta_core::catalog::{Catalog, ToolDef};
use connecta_core::config::Guide;
use connecta_core::error::ErrorCode;
use connecta_core::policy::Annotations;

fn tool(name: &str, desc: &str, ro: Option<bool>) -> ToolDef {
    ToolDef {
        name: name.into(),
        title: None,
        description: Some(desc.into()),
        input_schema: connecta_core::Schema::from(json!({
            "type": "object",
            "properties": {"repo": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["repo"]
        })),
        output_schema: Some(connecta_core::Schema::from(
            json!({"type": "array", "items": {"type": "string"}}),
        )),
        annotations: Annotations {
            read_only_hint: ro,
            ..Annotations::default()
        },
    }
}

fn catalog() -> CatalogIndex {
    let mut tools = vec![
        tool(
            "list_issues",
            "List issues in a repository. Paginated.",
            Some(true),
        ),
        tool("create_issue", "Create a new issue", Some(false)),
        tool("get_issue", "Get one issue", Some(true)),
        tool("delete_issue", "Delete an issue", None),
    ];
    for i in 0..20 {
        tools.push(tool(
            &format!("issue_report_{i}"),
            "Issue report",
            Some(true),
        ));
    }
    CatalogIndex::with_description(Arc::new(Catalog::new("gh", tools)), Some("GitHub"))
}

fn guide() -> Guide {
    Guide {
        text: "Always pass repo as owner/name. Long guide text follows.".into(),
        summary: "Always pass repo as owner/name.".into(),
        required: true,
    }
}

fn page(args: Value, surface: Surface, sources: &[Source<'_>]) -> Result<Value, ToolError> {
    let req = parse_search_args(&args, surface)?;
    search_page(&req, sources)
}

fn addresses(p: &Value) -> Vec<String> {
    p["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["address"].as_str().expect("address").to_owned())
        .collect()
}

#[test]
fn s3_limit_bounds_are_invalid_args_with_a_hint() {
    let ix = catalog();
    let sources = [Source::ready(&ix)];
    for bad in [json!(0), json!(101), json!(-1), json!(2.5), json!("8")] {
        let e = page(
            json!({"query": "issue", "limit": bad}),
            Surface::SearchTools,
            &sources,
        )
        .expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidArgs);
        assert!(e.message.contains("1 to 100"), "{}", e.message);
    }
    for ok in [1, 100] {
        assert!(
            page(
                json!({"query": "issue", "limit": ok}),
                Surface::SearchTools,
                &sources
            )
            .is_ok()
        );
    }
}

#[test]
fn s1_pages_walk_the_whole_result_without_gaps_or_repeats() {
    let ix = catalog();
    let sources = [Source::ready(&ix)];
    let all = page(
        json!({"query": "issue", "limit": 100}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    let total = all["total"].as_u64().expect("total") as usize;
    assert_eq!(addresses(&all).len(), total);
    assert_eq!(all["hasMore"], false);
    assert!(all.get("nextOffset").is_none());
    let mut walked = Vec::new();
    let mut offset = 0u64;
    loop {
        let p = page(
            json!({"query": "issue", "limit": 7, "offset": offset}),
            Surface::SearchTools,
            &sources,
        )
        .expect("page");
        assert_eq!(p["total"].as_u64(), Some(total as u64));
        assert_eq!(p["offset"].as_u64(), Some(offset));
        assert_eq!(p["limit"], 7);
        walked.extend(addresses(&p));
        if p["hasMore"] == false {
            assert!(p.get("nextOffset").is_none());
            break;
        }
        offset = p["nextOffset"].as_u64().expect("nextOffset");
    }
    assert_eq!(walked, addresses(&all));
    // An offset past the end is an empty page, not an error.
    let p = page(
        json!({"query": "issue", "offset": 1000}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert_eq!(addresses(&p).len(), 0);
    assert_eq!(p["hasMore"], false);
}

#[test]
fn default_limit_is_eight_and_every_entry_has_its_canonical_address() {
    let ix = catalog();
    let p = page(
        json!({"query": "issue"}),
        Surface::SearchTools,
        &[Source::ready(&ix)],
    )
    .expect("page");
    assert_eq!(p["limit"], 8);
    assert_eq!(addresses(&p).len(), 8);
    assert_eq!(p["nextOffset"], 8);
    for t in p["tools"].as_array().expect("tools") {
        let name = t["name"].as_str().expect("name");
        assert_eq!(t["address"], format!("gh.{name}"));
    }
}

#[test]
fn search_tools_defaults_to_the_compact_input_shape_and_no_key_lists() {
    let ix = catalog();
    let p = page(
        json!({"query": "list issues"}),
        Surface::SearchTools,
        &[Source::ready(&ix)],
    )
    .expect("page");
    let first = &p["tools"][0];
    assert_eq!(first["address"], "gh.list_issues");
    assert_eq!(
        first["inputSchema"],
        "{ repo: string; limit?: integer /* >= 1 */ }"
    );
    assert_eq!(first["readOnly"], true);
    assert_eq!(first["description"], "List issues in a repository. …");
    assert!(first.get("outputSchema").is_none());
    assert!(first.get("inputKeys").is_none());
    let e = page(
        json!({"query": "x", "includeSchemaKeys": true}),
        Surface::SearchTools,
        &[Source::ready(&ix)],
    )
    .expect_err("code-mode only");
    assert_eq!(e.code, ErrorCode::InvalidArgs);
}

#[test]
fn s2_code_mode_carries_key_lists_from_the_same_walk() {
    let ix = catalog();
    let sources = [Source::ready(&ix)];
    let p = page(
        json!({"query": "list issues", "includeSchemas": "compact"}),
        Surface::CodeMode,
        &sources,
    )
    .expect("page");
    let first = &p["tools"][0];
    assert_eq!(first["inputKeys"], json!(["repo", "limit"]));
    assert_eq!(first["requiredInputKeys"], json!(["repo"]));
    assert_eq!(first["outputSchema"], "string[]");
    assert!(
        first.get("outputKeys").is_none(),
        "an array output has no key list"
    );
    let p = page(
        json!({"query": "list issues", "includeSchemas": "json"}),
        Surface::CodeMode,
        &sources,
    )
    .expect("page");
    assert_eq!(p["tools"][0]["inputSchema"]["type"], "object");
    assert_eq!(p["tools"][0]["inputKeys"], json!(["repo", "limit"]));
    assert_eq!(p["tools"][0]["annotations"]["readOnlyHint"], true);
    let p = page(
        json!({"query": "list issues", "includeSchemaKeys": false}),
        Surface::CodeMode,
        &sources,
    )
    .expect("page");
    assert!(p["tools"][0].get("inputKeys").is_none());
}

#[test]
fn guides_appear_once_per_connector_per_page() {
    let ix = catalog();
    let g = guide();
    let sources = [Source::with_guide(&ix, Some(&g))];
    let p = page(json!({"query": "issue"}), Surface::SearchTools, &sources).expect("page");
    let tools = p["tools"].as_array().expect("tools");
    assert_eq!(tools[0]["guideSummary"], "Always pass repo as owner/name.");
    assert_eq!(tools[0]["guideRequired"], true);
    assert!(tools[0].get("guide").is_none());
    assert!(tools[1..].iter().all(|t| t.get("guideSummary").is_none()));
    let p = page(
        json!({"query": "issue", "fullDescriptions": true}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert_eq!(p["tools"][0]["guide"], g.text);
    assert!(
        p["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["description"] == "List issues in a repository. Paginated."),
        "fullDescriptions keeps the whole text"
    );
}

#[test]
fn s1a_safety_filter_uses_the_call_path_predicate() {
    let ix = catalog();
    let sources = [Source::ready(&ix)];
    let ro = page(
        json!({"query": "issue", "safety": "readOnly", "limit": 100}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    let ar = page(
        json!({"query": "issue", "safety": "approvalRequired", "limit": 100}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    let all = page(
        json!({"query": "issue", "limit": 100}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert!(
        ro["tools"]
            .as_array()
            .expect("t")
            .iter()
            .all(|t| t["readOnly"] == true)
    );
    assert!(
        ar["tools"]
            .as_array()
            .expect("t")
            .iter()
            .all(|t| t["readOnly"] == false)
    );
    let ar_addr = addresses(&ar);
    assert!(
        ar_addr.contains(&"gh.delete_issue".to_string()),
        "missing annotations fail closed"
    );
    assert_eq!(
        ro["total"].as_u64().unwrap_or(0) + ar["total"].as_u64().unwrap_or(0),
        all["total"].as_u64().unwrap_or(1)
    );
}

#[test]
fn empty_query_browses_and_function_words_are_a_clear_no_match() {
    let ix = catalog();
    let sources = [Source::ready(&ix)];
    let p = page(json!({}), Surface::SearchTools, &sources).expect("page");
    assert_eq!(p["total"], 24);
    assert!(p.get("matchMode").is_none());
    let p = page(
        json!({"query": "how do I do it"}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert_eq!(p["total"], 0);
    assert_eq!(p["matchMode"], "none");
    assert_eq!(p["queryAnalysis"]["ignored"][0], "how");
    assert!(p["hint"].as_str().is_some());
}

#[test]
fn partial_pages_say_so_with_a_short_analysis() {
    let ix = catalog();
    let p = page(
        json!({"query": "create issue zebra"}),
        Surface::SearchTools,
        &[Source::ready(&ix)],
    )
    .expect("page");
    assert_eq!(p["matchMode"], "partial");
    assert_eq!(p["queryAnalysis"]["unmatched"], json!(["zebra"]));
    assert_eq!(p["tools"][0]["address"], "gh.create_issue");
}

#[test]
fn a_connector_ids_words_are_its_parts_and_its_whole_words() {
    for (id, word) in [
        ("slack", "slack"),
        ("slack-prod", "slack"),
        ("jiraCloud", "jira"),
        ("PagerDuty", "pagerduty"),
        ("eu_PagerDuty", "pagerduty"),
    ] {
        assert!(
            id_words(id).contains(&word.to_owned()),
            "{id}: {:?}",
            id_words(id)
        );
    }
}

#[test]
fn connector_scope_unknown_and_failed_connectors() {
    let ix = catalog();
    let down = ToolError::new(ErrorCode::CatalogLookupFailed, "jira is down");
    let sources = [Source::ready(&ix), Source::failed("jiraCloud", &down)];
    let e = page(
        json!({"query": "issue", "connector": "gj"}),
        Surface::SearchTools,
        &sources,
    )
    .expect_err("unknown");
    assert_eq!(e.code, ErrorCode::InvalidArgs);
    assert_eq!(e.details["suggestions"][0], "gh");
    let e = page(
        json!({"query": "issue", "connector": "jiraCloud"}),
        Surface::SearchTools,
        &sources,
    )
    .expect_err("down");
    assert_eq!(e.code, ErrorCode::CatalogLookupFailed);
    let p = page(json!({"query": "issue"}), Surface::SearchTools, &sources).expect("page");
    assert_eq!(p["unavailable"][0]["connector"], "jiraCloud");
    // A service whose connector is down is not "served by no connector".
    let p = page(
        json!({"query": "transition the jira sprint board"}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert_eq!(p["matchMode"], "none", "{p}");
    let hint = p["hint"].as_str().expect("a hint");
    assert!(
        hint.contains("names jira, whose connector is unavailable"),
        "{hint}"
    );
    // One missing and one down: both are named.
    let p = page(
        json!({"query": "move the jira sprint board to trello"}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    let hint = p["hint"].as_str().expect("a hint");
    assert!(
        hint.contains("names trello, which no connector here serves, and jira"),
        "{hint}"
    );
    let p = page(
        json!({"query": "issue", "connector": "gh"}),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert!(p.get("unavailable").is_none());
}

#[test]
fn s3_pages_over_the_ceiling_are_result_too_large_with_a_hint() {
    let big: Vec<ToolDef> = (0..100)
        .map(|i| ToolDef {
            name: format!("bulk_{i}"),
            title: None,
            description: Some("bulk ".repeat(1000)),
            input_schema: connecta_core::Schema::from(json!({"type": "object", "properties": {"x": {"type": "string", "description": "y".repeat(3000)}}})),
            output_schema: None,
            annotations: Annotations::default(),
        })
        .collect();
    let ix = CatalogIndex::build(Arc::new(Catalog::new("big", big)));
    let sources = [Source::ready(&ix)];
    let e = page(
        json!({"query": "bulk", "limit": 100, "includeSchemas": "json", "fullDescriptions": true}),
        Surface::SearchTools,
        &sources,
    )
    .expect_err("too large");
    assert_eq!(e.code, ErrorCode::ResultTooLarge);
    assert!(e.message.contains("smaller limit"));
    // Compact shapes and short descriptions fit.
    assert!(
        page(
            json!({"query": "bulk", "limit": 100}),
            Surface::SearchTools,
            &sources
        )
        .is_ok()
    );
}

#[test]
fn unknown_arguments_and_bad_types_are_refused() {
    for (args, surface) in [
        (json!({"q": "x"}), Surface::SearchTools),
        (json!({"query": 3}), Surface::SearchTools),
        (json!({"safety": "safe"}), Surface::CodeMode),
        (json!({"includeSchemas": "yaml"}), Surface::CodeMode),
        (json!({"offset": -2}), Surface::CodeMode),
        (json!([1]), Surface::CodeMode),
        (json!({"query": "x".repeat(2000)}), Surface::SearchTools),
    ] {
        let e = parse_search_args(&args, surface).expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidArgs, "{args}");
    }
    assert!(parse_search_args(&Value::Null, Surface::SearchTools).is_ok());
}

#[test]
fn the_size_bound_is_never_short_and_the_counter_is_exact() {
    let worst = "\u{1}".repeat(10);
    for v in [
        json!({"a\"b": ["x\ny", "\u{1}", "é\t", true, false, null, {"k": "\\", "e": []}]}),
        json!({"n": -9223372036854775808i64, "f": -1.2345678901234567e-300, "": {}}),
        json!([worst]),
    ] {
        let exact = serde_json::to_vec(&v).expect("serializes").len();
        assert!(size_bound(&v) >= exact, "{v}");
        let mut counter = ByteCounter(0);
        serde_json::to_writer(&mut counter, &v).expect("serializes");
        assert_eq!(counter.0, exact);
    }
    // Ten control characters escape to sixty bytes: the bound is tight.
    assert_eq!(
        size_bound(&json!(worst)),
        serde_json::to_vec(&json!(worst)).map_or(0, |v| v.len())
    );
}

#[test]
fn a_no_match_by_the_opposite_operation_says_which_way_in_its_hint() {
    let tools = vec![
        tool("list_videos", "List the videos of a channel.", Some(true)),
        tool("get_video", "Get one video of a channel.", Some(true)),
        tool(
            "create_playlist",
            "Create a playlist on a channel.",
            Some(false),
        ),
        tool(
            "delete_playlist",
            "Delete a playlist of a channel.",
            Some(false),
        ),
    ];
    let ix = CatalogIndex::build(Arc::new(Catalog::new("tube", tools)));
    let sources = [Source::ready(&ix)];
    let hint = |query: &str| {
        let p = page(json!({ "query": query }), Surface::SearchTools, &sources).expect("page");
        assert_eq!(p["matchMode"], "none", "{p}");
        p["hint"].as_str().expect("a hint").to_owned()
    };
    assert!(hint("upload a video to the channel").contains("only read"));
    assert!(hint("show the playlists of the channel by views").contains("all change something"));
    // Tools that carry every word are demoted, not left out.
    let p = page(
        json!({ "query": "show the playlists of the channel" }),
        Surface::SearchTools,
        &sources,
    )
    .expect("page");
    assert_eq!(p["tools"][0]["name"], "create_playlist", "{p}");
    // Tools that change, but not in the way asked.
    assert!(
        hint("rename the playlist of the channel").contains("another kind of change"),
        "{}",
        hint("rename the playlist of the channel")
    );
    // Words that match nothing keep the plain hint.
    assert!(hint("order a pizza").contains("no tool plausibly matches"));
    // A service nothing here serves is named.
    assert!(
        hint("create a playlist on spotify")
            .contains("names spotify, which no connector here serves"),
        "{}",
        hint("create a playlist on spotify")
    );
}
