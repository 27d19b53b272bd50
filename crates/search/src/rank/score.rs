//! Evidence per tool, name checks, the relevance cut and the top-k window.
//!
//! Everything allocated here lives in a per-thread [`Scratch`] reused by
//! every query on that thread: a dense accumulator sized to the largest
//! catalog seen (20 bytes a tool), reset lazily by a generation stamp, and
//! the candidate and selection buffers.

use std::cell::RefCell;

use crate::index::{CatalogIndex, F_DESC, F_NAME, F_SYN, F_TITLE};
use crate::operation::{Change, Op};
use connecta_core::policy::Safety;

use super::{
    BIGRAM_BONUS, COMPLETE_NAME_BONUS, Hit, KEEP_COVERAGE, KEEP_RATIO, MIN_BEST_COVERAGE,
    NAME_TERM_BONUS, PHRASE_BONUS, READ_ONLY_BONUS, RESCUE_RATIO, UNEXPLAINED_NAME_PENALTY,
    W_CONNECTOR, W_DESC, W_NAME, W_TITLE, W_TOPIC, admits, order,
};

/// The prepared query, shared by every index.
pub(super) struct Query<'a> {
    /// Raw term position → its distinct text.
    pub raw_distinct: &'a [usize],
    /// Per distinct text: some occurrence of it is not a function word.
    pub distinct_scored: &'a [bool],
    /// Per raw query term: an article ("a", "an", "the").
    pub articles: &'a [bool],
    /// Scored term `k` → its distinct text.
    pub term_distinct: &'a [usize],
    pub weights: &'a [f32],
    pub required_mask: u32,
    pub total_weight: f32,
    pub n_required: usize,
    /// Adjacent non-function-word positions of the raw sequence.
    pub bigrams: &'a [(usize, usize)],
    /// Some bigram repeats one word (`record record`).
    pub self_bigram: bool,
    pub safety: Safety,
    /// Per index: its tools may answer (the query names no connector, or
    /// names this one).
    pub in_scope: &'a [bool],
    /// Per index: a query of several parts names other connectors in some
    /// parts, and this index's tools answer its other parts by name only
    /// (empty: none does).
    pub by_name_only: &'a [bool],
    /// The terms of the parts naming no connector that such a name must
    /// carry (the generic read verbs aside).
    pub open_words: u32,
    /// What the query asks to do: tools doing the opposite are no answer.
    pub op: Op,
    /// Services the query names that no catalog here knows: an answer
    /// must then cover half its weight by itself.
    pub missing: &'a [String],
    /// Terms that name a well-known service.
    pub service_mask: u32,
    /// The required terms a tool spelled by the query must carry to be
    /// the whole answer: every one, or in a query asking for one thing,
    /// those some catalog searched knows (a word no catalog knows, a
    /// value or context, is carried by no tool).
    pub carried: u32,
    /// A conjunction or a list joins the query's words: it may ask for
    /// several things.
    pub several_parts: bool,
    /// The caller chose the connector.
    pub scoped: bool,
    /// The kinds of change the query's verbs ask for (empty: none in
    /// particular), and those verbs as scored terms.
    pub changes: &'a [(Change, String)],
    pub verb_mask: u32,
    /// Terms that are verbs of an operation (`find`, `list`, `create`).
    pub operation_words: u32,
    /// Term ids of the distinct texts: `local[source * n_distinct + d]`.
    pub local: &'a [Option<u32>],
    pub n_distinct: usize,
}

