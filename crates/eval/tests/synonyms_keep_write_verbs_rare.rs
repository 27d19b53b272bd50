//! Action synonyms must not make a write verb look common. On the
//! development corpus, the only tool that "adds" in git and the only one
//! that "updates a page" are not read-only, so a read-only search for them
//! is a clear no-match. When a synonym's postings counted toward a word's
//! document frequency, "add" and "update" lost weight across the many
//! `create_…`/`edit_…` tools, and the connector's other tools came back as
//! plausible partial matches.

use connecta_eval::{CorpusQuery, build, load, run_query};

fn read_only(query: &str) -> CorpusQuery {
    CorpusQuery {
        id: None,
        category: "negative".into(),
        query: query.into(),
        relevant: Vec::new(),
        expected_top: None,
        connector: None,
        safety: Some("readOnly".into()),
        limit: None,
        offset: None,
        paginate: None,
        expected_page: None,
    }
}

#[test]
fn a_read_only_search_for_a_write_verb_finds_nothing() {
    let corpus = load(include_str!("../corpus/development.json")).expect("corpus parses");
    let built = build(&corpus);
    for query in ["git add", "git_add", "update page", "update_page"] {
        let case = run_query(&built, &read_only(query));
        assert!(case.error.is_none(), "{query}: {:?}", case.error);
        assert!(case.returned.is_empty(), "{query}: {:?}", case.returned);
    }
}
