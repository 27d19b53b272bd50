//! A tool that matches a query only by its connector (the connector's id,
//! or words of its configured description) is no answer to a query it
//! leaves words of unmatched. These are the studied corpora's queries
//! where that rule decides, both ways: the negatives it empties, and the
//! answer whose own words carry the connector's id, which it keeps.

mod studied;

#[test]
fn a_connector_alone_answers_no_query_it_leaves_words_of() {
    for (corpus, id) in [
        (include_str!("../corpus/holdout-8.json"), "h8-n8"),
        (include_str!("../corpus/holdout-33.json"), "h33-n6"),
    ] {
        let (query, returned) = studied::returned(corpus, id);
        assert!(returned.is_empty(), "{id} {query:?}: {returned:?}");
    }
}

#[test]
fn a_connector_id_the_tools_own_words_carry_counts_as_their_own() {
    // "time" is the `time` connector's id, and its tools' names and
    // descriptions say it: they answer, beside `sentry`'s "timing".
    let (query, returned) = studied::returned(include_str!("../corpus/holdout.json"), "h-c5");
    assert!(
        returned.contains(&"time.get_current_time".to_owned()),
        "{query:?}: {returned:?}"
    );
}
