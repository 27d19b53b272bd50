//! The index of one catalog: built once per catalog fingerprint, immutable,
//! shared behind `Arc` and merged with other catalogs' indexes at query time.
//!
//! Layout is chosen for a small footprint and a fast warm query: terms are
//! interned once, postings live in one flat array (compressed-row style, one
//! `u32` per posting carrying the tool and the fields it matched in), and the
//! token sequence of every tool name is kept for the exact- and complete-name
//! tiers. Connector-level text (the id and the configured description) is
//! stored once per index, not copied into every tool's postings.

use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::Catalog;

use super::tokenize::{for_each_index_term, for_each_prose_term, for_each_term, is_indexed};

/// Field bits carried by a posting.
pub(crate) const F_NAME: u8 = 1;
pub(crate) const F_TITLE: u8 = 2;
pub(crate) const F_DESC: u8 = 4;
const FIELD_BITS: u32 = 3;
const FIELD_MASK: u32 = (1 << FIELD_BITS) - 1;

/// Read verbs a query may leave out of a tool name (as stemmed terms).
const OPTIONAL_NAME_VERBS: &[&str] =
    &["get", "list", "fetch", "read", "retriev", "view", "describ"];

/// Tools per index are bounded by the posting encoding (29 bits of id).
pub const MAX_TOOLS_PER_INDEX: usize = 1 << (32 - FIELD_BITS);

#[derive(Debug)]
pub struct CatalogIndex {
    catalog: Arc<Catalog>,
    /// Interned terms → term id.
    vocab: HashMap<Box<str>, u32>,
    /// `postings[offsets[t]..offsets[t + 1]]` are term `t`'s postings, each
    /// `tool << 3 | fields`, in tool order.
    offsets: Vec<u32>,
    postings: Vec<u32>,
    /// `name_terms[name_offsets[i]..name_offsets[i + 1]]` is tool `i`'s name
    /// as a term sequence, stopwords included.
    name_offsets: Vec<u32>,
    name_terms: Vec<u32>,
    /// Sorted name terms a query need not spell out for a name to count as
    /// complete: function words (`to` in `reply_to_thread`) and generic read
    /// verbs (`get`, `list`…), which people leave out ("slack thread replies").
    name_stops: Vec<u32>,
    /// The connector id as a term sequence (for `connector tool` exact names).
    connector_terms: Vec<u32>,
    /// Sorted terms of the connector id: such a query term matches every tool
    /// of the catalog, as strongly as a word of its description would.
    connector_vocab: Vec<u32>,
    /// Sorted terms of the configured connector description (minus the id's):
    /// weak, topical evidence for every tool of the catalog. They do not
    /// raise document frequency and never make a match complete.
    topic_vocab: Vec<u32>,
}

impl CatalogIndex {
    /// Index a catalog with no connector description.
    pub fn build(catalog: Arc<Catalog>) -> CatalogIndex {
        CatalogIndex::with_description(catalog, None)
    }

