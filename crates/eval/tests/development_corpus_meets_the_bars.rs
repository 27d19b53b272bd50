//! The development corpus meets the discovery bars of `PERFORMANCE.md`
//! through the real page builder. (The holdout corpus is reported by the
//! binary, never asserted here: it is not a tuning target.)

use connecta_eval::{BARS, evaluate, load};

#[test]
fn development_corpus_meets_the_bars() {
    let text = include_str!("../corpus/development.json");
    let corpus = load(text).expect("corpus parses");
    assert!(corpus.queries.len() >= 80, "at least 80 queries");
    let tools: usize = corpus.connectors.iter().map(|c| c.tools.len()).sum();
    assert!(tools >= 150 && corpus.connectors.len() >= 12);
    let report = evaluate(&corpus);
    let o = &report.overall;
    assert!(o.top1.is_some_and(|t| t >= BARS.top1), "top-1 {:?}", o.top1);
    assert!(
        o.recall.is_some_and(|r| r >= BARS.recall),
        "recall {:?}",
        o.recall
    );
    assert!(
        o.false_positive_rate
            .is_some_and(|f| f <= BARS.false_positive_rate),
        "false positives {:?}",
        o.false_positive_rate
    );
    assert!(o.precision >= BARS.precision, "precision {}", o.precision);
    assert!(report.missed_bars.is_empty(), "{:?}", report.missed_bars);
    for category in [
        "direct",
        "conversational",
        "multi-intent",
        "short",
        "negative",
        "connector-filtered",
        "paginated",
    ] {
        assert!(
            report.categories.contains_key(category),
            "category {category} present"
        );
    }
}

#[test]
fn a_broken_ranking_would_fail_the_bars() {
    // The gate is live: labelling every query with an impossible answer
    // must miss top-1 and recall.
    let text = include_str!("../corpus/development.json");
    let mut corpus = load(text).expect("corpus parses");
    for q in &mut corpus.queries {
        if !q.relevant.is_empty() {
            q.relevant = vec!["nowhere.nothing".into()];
        }
    }
    let report = evaluate(&corpus);
    assert!(!report.missed_bars.is_empty());
}
