//! Tool names written as they are inside a longer query: "call
//! `List-Organizations` for acme", "use get_issue, then add a comment".
//!
//! A token joined by `_`, `-` or `.`, or written in lower camelCase, that
//! is some tool's whole name (after its connector id, or alone) names that
//! tool; a connector's id elsewhere in the query keeps the named tools of
//! that connector ("github get_issue"). The tools so named come first, as
//! an exact name does. The rest of the query is searched on its own, and
//! its answers follow when their names (or their connector's id) carry a
//! word of the rest that no named tool carries anyway: "use get_issue,
//! then add a comment" also finds the commenting tool, while "call
//! `List-Organizations` for the projects" finds nothing else when the
//! catalog is about projects.

use super::super::index::{CatalogIndex, F_NAME, F_SYN};
use super::super::tokenize::{TermKind, for_each_term};
use super::{
    Hit, MatchMode, QueryAnalysis, Ranked, SearchQuery, admits, known_id, query_terms, rank,
};

/// The most answers of the rest of the query that are ranked to count
/// them exactly; past this many, the total counts those ranked.
const REST_CAP: usize = 1_000;

/// The tools the query names by a token written as a name, with the rest
/// of the ranking, or `None` when no token names an admitted tool.
pub(super) fn answer(
    indexes: &[&CatalogIndex],
    q: &SearchQuery<'_>,
    window: usize,
) -> Option<Ranked> {
    // Most queries hold no token shaped like a name: they cost one pass
    // over their bytes here.
    if !q
        .query
        .split_whitespace()
        .any(|raw| shaped_like_a_name(trim(raw)))
    {
        return None;
    }
    let tokens = tokens(q.query);
    let mut named: Vec<(usize, u32)> = Vec::new();
    let mut naming: Vec<bool> = vec![false; tokens.len()];
    for (i, token) in tokens.iter().enumerate() {
        if !token.name_like {
            continue;
        }
        for (source, ix) in indexes.iter().enumerate() {
            for tool in tools_named_by(ix, &token.terms) {
                if admits(q.safety, ix.read_only(tool)) {
                    naming[i] = true;
                    if !named.contains(&(source, tool)) {
                        named.push((source, tool));
                    }
                }
            }
        }
    }
    if named.is_empty() {
        return None;
    }
    // A connector's id among the other words says whose tool is meant.
    let mut spoken: Vec<usize> = Vec::new();
    for token in tokens
        .iter()
        .zip(&naming)
        .filter(|&(_, &n)| !n)
        .map(|(t, _)| t)
    {
        for t in &token.terms {
            for (source, ix) in indexes.iter().enumerate() {
                if ix.term_id(t).is_some_and(|id| ix.is_connector_term(id))
                    && !spoken.contains(&source)
                {
                    spoken.push(source);
                }
            }
        }
    }
    if named.iter().any(|(source, _)| spoken.contains(source)) {
        named.retain(|(source, _)| spoken.contains(source));
    }

    // The rest: the query without the naming tokens, its punctuation kept
    // (clauses still end where they did).
    let mut rest = q.query.to_owned();
    for (token, _) in tokens.iter().zip(&naming).filter(|&(_, &n)| n) {
        rest.replace_range(token.span.clone(), &" ".repeat(token.span.len()));
    }
    // Its words as the ranking reads them (phrases folded, compounds
    // joined): those that no named tool carries anyway are the rest's
    // own, and those no catalog knows are unmatched.
    let carried = |t: &str| {
        named.iter().any(|&(source, tool)| {
            let ix = indexes[source];
            ix.term_id(t).is_some_and(|id| carries(ix, id, tool))
        })
    };
    let mut own: Vec<(String, String)> = Vec::new();
    let mut unmatched: Vec<String> = Vec::new();
    for t in query_terms(&rest, indexes) {
        if t.kind != TermKind::Scored {
            continue;
        }
        if known_id(indexes, &t.text).is_none() {
            if !unmatched.contains(&t.surface) {
                unmatched.push(t.surface);
            }
        } else if !carried(&t.text) && !own.iter().any(|(text, _)| *text == t.text) {
            own.push((t.text, t.surface));
        }
    }
    let mut hits: Vec<Hit> = named
        .iter()
        .map(|&(source, tool)| Hit {
            source,
            tool,
            tier: 0,
            score: 0.0,
        })
        .collect();
    let mut kept = 0;
    let mut more = None;
    if !own.is_empty() {
        let rest_query = SearchQuery { query: &rest, ..*q };
        let mut ranked = rank(indexes, &rest_query, window);
        if ranked.total > ranked.hits.len() {
            // Every answer of the rest (up to a bound), so the total
            // counts exactly those kept.
            ranked = rank(indexes, &rest_query, ranked.total.min(REST_CAP));
        }
        // An answer of the rest stays when its name (or its connector's
        // id) carries one of the rest's own words.
        let mut found: Vec<bool> = vec![false; own.len()];
        for h in &ranked.hits {
            if named.contains(&(h.source, h.tool)) {
                continue;
            }
            let ix = indexes[h.source];
            let mut carries_own = false;
            for (k, (text, _)) in own.iter().enumerate() {
                if ix.term_id(text).is_some_and(|id| {
                    ix.fields_of(id, h.tool) & (F_NAME | F_SYN) != 0 || ix.is_connector_term(id)
                }) {
                    found[k] = true;
                    carries_own = true;
                }
            }
            if carries_own {
                hits.push(*h);
                kept += 1;
            }
        }
        for ((_, surface), found) in own.iter().zip(&found) {
            if !found && !unmatched.contains(surface) {
                unmatched.push(surface.clone());
            }
        }
        more = Some(ranked);
    }
    let total = named.len() + kept;
    hits.truncate(window);
    let (mode, analysis) = if unmatched.is_empty() {
        (MatchMode::All, QueryAnalysis::default())
    } else {
        let mut represented: Vec<String> = tokens
            .iter()
            .zip(&naming)
            .filter(|&(_, &n)| n)
            .map(|(t, _)| t.text.to_lowercase())
            .collect();
        for (_, surface) in &own {
            if !unmatched.contains(surface) && !represented.contains(surface) {
                represented.push(surface.clone());
            }
        }
        let ignored = more
            .as_ref()
            .map(|m| m.analysis.ignored.clone())
            .unwrap_or_default();
        (
            MatchMode::Partial,
            QueryAnalysis {
                represented,
                unmatched,
                ignored,
            },
        )
    };
    Some(Ranked {
        total,
        hits,
        mode,
        analysis,
        asks: more.as_ref().map_or(super::Op::Unknown, |m| m.asks),
        opposed: more.as_ref().map_or(0, |m| m.opposed),
        other_change: more.as_ref().map_or(0, |m| m.other_change),
        missing_services: more.map(|m| m.missing_services).unwrap_or_default(),
    })
}

