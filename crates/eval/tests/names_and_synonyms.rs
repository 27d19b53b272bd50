//! A ranking rule, checked on the second holdout corpus (a development set
//! since its first run was studied), where it changed a first row: a verb
//! of a group of the lexicon in the query finds the tool named with
//! another word of the group ("remove an asana task" finds
//! `asana_delete_task`), and its evidence puts it first.

use connecta_eval::{CorpusQuery, build, load, run_query};

fn query(text: &str) -> CorpusQuery {
    CorpusQuery {
        id: None,
        category: "direct".into(),
        query: text.into(),
        relevant: Vec::new(),
        expected_top: None,
        connector: None,
        safety: None,
        limit: None,
        offset: None,
        paginate: None,
        expected_page: None,
    }
}

#[test]
fn first_rows_follow_synonyms() {
    let corpus = load(include_str!("../corpus/holdout-2.json")).expect("corpus parses");
    let built = build(&corpus);
    for (text, first) in [
        ("remove an asana task", "asana.asana_delete_task"),
        ("modify an asana task", "asana.asana_update_task"),
    ] {
        let case = run_query(&built, &query(text));
        assert!(case.error.is_none(), "{text}: {:?}", case.error);
        assert_eq!(
            case.returned.first().map(String::as_str),
            Some(first),
            "{text}: {:?}",
            case.returned
        );
    }
}
