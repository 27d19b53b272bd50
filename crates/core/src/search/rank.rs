//! Ranking a query across the indexes of the catalogs being searched.
//!
//! The model is deliberately simple and explainable:
//! - every query term gets an IDF weight computed over exactly the catalogs
//!   searched (a term unknown to all of them gets the weight of the rarest);
//! - a tool earns a term's weight times the strongest field it appears in
//!   (name > title > description > connector text); matches are whole terms;
//! - tiers come first: an exact tool name (0), then *complete* matches (1) —
//!   tools carrying every scored term, or whose whole name is spelled out in
//!   the query — then partial matches (2); within a tier, score decides and
//!   catalog order breaks ties, so results are deterministic;
//! - a result list is cut to the plausible answers: a partial page needs a
//!   best match covering at least half the query's weight (otherwise it is a
//!   clear no-match), and partial matches far below the best are dropped.

use std::cmp::Ordering;

use crate::policy::Safety;

use super::index::{CatalogIndex, F_DESC, F_NAME, F_TITLE};
use super::tokenize::{TermKind, query_words, term_kind};

const W_NAME: f32 = 1.0;
const W_TITLE: f32 = 0.8;
const W_DESC: f32 = 0.55;
/// A query word naming the connector (its id) matches each of its tools.
const W_CONNECTOR: f32 = 0.45;
/// A word of the connector's configured description: topical, weak.
const W_TOPIC: f32 = 0.3;
/// Bonus for a complete name (share of the query's total weight), plus a
/// little per name term so the longer spelled-out name wins
/// (`list all organizations` → `List-All-Organizations`).
const COMPLETE_NAME_BONUS: f32 = 0.3;
const NAME_TERM_BONUS: f32 = 0.05;
/// Bonus when the whole name appears in the query as one phrase, and per
/// pair of adjacent query words that are adjacent in the name.
const PHRASE_BONUS: f32 = 0.05;
const BIGRAM_BONUS: f32 = 0.05;
/// Equal evidence: the tool that needs no approval first.
const READ_ONLY_BONUS: f32 = 0.08;
/// A partial page needs its best match to cover this share of the weight,
/// or to match at least two of the query's words.
const MIN_BEST_COVERAGE: f32 = 0.5;
/// Matches are kept only within this ratio of the best evidence (scores
/// without bonuses)…
const KEEP_RATIO: f32 = 0.6;
/// A partial match that alone carries a query word is kept down to this.
const RESCUE_RATIO: f32 = 0.3;
/// …and when they cover at least this share of the query's weight.
const KEEP_COVERAGE: f32 = 0.25;
/// Scored terms beyond this many are ignored (match masks are `u32`).
pub const MAX_QUERY_TERMS: usize = 32;

#[derive(Debug, Clone, Copy)]
pub struct SearchQuery<'a> {
    pub query: &'a str,
    pub safety: Safety,
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
}

struct QTerm {
    text: String,
    surface: String,
    kind: TermKind,
}

/// The query as a term sequence, compounds resolved against the catalogs:
/// `GitHub` is one term where some catalog knows `github`, else two.
fn query_terms(query: &str, indexes: &[&CatalogIndex]) -> Vec<QTerm> {
    let mut raw = Vec::new();
    for word in query_words(query) {
        let known = word
            .joined
            .as_ref()
            .filter(|(t, _)| indexes.iter().any(|ix| ix.term_id(t).is_some()));
        let terms = match known {
            Some(j) => std::slice::from_ref(j),
            None => &word.parts[..],
        };
        for (t, s) in terms {
            raw.push(QTerm {
                kind: term_kind(t, s),
                text: t.clone(),
                surface: s.clone(),
            });
        }
    }
    raw
}

