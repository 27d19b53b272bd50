//! Per-connector inverted indexes and the query that ranks across them.

use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::{Catalog, ToolDef};
use crate::policy::Safety;

use super::tokenize::tokenize;

const NAME_WEIGHT: f32 = 3.0;
const TITLE_WEIGHT: f32 = 2.0;
const DESCRIPTION_WEIGHT: f32 = 1.0;
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Conversational words that carry no intent; ignored for scoring only.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "i", "me", "my", "we", "our", "you", "your", "to", "of", "for", "in", "on",
    "at", "by", "with", "and", "or", "please", "can", "could", "would", "want", "need", "help",
    "some", "any", "this", "that", "these", "those", "it", "its", "is", "are", "be", "do", "does",
    "how", "what", "which", "tool", "using", "use", "from", "into", "about", "like", "just",
    "there", "all",
];

/// The index of one catalog, built once per catalog fingerprint.
#[derive(Debug)]
pub struct CatalogIndex {
    catalog: Arc<Catalog>,
    postings: HashMap<String, Vec<(u32, f32)>>,
    doc_len: Vec<f32>,
    avg_len: f32,
    /// Lowercased tool names, for the exact-name tier.
    names: Vec<String>,
}

impl CatalogIndex {
    pub fn build(catalog: Arc<Catalog>) -> CatalogIndex {
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(catalog.len());
        let mut names = Vec::with_capacity(catalog.len());
        for (i, tool) in catalog.tools().iter().enumerate() {
            let mut tf: HashMap<String, f32> = HashMap::new();
            let mut len = 0.0;
            let mut add = |text: &str, w: f32| {
                for t in tokenize(text) {
                    *tf.entry(t).or_default() += w;
                    len += w;
                }
            };
            add(&tool.name, NAME_WEIGHT);
            if let Some(t) = &tool.title {
                add(t, TITLE_WEIGHT);
            }
            add(tool.description(), DESCRIPTION_WEIGHT);
            for (term, f) in tf {
                postings.entry(term).or_default().push((i as u32, f));
            }
            doc_len.push(len);
            names.push(tool.name.to_lowercase());
        }
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            doc_len.iter().sum::<f32>() / doc_len.len() as f32
        };
        CatalogIndex {
            catalog,
            postings,
            doc_len,
            avg_len: avg_len.max(1.0),
            names,
        }
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    fn df(&self, term: &str) -> usize {
        self.postings.get(term).map_or(0, Vec::len)
    }
}

