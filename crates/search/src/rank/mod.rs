//! Ranking a query across the indexes of the catalogs being searched, in
//! named stages, each reading the one analysis of the query
//! ([`Query::parse`]):
//!
//! 1. [`bind`]: the query's words as a term sequence over these catalogs
//!    (phrasal verbs folded, compounds resolved, implied terms added);
//! 2. [`prepare`]: IDF weights over exactly these catalogs, and the
//!    catalogs each part of the query may be answered by ([`scope`]);
//! 3. the exact name: a query that spells a tool's name is that tool,
//!    first, whatever verb it starts with;
//! 4. the candidates ([`scratch`]): every tool's evidence, its tier, a
//!    guessed mismatch with what the query asks demoted, each judged
//!    plausible or not;
//! 5. the [`cut`]: the plausible answers, and the rest only counted;
//! 6. the analysis: which of the query's words the answers represent.
//!
//! The model is deliberately simple and explainable: a tool earns a term's
//! weight times the strongest field it appears in (name > title >
//! description > connector text); matches are whole terms; tiers come
//! first, then score, then catalog order, so results are deterministic.
//!
//! How it stays fast: an exact name is looked up by the hash of the
//! query's term sequence in each index; evidence is accumulated from the
//! postings into a per-thread scratch array reset lazily (a query touching
//! ten tools costs ten tools); only tools that could be spelled have their
//! name read; and only `offset + limit` hits are ever ordered.

mod bind;
mod cut;
mod names;
mod prepare;
mod scope;
mod score;
mod scratch;
mod topk;

use std::cmp::Ordering;

use connecta_core::policy::Safety;

use crate::index::CatalogIndex;
use crate::lexicon::Lexicon;
use crate::op::Op;
use crate::query::Query;

use bind::QTerm;
use prepare::{Prepared, required};
use score::Cand;
use scratch::{Found, with_scratch};

const W_NAME: f32 = 1.0;
const W_TITLE: f32 = 0.8;
const W_DESC: f32 = 0.55;
/// A query word naming the connector (its id) matches each of its tools.
const W_CONNECTOR: f32 = 0.45;
/// A word of the connector's configured description: topical, weak.
const W_TOPIC: f32 = 0.3;
/// Equal evidence: the tool that needs no approval first.
const READ_ONLY_BONUS: f32 = 0.025;
/// A partial page needs its best match to cover this share of the weight,
/// or to match at least two of the query's words.
const MIN_BEST_COVERAGE: f32 = 0.5;
/// Partial matches are kept only within this ratio of the best evidence
/// (scores without bonuses)…
const KEEP_RATIO: f32 = 0.6;
/// …and a partial match that alone carries a query word down to this.
const RESCUE_RATIO: f32 = 0.3;
/// The share of its IDF that a word no tool carries itself weighs.
const UNKNOWN_WEIGHT: f32 = 0.5;
/// Scored terms beyond this many are ignored (match masks are `u32`).
pub const MAX_QUERY_TERMS: usize = 32;

#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SearchQuery<'a> {
    pub query: &'a str,
    pub safety: Safety,
    /// The caller chose the connector (the `connector` argument): the
    /// query is about that connector's service, whatever else it names.
    pub scoped: bool,
}

impl<'a> SearchQuery<'a> {
    /// A query over every catalog given, not scoped to one connector.
    pub fn new(query: &'a str, safety: Safety) -> SearchQuery<'a> {
        SearchQuery {
            query,
            safety,
            scoped: false,
        }
    }

    /// The same query, scoped by the caller to one connector or not.
    pub fn scoped(self, scoped: bool) -> SearchQuery<'a> {
        SearchQuery { scoped, ..self }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// Empty query: every admitted tool, in catalog order.
    Browse,
    /// Some returned tool matched every scored term (or the exact name).
    All,
    /// No tool matched every term; the plausible partial matches follow.
    Partial,
    /// Nothing plausible matched, or the query had no usable terms.
    None,
}

/// Which of the query's words the results represent. Words are reported as
/// the caller wrote them (lowercased), not as stems.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryAnalysis {
    pub represented: Vec<String>,
    pub unmatched: Vec<String>,
    /// Function words that were not used for scoring.
    pub ignored: Vec<String>,
}

