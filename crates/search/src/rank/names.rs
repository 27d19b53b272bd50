//! Reading a tool's name against the query: whether the query spells the
//! whole name as a run of its words (articles may sit between them:
//! "delete an item" spells `delete_item`), and whether the name's words
//! appear in the query in order.

use crate::index::CatalogIndex;

use super::prepare::Prepared;

/// The query against one index, for reading names.
#[derive(Debug, Default)]
pub(super) struct NameCtx {
    raw_ids: Vec<Option<u32>>,
    /// `raw_ids` without the articles and the connector's words.
    article_free: Vec<Option<u32>>,
    scored_set: Vec<u32>,
    raw_set: Vec<u32>,
}

impl NameCtx {
    pub(super) fn fill(&mut self, q: &Prepared, ix: &CatalogIndex, ids: &[Option<u32>]) {
        self.raw_ids.clear();
        self.raw_ids.extend(q.raw_distinct.iter().map(|&d| ids[d]));
        self.article_free.clear();
        self.article_free.extend(
            self.raw_ids
                .iter()
                .zip(&q.articles)
                .filter(|(id, article)| {
                    !**article && !id.is_some_and(|id| ix.is_connector_term(id))
                })
                .map(|(&id, _)| id),
        );
        self.scored_set.clear();
        self.raw_set.clear();
        for (d, id) in ids.iter().enumerate() {
            if let Some(id) = *id {
                self.raw_set.push(id);
                if q.distinct_scored[d] {
                    self.scored_set.push(id);
                }
            }
        }
        self.scored_set.sort_unstable();
        self.raw_set.sort_unstable();
    }

    /// The query spells the tool's whole name, two words or more, as one
    /// run of words (articles and the connector's words aside): every name
    /// term is in the query (or, for a verb, a word of its group is) except
    /// the connector's own words and function words, and at least two
    /// distinct scored terms are.
    pub(super) fn spells(&self, ix: &CatalogIndex, tool: u32) -> bool {
        let name = ix.name_terms(tool);
        let mut spelled = 0u16;
        for (i, &term) in name.iter().enumerate() {
            if self.scored_set.binary_search(&term).is_ok() {
                if !name[..i].contains(&term) {
                    spelled = spelled.saturating_add(1);
                }
            } else if self.raw_set.binary_search(&term).is_err()
                && !ix.is_connector_term(term)
                && !ix.is_name_stop(term)
                // A query word of the term's group stands in for it
                // ("remove" for `delete`), without counting as spelled.
                && !ix
                    .synonyms_of(term)
                    .any(|s| self.scored_set.binary_search(&s).is_ok())
            {
                return false;
            }
        }
        spelled >= 2
            && name.len() >= 2
            && (contains_run(&self.raw_ids, name)
                || (self.article_free.len() < self.raw_ids.len()
                    && contains_run(&self.article_free, name)))
    }

    /// The name's words (its leading connector words aside) appear in the
    /// query in order.
    pub(super) fn in_order(&self, ix: &CatalogIndex, tool: u32) -> bool {
        let mut at = 0;
        let mut any = false;
        for &term in ix.name_terms(tool) {
            if ix.is_connector_term(term) && !any {
                continue;
            }
            match self.raw_ids[at..].iter().position(|&id| id == Some(term)) {
                Some(p) => {
                    at += p + 1;
                    any = true;
                }
                None => return false,
            }
        }
        any
    }
}

fn seq_eq(a: &[u32], b: &[Option<u32>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Some(*x) == *y)
}

fn contains_run(hay: &[Option<u32>], needle: &[u32]) -> bool {
    hay.windows(needle.len()).any(|w| seq_eq(needle, w))
}
