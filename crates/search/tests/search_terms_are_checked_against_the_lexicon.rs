//! A connector's `search_terms` are checked against the search lexicon
//! where config lowering cannot: a function word, or a word mapped to its
//! own inflection, is refused at its position; accepted entries find the
//! tools named with their word.

use std::collections::HashMap;
use std::sync::Arc;

use connecta_core::catalog::{Catalog, Schema, ToolDef};
use connecta_core::config::parse_config;
use connecta_search::{
    CatalogIndex, Source, Surface, check_search_terms, parse_search_args, search_page,
};
use serde_json::json;

fn config(terms: &str) -> connecta_core::config::Config {
    let text = format!(
        "[auth]\nopen = true\n\n[[connector]]\nid = \"desk\"\ncommand = \"x\"\nsearch_terms = {{ {terms} }}\n"
    );
    parse_config(&text, "c.toml", &HashMap::<String, String>::new()).expect("parses")
}

#[test]
fn function_words_and_inflections_are_refused_where_they_are() {
    let c = config(r#"up = "create", pods = "pod", Closing = "update""#);
    let problems = check_search_terms(&c, connecta_search::Lexicon::builtin());
    let rendered: Vec<String> = problems
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
        .collect();
    assert_eq!(rendered.len(), 2, "{rendered:?}");
    assert!(
        rendered.iter().any(|r| r.starts_with("7:")
            && r.contains("search_terms: \"up\" = \"create\" needs one word")),
        "{rendered:?}"
    );
    assert!(
        rendered
            .iter()
            .any(|r| r.contains("search_terms: \"pods\" = \"pod\" maps a word to itself")),
        "{rendered:?}"
    );
}

#[test]
fn an_accepted_term_finds_the_tools_named_with_its_word_in_any_inflection() {
    let c = config(r#"Closing = "update""#);
    assert!(check_search_terms(&c, connecta_search::Lexicon::builtin()).is_empty());
    let tool = |name: &str, description: &str| ToolDef {
        name: name.into(),
        title: None,
        description: Some(description.into()),
        input_schema: Schema::from(json!({"type": "object"})),
        output_schema: None,
        annotations: Default::default(),
    };
    let catalog = Arc::new(Catalog::new(
        "desk",
        vec![
            tool("get_ticket", "Get a ticket by id."),
            tool("update_ticket", "Change a ticket's status."),
        ],
    ));
    let index = CatalogIndex::with_config(catalog, None, &c.connectors[0].search_terms);
    let req = parse_search_args(&json!({"query": "close the ticket"}), Surface::SearchTools)
        .expect("arguments");
    let page = search_page(&req, &[Source::ready(&index)]).expect("a page");
    assert_eq!(page["tools"][0]["name"], "update_ticket", "{page}");
}
