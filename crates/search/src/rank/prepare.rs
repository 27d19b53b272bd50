//! The second stage: the query's terms weighed over exactly the catalogs
//! searched, and the catalogs each part of the query may be answered by.
//!
//! - Every scored term gets an IDF weight; a term no tool carries itself
//!   weighs half, unless it names a well-known service.
//! - A content word that the catalogs knowing it know only as their
//!   connector's id ("figma") names those connectors: other catalogs' tools
//!   are not answers. In a query of several parts, a part that names no
//!   connector may be answered by any catalog, which then sees only that
//!   part's words.
//! - Services the query names that no catalog knows hold it to a stricter
//!   bar (unless it names a connector or the caller scoped it).

use crate::index::CatalogIndex;
use crate::lexicon::Lexicon;
use crate::op::{Change, Op};
use crate::query::Query;
use crate::tokenize::{TermKind, for_each_term};
use connecta_core::policy::Safety;

use super::bind::{QTerm, known_id};
use super::{MAX_QUERY_TERMS, SearchQuery, UNKNOWN_WEIGHT, idf};

/// The query as every index is scored against it.
#[derive(Debug)]
pub(super) struct Prepared {
    /// Raw term position → its distinct text.
    pub raw_distinct: Vec<usize>,
    /// Per distinct text: some occurrence of it is not a function word.
    pub distinct_scored: Vec<bool>,
    /// Per raw query term: an article ("a", "an", "the").
    pub articles: Vec<bool>,
    /// Positions in the raw sequence of the scored terms, in order.
    pub terms: Vec<usize>,
    /// Scored term `k` → its distinct text.
    pub term_distinct: Vec<usize>,
    pub weights: Vec<f32>,
    pub required_mask: u32,
    pub total_weight: f32,
    pub safety: Safety,
    /// Per index: its tools may answer (the query names no connector, or
    /// names this one).
    pub in_scope: Vec<bool>,
    /// Per index: a query of several parts names other connectors in some
    /// parts, and this index's tools answer its other parts by name only
    /// (empty: none does).
    pub by_name_only: Vec<bool>,
    /// The terms of the parts naming no connector that such a name must
    /// carry (the generic read verbs aside).
    pub open_words: u32,
    /// What the query asks to do: tools doing the opposite are demoted.
    pub op: Op,
    /// Services the query names that no catalog here knows: an answer
    /// must then cover half its weight by itself.
    pub missing: Vec<String>,
    /// Terms that name a well-known service.
    pub service_mask: u32,
    /// The required terms a tool spelled by the query must carry to be the
    /// whole answer: every one, or in a query asking for one thing, those
    /// some catalog searched knows.
    pub carried: u32,
    pub several_parts: bool,
    /// The caller chose the connector.
    pub scoped: bool,
    /// The kinds of change the query's verbs ask for (empty: none in
    /// particular), and those verbs as scored terms.
    pub changes: Vec<(Change, String)>,
    pub verb_mask: u32,
    /// Term ids of the distinct texts: `local[source * n_distinct + d]`.
    pub local: Vec<Option<u32>>,
    pub n_distinct: usize,
}

/// The usable terms of `raw`: distinct scored terms, and numbers only when
/// there is nothing else (at most [`MAX_QUERY_TERMS`]); and the function
/// words, as the caller wrote them.
pub(super) fn select(raw: &[QTerm]) -> (Vec<usize>, Vec<String>) {
    let mut terms: Vec<usize> = Vec::new();
    for (i, t) in raw.iter().enumerate() {
        let usable = t.kind == TermKind::Scored || t.kind == TermKind::Soft;
        if usable && !terms.iter().any(|&j| raw[j].text == t.text) && terms.len() < MAX_QUERY_TERMS
        {
            terms.push(i);
        }
    }
    let mut ignored: Vec<String> = Vec::new();
    for t in raw.iter().filter(|t| t.kind == TermKind::Stop) {
        if !ignored.contains(&t.surface) {
            ignored.push(t.surface.clone());
        }
    }
    (terms, ignored)
}

/// A term is required (counted for coverage) when it is scored, or when
/// the query has nothing but numbers.
pub(super) fn required(raw: &[QTerm], i: usize) -> bool {
    raw[i].kind == TermKind::Scored || raw.iter().all(|t| t.kind != TermKind::Scored)
}

/// The distinct texts of the raw sequence (`raw_distinct`, and the first
/// position of each), looked up once per index (`local`).
fn distinct(
    raw: &[QTerm],
    indexes: &[&CatalogIndex],
) -> (Vec<usize>, Vec<usize>, Vec<Option<u32>>) {
    let mut distinct: Vec<usize> = Vec::new();
    let mut raw_distinct: Vec<usize> = Vec::with_capacity(raw.len());
    for (i, t) in raw.iter().enumerate() {
        match distinct.iter().position(|&j| raw[j].text == t.text) {
            Some(d) => raw_distinct.push(d),
            None => {
                raw_distinct.push(distinct.len());
                distinct.push(i);
            }
        }
    }
    let local = indexes
        .iter()
        .flat_map(|ix| {
            distinct
                .iter()
                .map(|&i| raw[i].shared.and_then(|id| ix.local_term(id)))
        })
        .collect();
    (distinct, raw_distinct, local)
}