/// One white-space-separated token of the query, trimmed ([`trim`]).
struct Token<'q> {
    text: &'q str,
    /// Where `text` is in the query.
    span: std::ops::Range<usize>,
    terms: Vec<String>,
    /// Written as a name: joined by `_`, `-` or `.`, or lower camelCase,
    /// with two terms or more.
    name_like: bool,
}

fn tokens(query: &str) -> Vec<Token<'_>> {
    query
        .split_whitespace()
        .map(|raw| {
            let text = trim(raw);
            let start = text.as_ptr() as usize - query.as_ptr() as usize;
            let mut terms = Vec::new();
            for_each_term(text, |t, _| terms.push(t.to_owned()));
            Token {
                name_like: terms.len() >= 2 && shaped_like_a_name(text),
                span: start..start + text.len(),
                text,
                terms,
            }
        })
        .collect()
}

/// A token without the punctuation around it (quotes, backticks,
/// brackets, a closing comma or point).
fn trim(raw: &str) -> &str {
    raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
}

/// Joined by `_`, `-` or `.`, or lower camelCase.
fn shaped_like_a_name(text: &str) -> bool {
    text.contains(['_', '-', '.'])
        || (text.starts_with(|c: char| c.is_ascii_lowercase())
            && text.contains(|c: char| c.is_ascii_uppercase()))
}

/// The tools of `ix` whose whole name is `terms`, or the connector's id
/// followed by it.
fn tools_named_by(ix: &CatalogIndex, terms: &[String]) -> Vec<u32> {
    let ids: Option<Vec<u32>> = terms.iter().map(|t| ix.term_id(t)).collect();
    let Some(ids) = ids else {
        return Vec::new();
    };
    let mut tools: Vec<u32> = ix.tools_named(&ids).collect();
    let conn = ix.connector_terms();
    if !conn.is_empty() && ids.len() > conn.len() && ids.starts_with(conn) {
        tools.extend(ix.tools_named(&ids[conn.len()..]));
    }
    tools
}

/// A tool's evidence holds the term: in its own fields, or as its
/// connector's word.
fn carries(ix: &CatalogIndex, id: u32, tool: u32) -> bool {
    ix.fields_of(id, tool) != 0 || ix.is_topic_term(id) || ix.is_connector_term(id)
}
