//! The relevance cut: a result list cut to the plausible answers.
//!
//! - When the query spells some tools' whole names and those tools carry
//!   all its other words too ("list organizations projects" for
//!   `List-Organizations` in a catalog about projects), they alone are the
//!   answer.
//! - Otherwise the matches carrying every term stay, and partial ones stay
//!   when their evidence is close to the best's, or when they are the only
//!   tool whose name carries some query word (the other half of a
//!   multi-intent query: "zones, DNS records and analytics").
//! - A tool carrying every word of a query that asks for one thing answers
//!   it: a partial match beside it only shares some of its words ("git
//!   staged changes diff" is `git_diff_staged`, not also
//!   `git_diff_unstaged`), unless the partial match's name carries more of
//!   the query.

use super::order;
use super::prepare::Prepared;
use super::score::{Cand, LastShare};
use super::scratch::Scratch;
use super::{Hit, KEEP_RATIO, RESCUE_RATIO};

/// What the cut kept: the window's hits, the total, whether some kept tool
/// carries every term, and the union of the kept tools' term masks.
pub(super) struct Kept {
    pub hits: Vec<Hit>,
    pub total: usize,
    pub all_terms: bool,
    pub union: u32,
}

impl Scratch {
    /// The cut, against `best_base`, the best evidence of an answer.
    pub(super) fn cut(&mut self, q: &Prepared, best_base: f32) -> Kept {
        if !self.spelled.is_empty() {
            return self.spelled_names(q);
        }
        self.rest.clear();
        let pending = std::mem::take(&mut self.pending);
        // A query of several parts keeps every partial match that fits
        // (each may answer one part: "hubspot contact and company
        // records").
        let answered = if q.several_parts {
            -1.0
        } else {
            self.best_all_own
        };
        let mut last = LastShare::default();
        let mut carries_more = |own: u32| answered < 0.0 || last.of(own, q) > answered;
        for c in pending.iter().filter(|c| carries_more(c.own)) {
            if c.base >= KEEP_RATIO * best_base {
                self.union_own |= c.own;
                self.accept(c);
            } else if c.own & q.required_mask != 0 && c.base >= RESCUE_RATIO * best_base {
                self.rest.push(*c);
            }
        }
        self.pending = pending;
        // A partial match that alone carries a query word in its name.
        let mut rest = std::mem::take(&mut self.rest);
        rest.sort_unstable_by(order);
        for c in &rest {
            let new = c.own & q.required_mask & !self.union_own;
            if new != 0 {
                self.union_own |= new;
                self.accept(c);
            }
        }
        self.rest = rest;
        Kept {
            hits: self.top.finish(),
            total: self.total,
            all_terms: self.all_terms,
            union: self.union_mask,
        }
    }

    /// The query names these tools: they are the answer, as an exact name
    /// is; the rest only share its words.
    fn spelled_names(&mut self, q: &Prepared) -> Kept {
        let names: &mut Vec<Cand> = &mut self.spelled;
        names.sort_unstable_by(order);
        let union = names.iter().fold(0, |m, c| m | c.mask);
        Kept {
            hits: names.iter().take(self.top.window).map(Cand::hit).collect(),
            total: names.len(),
            // (A word no catalog knows leaves the page partial.)
            all_terms: union & q.required_mask == q.required_mask,
            union,
        }
    }
}
