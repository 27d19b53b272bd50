//! The candidate pass: evidence per tool, accumulated term by term from
//! the postings, then each tool judged (its tier, whether the query's
//! guessed intent demotes it, whether it is plausible).
//!
//! Everything allocated here lives in a per-thread [`Scratch`] reused by
//! every query on that thread: a dense accumulator sized to the largest
//! catalog seen, reset lazily by a generation stamp (so a query touching
//! ten tools costs ten tools, not the catalog), and the candidate buffers.

use std::cell::RefCell;

use crate::index::{CatalogIndex, F_NAME, F_SYN};
use crate::op::Op;

use super::admits;
use super::names::NameCtx;
use super::prepare::Prepared;
use super::score::{
    Cand, DEMOTED, Evidence, FIELD_WEIGHT, LastShare, coverage, enough_words, finish, lacks_words,
    plausible, with_connector,
};
use super::topk::{TopK, order_key};

/// What the candidate pass learned before the cut.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Plausible answers (complete, or covering enough of the query).
    pub plausible: usize,
    /// The best evidence among those that fit the query's intent.
    pub best_base: f32,
    /// Tools matching enough of the query's words that do the opposite of
    /// what it asks.
    pub opposed: usize,
    /// Tools matching enough of the query's words whose names say they make
    /// another kind of change than it asks for.
    pub other_change: usize,
    /// The best evidence among those (the relevance cut's bar when no
    /// answer has more).
    pub left_out_base: f32,
}

/// Per-tool accumulator. `stamp` says which index visit wrote it; any other
/// value means all zero.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    stamp: u32,
    score: f32,
    mask: u32,
    own: u32,
    /// Distinct necessary query terms the name's postings carry, plus one
    /// per query term that stands for a name word by its synonym (an upper
    /// bound on the name words the query covers).
    have: u16,
    /// Distinct non-function query terms the name carries (same bound).
    hits: u16,
}

/// How one tool was judged, by what decides it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Key {
    score: u32,
    mask: u32,
    read_only: bool,
    /// Nothing of its own carries a query word.
    bare: bool,
    demoted: bool,
    spelled: bool,
    in_order: bool,
}

/// The last tool's result, reused for the next one with the same key:
/// long runs of alike tools cost one judgement.
struct Memo {
    key: Key,
    cand: Cand,
    keep: bool,
    /// Not kept, but may become plausible (see [`Scratch::doubtful`]).
    doubtful: bool,
    order: u64,
}

/// Reusable per-thread buffers (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Scratch {
    acc: Vec<Acc>,
    stamp: u32,
    touched: Vec<u32>,
    done: Vec<bool>,
    pub(super) names: NameCtx,
    seq: Vec<u32>,
    named: Vec<u32>,
    exact: Vec<Cand>,
    pub(super) pending: Vec<Cand>,
    /// Implausible matches whose name carries a query word and whose
    /// evidence was above every plausible match's when they were seen.
    doubtful: Vec<Cand>,
    pub(super) rest: Vec<Cand>,
    pub(super) top: TopK,
    // The answer so far: complete matches, then what survives the cut.
    pub(super) total: usize,
    pub(super) all_terms: bool,
    /// The largest share of the query's weight that the name of a match
    /// carrying every scored term carries (`-1`: there is none).
    pub(super) best_all_own: f32,
    /// The last complete match's name share.
    last_own: LastShare,
    pub(super) union_mask: u32,
    pub(super) union_own: u32,
    /// Candidates whose whole name the query spells.
    pub(super) spelled: Vec<Cand>,
    /// Per index: the tools whose own words carry the query's connector id
    /// words.
    carriers: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch (a fresh one if it is in use).
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// One index being visited.
struct Visit<'a> {
    source: usize,
    ix: &'a CatalogIndex,
    q: &'a Prepared,
    ids: &'a [Option<u32>],
    /// The query terms that are the connector's id, and its description's.
    connector: u32,
    topic: u32,
    names_ready: bool,
    memo: Option<Memo>,
    /// Position in `Scratch::carriers` (read in tool order).
    carrier: usize,
}