/// Rank every admitted tool of `indexes` against `q`, returning the first
/// `window` hits sorted (the rest are only counted, which keeps a query that
/// matches 10,000 tools cheap).
pub fn rank(indexes: &[&CatalogIndex], q: &SearchQuery<'_>, window: usize) -> Ranked {
    if q.query.trim().is_empty() {
        return browse(indexes, q.safety, window);
    }
    let raw = query_terms(q.query, indexes);
    // Distinct scored terms; soft terms (numbers) only when nothing else.
    let mut terms: Vec<usize> = Vec::new();
    let has_scored = raw.iter().any(|t| t.kind == TermKind::Scored);
    for (i, t) in raw.iter().enumerate() {
        let usable = t.kind == TermKind::Scored || t.kind == TermKind::Soft;
        if usable && !terms.iter().any(|&j| raw[j].text == t.text) && terms.len() < MAX_QUERY_TERMS
        {
            terms.push(i);
        }
    }
    let required = |i: usize| raw[i].kind == TermKind::Scored || !has_scored;
    let mut ignored: Vec<String> = Vec::new();
    for t in raw.iter().filter(|t| t.kind == TermKind::Stop) {
        if !ignored.contains(&t.surface) {
            ignored.push(t.surface.clone());
        }
    }
    if terms.is_empty() {
        return Ranked {
            hits: Vec::new(),
            total: 0,
            mode: MatchMode::None,
            analysis: QueryAnalysis {
                ignored,
                ..QueryAnalysis::default()
            },
        };
    }

    // Local term ids per index, and IDF over exactly these indexes.
    let local: Vec<Vec<Option<u32>>> = indexes
        .iter()
        .map(|ix| terms.iter().map(|&i| ix.term_id(&raw[i].text)).collect())
        .collect();
    let n_docs: usize = indexes.iter().map(|ix| ix.len()).sum();
    let weights: Vec<f32> = (0..terms.len())
        .map(|k| {
            let df: usize = indexes
                .iter()
                .zip(&local)
                .filter_map(|(ix, l)| l[k].map(|id| ix.doc_freq(id)))
                .sum();
            idf(n_docs, df)
        })
        .collect();
    let required_mask: u32 = (0..terms.len())
        .filter(|&k| required(terms[k]))
        .fold(0, |m, k| m | 1 << k);
    let total_weight: f32 = (0..terms.len())
        .filter(|&k| required_mask & 1 << k != 0)
        .map(|k| weights[k])
        .sum::<f32>()
        .max(f32::EPSILON);
    let n_required = required_mask.count_ones() as usize;
    // Adjacent scored query terms, as positions into `raw`.
    let bigrams: Vec<(usize, usize)> = raw
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0].kind != TermKind::Stop && w[1].kind != TermKind::Stop)
        .map(|(i, _)| (i, i + 1))
        .collect();

    let ctx = Ctx {
        raw: &raw,
        weights: &weights,
        bigrams: &bigrams,
        safety: q.safety,
    };
    let mut cands: Vec<Cand> = Vec::new();
    for (src, ix) in indexes.iter().enumerate() {
        score_index(ix, src, &local[src], &ctx, &mut cands);
    }
    for c in &mut cands {
        let covered: f32 = (0..terms.len())
            .filter(|&k| c.mask & required_mask & 1 << k != 0)
            .map(|k| weights[k])
            .sum();
        c.coverage = covered / total_weight;
        c.matched = (c.mask & required_mask).count_ones() as usize;
        let complete_terms = c.strong & required_mask == required_mask;
        let complete_name = c.name_complete && (c.name_len >= 2 || n_required == 1);
        if c.tier != 0 {
            c.tier = if complete_terms || complete_name {
                1
            } else {
                2
            };
        }
        c.all_terms = complete_terms || c.tier == 0;
        c.base = c.score;
        if complete_name {
            // Scaled by coverage: a complete name that explains half the
            // query must not beat a tool that explains all of it.
            c.score += total_weight
                * c.coverage
                * (COMPLETE_NAME_BONUS + NAME_TERM_BONUS * c.name_len.min(4) as f32);
        }
        if c.phrase {
            c.score += total_weight * PHRASE_BONUS;
        }
        c.score += total_weight * BIGRAM_BONUS * c.bigrams as f32;
        if c.read_only {
            c.score += total_weight * READ_ONLY_BONUS;
        }
    }

    // A tool is a plausible answer when it is complete, explains at least
    // half the query's weight, or matches two of its words; a query without
    // a plausible answer is a clear no-match.
    cands.retain(|c| c.tier <= 1 || c.coverage >= MIN_BEST_COVERAGE || c.matched >= 2);
    if cands.is_empty() {
        return no_match(&raw, &terms, ignored);
    }
    if cands.iter().any(|c| c.tier == 0) {
        // The query spells a tool's name exactly: that is the answer.
        cands.retain(|c| c.tier == 0);
    } else {
        cut(&mut cands, required_mask);
    }

    let mode = if cands.iter().any(|c| c.all_terms) {
        MatchMode::All
    } else {
        MatchMode::Partial
    };
    let analysis = if mode == MatchMode::Partial {
        let union = cands.iter().fold(0u32, |m, c| m | c.mask);
        let mut a = QueryAnalysis {
            ignored,
            ..QueryAnalysis::default()
        };
        for (k, &i) in terms.iter().enumerate() {
            if !required(i) {
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
        a
    } else {
        QueryAnalysis::default()
    };

    let total = cands.len();
    let window = window.min(total);
    if window < total && window > 0 {
        cands.select_nth_unstable_by(window - 1, order);
        cands.truncate(window);
    } else if window == 0 {
        cands.clear();
    }
    cands.sort_unstable_by(order);
    Ranked {
        hits: cands
            .iter()
            .map(|c| Hit {
                source: c.source,
                tool: c.tool,
                tier: c.tier,
                score: c.score,
            })
            .collect(),
        total,
        mode,
        analysis,
    }
}

/// The relevance cut: complete matches stay; partial ones stay when their
/// evidence is close to the best's — or when they are the only tool whose
/// name carries some query word (the other half of a multi-intent query:
/// "zones, DNS records and analytics").
fn cut(cands: &mut Vec<Cand>, required_mask: u32) {
    let best_base = cands.iter().map(|c| c.base).fold(0.0, f32::max);
    let close =
        |c: &Cand| c.tier == 1 || (c.base >= KEEP_RATIO * best_base && c.coverage >= KEEP_COVERAGE);
    let mut union = cands
        .iter()
        .filter(|c| close(c))
        .fold(0u32, |m, c| m | c.own);
    let mut rest: Vec<&mut Cand> = cands.iter_mut().filter(|c| !close(c)).collect();
    rest.sort_unstable_by(|a, b| order(a, b));
    for c in rest {
        let new = c.own & required_mask & !union;
        if new != 0 && c.base >= RESCUE_RATIO * best_base {
            union |= new;
            c.rescued = true;
        }
    }
    cands.retain(|c| close(c) || c.rescued);
}

struct Ctx<'a> {
    raw: &'a [QTerm],
    weights: &'a [f32],
    bigrams: &'a [(usize, usize)],
    safety: Safety,
}