impl Query<'_> {
    /// A tool making change `tool` (`None`: its name says no kind), whose
    /// name carries the query's terms `own` and whose words carry `mask`,
    /// makes another change than every one the query asks for, and its
    /// words do not carry the query's verb. A name saying no kind of
    /// change (`maintenance_on`, `Withdraw-Student`) does not answer a
    /// query asking for a particular one ("delete the app") unless its
    /// words carry the verb; a query asking for any change ("update the
    /// record") may be answered by it.
    fn other_change(&self, tool: Option<Change>, own: u32, mask: u32) -> bool {
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

    fn ids(&self, source: usize) -> &[Option<u32>] {
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
    /// (anywhere, its connector's words included): see [`Scratch::cut`].
    pub spelled: bool,
    /// For a complete name of two words or more, how many of the query's
    /// words it spells out (else 0).
    pub name_len: u16,
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

/// What the candidate pass learned before the cut.
pub(super) struct Found {
    /// Plausible answers (complete, or covering enough of the query).
    pub plausible: usize,
    /// The best evidence among them.
    pub best_base: f32,
    /// Tools matching some query word that do the opposite of what the
    /// query asks.
    pub opposed: usize,
    /// Tools matching some query word whose name says they make another
    /// kind of change than the query asks for.
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
    /// per query term that stands for a name word by its action synonym
    /// (an upper bound on the name words the query covers: joined
    /// compounds count, and a word and its synonym both do).
    have: u16,
    /// Distinct non-function query terms the name carries (same bound).
    hits: u16,
}

/// The last tool's result, reused for the next one with the same key.
struct Memo {
    key: (u32, u32, bool, bool, NameFeat),
    cand: Cand,
    keep: bool,
    /// Not kept, but may become plausible (see [`Scratch::doubtful`]).
    doubtful: bool,
    order: u64,
}

/// What reading a tool's name found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct NameFeat {
    complete: bool,
    phrase: bool,
    /// The query spells the whole name (two words or more) as one run of
    /// words, articles aside ("delete an item" spells `delete_item`).
    spelled: bool,
    /// Distinct scored query terms the name spells out.
    name_len: u16,
    bigrams: u16,
    /// Distinct necessary name terms the query does not cover (at most 3),
    /// for names that carry some query word and are not complete: with
    /// equal evidence, `create_ticket` before `create_ticket_comment`.
    unexplained: u8,
}

/// The query against one index, for reading names.
#[derive(Debug, Default)]
struct NameCtx {
    raw_ids: Vec<Option<u32>>,
    /// `raw_ids` without the articles.
    article_free: Vec<Option<u32>>,
    scored_set: Vec<u32>,
    raw_set: Vec<u32>,
    bigram_ids: Vec<(u32, u32)>,
}

impl NameCtx {
    fn fill(&mut self, q: &Query<'_>, ix: &CatalogIndex, ids: &[Option<u32>]) {
        self.raw_ids.clear();
        self.raw_ids.extend(q.raw_distinct.iter().map(|&d| ids[d]));
        self.article_free.clear();
        self.article_free.extend(
            self.raw_ids
                .iter()
                .zip(q.articles)
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
        self.bigram_ids.clear();
        let raw_ids = &self.raw_ids;
        self.bigram_ids.extend(
            q.bigrams
                .iter()
                .filter_map(|&(a, b)| Some((raw_ids[a]?, raw_ids[b]?))),
        );
    }

    /// Complete: every name term is in the query (or, for an action verb,
    /// a word of its group is), except the connector's own words and
    /// function words, and at least one scored term is.
    fn features(&self, ix: &CatalogIndex, tool: u32) -> NameFeat {
        let mut f = self.completeness(ix, tool);
        f.bigrams = self.bigrams(ix, tool);
        f
    }

    /// [`NameCtx::features`] without the bigram count.
    fn completeness(&self, ix: &CatalogIndex, tool: u32) -> NameFeat {
        let name = ix.name_terms(tool);
        let mut name_len = 0u16;
        let mut missing = 0u8;
        for (i, &term) in name.iter().enumerate() {
            if self.scored_set.binary_search(&term).is_ok() {
                if !name[..i].contains(&term) {
                    name_len = name_len.saturating_add(1);
                }
            } else if self.raw_set.binary_search(&term).is_err()
                && !ix.is_connector_term(term)
                && !ix.is_name_stop(term)
                // A query word of the term's action group stands in for it
                // ("remove" for `delete`), without counting as spelled.
                && !ix
                    .synonyms_of(term)
                    .any(|s| self.scored_set.binary_search(&s).is_ok())
                && !name[..i].contains(&term)
            {
                missing = missing.saturating_add(1);
            }
        }
        let complete = missing == 0 && name_len > 0;
        let phrase = complete && name.len() >= 2 && contains_run(&self.raw_ids, name);
        let spelled = phrase
            || (complete
                && name.len() >= 2
                && self.article_free.len() < self.raw_ids.len()
                && contains_run(&self.article_free, name));
        NameFeat {
            complete,
            name_len,
            phrase,
            spelled,
            bigrams: 0,
            unexplained: missing.min(3),
        }
    }

    /// Query bigrams that are adjacent in the name.
    fn bigrams(&self, ix: &CatalogIndex, tool: u32) -> u16 {
        let name = ix.name_terms(tool);
        let n = self
            .bigram_ids
            .iter()
            .filter(|&&(a, b)| name.windows(2).any(|w| w[0] == a && w[1] == b))
            .count();
        u16::try_from(n).unwrap_or(u16::MAX)
    }
}

fn seq_eq(a: &[u32], b: &[Option<u32>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Some(*x) == *y)
}

fn contains_run(hay: &[Option<u32>], needle: &[u32]) -> bool {
    hay.windows(needle.len()).any(|w| seq_eq(needle, w))
}

/// Field weight by posting field bits: the strongest field wins.
const FIELD_WEIGHT: [f32; 16] = {
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

/// A tool's evidence `(score, mask)` with the connector's id and
/// description words added, which every tool of the catalog carries
/// (unless it already matched them itself), and the mask of its strong
/// matches (its own and the connector id's).
fn with_connector_evidence(
    q: &Query<'_>,
    connector: u32,
    topic: u32,
    (mut score, mut mask): (f32, u32),
) -> (f32, u32, u32) {
    let mut strong = mask;
    let mut extra = (connector | topic) & !mask;
    while extra != 0 {
        let k = extra.trailing_zeros() as usize;
        let is_id = connector & 1 << k != 0;
        score += q.weights[k] * if is_id { W_CONNECTOR } else { W_TOPIC };
        mask |= 1 << k;
        if is_id {
            strong |= 1 << k;
        }
        extra &= extra - 1;
    }
    (score, mask, strong)
}

/// Tier, coverage and the final score of one tool from its evidence.
#[allow(clippy::too_many_arguments)]
fn finish(
    q: &Query<'_>,
    source: usize,
    tool: u32,
    exact: bool,
    score: f32,
    mask: u32,
    strong: u32,
    own: u32,
    name: NameFeat,
    read_only: bool,
) -> Cand {
    let req = q.required_mask;
    let coverage = coverage(mask, q);
    let complete_terms = strong & req == req;
    let complete_name = name.complete && (name.name_len >= 2 || q.n_required == 1);
    let tier = if exact {
        0
    } else if complete_terms || complete_name {
        1
    } else {
        2
    };
    let mut s = score;
    if complete_name {
        // Scaled by coverage: a complete name that explains half the
        // query must not beat a tool that explains all of it.
        s += q.total_weight
            * coverage
            * (COMPLETE_NAME_BONUS + NAME_TERM_BONUS * name.name_len.min(4) as f32);
    }
    if name.phrase {
        s += q.total_weight * PHRASE_BONUS;
    }
    s += q.total_weight * BIGRAM_BONUS * name.bigrams as f32;
    s -= q.total_weight * UNEXPLAINED_NAME_PENALTY * f32::from(name.unexplained);
    if read_only {
        s += q.total_weight * READ_ONLY_BONUS;
    }
    Cand {
        source: source as u32,
        tool,
        tier,
        all_terms: complete_terms || exact,
        score: s,
        base: score,
        coverage,
        mask,
        own,
        spelled: name.spelled && name.name_len >= 2 && mask & q.carried == q.carried,
        name_len: if complete_name && name.name_len >= 2 {
            name.name_len
        } else {
            0
        },
    }
}

/// The share of the query's weight that a name's query terms carry, kept
/// for the last name asked: alike tools share their names' terms, so a
/// run of them costs one sum, not one each.
#[derive(Debug, Clone, Copy)]
struct LastShare(u32, f32);

impl Default for LastShare {
    fn default() -> LastShare {
        LastShare(u32::MAX, 0.0)
    }
}

impl LastShare {
    fn of(&mut self, own: u32, q: &Query<'_>) -> f32 {
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
fn coverage(mask: u32, q: &Query<'_>) -> f32 {
    let covered: f32 = bits(mask & q.required_mask).map(|k| q.weights[k]).sum();
    covered / q.total_weight
}

/// Words enough for an answer: half the query's weight, or two of its
/// words (not for a query naming a missing service); in a search the
/// caller scoped to one connector, any of its words (the caller said
/// where the answer is; the relevance cut still keeps only the close
/// ones).
fn enough_words(mask: u32, coverage: f32, q: &Query<'_>) -> bool {
    coverage >= MIN_BEST_COVERAGE
        || (q.missing.is_empty() && (mask & q.required_mask).count_ones() >= 2)
        || (q.scoped && mask & q.required_mask != 0)
}

/// A tool is a plausible answer when it is complete or has
/// [`enough_words`]; for a query naming a missing service, only enough
/// words will do. (An exact name never comes here.)
fn plausible(c: &Cand, q: &Query<'_>) -> bool {
    (c.tier == 1 && q.missing.is_empty()) || enough_words(c.mask, c.coverage, q)
}

/// A name carrying `own` carries a query word other than an operation's
/// verb: what the query is about, not only what to do.
fn names_an_object(own: u32, q: &Query<'_>) -> bool {
    own & q.required_mask & !q.operation_words != 0
}

/// A tool that matches only by its connector (its id or description) is
/// no answer to a query it leaves words of unmatched: "restore the mysql
/// database from last night's backup" is not every tool of `mysql`.
/// Asked for nothing but the connector ("stripe"), or in a search the
/// caller scoped to that connector, every tool may be an answer.
fn lacks_words(c: &Cand, q: &Query<'_>) -> bool {
    c.mask & q.required_mask != q.required_mask && !q.scoped
}

/// The `offset + limit` best hits, without ordering the rest: a buffer of
/// up to twice the window is cut back to the window by partial selection,
/// and anything not better than the window's worst is skipped at once.
#[derive(Debug, Default)]
struct TopK {
    window: usize,
    /// `(tier and score key, source and tool key, score)`.
    buf: Vec<(u64, u64, f32)>,
    threshold: Option<(u64, u64)>,
}

impl TopK {
    fn reset(&mut self, window: usize) {
        self.window = window;
        self.buf.clear();
        self.threshold = None;
    }

    fn push(&mut self, c: &Cand) {
        self.push_key(order_key(c.tier, c.score), c.source, c.tool, c.score);
    }

    /// Push with the tier-and-score key already computed.
    #[inline]
    fn push_key(&mut self, order: u64, source: u32, tool: u32, score: f32) {
        if self.window == 0 {
            return;
        }
        let key = (order, u64::from(source) << 32 | u64::from(tool));
        if self.threshold.is_some_and(|th| key >= th) {
            return;
        }
        self.insert(key, score);
    }

    #[inline(never)]
    fn insert(&mut self, key: (u64, u64), score: f32) {
        self.buf.push((key.0, key.1, score));
        if self.buf.len() >= self.window.saturating_mul(2).max(64) {
            let w = self.window;
            self.buf.select_nth_unstable_by_key(w - 1, |e| (e.0, e.1));
            self.buf.truncate(w);
            self.threshold = Some((self.buf[w - 1].0, self.buf[w - 1].1));
        }
    }

    fn finish(&mut self) -> Vec<Hit> {
        self.buf.sort_unstable_by_key(|e| (e.0, e.1));
        self.buf.truncate(self.window);
        self.buf
            .iter()
            .map(|&(k1, k2, score)| Hit {
                source: (k2 >> 32) as usize,
                tool: k2 as u32,
                tier: (k1 >> 32) as u8,
                score,
            })
            .collect()
    }
}

/// Ascending in tier, then descending in score under `f32::total_cmp`.
fn order_key(tier: u8, score: f32) -> u64 {
    let b = score.to_bits();
    let ascending = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
    u64::from(tier) << 32 | u64::from(!ascending)
}

/// Reusable per-thread buffers (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Scratch {
    acc: Vec<Acc>,
    stamp: u32,
    touched: Vec<u32>,
    done: Vec<bool>,
    names: NameCtx,
    seq: Vec<u32>,
    named: Vec<u32>,
    exact: Vec<Cand>,
    pending: Vec<Cand>,
    /// Implausible matches whose name carries a query word and whose
    /// evidence was above every plausible match's when they were seen.
    doubtful: Vec<Cand>,
    rest: Vec<Cand>,
    top: TopK,
    // The answer so far: complete matches, then what survives the cut.
    total: usize,
    all_terms: bool,
    /// The largest share of the query's weight that the name of a match
    /// carrying every scored term carries (`-1`: there is none).
    best_all_own: f32,
    /// The last complete match's name share.
    last_own: LastShare,
    union_mask: u32,
    union_own: u32,
    /// Candidates with a complete name of two words or more (spelled
    /// ones among them).
    complete_names: Vec<Cand>,
    /// Per index: the tools whose own words carry the query's connector
    /// id words.
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

impl Scratch {
    /// Tools whose name the query spells exactly (alone, or after the
    /// connector id), admitted and matched by some query term.
    pub fn exact(&mut self, indexes: &[&CatalogIndex], q: &Query<'_>) -> &mut Vec<Cand> {
        self.exact.clear();
        for (source, ix) in indexes.iter().enumerate() {
            let ids = q.ids(source);
            self.seq.clear();
            for &d in q.raw_distinct {
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
            if self.named.is_empty() {
                continue;
            }
            self.names.fill(q, ix, ids);
            for i in 0..self.named.len() {
                let tool = self.named[i];
                if let Some(c) = self.one(source, ix, q, ids, tool) {
                    self.exact.push(c);
                }
            }
        }
        &mut self.exact
    }

    /// One exact-name tool, scored on its own from binary-searched postings;
    /// `None` when the safety filter refuses it or no query term matches it.
    fn one(
        &self,
        source: usize,
        ix: &CatalogIndex,
        q: &Query<'_>,
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
        let (score, mask, strong) = with_connector_evidence(q, connector, topic, (score, mask));
        let name = self.names.features(ix, tool);
        Some(finish(
            q, source, tool, true, score, mask, strong, own, name, read_only,
        ))
    }

    /// Score every candidate of every index (there is no exact name).
    /// Complete matches are final at once; partial ones wait in `pending`.
    pub fn candidates(&mut self, indexes: &[&CatalogIndex], q: &Query<'_>, window: usize) -> Found {
        self.top.reset(window);
        self.pending.clear();
        self.doubtful.clear();
        self.total = 0;
        self.all_terms = false;
        self.best_all_own = -1.0;
        self.last_own = LastShare::default();
        self.union_mask = 0;
        self.union_own = 0;
        self.complete_names.clear();
        let mut found = Found {
            plausible: 0,
            best_base: 0.0,
            opposed: 0,
            other_change: 0,
            left_out_base: 0.0,
        };
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
        q: &Query<'_>,
        ids: &[Option<u32>],
        found: &mut Found,
    ) {
        let n = ix.len();
        let stamp = self.next_stamp(n);
        let (mut connector, mut topic, mut work) = (0u32, 0u32, 0usize);
        for (k, &d) in q.term_distinct.iter().enumerate() {
            let Some(id) = ids[d] else { continue };
            if ix.is_connector_term(id) {
                // The connector's own name counts the same for all its
                // tools, wherever a tool repeats it (`slack_post_message`).
                connector |= 1 << k;
            } else {
                if ix.is_topic_term(id) {
                    topic |= 1 << k;
                }
                work += ix.raw_postings(id).len();
            }
        }
        // Tools whose own words carry the connector's id as the query
        // names it, a word of its own (`get_current_time` in `time`) and
        // not a service's name (a description's "GitHub repositories" in
        // `github`), in tool order.
        self.carriers.clear();
        if connector != 0 {
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
        // Read in tool order alongside the dense pass below.
        let mut carrier = 0;
        let every_tool = connector | topic != 0;
        // A query reaching a good share of the catalog fills the accumulator
        // once and skips the per-posting stamp check.
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

        let bigram_hits = if q.bigrams.is_empty() {
            u16::MAX
        } else if q.self_bigram {
            1
        } else {
            2
        };
        let mut names_ready = false;
        // A tool whose evidence and name findings equal the previous one's
        // scores the same: `(score bits, mask, read-only, name)` → result
        // (and plausibility). Long runs of alike tools cost one `finish`.
        let mut memo: Option<Memo> = None;
        let name_only = q.by_name_only.get(source).copied().unwrap_or(false);
        let count = if dense { n } else { self.touched.len() };
        for i in 0..count {
            let tool = if dense { i as u32 } else { self.touched[i] };
            let a = self.acc[tool as usize];
            if !every_tool && a.mask == 0 {
                continue;
            }
            // A catalog the query's connector-naming parts leave out
            // answers its other parts by name only (a generic read verb
            // such as `get` is no name of an answer).
            if name_only && a.own & q.open_words == 0 {
                continue;
            }
            let read_only = ix.read_only(tool);
            if !admits(q.safety, read_only) {
                continue;
            }
            if q.op.opposes(ix.op(tool)) {
                // Counted when its own words would make it plausible.
                if enough_words(a.mask, coverage(a.mask, q), q) {
                    found.opposed += 1;
                }
                continue;
            }
            if !q.changes.is_empty()
                && ix.op(tool) != Op::Read
                && q.other_change(ix.change(tool), a.own, a.mask)
            {
                // Counted, like an answer, with the connector's words. It
                // still sets the bar for the others: it does the same sort
                // of thing to the same objects, so the words fit it as
                // well as they fit anything. (A tool of the opposite
                // operation does not: the writers a read request leaves
                // out often match it by their connector's name alone, and
                // would cut the readers that fit.)
                let (score, mask, _) =
                    with_connector_evidence(q, connector, topic, (a.score, a.mask));
                if enough_words(mask, coverage(mask, q), q) {
                    found.other_change += 1;
                    found.left_out_base = found.left_out_base.max(score);
                }
                continue;
            }
            // Only a name carrying query words can be complete or hold a
            // query bigram; only those names are read.
            let mut name = NameFeat::default();
            if a.hits > 0 {
                let need = ix.name_need(tool);
                let complete = a.have >= u16::from(need);
                let bigrams = a.hits >= bigram_hits;
                if (complete || bigrams) && !names_ready {
                    self.names.fill(q, ix, ids);
                    names_ready = true;
                }
                if complete {
                    name = self.names.completeness(ix, tool);
                } else {
                    // `have` is less than `need` (at most `NEED_MAX`) here.
                    name.unexplained = (need - a.have as u8).min(3);
                }
                if bigrams {
                    name.bigrams = self.names.bigrams(ix, tool);
                }
            }
            // Nothing of the tool's own carries a query word: it matches
            // by its connector's id or description alone.
            // (Tools without evidence of their own come here only in the
            // dense pass, in tool order.)
            let bare = a.mask == 0 && {
                while self.carriers.get(carrier).is_some_and(|&c| c < tool) {
                    carrier += 1;
                }
                self.carriers.get(carrier) != Some(&tool)
            };
            let key = (a.score.to_bits(), a.mask, read_only, bare, name);
            if let Some(m) = &memo
                && m.key == key
            {
                // The same result as the previous tool: only what differs
                // per tool (its id, its name's terms) is recorded.
                if !m.keep {
                    if m.doubtful && m.cand.base > found.best_base && names_an_object(a.own, q) {
                        self.doubtful.push(Cand {
                            tool,
                            own: a.own,
                            ..m.cand
                        });
                    }
                    continue;
                }
                found.plausible += 1;
                if m.cand.spelled || m.cand.name_len > 0 {
                    self.complete_names.push(Cand {
                        tool,
                        own: a.own,
                        ..m.cand
                    });
                }
                if m.cand.tier == 1 {
                    self.union_own |= a.own;
                    // (The first tool of the run has noted its name.)
                    if m.cand.all_terms && a.own != m.cand.own {
                        self.note_all_terms(a.own, q);
                    }
                    self.total += 1;
                    self.top
                        .push_key(m.order, source as u32, tool, m.cand.score);
                } else {
                    self.pending.push(Cand {
                        tool,
                        own: a.own,
                        ..m.cand
                    });
                }
                continue;
            }
            let (score, mask, strong) =
                with_connector_evidence(q, connector, topic, (a.score, a.mask));
            let c = finish(
                q, source, tool, false, score, mask, strong, a.own, name, read_only,
            );
            let keep = plausible(&c, q) && !(bare && lacks_words(&c, q));
            // (Not for a query naming a missing service: only enough
            // words answer it.)
            let doubtful = !keep && !bare && q.missing.is_empty();
            memo = Some(Memo {
                key,
                cand: c,
                keep,
                doubtful,
                order: order_key(c.tier, c.score),
            });
            if !keep {
                if doubtful && c.base > found.best_base && names_an_object(c.own, q) {
                    self.doubtful.push(c);
                }
                continue;
            }
            found.plausible += 1;
            found.best_base = found.best_base.max(c.base);
            if c.spelled || c.name_len > 0 {
                self.complete_names.push(c);
            }
            if c.tier == 1 {
                self.union_own |= c.own;
                if c.all_terms {
                    self.note_all_terms(c.own, q);
                }
                self.accept(&c);
            } else {
                self.pending.push(c);
            }
        }
    }

    /// Evidence, term by term, into the accumulator; the same pass counts
    /// the query words each name carries. `DENSE`: the accumulator is
    /// already reset for the whole index.
    fn accumulate<const DENSE: bool>(
        &mut self,
        ix: &CatalogIndex,
        q: &Query<'_>,
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
            let bit = 1u32 << k;
            let w = q.weights[k];
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
                    // A word of the name by its action synonym ("remove"
                    // on `delete_task`): the name may be complete.
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
                    let t = t as usize;
                    touch(acc, t);
                    acc[t].hits = acc[t].hits.wrapping_add(1);
                }
            }
        }
    }

    /// A match carrying every term, whose name carries the terms `own`:
    /// [`Scratch::cut`] keeps partial names that carry more. (Alike tools
    /// share `own`: the last share is kept rather than summed again.)
    fn note_all_terms(&mut self, own: u32, q: &Query<'_>) {
        self.best_all_own = self.best_all_own.max(self.last_own.of(own, q));
    }

    fn accept(&mut self, c: &Cand) {
        self.total += 1;
        self.all_terms |= c.all_terms;
        self.union_mask |= c.mask;
        self.top.push(c);
    }

    /// The relevance cut. When the query spells some tools' whole names
    /// and those tools carry all its other words too ("list organizations
    /// projects" for `List-Organizations` in a catalog about projects),
    /// they alone are the answer. Otherwise complete matches stay; partial
    /// ones stay when
    /// their evidence is close to the best's — or when they are the only
    /// tool whose name carries some query word (the other half of a
    /// multi-intent query: "zones, DNS records and analytics").
    ///
    /// Returns the window's hits, the total, whether some kept tool carries
    /// every term, and the union of the kept tools' term masks.
    pub fn cut(&mut self, q: &Query<'_>, best_base: f32) -> (Vec<Hit>, usize, bool, u32) {
        let spelled_len = self
            .complete_names
            .iter()
            .filter(|c| c.spelled)
            .map(|c| c.name_len)
            .max();
        if let Some(spelled_len) = spelled_len {
            // The query names these tools: they are the answer, as an
            // exact name is, with any complete name that spells out more
            // of the query ("add a comment to the issue" keeps
            // `add_issue_comment` beside `add_comment`); the rest only
            // share its words.
            let names = &mut self.complete_names;
            names.retain(|c| c.spelled || c.name_len > spelled_len);
            names.sort_unstable_by(order);
            let window = self.top.window;
            let union = names.iter().fold(0, |m, c| m | c.mask);
            // (A word no catalog knows leaves the page partial.)
            let all = union & q.required_mask == q.required_mask;
            return (
                names.iter().take(window).map(Cand::hit).collect(),
                names.len(),
                all,
                union,
            );
        }
        self.rest.clear();
        let pending = std::mem::take(&mut self.pending);
        // A tool carrying every word of a query that asks for one thing
        // answers it: a partial match beside it only shares some of its
        // words ("git staged changes diff" is `git_diff_staged`, not also
        // `git_diff_unstaged`), unless the partial match's name carries
        // more of the query ("list organizations" in `List-Organizations`
        // beside tools whose descriptions list organizations and
        // projects). A query of several parts keeps them all, as each may
        // answer one ("hubspot contact and company records").
        let answered = if q.several_parts {
            -1.0
        } else {
            self.best_all_own
        };
        let mut last = LastShare::default();
        let mut carries_more = |own: u32| answered < 0.0 || last.of(own, q) > answered;
        for c in pending.iter().filter(|c| carries_more(c.own)) {
            if c.base >= KEEP_RATIO * best_base && c.coverage >= KEEP_COVERAGE {
                self.union_own |= c.own;
                self.accept(c);
            } else if c.own & q.required_mask != 0 && c.base >= RESCUE_RATIO * best_base {
                self.rest.push(*c);
            }
        }
        self.pending = pending;
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
        (
            self.top.finish(),
            self.total,
            self.all_terms,
            self.union_mask,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_key_sorts_like_total_cmp_descending() {
        let scores = [
            f32::NEG_INFINITY,
            -3.5,
            -0.0,
            0.0,
            1e-30,
            0.25,
            0.5,
            7.0,
            f32::INFINITY,
        ];
        for &a in &scores {
            for &b in &scores {
                for (ta, tb) in [(1, 1), (1, 2), (2, 1)] {
                    let want = ta.cmp(&tb).then(b.total_cmp(&a));
                    assert_eq!(order_key(ta, a).cmp(&order_key(tb, b)), want, "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn field_weights_take_the_strongest_field() {
        assert_eq!(FIELD_WEIGHT[usize::from(F_NAME | F_DESC)], W_NAME);
        assert_eq!(FIELD_WEIGHT[usize::from(F_TITLE | F_DESC)], W_TITLE);
        assert_eq!(FIELD_WEIGHT[usize::from(F_DESC)], W_DESC);
        assert_eq!(FIELD_WEIGHT[usize::from(F_SYN)], W_DESC);
        assert_eq!(FIELD_WEIGHT[usize::from(F_SYN | F_DESC)], W_DESC);
    }

    #[test]
    fn top_k_keeps_the_best_window_in_order() {
        let mut top = TopK::default();
        top.reset(3);
        let cands: Vec<Cand> = (0..500u32)
            .map(|i| Cand {
                source: i % 7,
                tool: i,
                tier: (1 + i % 2) as u8,
                all_terms: false,
                score: ((i * 37) % 101) as f32,
                base: 0.0,
                coverage: 0.0,
                mask: 0,
                own: 0,
                spelled: false,
                name_len: 0,
            })
            .collect();
        for c in &cands {
            top.push(c);
        }
        let mut sorted = cands.clone();
        sorted.sort_unstable_by(order);
        let want: Vec<Hit> = sorted.iter().take(3).map(Cand::hit).collect();
        assert_eq!(top.finish(), want);
    }
}