impl Scratch {
    /// Tools whose name the query spells exactly (alone, or after the
    /// connector id), admitted and matched by some query term.
    pub(super) fn exact(&mut self, indexes: &[&CatalogIndex], q: &Prepared) -> &mut Vec<Cand> {
        self.exact.clear();
        for (source, ix) in indexes.iter().enumerate() {
            let ids = q.ids(source);
            self.seq.clear();
            for &d in &q.raw_distinct {
                match ids[d] {
                    Some(id) => self.seq.push(id),
                    None => break,
                }
            }
            if self.seq.len() != q.raw_distinct.len() {
                continue;
            }
            self.named.clear();
            self.named.extend(ix.tools_named(&self.seq));
            let conn = ix.connector_terms();
            if !conn.is_empty() && self.seq.len() > conn.len() && self.seq.starts_with(conn) {
                self.named.extend(ix.tools_named(&self.seq[conn.len()..]));
            }
            for i in 0..self.named.len() {
                if let Some(c) = one(source, ix, q, ids, self.named[i]) {
                    self.exact.push(c);
                }
            }
        }
        &mut self.exact
    }

    /// Score every candidate of every index (there is no exact name).
    /// Complete matches are final at once; partial ones wait in `pending`.
    pub(super) fn candidates(
        &mut self,
        indexes: &[&CatalogIndex],
        q: &Prepared,
        window: usize,
    ) -> Found {
        self.top.reset(window);
        self.pending.clear();
        self.doubtful.clear();
        self.total = 0;
        self.all_terms = false;
        self.best_all_own = -1.0;
        self.last_own = LastShare::default();
        self.union_mask = 0;
        self.union_own = 0;
        self.spelled.clear();
        let mut found = Found::default();
        for (source, ix) in indexes.iter().enumerate() {
            let ids = q.ids(source);
            if q.in_scope[source] && ids.iter().any(Option::is_some) {
                self.index(source, ix, q, ids, &mut found);
            }
        }
        // A match is plausible when its evidence beats a plausible one's:
        // "which invoices are open" is `list_invoices` (the word in its
        // name) before a tool whose description lists "open" among its
        // filters, though "open" is the rarer word.
        if found.plausible > 0 {
            let bar = found.best_base;
            for c in self.doubtful.iter().filter(|c| c.base > bar) {
                found.plausible += 1;
                found.best_base = found.best_base.max(c.base);
                self.pending.push(*c);
            }
        }
        found
    }

    fn next_stamp(&mut self, n: usize) -> u32 {
        if self.acc.len() < n {
            self.acc.resize(n, Acc::default());
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.acc.iter_mut().for_each(|a| a.stamp = 0);
            self.stamp = 1;
        }
        self.stamp
    }

    fn index(
        &mut self,
        source: usize,
        ix: &CatalogIndex,
        q: &Prepared,
        ids: &[Option<u32>],
        found: &mut Found,
    ) {
        let n = ix.len();
        let stamp = self.next_stamp(n);
        let (connector, topic, work) = connector_words(ix, q, ids);
        self.carriers(ix, q, ids, connector);
        let every_tool = connector | topic != 0;
        // A query reaching a good share of the catalog fills the
        // accumulator once and skips the per-posting stamp check.
        let dense = every_tool || work.saturating_mul(4) >= n;
        self.touched.clear();
        if dense {
            self.acc[..n].fill(Acc {
                stamp,
                ..Acc::default()
            });
            self.accumulate::<true>(ix, q, ids, stamp);
        } else {
            self.accumulate::<false>(ix, q, ids, stamp);
            if self.touched.is_empty() {
                return;
            }
        }
        let mut v = Visit {
            source,
            ix,
            q,
            ids,
            connector,
            topic,
            names_ready: false,
            memo: None,
            carrier: 0,
        };
        let name_only = q.by_name_only.get(source).copied().unwrap_or(false);
        let count = if dense { n } else { self.touched.len() };
        for i in 0..count {
            let tool = if dense { i as u32 } else { self.touched[i] };
            let a = self.acc[tool as usize];
            // A catalog the query's connector-naming parts leave out
            // answers its other parts by name only (a generic read verb
            // such as `get` is no name of an answer).
            let skip = (!every_tool && a.mask == 0)
                || (name_only && a.own & q.open_words == 0)
                || !admits(q.safety, ix.read_only(tool));
            if !skip {
                self.tool(&mut v, tool, a, found);
            }
        }
    }