#[derive(Debug, Clone, Copy)]
struct Cand {
    source: usize,
    tool: u32,
    tier: u8,
    /// Evidence plus bonuses: the sort key within a tier.
    score: f32,
    /// Evidence only: what the relevance cut compares.
    base: f32,
    /// Terms matched anywhere (topic words included).
    mask: u32,
    /// Terms matched by the tool itself or its connector id.
    strong: u32,
    /// Terms matched by the tool's own name.
    own: u32,
    rescued: bool,
    matched: usize,
    coverage: f32,
    all_terms: bool,
    name_complete: bool,
    phrase: bool,
    bigrams: usize,
    read_only: bool,
    /// Scored query terms the name spells out.
    name_len: usize,
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

fn field_weight(fields: u8) -> f32 {
    if fields & F_NAME != 0 {
        W_NAME
    } else if fields & F_TITLE != 0 {
        W_TITLE
    } else if fields & F_DESC != 0 {
        W_DESC
    } else {
        0.0
    }
}

fn score_index(
    ix: &CatalogIndex,
    source: usize,
    local: &[Option<u32>],
    ctx: &Ctx<'_>,
    out: &mut Vec<Cand>,
) {
    let n = ix.len();
    let mut score = vec![0f32; n];
    let mut mask = vec![0u32; n];
    let mut name_mask = vec![0u32; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut connector_terms: u32 = 0;
    let mut topic_terms: u32 = 0;
    for (k, id) in local.iter().enumerate() {
        let Some(id) = *id else { continue };
        if ix.is_connector_term(id) {
            // The connector's own name counts the same for all its tools,
            // wherever a tool repeats it (`slack_post_message`).
            connector_terms |= 1 << k;
            continue;
        } else if ix.is_topic_term(id) {
            topic_terms |= 1 << k;
        }
        for (tool, fields) in ix.postings(id) {
            let t = tool as usize;
            if mask[t] == 0 {
                touched.push(tool);
            }
            score[t] += ctx.weights[k] * field_weight(fields);
            mask[t] |= 1 << k;
            if fields & F_NAME != 0 {
                name_mask[t] |= 1 << k;
            }
        }
    }
    if connector_terms == 0 && topic_terms == 0 && touched.is_empty() {
        return;
    }
    // The raw query as local ids, for the name checks.
    let raw_ids: Vec<Option<u32>> = ctx.raw.iter().map(|t| ix.term_id(&t.text)).collect();
    let mut scored_set: Vec<u32> = ctx
        .raw
        .iter()
        .zip(&raw_ids)
        .filter(|(t, _)| t.kind != TermKind::Stop)
        .filter_map(|(_, id)| *id)
        .collect();
    scored_set.sort_unstable();
    scored_set.dedup();
    let mut raw_set: Vec<u32> = raw_ids.iter().flatten().copied().collect();
    raw_set.sort_unstable();
    raw_set.dedup();
    let bigram_ids: Vec<(u32, u32)> = ctx
        .bigrams
        .iter()
        .filter_map(|&(a, b)| Some((raw_ids[a]?, raw_ids[b]?)))
        .collect();

    let consider = |tool: u32, out: &mut Vec<Cand>| {
        let t = tool as usize;
        let def = &ix.catalog().tools()[t];
        if !ctx.safety.admits(&def.annotations) {
            return;
        }
        let (mut s, mut m) = (score[t], mask[t]);
        let mut strong = m;
        let mut extra = (connector_terms | topic_terms) & !m;
        while extra != 0 {
            let k = extra.trailing_zeros() as usize;
            let is_id = connector_terms & 1 << k != 0;
            s += ctx.weights[k] * if is_id { W_CONNECTOR } else { W_TOPIC };
            m |= 1 << k;
            if is_id {
                strong |= 1 << k;
            }
            extra &= extra - 1;
        }
        let name = ix.name_terms(tool);
        let conn = ix.connector_terms();
        let exact = !name.is_empty()
            && (seq_eq(name, &raw_ids)
                || (raw_ids.len() == conn.len() + name.len()
                    && seq_eq(conn, &raw_ids[..conn.len()])
                    && seq_eq(name, &raw_ids[conn.len()..])));
        // Complete: every name term is in the query, except the connector's
        // own words and function words, and at least one scored term is.
        let mut name_len = 0;
        let mut name_complete = true;
        for (i, &term) in name.iter().enumerate() {
            if scored_set.binary_search(&term).is_ok() {
                if !name[..i].contains(&term) {
                    name_len += 1;
                }
            } else if raw_set.binary_search(&term).is_err()
                && !ix.is_connector_term(term)
                && !ix.is_name_stop(term)
            {
                name_complete = false;
            }
        }
        name_complete &= name_len > 0;
        let phrase = name_complete && name.len() >= 2 && contains_run(&raw_ids, name);
        let bigrams = bigram_ids
            .iter()
            .filter(|&&(a, b)| name.windows(2).any(|w| w[0] == a && w[1] == b))
            .count();
        out.push(Cand {
            source,
            tool,
            tier: if exact { 0 } else { 2 },
            score: s,
            base: s,
            mask: m,
            strong,
            own: name_mask[t],
            rescued: false,
            matched: 0,
            coverage: 0.0,
            all_terms: false,
            name_complete,
            phrase,
            bigrams,
            read_only: def.read_only(),
            name_len,
        });
    };
    if connector_terms != 0 || topic_terms != 0 {
        for tool in 0..n as u32 {
            consider(tool, out);
        }
    } else {
        for &tool in &touched {
            consider(tool, out);
        }
    }
}

fn seq_eq(a: &[u32], b: &[Option<u32>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Some(*x) == *y)
}

fn contains_run(hay: &[Option<u32>], needle: &[u32]) -> bool {
    hay.windows(needle.len()).any(|w| seq_eq(needle, w))
}

fn no_match(raw: &[QTerm], terms: &[usize], ignored: Vec<String>) -> Ranked {
    let mut unmatched: Vec<String> = Vec::new();
    for &i in terms {
        if raw[i].kind == TermKind::Scored && !unmatched.contains(&raw[i].surface) {
            unmatched.push(raw[i].surface.clone());
        }
    }
    Ranked {
        hits: Vec::new(),
        total: 0,
        mode: MatchMode::None,
        analysis: QueryAnalysis {
            represented: Vec::new(),
            unmatched,
            ignored,
        },
    }
}

fn browse(indexes: &[&CatalogIndex], safety: Safety, window: usize) -> Ranked {
    let mut hits = Vec::with_capacity(window.min(256));
    let mut total = 0;
    for (source, ix) in indexes.iter().enumerate() {
        for (tool, def) in ix.catalog().tools().iter().take(ix.len()).enumerate() {
            if !safety.admits(&def.annotations) {
                continue;
            }
            if hits.len() < window {
                hits.push(Hit {
                    source,
                    tool: tool as u32,
                    tier: 1,
                    score: 0.0,
                });
            }
            total += 1;
        }
    }
    Ranked {
        hits,
        total,
        mode: MatchMode::Browse,
        analysis: QueryAnalysis::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, ToolDef};
    use crate::policy::Annotations;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, desc: &str, ro: bool) -> ToolDef {
        ToolDef {
            name: name.into(),
            title: None,
            description: Some(desc.into()),
            input_schema: Arc::new(json!({"type":"object"})),
            output_schema: None,
            annotations: Annotations {
                read_only_hint: Some(ro),
                ..Annotations::default()
            },
        }
    }

    fn fixture() -> Vec<CatalogIndex> {
        let gh = Catalog::new(
            "gh",
            vec![
                tool("list_issues", "List issues in a repository", true),
                tool("create_issue", "Create a new issue", false),
                tool("get_pull_request", "Get one pull request", true),
                tool("list_issue_comments", "List comments on an issue", true),
            ],
        );
        let notes = Catalog::new(
            "notes",
            vec![tool("search_notes", "Search notes by text", true)],
        );
        vec![
            CatalogIndex::with_description(Arc::new(gh), Some("GitHub code hosting")),
            CatalogIndex::build(Arc::new(notes)),
        ]
    }

    fn run(query: &str) -> (Vec<String>, Ranked) {
        let idx = fixture();
        let refs: Vec<&CatalogIndex> = idx.iter().collect();
        let r = rank(
            &refs,
            &SearchQuery {
                query,
                safety: Safety::All,
            },
            100,
        );
        let names = r
            .hits
            .iter()
            .map(|h| {
                refs[h.source].catalog().tools()[h.tool as usize]
                    .name
                    .clone()
            })
            .collect();
        (names, r)
    }

    #[test]
    fn complete_name_outranks_longer_names() {
        let (names, r) = run("list issues");
        assert_eq!(names[0], "list_issues");
        assert_eq!(r.mode, MatchMode::All);
    }

    #[test]
    fn exact_name_is_the_first_tier() {
        let (names, r) = run("create_issue");
        assert_eq!(names[0], "create_issue");
        assert_eq!(r.hits[0].tier, 0);
        let (names, _) = run("gh.create_issue");
        assert_eq!(names[0], "create_issue");
    }

    #[test]
    fn connector_words_match_every_tool_of_the_connector() {
        let (names, _) = run("github");
        assert_eq!(names.len(), 4);
    }

    #[test]
    fn stopword_only_query_is_no_match_and_empty_browses() {
        let (_, r) = run("how do I do it");
        assert_eq!(r.mode, MatchMode::None);
        assert_eq!(r.total, 0);
        assert!(r.analysis.ignored.contains(&"how".to_string()));
        let (names, r) = run("  ");
        assert_eq!(r.mode, MatchMode::Browse);
        assert_eq!(names.len(), 5);
    }

    #[test]
    fn partial_reports_represented_and_unmatched_words() {
        let (names, r) = run("list issue comments zebra");
        assert_eq!(r.mode, MatchMode::Partial);
        assert_eq!(names[0], "list_issue_comments");
        assert_eq!(r.analysis.unmatched, vec!["zebra".to_string()]);
        assert!(r.analysis.represented.contains(&"comments".to_string()));
    }

    #[test]
    fn weak_partial_matches_are_a_clear_no_match() {
        let (_, r) = run("zebra giraffe weather issue");
        assert_eq!(r.mode, MatchMode::None);
        assert_eq!(r.analysis.unmatched.len(), 4);
    }

    #[test]
    fn safety_filter_uses_the_call_path_predicate() {
        let idx = fixture();
        let refs: Vec<&CatalogIndex> = idx.iter().collect();
        for safety in [Safety::ReadOnly, Safety::ApprovalRequired] {
            let r = rank(
                &refs,
                &SearchQuery {
                    query: "issue",
                    safety,
                },
                100,
            );
            for h in &r.hits {
                let def = &refs[h.source].catalog().tools()[h.tool as usize];
                assert!(safety.admits(&def.annotations));
            }
            assert!(r.total > 0);
        }
    }

    #[test]
    fn numbers_score_when_present_and_never_count_as_missing() {
        let (names, r) = run("issue 177");
        assert_eq!(r.mode, MatchMode::All);
        assert!(names.contains(&"list_issues".to_string()));
    }

    #[test]
    fn window_returns_the_same_prefix_as_a_full_sort() {
        let idx = fixture();
        let refs: Vec<&CatalogIndex> = idx.iter().collect();
        let q = SearchQuery {
            query: "github issue",
            safety: Safety::All,
        };
        let full = rank(&refs, &q, 100);
        let two = rank(&refs, &q, 2);
        assert_eq!(two.total, full.total);
        assert_eq!(two.hits, full.hits[..2]);
    }
}
