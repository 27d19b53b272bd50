//! A query that asks for one page (`limit`, `offset`) and labels the rows it
//! should hold (`expectedPage`) is scored on that page: its recall is the
//! share of those rows the page holds, not of every relevant tool, and the
//! report counts the pages that are exactly the labelled list.

use connecta_eval::{evaluate, load, render_markdown};

const CORPUS: &str = r#"{
  "schemaVersion": 1,
  "name": "paging",
  "connectors": [{
    "id": "crm",
    "description": "Customer records",
    "tools": [
      {"name": "list_contacts", "description": "List contacts"},
      {"name": "get_contact", "description": "Get one contact"},
      {"name": "search_contacts", "description": "Search contacts by name"},
      {"name": "create_contact", "description": "Create a contact"},
      {"name": "list_deals", "description": "List deals"}
    ]
  }],
  "queries": []
}"#;

/// The corpus with `queries` in place of its empty list.
fn corpus_with(queries: &str) -> connecta_eval::Corpus {
    load(&CORPUS.replace(r#""queries": []"#, &format!(r#""queries": {queries}"#)))
        .expect("corpus parses")
}

#[test]
fn a_page_query_is_scored_against_its_expected_rows() {
    // Browse (empty query) in catalog order: the second page of two rows is
    // search_contacts, create_contact.
    let right = corpus_with(
        r#"[{"id": "p", "category": "paginated", "query": "", "limit": 2, "offset": 2,
             "relevant": ["crm.list_contacts", "crm.get_contact", "crm.search_contacts", "crm.create_contact"],
             "expectedPage": ["crm.search_contacts", "crm.create_contact"]}]"#,
    );
    let report = evaluate(&right);
    let case = &report.cases[0];
    assert_eq!(
        case.returned,
        ["crm.search_contacts", "crm.create_contact"],
        "the second page"
    );
    assert_eq!(case.expected_page, Some(true));
    assert!((case.recall - 1.0).abs() < f64::EPSILON, "{}", case.recall);
    assert_eq!(report.overall.expected_page, Some(1.0));
    assert_eq!(report.overall.expected_page_queries, 1);
    assert!(
        render_markdown(&report, false).contains("Expected pages: 1 of 1 exactly as labelled."),
        "{}",
        render_markdown(&report, false)
    );
}

#[test]
fn a_page_in_another_order_or_with_other_rows_is_not_the_expected_page() {
    let wrong = corpus_with(
        r#"[{"id": "p", "category": "paginated", "query": "", "limit": 2, "offset": 2,
             "relevant": ["crm.create_contact", "crm.search_contacts", "crm.list_deals"],
             "expectedPage": ["crm.create_contact", "crm.list_deals"]}]"#,
    );
    let report = evaluate(&wrong);
    let case = &report.cases[0];
    assert_eq!(case.expected_page, Some(false));
    // One of the two labelled rows is on the page.
    assert!((case.recall - 0.5).abs() < f64::EPSILON, "{}", case.recall);
    assert_eq!(report.overall.expected_page, Some(0.0));
    let text = render_markdown(&report, false);
    assert!(text.contains("Expected pages: 0 of 1"), "{text}");
    assert!(
        text.contains("`p` [paginated]"),
        "a wrong page is listed: {text}"
    );
}

#[test]
fn a_page_further_on_is_not_judged_by_the_rankings_first_row() {
    let later = corpus_with(
        r#"[{"id": "p", "category": "paginated", "query": "", "limit": 2, "offset": 2,
             "relevant": ["crm.list_contacts", "crm.search_contacts", "crm.create_contact"],
             "expectedTop": "crm.list_contacts",
             "expectedPage": ["crm.search_contacts", "crm.create_contact"]}]"#,
    );
    let report = evaluate(&later);
    assert_eq!(report.cases[0].expected_top1, None);
    assert_eq!(report.overall.expected_top_queries, 0);
    // The first page is.
    let first = corpus_with(
        r#"[{"id": "p", "category": "paginated", "query": "", "limit": 2,
             "relevant": ["crm.list_contacts", "crm.get_contact"],
             "expectedTop": "crm.list_contacts"}]"#,
    );
    assert_eq!(evaluate(&first).cases[0].expected_top1, Some(true));
}

#[test]
fn queries_without_an_expected_page_keep_every_relevant_tool_in_recall() {
    let plain = corpus_with(
        r#"[{"id": "q", "category": "paginated", "query": "", "limit": 2,
             "relevant": ["crm.list_contacts", "crm.get_contact", "crm.search_contacts", "crm.create_contact"]}]"#,
    );
    let report = evaluate(&plain);
    let case = &report.cases[0];
    assert_eq!(case.expected_page, None);
    assert!((case.recall - 0.5).abs() < f64::EPSILON, "{}", case.recall);
    assert_eq!(report.overall.expected_page_queries, 0);
    assert!(!render_markdown(&report, false).contains("Expected pages"));
}