/// IDF weights of the scored terms over exactly `indexes`, and which of
/// them some catalog knows at all.
fn weights(
    raw: &[QTerm],
    distinct: &[usize],
    term_distinct: &[usize],
    local: &[Option<u32>],
    indexes: &[&CatalogIndex],
    service_terms: &[String],
) -> (Vec<f32>, u32) {
    let n_distinct = distinct.len();
    let n_docs: usize = indexes.iter().map(|ix| ix.len()).sum();
    let mut known_mask = 0u32;
    let weights = term_distinct
        .iter()
        .enumerate()
        .map(|(k, &d)| {
            let mut known = false;
            let df: usize = indexes
                .iter()
                .enumerate()
                .filter_map(|(src, ix)| {
                    let id = local[src * n_distinct + d]?;
                    known = true;
                    Some(ix.doc_freq(id))
                })
                .sum();
            known_mask |= u32::from(known) << k;
            // A word no tool carries itself (no catalog knows it, or only
            // as a connector's description word or a name word's group
            // word) is as often a value or context ("yesterday", a name)
            // as the operation nobody here offers: it weighs less, unless
            // it names a service.
            let text = &raw[distinct[d]].text;
            if df == 0 && !service_terms.contains(text) {
                idf(n_docs, df) * UNKNOWN_WEIGHT
            } else {
                idf(n_docs, df)
            }
        })
        .collect();
    (weights, known_mask)
}

/// The prepared query: weights, scope and masks.
pub(super) fn prepare(
    lex: &Lexicon,
    q: &SearchQuery<'_>,
    query: &Query,
    raw: &[QTerm],
    terms: Vec<usize>,
    indexes: &[&CatalogIndex],
) -> Prepared {
    let (distinct, raw_distinct, local) = distinct(raw, indexes);
    let n_distinct = distinct.len();
    let term_distinct: Vec<usize> = terms.iter().map(|&i| raw_distinct[i]).collect();
    let mut service_terms: Vec<String> = Vec::new();
    for s in &query.services {
        for_each_term(lex, s, |t, _| service_terms.push(t.to_owned()));
    }
    let (weights, known_mask) = weights(
        raw,
        &distinct,
        &term_distinct,
        &local,
        indexes,
        &service_terms,
    );
    let required_mask: u32 = (0..terms.len())
        .filter(|&k| required(raw, terms[k]))
        .fold(0, |m, k| m | 1 << k);
    let mut p = Prepared {
        articles: raw
            .iter()
            .map(|t| lex.word(&t.text).article.is_some())
            .collect(),
        distinct_scored: distinct_scored(raw, &raw_distinct, n_distinct),
        total_weight: (0..terms.len())
            .filter(|&k| required_mask & 1 << k != 0)
            .map(|k| weights[k])
            .sum::<f32>()
            .max(f32::EPSILON),
        verb_mask: (0..terms.len())
            .filter(|&k| {
                query
                    .intent
                    .changes
                    .iter()
                    .any(|(_, v)| *v == raw[terms[k]].text)
            })
            .fold(0, |m, k| m | 1 << k),
        service_mask: (0..terms.len())
            .filter(|&k| service_terms.contains(&raw[terms[k]].text))
            .fold(0, |m, k| m | 1 << k),
        safety: q.safety,
        op: query.intent.op,
        changes: query.intent.changes.clone(),
        several_parts: query.several_parts,
        scoped: q.scoped,
        in_scope: vec![true; indexes.len()],
        by_name_only: Vec::new(),
        open_words: 0,
        missing: Vec::new(),
        carried: 0,
        raw_distinct,
        term_distinct,
        weights,
        required_mask,
        local,
        n_distinct,
        terms,
    };
    let names_connector = super::scope::scope(lex, raw, indexes, &mut p);
    // Services no catalog here knows say what the query is about ("the
    // slack channel"), unless it names a connector or the caller chose
    // one: beside a named connector, they are its objects.
    if !q.scoped && !names_connector {
        p.missing = query
            .services
            .iter()
            .filter(|s| known_id(indexes, &crate::tokenize::stem(s)).is_none())
            .cloned()
            .collect();
    }
    p.carried = carried(&p, known_mask, names_connector, indexes.len());
    p
}

/// A distinct text is "scored" when some occurrence of it is not a
/// function word.
fn distinct_scored(raw: &[QTerm], raw_distinct: &[usize], n: usize) -> Vec<bool> {
    let mut scored = vec![false; n];
    for (i, t) in raw.iter().enumerate() {
        if t.kind != TermKind::Stop {
            scored[raw_distinct[i]] = true;
        }
    }
    scored
}

/// A query asking for one thing is the tool whose name it spells when that
/// tool carries its other words that some catalog knows: a word none knows
/// ("3pm", a name) is carried by no tool, so it tells no tool from another.
fn carried(p: &Prepared, known_mask: u32, names_connector: bool, n_indexes: usize) -> u32 {
    if p.several_parts {
        p.required_mask
    } else if !names_connector {
        known_mask & p.required_mask
    } else {
        (0..p.terms.len())
            .filter(|&k| {
                (0..n_indexes).any(|src| {
                    p.in_scope[src] && p.local[src * p.n_distinct + p.term_distinct[k]].is_some()
                })
            })
            .fold(0, |m, k| m | 1 << k)
            & p.required_mask
    }
}