    /// The tools of `ix` whose own words carry the connector's id as the
    /// query names it, a word of its own (`get_current_time` in `time`) and
    /// not a service's name, in tool order.
    fn carriers(&mut self, ix: &CatalogIndex, q: &Prepared, ids: &[Option<u32>], connector: u32) {
        self.carriers.clear();
        if connector == 0 {
            return;
        }
        let mut terms = 0;
        for (k, &d) in q.term_distinct.iter().enumerate() {
            if connector & !q.service_mask & 1 << k != 0
                && let Some(id) = ids[d]
            {
                terms += 1;
                let postings = ix.raw_postings(id);
                self.carriers.extend(
                    postings
                        .iter()
                        .map(|&p| CatalogIndex::posting_tool(p) as u32),
                );
            }
        }
        // One term's postings are in tool order already.
        if terms > 1 {
            self.carriers.sort_unstable();
            self.carriers.dedup();
        }
    }

    /// Judge one tool with accumulated evidence `a`.
    fn tool(&mut self, v: &mut Visit<'_>, tool: u32, a: Acc, found: &mut Found) {
        let (ix, q) = (v.ix, v.q);
        let demoted = demoted(v, tool, &a, found);
        let name_read = a.hits > 0 && a.have >= u16::from(ix.name_need(tool));
        if (name_read || (demoted && a.hits > 0)) && !v.names_ready {
            self.names.fill(q, ix, v.ids);
            v.names_ready = true;
        }
        // Nothing of the tool's own carries a query word: it matches by
        // its connector's id or description alone. (Tools without evidence
        // of their own come here only in the dense pass, in tool order.)
        let bare = a.mask == 0 && {
            while self.carriers.get(v.carrier).is_some_and(|&c| c < tool) {
                v.carrier += 1;
            }
            self.carriers.get(v.carrier) != Some(&tool)
        };
        let key = Key {
            score: a.score.to_bits(),
            mask: a.mask,
            read_only: ix.read_only(tool),
            bare,
            demoted,
            spelled: name_read && self.names.spells(ix, tool),
            in_order: demoted && a.hits > 0 && self.names.in_order(ix, tool),
        };
        if let Some(m) = v.memo.as_ref().filter(|m| m.key == key) {
            let c = Cand {
                tool,
                own: a.own,
                ..m.cand
            };
            let judged = (m.keep, m.doubtful);
            let memo = Some((m.order, m.cand.own));
            self.record(q, c, judged, memo, found);
            return;
        }
        let e = with_connector(q, v.connector, v.topic, a.score, a.mask, a.own);
        let (c, keep, doubtful) = judge(q, (v.source, tool), e, key);
        v.memo = Some(Memo {
            key,
            cand: c,
            keep,
            doubtful,
            order: order_key(c.tier, c.score),
        });
        self.record(q, c, (keep, doubtful), None, found);
    }

    /// Note a judged tool: a plausible one joins the answers (at once when
    /// it carries every term, else after the cut); an implausible one may
    /// still become plausible. `memo`: the tool was judged alike the one
    /// before (its key order and name terms), which already raised the
    /// bars.
    fn record(
        &mut self,
        q: &Prepared,
        c: Cand,
        (keep, doubtful): (bool, bool),
        memo: Option<(u64, u32)>,
        found: &mut Found,
    ) {
        if !keep {
            // Its name carries a query word: what the query is about.
            if doubtful && c.base > found.best_base && c.own & q.required_mask != 0 {
                self.doubtful.push(c);
            }
            return;
        }
        found.plausible += 1;
        if memo.is_none() && c.tier < DEMOTED {
            found.best_base = found.best_base.max(c.base);
        }
        if c.spelled {
            self.spelled.push(c);
        }
        if c.tier != 1 {
            self.pending.push(c);
            return;
        }
        self.union_own |= c.own;
        match memo {
            Some((order, first_own)) => {
                if c.all_terms && c.own != first_own {
                    self.note_all_terms(c.own, q);
                }
                self.total += 1;
                self.top.push_key(order, c.source, c.tool, c.score);
            }
            None => {
                if c.all_terms {
                    self.note_all_terms(c.own, q);
                }
                self.accept(&c);
            }
        }
    }

