//! Tool names written as they are inside a longer query: "call
//! `List-Organizations` for acme", "use get_issue, then add a comment".
//!
//! A token joined by `_`, `-` or `.`, or written in lower camelCase, that
//! is some tool's whole name (after its connector id, or alone) names that
//! tool. The tools so named come first, as an exact name does. The rest
//! of the query (its other words, less those the named tools carry
//! anyway) is searched on its own, and its answers follow: "use get_issue,
//! then add a comment" also finds the commenting tool, while "call
//! `List-Organizations` for the projects" finds nothing else when the
//! catalog is about projects.

use super::super::index::CatalogIndex;
use super::super::tokenize::{for_each_term, is_stopword};
use super::super::vocab::{shared_find, term_hash};
use super::{Hit, MatchMode, QueryAnalysis, Ranked, SearchQuery, admits, rank};

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
    // The other words are searched on their own. Their answers stay when
    // they carry a word that no named tool carries anyway (in its fields
    // or as its connector's word): the other half of the request ("delete
    // the task" beside `get_task`), not more of the same.
    let others: Vec<&Token<'_>> = tokens
        .iter()
        .zip(&naming)
        .filter(|&(_, &names)| !names)
        .map(|(t, _)| t)
        .collect();
    let carried = |t: &str| {
        let id = shared_find(t, term_hash(t));
        named.iter().any(|&(source, tool)| {
            let ix = indexes[source];
            id.and_then(|id| ix.local_term(id))
                .is_some_and(|id| carries(ix, id, tool))
        })
    };
    let mut own: Vec<u32> = Vec::new();
    for t in others.iter().flat_map(|t| t.terms.iter()) {
        if let Some(id) = shared_find(t, term_hash(t))
            && !is_stopword(t)
            && !carried(t)
            && !own.contains(&id)
        {
            own.push(id);
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
    let rest = others.iter().map(|t| t.text).collect::<Vec<_>>().join(" ");
    let rest_query = SearchQuery { query: &rest, ..*q };
    let mut more = rank(indexes, &rest_query, window);
    if more.total > more.hits.len() {
        // Every answer of the rest, so the total counts exactly those kept.
        more = rank(indexes, &rest_query, more.total);
    }
    let extra: Vec<Hit> = more
        .hits
        .iter()
        .filter(|h| !named.contains(&(h.source, h.tool)))
        .filter(|h| {
            let ix = indexes[h.source];
            own.iter()
                .filter_map(|&id| ix.local_term(id))
                .any(|id| carries(ix, id, h.tool))
        })
        .copied()
        .collect();
    let kept = extra.len();
    hits.extend(extra);
    let total = hits.len();
    hits.truncate(window);
    let represented: Vec<String> = tokens
        .iter()
        .zip(&naming)
        .filter(|&(_, &names)| names)
        .map(|(t, _)| t.text.to_lowercase())
        .collect();
    // Words the named tools carry are not unmatched, whatever the rest's
    // own ranking made of them.
    let mut a = more.analysis;
    a.unmatched.retain(|word| {
        let mut all = true;
        for_each_term(word, |t, _| all &= carried(t));
        !all
    });
    // Complete when every other word is the named tools' own or found.
    let (mode, analysis) = if a.unmatched.is_empty() && (own.is_empty() || kept > 0) {
        (MatchMode::All, QueryAnalysis::default())
    } else {
        a.represented.splice(0..0, represented);
        (MatchMode::Partial, a)
    };
    Some(Ranked {
        total,
        hits,
        mode,
        analysis,
        asks: more.asks,
        opposed: more.opposed,
        other_change: more.other_change,
        missing_services: more.missing_services,
    })
}

/// A tool's evidence holds the term: in its own fields, or as its
/// connector's word.
fn carries(ix: &CatalogIndex, id: u32, tool: u32) -> bool {
    ix.fields_of(id, tool) != 0 || ix.is_topic_term(id) || ix.is_connector_term(id)
}

/// One white-space-separated token of the query, trimmed ([`trim`]).
struct Token<'q> {
    text: &'q str,
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
            let mut terms = Vec::new();
            for_each_term(text, |t, _| terms.push(t.to_owned()));
            Token {
                name_like: terms.len() >= 2 && shaped_like_a_name(text),
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
    let ids: Option<Vec<u32>> = terms
        .iter()
        .map(|t| shared_find(t, term_hash(t)).and_then(|id| ix.local_term(id)))
        .collect();
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
