//! A tool's evidence, tier and score, and the tests an answer must pass.
//!
//! - A tool earns a term's weight times the strongest field it appears in
//!   (name > title > description and synonyms > connector text).
//! - Tiers come first: an exact tool name (0), then tools carrying every
//!   scored term (1), then partial matches (2); a guessed mismatch with
//!   what the query asks (read against change, or another kind of change)
//!   comes after all of them, in the same order ([`DEMOTED`]).
//! - An answer is plausible when it carries every term or enough of the
//!   query: half its weight, or two of its words (not when it names a
//!   service no catalog knows), or in a search the caller scoped to one
//!   connector, any of its words.

use crate::index::{F_DESC, F_NAME, F_SYN, F_TITLE};
use crate::op::Change;

use super::prepare::Prepared;
use super::{
    Hit, MIN_BEST_COVERAGE, READ_ONLY_BONUS, W_CONNECTOR, W_DESC, W_NAME, W_TITLE, W_TOPIC,
};

/// The first tier of a tool that does the opposite of what the query asks,
/// or another kind of change: after every answer that fits (3 when it
/// carries every term, 4 otherwise).
pub(super) const DEMOTED: u8 = 3;

impl Prepared {
    /// A tool making change `tool` (`None`: its name says no kind), whose
    /// name carries the query's terms `own` and whose words carry `mask`,
    /// makes another change than every one the query asks for, and its
    /// words do not carry the query's verb. A name saying no kind of change
    /// (`maintenance_on`) does not fit a query asking for a particular one
    /// ("delete the app") unless its words carry the verb; a query asking
    /// for any change ("update the record") may be answered by it.
    pub(super) fn other_change(&self, tool: Option<Change>, own: u32, mask: u32) -> bool {
        if self.changes.is_empty() {
            return false;
        }
        match tool {
            Some(tool) => {
                own & self.verb_mask == 0 && !self.changes.iter().any(|(c, _)| c.admits(tool))
            }
            None => {
                mask & self.verb_mask == 0 && self.changes.iter().all(|(c, _)| *c != Change::Any)
            }
        }
    }

    /// Term ids of the distinct texts in index `source`.
    pub(super) fn ids(&self, source: usize) -> &[Option<u32>] {
        &self.local[source * self.n_distinct..(source + 1) * self.n_distinct]
    }
}

/// A scored tool.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cand {
    pub source: u32,
    pub tool: u32,
    pub tier: u8,
    /// Carries every scored term (or is the exact name).
    pub all_terms: bool,
    /// Evidence plus bonuses: the sort key within a tier.
    pub score: f32,
    /// Evidence only: what the relevance cut compares.
    pub base: f32,
    pub coverage: f32,
    /// Terms matched anywhere (topic words included).
    pub mask: u32,
    /// Terms matched by the tool's own name.
    pub own: u32,
    /// The query spells the whole name as a run of words (two or more,
    /// articles aside), and the tool carries every other query word too
    /// (anywhere, its connector's words included): see the cut.
    pub spelled: bool,
}

impl Cand {
    pub fn hit(&self) -> Hit {
        Hit {
            source: self.source as usize,
            tool: self.tool,
            tier: self.tier,
            score: self.score,
        }
    }
}

/// What a tool's words carry of the query.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Evidence {
    pub score: f32,
    /// Terms matched anywhere.
    pub mask: u32,
    /// Terms matched by its own words or its connector's id.
    pub strong: u32,
    /// Terms matched by its own name.
    pub own: u32,
}

/// Field weight by posting field bits: the strongest field wins.
pub(super) const FIELD_WEIGHT: [f32; 16] = {
    let mut w = [0.0; 16];
    let mut f = 1;
    while f < 16 {
        w[f] = if f as u8 & F_NAME != 0 {
            W_NAME
        } else if f as u8 & F_TITLE != 0 {
            W_TITLE
        } else if f as u8 & (F_DESC | F_SYN) != 0 {
            W_DESC
        } else {
            0.0
        };
        f += 1;
    }
    w
};