/// One ranked tool: `source` indexes the slice of indexes given to [`rank`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub source: usize,
    pub tool: u32,
    pub tier: u8,
    pub score: f32,
}

#[derive(Debug, Clone)]
pub struct Ranked {
    /// The first `window` hits in rank order (fewer when fewer matched).
    pub hits: Vec<Hit>,
    /// How many tools matched in all.
    pub total: usize,
    pub mode: MatchMode,
    pub analysis: QueryAnalysis,
    /// What the query plainly asks to do, if anything.
    pub asks: Op,
    /// Tools that matched enough of the query's words but do the opposite
    /// of what it asks (demoted, and left out when nothing stronger made
    /// them answers).
    pub opposed: usize,
    /// Tools that matched enough of the query's words but whose names say
    /// they make another kind of change than it asks for (likewise).
    pub other_change: usize,
    /// Well-known services the query names that no catalog searched
    /// knows (lowercased), in query order.
    pub missing_services: Vec<String>,
}

impl Ranked {
    /// Nothing found, with this analysis.
    fn none(analysis: QueryAnalysis) -> Ranked {
        Ranked {
            hits: Vec::new(),
            total: 0,
            mode: MatchMode::None,
            analysis,
            asks: Op::Unknown,
            opposed: 0,
            other_change: 0,
            missing_services: Vec::new(),
        }
    }
}

/// The lexicon `indexes` were built with (the deployment's when there is
/// none).
pub(crate) fn lexicon_of<'a>(indexes: &[&'a CatalogIndex]) -> &'a Lexicon {
    indexes
        .first()
        .map_or_else(|| &**Lexicon::current(), |ix| &**ix.lexicon())
}

/// Rank every admitted tool of `indexes` against `q`, returning the first
/// `window` hits sorted (the rest are only counted, which keeps a query that
/// matches 10,000 tools cheap).
pub fn rank(indexes: &[&CatalogIndex], q: &SearchQuery<'_>, window: usize) -> Ranked {
    if q.query.trim().is_empty() {
        return browse(indexes, q.safety, window);
    }
    let lex = lexicon_of(indexes);
    let query = Query::parse(q.query, lex);
    let raw = bind::bind(&query, lex, indexes);
    let (terms, ignored) = prepare::select(&raw);
    if terms.is_empty() {
        return Ranked::none(QueryAnalysis {
            ignored,
            ..QueryAnalysis::default()
        });
    }
    let p = prepare::prepare(lex, q, &query, &raw, terms, indexes);
    with_scratch(|scratch| {
        let exact = scratch.exact(indexes, &p);
        if !exact.is_empty() {
            return exact_answer(exact, &p, window);
        }
        let found = scratch.candidates(indexes, &p, window);
        if found.plausible == 0 {
            return no_match(&raw, &p, ignored, &found);
        }
        let kept = scratch.cut(&p, found.best_base.max(found.left_out_base));
        if kept.total == 0 {
            // Plausible by two words, but too little of a long query for
            // the cut: nothing to show is a no-match, not an empty partial
            // page.
            return no_match(&raw, &p, ignored, &found);
        }
        let (mode, analysis) = if kept.all_terms {
            (MatchMode::All, QueryAnalysis::default())
        } else {
            (MatchMode::Partial, analysis(&raw, &p, ignored, kept.union))
        };
        Ranked {
            hits: kept.hits,
            total: kept.total,
            mode,
            analysis,
            asks: p.op,
            opposed: found.opposed,
            other_change: found.other_change,
            missing_services: p.missing.clone(),
        }
    })
}