    /// Evidence, term by term, into the accumulator; the same pass counts
    /// the query words each name carries. `DENSE`: the accumulator is
    /// already reset for the whole index.
    fn accumulate<const DENSE: bool>(
        &mut self,
        ix: &CatalogIndex,
        q: &Prepared,
        ids: &[Option<u32>],
        stamp: u32,
    ) {
        let acc = &mut self.acc[..ix.len()];
        let touched = &mut self.touched;
        let mut touch = |acc: &mut [Acc], t: usize| {
            if !DENSE && acc[t].stamp != stamp {
                acc[t] = Acc {
                    stamp,
                    ..Acc::default()
                };
                touched.push(t as u32);
            }
        };
        self.done.clear();
        self.done.resize(q.n_distinct, false);
        for (k, &d) in q.term_distinct.iter().enumerate() {
            let Some(id) = ids[d] else { continue };
            if ix.is_connector_term(id) {
                continue;
            }
            self.done[d] = true;
            let (bit, w) = (1u32 << k, q.weights[k]);
            let necessary = u16::from(ix.is_necessary(id));
            for &p in ix.raw_postings(id) {
                let t = CatalogIndex::posting_tool(p);
                let fields = CatalogIndex::posting_fields(p);
                touch(acc, t);
                let a = &mut acc[t];
                a.score += w * FIELD_WEIGHT[usize::from(fields)];
                a.mask |= bit;
                if fields & F_NAME != 0 {
                    a.own |= bit;
                    a.have = a.have.wrapping_add(necessary);
                    a.hits = a.hits.wrapping_add(1);
                } else if fields & F_SYN != 0 {
                    // A word of the name by its synonym ("remove" on
                    // `delete_task`): the name may be spelled.
                    a.have = a.have.wrapping_add(1);
                    a.hits = a.hits.wrapping_add(1);
                }
            }
        }
        // Name terms of the other query words (function words, the
        // connector id, terms past the scored limit), and name terms that
        // have no posting. (Counts cannot wrap: a query has at most a few
        // hundred words.)
        for (d, id) in ids.iter().enumerate() {
            let Some(id) = *id else { continue };
            let scored = u16::from(q.distinct_scored[d]);
            if !self.done[d] {
                let necessary = u16::from(ix.is_necessary(id));
                if necessary | scored != 0 {
                    for &p in ix.raw_postings(id) {
                        let fields = CatalogIndex::posting_fields(p);
                        if fields & (F_NAME | F_SYN) != 0 {
                            let t = CatalogIndex::posting_tool(p);
                            touch(acc, t);
                            let counts = if fields & F_NAME != 0 { necessary } else { 1 };
                            acc[t].have = acc[t].have.wrapping_add(counts);
                            acc[t].hits = acc[t].hits.wrapping_add(scored);
                        }
                    }
                }
            }
            if scored != 0 && ix.has_name_extra() {
                for t in ix.name_extra(id) {
                    touch(acc, t as usize);
                    acc[t as usize].hits = acc[t as usize].hits.wrapping_add(1);
                }
            }
        }
    }

    /// A match carrying every term, whose name carries the terms `own`: the
    /// cut keeps partial names that carry more. (Alike tools share `own`:
    /// the last share is kept rather than summed again.)
    pub(super) fn note_all_terms(&mut self, own: u32, q: &Prepared) {
        self.best_all_own = self.best_all_own.max(self.last_own.of(own, q));
    }

    pub(super) fn accept(&mut self, c: &Cand) {
        self.total += 1;
        self.all_terms |= c.all_terms;
        self.union_mask |= c.mask;
        self.top.push(c);
    }
}

