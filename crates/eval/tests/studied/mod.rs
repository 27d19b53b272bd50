//! Running one query of a studied corpus, by its id, through the real
//! page builder.

use connecta_eval::{build, load, run_query};

/// The query text of `id` in the corpus `text`, and the addresses its
/// search returned.
pub fn returned(text: &str, id: &str) -> (String, Vec<String>) {
    let corpus = load(text).expect("corpus parses");
    let built = build(&corpus);
    let query = corpus
        .queries
        .iter()
        .find(|q| q.id.as_deref() == Some(id))
        .expect("the query is in its corpus");
    let case = run_query(&built, query);
    assert!(case.error.is_none(), "{id}: {:?}", case.error);
    (query.query.clone(), case.returned)
}
