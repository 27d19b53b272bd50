//! Ranking behaviour: tiers, connector words, no-match, partial analysis,
//! the safety filter and the window; words (`words`), intent (`intent`),
//! scope (`scope`) and the cut (`cut`) in their own files.

use super::*;
use crate::op::Op;
use connecta_core::catalog::{Catalog, ToolDef};
use connecta_core::policy::Annotations;
use serde_json::json;
use std::sync::Arc;

mod cut;
mod intent;
mod scope;
mod words;

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

fn unannotated(name: &str, desc: &str) -> ToolDef {
    ToolDef {
        annotations: Annotations::default(),
        ..tool(name, desc, false)
    }
}