    /// Index a catalog; `description` is the connector's configured
    /// description, whose words then match every tool of this connector.
    pub fn with_description(catalog: Arc<Catalog>, description: Option<&str>) -> CatalogIndex {
        let n = catalog.len().min(MAX_TOOLS_PER_INDEX);
        let mut vocab: HashMap<Box<str>, u32> = HashMap::new();
        let mut intern = |term: &str| -> u32 {
            if let Some(&id) = vocab.get(term) {
                return id;
            }
            let id = vocab.len() as u32;
            vocab.insert(term.into(), id);
            id
        };
        // Pass 1: (term, tool, fields) triples, merged per tool.
        let mut triples: Vec<(u32, u32, u8)> = Vec::with_capacity(n * 12);
        let mut name_offsets = Vec::with_capacity(n + 1);
        let mut name_terms = Vec::with_capacity(n * 3);
        let mut name_stops = Vec::new();
        name_offsets.push(0);
        let mut per_tool: Vec<(u32, u8)> = Vec::with_capacity(32);
        for (i, tool) in catalog.tools().iter().take(n).enumerate() {
            per_tool.clear();
            for_each_term(&tool.name, |t, s| {
                let id = intern(t);
                name_terms.push(id);
                if !is_indexed(t, s) || OPTIONAL_NAME_VERBS.contains(&t) {
                    name_stops.push(id);
                }
            });
            for_each_index_term(&tool.name, |t, s| {
                if is_indexed(t, s) {
                    per_tool.push((intern(t), F_NAME));
                }
            });
            name_offsets.push(name_terms.len() as u32);
            let titles = tool.title.iter().chain(tool.annotations.title.iter());
            for title in titles {
                for_each_index_term(title, |t, s| {
                    if is_indexed(t, s) {
                        per_tool.push((intern(t), F_TITLE));
                    }
                });
            }
            for_each_prose_term(tool.description(), |t, s| {
                if is_indexed(t, s) {
                    per_tool.push((intern(t), F_DESC));
                }
            });
            per_tool.sort_unstable_by_key(|&(t, _)| t);
            let mut k = 0;
            while k < per_tool.len() {
                let (term, mut fields) = per_tool[k];
                k += 1;
                while k < per_tool.len() && per_tool[k].0 == term {
                    fields |= per_tool[k].1;
                    k += 1;
                }
                triples.push((term, i as u32, fields));
            }
        }
        let mut connector_terms = Vec::new();
        for_each_term(&catalog.connector, |t, _| connector_terms.push(intern(t)));
        let mut connector_vocab = connector_terms.clone();
        connector_vocab.sort_unstable();
        connector_vocab.dedup();
        name_stops.sort_unstable();
        name_stops.dedup();
        let mut topic_vocab = Vec::new();
        for_each_prose_term(description.unwrap_or(""), |t, s| {
            if is_indexed(t, s) {
                topic_vocab.push(intern(t));
            }
        });
        topic_vocab.sort_unstable();
        topic_vocab.dedup();
        topic_vocab.retain(|t| connector_vocab.binary_search(t).is_err());

        // Pass 2: counting sort into the flat posting array. Tools were
        // visited in order, so each term's postings stay in tool order.
        let terms = vocab.len();
        let mut offsets = vec![0u32; terms + 1];
        for &(t, _, _) in &triples {
            offsets[t as usize + 1] += 1;
        }
        for t in 0..terms {
            offsets[t + 1] += offsets[t];
        }
        let mut fill = offsets.clone();
        let mut postings = vec![0u32; triples.len()];
        for &(t, tool, fields) in &triples {
            let slot = &mut fill[t as usize];
            postings[*slot as usize] = tool << FIELD_BITS | u32::from(fields);
            *slot += 1;
        }
        vocab.shrink_to_fit();
        CatalogIndex {
            catalog,
            vocab,
            offsets,
            postings,
            name_offsets,
            name_terms,
            name_stops,
            connector_terms,
            connector_vocab,
            topic_vocab,
        }
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn connector(&self) -> &str {
        &self.catalog.connector
    }

    /// Tools covered by this index (the catalog's, up to the posting bound).
    pub fn len(&self) -> usize {
        self.name_offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn term_id(&self, term: &str) -> Option<u32> {
        self.vocab.get(term).copied()
    }

    /// `(tool, fields)` postings of a term.
    pub(crate) fn postings(&self, term: u32) -> impl Iterator<Item = (u32, u8)> + '_ {
        let t = term as usize;
        self.postings[self.offsets[t] as usize..self.offsets[t + 1] as usize]
            .iter()
            .map(|&p| (p >> FIELD_BITS, (p & FIELD_MASK) as u8))
    }

    /// Tools containing a term in any field, counting the connector id.
    pub(crate) fn doc_freq(&self, term: u32) -> usize {
        if self.is_connector_term(term) {
            self.len()
        } else {
            let t = term as usize;
            (self.offsets[t + 1] - self.offsets[t]) as usize
        }
    }

    pub(crate) fn is_connector_term(&self, term: u32) -> bool {
        self.connector_vocab.binary_search(&term).is_ok()
    }

    pub(crate) fn is_topic_term(&self, term: u32) -> bool {
        self.topic_vocab.binary_search(&term).is_ok()
    }

    /// Whether a name term may be left out of a query (`to`, `get`, `list`).
    pub(crate) fn is_name_stop(&self, term: u32) -> bool {
        self.name_stops.binary_search(&term).is_ok()
    }

    pub(crate) fn name_terms(&self, tool: u32) -> &[u32] {
        let i = tool as usize;
        &self.name_terms[self.name_offsets[i] as usize..self.name_offsets[i + 1] as usize]
    }

    pub(crate) fn connector_terms(&self) -> &[u32] {
        &self.connector_terms
    }

    /// Approximate heap bytes held by the index itself (the catalog it
    /// points to is not counted), for the memory report.
    pub fn heap_bytes(&self) -> usize {
        let vocab: usize = self
            .vocab
            .keys()
            .map(|k| k.len() + std::mem::size_of::<(Box<str>, u32)>() + 8)
            .sum();
        vocab
            + 4 * (self.offsets.capacity()
                + self.postings.capacity()
                + self.name_offsets.capacity()
                + self.name_terms.capacity()
                + self.name_stops.capacity()
                + self.connector_terms.capacity()
                + self.connector_vocab.capacity()
                + self.topic_vocab.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolDef;
    use crate::policy::Annotations;
    use serde_json::json;

    fn tool(name: &str, desc: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            title: None,
            description: Some(desc.into()),
            input_schema: Arc::new(json!({"type": "object"})),
            output_schema: None,
            annotations: Annotations::default(),
        }
    }

    #[test]
    fn postings_carry_fields_and_stay_in_tool_order() {
        let cat = Catalog::new(
            "gh",
            vec![
                tool("list_issues", "List issues in a repository"),
                tool("get_repo", "Get one repository"),
                tool("issue_stats", "Statistics"),
            ],
        );
        let idx = CatalogIndex::with_description(Arc::new(cat), Some("GitHub code hosting"));
        let issue = idx.term_id("issu").expect("indexed");
        let p: Vec<(u32, u8)> = idx.postings(issue).collect();
        assert_eq!(p, vec![(0, F_NAME | F_DESC), (2, F_NAME)]);
        let repo = idx.term_id("repository").expect("abbreviation folded");
        assert_eq!(idx.doc_freq(repo), 2);
        let github = idx
            .term_id("github")
            .expect("connector description indexed");
        assert!(idx.is_topic_term(github));
        assert_eq!(idx.doc_freq(github), 0, "topic words do not raise df");
        assert_eq!(idx.doc_freq(idx.term_id("gh").expect("id")), 3);
        assert!(idx.term_id("in").is_none(), "stopwords are not indexed");
        assert_eq!(idx.name_terms(0).len(), 2);
        assert!(idx.heap_bytes() > 0);
    }
}
