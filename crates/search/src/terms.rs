//! The operator's search words: a connector's `search_terms`
//! (`jot = "create"`), normalized as the index and the ranker see words,
//! and checked against the lexicon. Config lowering (in core) has checked
//! that each side is one word of letters and digits; what only the lexicon
//! can say (a function word, a word's own inflection) is checked here,
//! located at the entry, for `connecta check` and `serve`.

use connecta_core::config::{Config, Diagnostic, SearchTerm};
use connecta_core::error::clamp_text;

use crate::lexicon::Lexicon;
use crate::tokenize::search_term;

/// Every entry of every connector's `search_terms` that `lexicon` refuses,
/// located in the config file.
pub fn check_search_terms(config: &Config, lexicon: &Lexicon) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for connector in &config.connectors {
        for t in &connector.search_terms {
            if let Err(problem) = normalize(lexicon, t) {
                out.push(Diagnostic {
                    line: t.line,
                    column: t.column,
                    message: format!(
                        "search_terms: \"{}\" = \"{}\" {problem}",
                        clamp_text(&t.query, 40),
                        clamp_text(&t.name, 40)
                    ),
                });
            }
        }
    }
    out
}

/// `(query term, name term)` for each entry the lexicon accepts.
pub(crate) fn normalized(lexicon: &Lexicon, terms: &[SearchTerm]) -> Vec<(String, String)> {
    terms
        .iter()
        .filter_map(|t| normalize(lexicon, t).ok())
        .collect()
}

fn normalize(lexicon: &Lexicon, t: &SearchTerm) -> Result<(String, String), &'static str> {
    match (
        search_term(lexicon, &t.query),
        search_term(lexicon, &t.name),
    ) {
        (Some(q), Some(n)) if q == n => Err("maps a word to itself"),
        (Some(q), Some(n)) => Ok((q, n)),
        _ => Err("needs one word on each side (not a function word like \"the\" or \"up\")"),
    }
}