#[derive(Debug, Clone)]
pub struct SearchQuery<'a> {
    pub query: &'a str,
    pub safety: Safety,
    pub limit: usize,
    pub offset: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// Empty query: every tool, in catalog order.
    Browse,
    /// The top match carries every usable query term.
    All,
    /// No tool carries every term; the best partial matches are returned.
    Partial,
    /// Nothing matched (or the query had no usable terms).
    None,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryAnalysis {
    pub represented: Vec<String>,
    pub unmatched: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Hit {
    pub connector: String,
    pub tool: Arc<ToolDef>,
    pub score: f32,
}

#[derive(Debug, Clone)]
pub struct SearchHits {
    pub hits: Vec<Hit>,
    pub total: usize,
    pub mode: MatchMode,
    pub analysis: QueryAnalysis,
}

/// Rank the tools of `indexes` against `q`. IDF is computed over exactly the
/// catalogs searched.
pub fn search(indexes: &[Arc<CatalogIndex>], q: &SearchQuery<'_>) -> SearchHits {
    let raw_terms = tokenize(q.query);
    if q.query.trim().is_empty() {
        return browse(indexes, q);
    }
    let mut terms: Vec<String> = raw_terms
        .iter()
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .cloned()
        .collect();
    terms.dedup();
    if terms.is_empty() {
        return SearchHits {
            hits: Vec::new(),
            total: 0,
            mode: MatchMode::None,
            analysis: QueryAnalysis::default(),
        };
    }
    let n_docs: usize = indexes.iter().map(|i| i.catalog.len()).sum();
    let idf: Vec<f32> = terms
        .iter()
        .map(|t| {
            let df: usize = indexes.iter().map(|i| i.df(t)).sum();
            let n = n_docs as f32;
            let df = df as f32;
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    let query_lower = q.query.trim().to_lowercase();

    struct Scored {
        tier: u8,
        score: f32,
        index: usize,
        tool: u32,
    }
    let mut scored: Vec<Scored> = Vec::new();
    let mut represented = vec![false; terms.len()];
    for (ix, index) in indexes.iter().enumerate() {
        let mut acc: HashMap<u32, (f32, u32)> = HashMap::new();
        for (ti, term) in terms.iter().enumerate() {
            let Some(list) = index.postings.get(term) else {
                continue;
            };
            for &(doc, tf) in list {
                let dl = index.doc_len[doc as usize];
                let norm = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / index.avg_len));
                let e = acc.entry(doc).or_default();
                e.0 += idf[ti] * norm;
                e.1 |= 1 << ti.min(31);
            }
        }
        for (doc, (score, mask)) in acc {
            let tool = &index.catalog.tools()[doc as usize];
            if !q.safety.admits(&tool.annotations) {
                continue;
            }
            for (ti, r) in represented.iter_mut().enumerate() {
                if mask & (1 << ti.min(31)) != 0 {
                    *r = true;
                }
            }
            let complete = mask.count_ones() as usize >= terms.len().min(32);
            let exact = index.names[doc as usize] == query_lower
                || format!("{}.{}", index.catalog.connector, index.names[doc as usize])
                    == query_lower;
            let tier = if exact {
                0
            } else if complete {
                1
            } else {
                2
            };
            scored.push(Scored {
                tier,
                score,
                index: ix,
                tool: doc,
            });
        }
    }
    scored.sort_by(|a, b| {
        a.tier
            .cmp(&b.tier)
            .then(b.score.total_cmp(&a.score))
            .then(a.index.cmp(&b.index))
            .then(a.tool.cmp(&b.tool))
    });
    let mode = match scored.first() {
        None => MatchMode::None,
        Some(s) if s.tier <= 1 => MatchMode::All,
        Some(_) => MatchMode::Partial,
    };
    let analysis = if mode == MatchMode::Partial {
        QueryAnalysis {
            represented: terms
                .iter()
                .zip(&represented)
                .filter(|(_, r)| **r)
                .map(|(t, _)| t.clone())
                .collect(),
            unmatched: terms
                .iter()
                .zip(&represented)
                .filter(|(_, r)| !**r)
                .map(|(t, _)| t.clone())
                .collect(),
        }
    } else {
        QueryAnalysis::default()
    };
    let total = scored.len();
    let hits = scored
        .into_iter()
        .skip(q.offset)
        .take(q.limit)
        .map(|s| Hit {
            connector: indexes[s.index].catalog.connector.clone(),
            tool: indexes[s.index].catalog.tools()[s.tool as usize].clone(),
            score: s.score,
        })
        .collect();
    SearchHits {
        hits,
        total,
        mode,
        analysis,
    }
}

fn browse(indexes: &[Arc<CatalogIndex>], q: &SearchQuery<'_>) -> SearchHits {
    let all = indexes.iter().flat_map(|i| {
        i.catalog
            .tools()
            .iter()
            .filter(|t| q.safety.admits(&t.annotations))
            .map(move |t| (i, t))
    });
    let total = all.clone().count();
    let hits = all
        .skip(q.offset)
        .take(q.limit)
        .map(|(i, t)| Hit {
            connector: i.catalog.connector.clone(),
            tool: t.clone(),
            score: 0.0,
        })
        .collect();
    SearchHits {
        hits,
        total,
        mode: MatchMode::Browse,
        analysis: QueryAnalysis::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Annotations;
    use serde_json::json;

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

    fn idx() -> Vec<Arc<CatalogIndex>> {
        let a = Catalog::new(
            "gh",
            vec![
                tool("list_issues", "List issues in a repository", true),
                tool("create_issue", "Create a new issue", false),
                tool("get_pull_request", "Get one pull request", true),
            ],
        );
        let b = Catalog::new(
            "notes",
            vec![tool("search_notes", "Search notes by text", true)],
        );
        vec![
            Arc::new(CatalogIndex::build(Arc::new(a))),
            Arc::new(CatalogIndex::build(Arc::new(b))),
        ]
    }

    fn q(query: &str) -> SearchQuery<'_> {
        SearchQuery {
            query,
            safety: Safety::All,
            limit: 8,
            offset: 0,
        }
    }

    #[test]
    fn ranks_name_matches_first() {
        let r = search(&idx(), &q("list issues"));
        assert_eq!(r.hits[0].tool.name, "list_issues");
        assert_eq!(r.mode, MatchMode::All);
    }

    #[test]
    fn exact_name_is_first_tier() {
        let r = search(&idx(), &q("create_issue"));
        assert_eq!(r.hits[0].tool.name, "create_issue");
    }

    #[test]
    fn safety_filter_uses_the_predicate() {
        let mut query = q("issue");
        query.safety = Safety::ReadOnly;
        let r = search(&idx(), &query);
        assert!(r.hits.iter().all(|h| h.tool.read_only()));
    }

    #[test]
    fn stopword_only_query_is_no_match_and_empty_browses() {
        assert_eq!(search(&idx(), &q("please the")).mode, MatchMode::None);
        let b = search(&idx(), &q(""));
        assert_eq!(b.mode, MatchMode::Browse);
        assert_eq!(b.total, 4);
    }

    #[test]
    fn partial_reports_unmatched_terms() {
        let r = search(&idx(), &q("issues zebra"));
        assert_eq!(r.mode, MatchMode::Partial);
        assert_eq!(r.analysis.unmatched, vec!["zebra".to_string()]);
    }
}