/// A tool's evidence with the connector's id and description words added,
/// which every tool of the catalog carries (unless it already matched them
/// itself).
pub(super) fn with_connector(
    q: &Prepared,
    connector: u32,
    topic: u32,
    score: f32,
    mask: u32,
    own: u32,
) -> Evidence {
    let mut e = Evidence {
        score,
        mask,
        strong: mask,
        own,
    };
    let mut extra = (connector | topic) & !mask;
    while extra != 0 {
        let k = extra.trailing_zeros() as usize;
        let is_id = connector & 1 << k != 0;
        e.score += q.weights[k] * if is_id { W_CONNECTOR } else { W_TOPIC };
        e.mask |= 1 << k;
        if is_id {
            e.strong |= 1 << k;
        }
        extra &= extra - 1;
    }
    e
}

/// Tier, coverage and the final score of one tool from its evidence;
/// `spelled`: the query spells its whole name (see [`Cand::spelled`]).
pub(super) fn finish(
    q: &Prepared,
    (source, tool): (usize, u32),
    exact: bool,
    e: Evidence,
    spelled: bool,
    read_only: bool,
) -> Cand {
    let req = q.required_mask;
    let complete_terms = e.strong & req == req;
    let tier = if exact {
        0
    } else if complete_terms {
        1
    } else {
        2
    };
    let mut score = e.score;
    // Equal evidence: the tool that needs no approval first.
    if read_only {
        score += q.total_weight * READ_ONLY_BONUS;
    }
    Cand {
        source: source as u32,
        tool,
        tier,
        all_terms: complete_terms || exact,
        score,
        base: e.score,
        coverage: coverage(e.mask, q),
        mask: e.mask,
        own: e.own,
        spelled: spelled && e.mask & q.carried == q.carried,
    }
}

/// The share of the query's weight that a name's query terms carry, kept
/// for the last name asked: alike tools share their names' terms, so a run
/// of them costs one sum, not one each.
#[derive(Debug, Clone, Copy)]
pub(super) struct LastShare(u32, f32);

impl Default for LastShare {
    fn default() -> LastShare {
        LastShare(u32::MAX, 0.0)
    }
}

impl LastShare {
    pub(super) fn of(&mut self, own: u32, q: &Prepared) -> f32 {
        if self.0 != own {
            *self = LastShare(own, coverage(own, q));
        }
        self.1
    }
}

/// Set bit positions, ascending.
fn bits(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let k = m.trailing_zeros() as usize;
            m &= m - 1;
            k
        })
    })
}

/// The share of the query's weight that the required terms of `mask`
/// carry.
pub(super) fn coverage(mask: u32, q: &Prepared) -> f32 {
    let covered: f32 = bits(mask & q.required_mask).map(|k| q.weights[k]).sum();
    covered / q.total_weight
}

/// Words enough for an answer: half the query's weight, or two of its
/// words (not for a query naming a missing service); in a search the
/// caller scoped to one connector, any of its words.
pub(super) fn enough_words(mask: u32, coverage: f32, q: &Prepared) -> bool {
    coverage >= MIN_BEST_COVERAGE
        || (q.missing.is_empty() && (mask & q.required_mask).count_ones() >= 2)
        || (q.scoped && mask & q.required_mask != 0)
}

/// A tool is a plausible answer when it carries every term or has
/// [`enough_words`]; for a query naming a missing service, only enough
/// words will do. (An exact name never comes here.)
pub(super) fn plausible(c: &Cand, q: &Prepared) -> bool {
    (c.tier == 1 && q.missing.is_empty()) || enough_words(c.mask, c.coverage, q)
}

/// A tool that matches only by its connector (its id or description) is no
/// answer to a query it leaves words of unmatched: "restore the mysql
/// database from last night's backup" is not every tool of `mysql`. Asked
/// for nothing but the connector ("stripe"), or in a search the caller
/// scoped to that connector, every tool may be an answer.
pub(super) fn lacks_words(c: &Cand, q: &Prepared) -> bool {
    c.mask & q.required_mask != q.required_mask && !q.scoped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_weights_take_the_strongest_field() {
        assert_eq!(FIELD_WEIGHT[usize::from(F_NAME | F_DESC)], W_NAME);
        assert_eq!(FIELD_WEIGHT[usize::from(F_TITLE | F_DESC)], W_TITLE);
        assert_eq!(FIELD_WEIGHT[usize::from(F_DESC)], W_DESC);
        assert_eq!(FIELD_WEIGHT[usize::from(F_SYN)], W_DESC);
        assert_eq!(FIELD_WEIGHT[usize::from(F_SYN | F_DESC)], W_DESC);
    }
}