/// The query spells these tools' names exactly: they are the answer.
fn exact_answer(exact: &mut [Cand], p: &Prepared, window: usize) -> Ranked {
    exact.sort_unstable_by(order);
    Ranked {
        hits: exact.iter().take(window).map(Cand::hit).collect(),
        total: exact.len(),
        mode: MatchMode::All,
        analysis: QueryAnalysis::default(),
        asks: p.op,
        opposed: 0,
        other_change: 0,
        missing_services: Vec::new(),
    }
}

/// Which required words the kept tools' masks (`union`) represent, which
/// they leave unmatched, and the function words ignored. A word that made
/// two terms ("where" asks for `location` too) is represented when either
/// matched, and is ignored only when neither is scored.
fn analysis(raw: &[QTerm], p: &Prepared, ignored: Vec<String>, union: u32) -> QueryAnalysis {
    let mut a = QueryAnalysis {
        ignored,
        ..QueryAnalysis::default()
    };
    for (k, &i) in p.terms.iter().enumerate() {
        if !required(raw, i) {
            continue;
        }
        let list = if union & 1 << k != 0 {
            &mut a.represented
        } else {
            &mut a.unmatched
        };
        if !list.contains(&raw[i].surface) {
            list.push(raw[i].surface.clone());
        }
    }
    a.unmatched.retain(|w| !a.represented.contains(w));
    a.ignored
        .retain(|w| !a.represented.contains(w) && !a.unmatched.contains(w));
    a
}

fn order(a: &Cand, b: &Cand) -> Ordering {
    a.tier
        .cmp(&b.tier)
        .then(b.score.total_cmp(&a.score))
        .then(a.source.cmp(&b.source))
        .then(a.tool.cmp(&b.tool))
}

/// BM25's IDF, floored so that a term carried by every tool still counts.
fn idf(n: usize, df: usize) -> f32 {
    let n = n as f32;
    let df = df as f32;
    ((n - df + 0.5) / (df + 0.5) + 1.0).ln() + 0.1
}

/// A clear no-match: every scored word unmatched, and what the query asked
/// against how many matching tools do the opposite.
fn no_match(raw: &[QTerm], p: &Prepared, ignored: Vec<String>, found: &Found) -> Ranked {
    let mut unmatched: Vec<String> = Vec::new();
    for &i in &p.terms {
        if raw[i].kind == crate::tokenize::TermKind::Scored && !unmatched.contains(&raw[i].surface)
        {
            unmatched.push(raw[i].surface.clone());
        }
    }
    Ranked {
        asks: p.op,
        opposed: found.opposed,
        other_change: found.other_change,
        missing_services: p.missing.clone(),
        ..Ranked::none(QueryAnalysis {
            represented: Vec::new(),
            unmatched,
            ignored,
        })
    }
}

/// Whether the safety filter admits a tool, from its read-only bit (the
/// same predicate as [`Safety::admits`]).
fn admits(safety: Safety, read_only: bool) -> bool {
    match safety {
        Safety::All => true,
        Safety::ReadOnly => read_only,
        Safety::ApprovalRequired => !read_only,
    }
}

/// Every admitted tool in catalog order: counted from each index's
/// read-only total, and only the first `window` are visited.
fn browse(indexes: &[&CatalogIndex], safety: Safety, window: usize) -> Ranked {
    let mut hits = Vec::with_capacity(window.min(256));
    let mut total = 0;
    for (source, ix) in indexes.iter().enumerate() {
        let admitted = match safety {
            Safety::All => ix.len(),
            Safety::ReadOnly => ix.read_only_tools(),
            Safety::ApprovalRequired => ix.len() - ix.read_only_tools(),
        };
        total += admitted;
        if admitted == 0 {
            continue;
        }
        for tool in 0..ix.len() as u32 {
            if hits.len() >= window {
                break;
            }
            if admits(safety, ix.read_only(tool)) {
                hits.push(Hit {
                    source,
                    tool,
                    tier: 1,
                    score: 0.0,
                });
            }
        }
    }
    Ranked {
        total,
        mode: MatchMode::Browse,
        hits,
        ..Ranked::none(QueryAnalysis::default())
    }
}

#[cfg(test)]
mod tests;