/// The query terms that are `ix`'s connector id words, those of its
/// description, and the postings the others reach.
fn connector_words(ix: &CatalogIndex, q: &Prepared, ids: &[Option<u32>]) -> (u32, u32, usize) {
    let (mut connector, mut topic, mut work) = (0u32, 0u32, 0usize);
    for (k, &d) in q.term_distinct.iter().enumerate() {
        let Some(id) = ids[d] else { continue };
        if ix.is_connector_term(id) {
            // The connector's own name counts the same for all its tools,
            // wherever a tool repeats it (`slack_post_message`).
            connector |= 1 << k;
        } else {
            if ix.is_topic_term(id) {
                topic |= 1 << k;
            }
            work += ix.raw_postings(id).len();
        }
    }
    (connector, topic, work)
}

/// Whether the query's guessed intent demotes the tool: it does the
/// opposite of what the query asks, or makes another kind of change (both
/// counted for the no-match hint when its words would make it plausible;
/// the second also sets the cut's bar: it does the same sort of thing to
/// the same objects).
fn demoted(v: &Visit<'_>, tool: u32, a: &Acc, found: &mut Found) -> bool {
    let (ix, q) = (v.ix, v.q);
    let op = ix.op(tool);
    if q.op.opposes(op) {
        if enough_words(a.mask, coverage(a.mask, q), q) {
            found.opposed += 1;
        }
        return true;
    }
    if op == Op::Read || !q.other_change(ix.change(tool), a.own, a.mask) {
        return false;
    }
    let e = with_connector(q, v.connector, v.topic, a.score, a.mask, a.own);
    if enough_words(e.mask, coverage(e.mask, q), q) {
        found.other_change += 1;
        found.left_out_base = found.left_out_base.max(e.score);
    }
    true
}

/// A tool's candidate, and whether it is kept as plausible or doubtful. A
/// demoted tool comes after every answer that fits, and is an answer only
/// on the strongest evidence: it carries every word of the query, or the
/// query has its name's words in order (or, below, its evidence beats
/// every plausible answer's).
fn judge(q: &Prepared, at: (usize, u32), e: Evidence, key: Key) -> (Cand, bool, bool) {
    let mut c = finish(q, at, false, e, key.spelled, key.read_only);
    let strong_enough = !key.demoted || c.all_terms || key.in_order;
    if key.demoted {
        // After every answer that fits, complete ones first.
        c.tier += DEMOTED - 1;
    }
    let keep = plausible(&c, q) && !(key.bare && lacks_words(&c, q)) && strong_enough;
    // (Not for a query naming a missing service: only enough words answer
    // it.)
    let doubtful = !keep && !key.bare && q.missing.is_empty();
    (c, keep, doubtful)
}

/// One exact-name tool, scored on its own from binary-searched postings;
/// `None` when the safety filter refuses it or no query term matches it.
fn one(
    source: usize,
    ix: &CatalogIndex,
    q: &Prepared,
    ids: &[Option<u32>],
    tool: u32,
) -> Option<Cand> {
    let read_only = ix.read_only(tool);
    if !admits(q.safety, read_only) {
        return None;
    }
    let (mut score, mut mask, mut own) = (0f32, 0u32, 0u32);
    let (mut connector, mut topic) = (0u32, 0u32);
    for (k, &d) in q.term_distinct.iter().enumerate() {
        let Some(id) = ids[d] else { continue };
        if ix.is_connector_term(id) {
            connector |= 1 << k;
            continue;
        } else if ix.is_topic_term(id) {
            topic |= 1 << k;
        }
        let fields = ix.fields_of(id, tool);
        if fields != 0 {
            score += q.weights[k] * FIELD_WEIGHT[fields as usize];
            mask |= 1 << k;
            if fields & F_NAME != 0 {
                own |= 1 << k;
            }
        }
    }
    if mask == 0 && connector == 0 && topic == 0 {
        return None;
    }
    let e = with_connector(q, connector, topic, score, mask, own);
    Some(finish(q, (source, tool), true, e, false, read_only))
}
