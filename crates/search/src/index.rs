//! The index of one catalog: built once per catalog fingerprint, immutable,
//! shared behind `Arc` and merged with other catalogs' indexes at query time.
//!
//! Layout is chosen for a small footprint and a fast warm query:
//! - terms are interned once per index (dense local ids) and named through
//!   the process-wide shared vocabulary: the index keeps only a table from
//!   shared term ids to its own ([`IdMap`]), so a query term is looked up
//!   by its text once per search and by an integer in each catalog;
//! - postings live in one flat array (compressed-row style, one `u32` per
//!   posting carrying the tool and the fields it matched in, in tool order);
//! - each tool's name is kept as a term sequence (exact- and complete-name
//!   tiers), with a sorted table of sequence hashes so an exact name is found
//!   without looking at any other tool;
//! - per tool, one byte: read-only (the safety filter without touching the
//!   tool definition) and how many distinct name terms a query must spell
//!   out for the name to be complete — the ranker counts those from postings
//!   and only looks at the names of tools that can qualify;
//! - per term, one byte of flags (connector id, connector description,
//!   optional in names);
//! - connector-level text (the id and the configured description) is stored
//!   once per index, not copied into every tool's postings.
//!
//! Compact shapes are rendered lazily, the first time a page shows a tool,
//! and kept per tool ([`CatalogIndex::compact_input`]): building the index
//! never renders a schema.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use connecta_core::catalog::{Catalog, ToolDef};
use connecta_core::config::SearchTerm;
use connecta_core::schema::{CompactSchema, SHAPE_CAP_BYTES, render_compact};

use super::operation::{
    Change, Op, first_word_change, lead_verb_only_changes, name_kind, name_verb,
};
use super::tokenize::{
    Compounds, NameWords, Scratch, first_name_word, for_each_word, is_stopword, name_synonyms,
    name_words, prose_synonyms, terms, word_terms,
};
use super::vocab::{IdMap, VocabBuilder, seq_hash, shared_find, term_hash};

/// Field bits carried by a posting.
pub(crate) const F_NAME: u8 = 1;
pub(crate) const F_TITLE: u8 = 2;
pub(crate) const F_DESC: u8 = 4;
/// The posting stands for a word of the tool's name by an action synonym
/// ("remove" on `delete_task`): description weight, and it counts toward
/// the name's completeness.
pub(crate) const F_SYN: u8 = 8;
const FIELD_BITS: u32 = 4;
/// Builder-only field bit: the posting exists only through a synonym.
const SYNONYM: u8 = 16;
const FIELD_MASK: u32 = (1 << FIELD_BITS) - 1;

/// Term flags.
const T_CONNECTOR: u8 = 1;
const T_TOPIC: u8 = 2;
const T_NAME_STOP: u8 = 4;
/// Builder-only: the term's name synonyms are in `synonym_pairs`.
const T_PAIRED: u8 = 8;

/// Tool info byte: read-only bit, and the count of distinct necessary name
/// terms in the low bits (saturating: `NEED_MAX` means "at least").
const READ_ONLY: u8 = 0x80;
pub(crate) const NEED_MAX: u8 = 0x7f;

/// Read verbs a query may leave out of a tool name (as stemmed terms).
pub(crate) const OPTIONAL_NAME_VERBS: &[&str] =
    &["get", "list", "fetch", "read", "retriev", "view", "describ"];

/// A version marker (`v2` in `list_objects_v2`): a query may leave it out
/// of a name, as it may a read verb.
fn is_version(term: &str) -> bool {
    term.strip_prefix('v')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A name's operation is its first known verb among this many leading
/// terms (`asana_create_task`, `wp_add_post`, `wit_get_work_item`).
const NAME_VERB_SPAN: u8 = 3;

/// A catalog's namespace: the connector id's words (`wms_transfer_stock`
/// in `wms`, `acme_wms_transfer_stock` in `acme-wms`), and a word that is
/// no verb and opens more than half the names of a catalog of three or
/// more, whatever its case (`hass` in `HassTurnOn`, `HassTurnOff`, …).
struct Namespace {
    connector: Vec<String>,
    word: Option<String>,
}

impl Namespace {
    fn of(catalog: &Catalog, n: usize) -> Namespace {
        let connector = name_words(&catalog.connector);
        let tools = &catalog.tools()[..n];
        let same = |a: Option<&str>, b: Option<&str>| match (a, b) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        };
        // The only word that can open more than half the names is the one
        // a majority vote leaves standing; then it is counted.
        let (mut candidate, mut votes) = (None, 0usize);
        for tool in tools {
            let first = first_name_word(&tool.name);
            if votes == 0 {
                candidate = first;
            }
            votes = if same(first, candidate) {
                votes + 1
            } else {
                votes - 1
            };
        }
        let word = candidate
            .filter(|&w| {
                let count = tools
                    .iter()
                    .filter(|t| same(first_name_word(&t.name), Some(w)))
                    .count();
                n >= 3 && count * 2 > n
            })
            .map(str::to_lowercase)
            .filter(|w| name_verb(w) == (Op::Unknown, None) && first_word_change(w).is_none());
        Namespace { connector, word }
    }

    /// How many of a name's leading words (lowercase) are the namespace.
    fn skip(&self, words: &[&str]) -> usize {
        let conn = &self.connector;
        if !conn.is_empty()
            && words.len() > conn.len()
            && words.iter().zip(conn).all(|(w, c)| w == c)
        {
            conn.len()
        } else if words
            .first()
            .is_some_and(|w| self.word.as_deref() == Some(*w) || conn.iter().any(|c| c == w))
        {
            1
        } else {
            0
        }
    }
}

/// The kinds of change of the tools `unkinded` (that may change something
/// and whose leading verb said none; with `true` when their names' verbs
/// change in no particular way), read from their names' words after the
/// catalog's namespace ([`name_kind`]).
#[inline(never)]
fn kinds_after_namespaces(
    catalog: &Catalog,
    n: usize,
    unkinded: &[(u32, bool)],
    changes: &mut [Option<Change>],
) {
    let namespace = Namespace::of(catalog, n);
    let mut read = NameWords::default();
    for &(i, writes) in unkinded {
        read.read(&catalog.tools()[i as usize].name);
        let words: Vec<&str> = read.iter().collect();
        changes[i as usize] = name_kind(&words, namespace.skip(&words), writes);
    }
}

/// Tools per index are bounded by the posting encoding (28 bits of id).
pub const MAX_TOOLS_PER_INDEX: usize = 1 << (32 - FIELD_BITS);

#[derive(Debug)]
pub struct CatalogIndex {
    catalog: Arc<Catalog>,
    /// Shared term id → this index's term id.
    terms: IdMap,
    /// `T_*` flags per term id.
    term_flags: Vec<u8>,
    /// `postings[offsets[t]..offsets[t + 1]]` are term `t`'s postings, each
    /// `tool << FIELD_BITS | fields`, in tool order.
    offsets: Vec<u32>,
    postings: Vec<u32>,
    /// `name_terms[name_offsets[i]..name_offsets[i + 1]]` is tool `i`'s name
    /// as a term sequence, stopwords included.
    name_offsets: Vec<u32>,
    name_terms: Vec<u32>,
    /// `sequence hash << 32 | tool` of every non-empty name, sorted.
    name_keys: Vec<u64>,
    /// Name terms that are not indexed (their surface is a function word,
    /// as `mine` in `get_mine`) though a query could still carry them as
    /// content words: `(term, tool)`, sorted. Almost always empty; it keeps
    /// the ranker's posting-based name checks exact.
    name_extra: Vec<(u32, u32)>,
    /// `(term, tools)`: how many of a term's postings exist only because a
    /// tool's name carries one of its action synonyms, sorted by term. They
    /// are left out of the term's document frequency, so a synonym never
    /// makes a word look common (and a query's other words weightier).
    synonym_only: Vec<(u32, u32)>,
    /// `(name term, synonym)` for every name term with action synonyms,
    /// sorted: what the name check reads.
    synonym_pairs: Vec<(u32, u32)>,
    /// Read-only bit and necessary-name-term count per tool.
    tool_info: Vec<u8>,
    /// What each tool does: a read when it is read-only, else what its
    /// name's leading verb says (see [`super::operation`]).
    ops: Box<[Op]>,
    /// The kind of change each tool's name says it makes, if it says one
    /// (see [`Change`]).
    changes: Box<[Option<Change>]>,
    read_only_tools: usize,
    /// The connector id as a term sequence (for `connector tool` exact names).
    connector_terms: Vec<u32>,
    /// Compact shapes, rendered on first use.
    shapes: Box<[OnceLock<Box<Shapes>>]>,
}

/// A tool's compact shapes: the input one is what every search page shows;
/// the output one only `includeSchemas: "compact"` asks for.
#[derive(Debug)]
struct Shapes {
    input: CompactSchema,
    output: OnceLock<Option<CompactSchema>>,
}

impl CatalogIndex {
    /// Index a catalog with no connector description.
    pub fn build(catalog: Arc<Catalog>) -> CatalogIndex {
        CatalogIndex::with_description(catalog, None)
    }

    /// Index a catalog; `description` is the connector's configured
    /// description, whose words then match every tool of this connector.
    pub fn with_description(catalog: Arc<Catalog>, description: Option<&str>) -> CatalogIndex {
        CatalogIndex::with_config(catalog, description, &[])
    }

    /// Index a catalog with its connector's configured description and
    /// search terms: each entry the lexicon accepts makes every tool whose
    /// name carries its name word findable by its query word, as an action
    /// synonym is (entries it refuses were reported by
    /// [`crate::check_search_terms`] and are left out).
    pub fn with_config(
        catalog: Arc<Catalog>,
        description: Option<&str>,
        search_terms: &[SearchTerm],
    ) -> CatalogIndex {
        let search_terms = crate::terms::normalized(search_terms);
        let n = catalog.len().min(MAX_TOOLS_PER_INDEX);
        let bytes: usize = catalog.tools()[..n]
            .iter()
            .map(|t| t.name.len() + t.description().len())
            .sum();
        let mut builder = Builder::new(n, bytes);
        for (query_term, name_term) in &search_terms {
            let words = builder.configured.entry(name_term.clone()).or_default();
            if !words.contains(query_term) {
                words.push(query_term.clone());
            }
        }
        builder.build(n, catalog, description)
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn connector(&self) -> &str {
        &self.catalog.connector
    }

    /// Tools covered by this index (the catalog's, up to the posting bound).
    pub fn len(&self) -> usize {
        self.tool_info.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn tool(&self, tool: u32) -> &ToolDef {
        &self.catalog.tools()[tool as usize]
    }

    /// The id of a tool of this index's catalog (for `describe`).
    pub(crate) fn tool_id(&self, name: &str) -> Option<u32> {
        let found = self.catalog.get(name)?;
        let tools = self.catalog.tools();
        // `Catalog::get` returns a reference into `tools()`; its position is
        // its offset, checked before use.
        let offset = (found as *const Arc<ToolDef> as usize).wrapping_sub(tools.as_ptr() as usize)
            / std::mem::size_of::<Arc<ToolDef>>();
        (offset < self.len() && Arc::ptr_eq(&tools[offset], found)).then_some(offset as u32)
    }

    /// This index's id for a normalized term, if it knows the term.
    pub(crate) fn term_id(&self, term: &str) -> Option<u32> {
        self.local_term(shared_find(term, term_hash(term))?)
    }

    /// This index's id for the term whose shared id is `shared`.
    #[inline]
    pub(crate) fn local_term(&self, shared: u32) -> Option<u32> {
        self.terms.get(shared)
    }

    /// A term's postings, each `tool << FIELD_BITS | fields`.
    pub(crate) fn raw_postings(&self, term: u32) -> &[u32] {
        let t = term as usize;
        &self.postings[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }

    /// Some tool carries the term in its name, or a word of its group
    /// there.
    pub(crate) fn in_a_name(&self, term: u32) -> bool {
        self.raw_postings(term)
            .iter()
            .any(|&p| Self::posting_fields(p) & (F_NAME | F_SYN) != 0)
    }

    /// The tool of a posting.
    #[inline]
    pub(crate) fn posting_tool(posting: u32) -> usize {
        (posting >> FIELD_BITS) as usize
    }

    /// The field bits of a posting.
    #[inline]
    pub(crate) fn posting_fields(posting: u32) -> u8 {
        (posting & FIELD_MASK) as u8
    }

    /// The fields a term occurs in for one tool (`0`: it does not).
    pub(crate) fn fields_of(&self, term: u32, tool: u32) -> u8 {
        let p = self.raw_postings(term);
        let i = p.partition_point(|&x| x >> FIELD_BITS < tool);
        match p.get(i) {
            Some(&x) if x >> FIELD_BITS == tool => (x & FIELD_MASK) as u8,
            _ => 0,
        }
    }

    /// Tools containing a term in any field, counting the connector id.
    pub(crate) fn doc_freq(&self, term: u32) -> usize {
        if self.is_connector_term(term) {
            self.len()
        } else {
            let t = term as usize;
            let postings = (self.offsets[t + 1] - self.offsets[t]) as usize;
            let synonyms = self
                .synonym_only
                .binary_search_by_key(&term, |&(t, _)| t)
                .map_or(0, |i| self.synonym_only[i].1 as usize);
            postings - synonyms
        }
    }

    pub(crate) fn is_connector_term(&self, term: u32) -> bool {
        self.term_flags[term as usize] & T_CONNECTOR != 0
    }

    pub(crate) fn is_topic_term(&self, term: u32) -> bool {
        self.term_flags[term as usize] & T_TOPIC != 0
    }

    /// Whether a name term may be left out of a query (`to`, `get`, `list`).
    pub(crate) fn is_name_stop(&self, term: u32) -> bool {
        self.term_flags[term as usize] & T_NAME_STOP != 0
    }

    /// Whether a name carrying this term is complete only if the query
    /// carries it too.
    pub(crate) fn is_necessary(&self, term: u32) -> bool {
        self.term_flags[term as usize] & (T_CONNECTOR | T_NAME_STOP) == 0
    }

    pub(crate) fn name_terms(&self, tool: u32) -> &[u32] {
        let i = tool as usize;
        &self.name_terms[self.name_offsets[i] as usize..self.name_offsets[i + 1] as usize]
    }

    /// Tools whose name is exactly this term sequence.
    pub(crate) fn tools_named<'a>(&'a self, ids: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        let h = u64::from(seq_hash(ids));
        let start = self.name_keys.partition_point(|&k| k >> 32 < h);
        self.name_keys[start..]
            .iter()
            .take_while(move |&&k| k >> 32 == h)
            .map(|&k| k as u32)
            .filter(move |&t| self.name_terms(t) == ids)
    }

    /// Tools carrying `term` in their name sequence without a posting.
    pub(crate) fn name_extra(&self, term: u32) -> impl Iterator<Item = u32> + '_ {
        paired_with(&self.name_extra, term)
    }

    pub(crate) fn has_name_extra(&self) -> bool {
        !self.name_extra.is_empty()
    }

    /// The action synonyms of a name term, as this index's term ids.
    pub(crate) fn synonyms_of(&self, term: u32) -> impl Iterator<Item = u32> + '_ {
        paired_with(&self.synonym_pairs, term)
    }

    /// Distinct necessary name terms of a tool (saturating at `NEED_MAX`).
    pub(crate) fn name_need(&self, tool: u32) -> u8 {
        self.tool_info[tool as usize] & NEED_MAX
    }

    pub(crate) fn read_only(&self, tool: u32) -> bool {
        self.tool_info[tool as usize] & READ_ONLY != 0
    }

    /// What `tool` does, as far as its annotations and name tell.
    pub(crate) fn op(&self, tool: u32) -> Op {
        self.ops[tool as usize]
    }

    /// The kind of change `tool` makes, as far as its name tells.
    pub(crate) fn change(&self, tool: u32) -> Option<Change> {
        self.changes[tool as usize]
    }

    pub(crate) fn read_only_tools(&self) -> usize {
        self.read_only_tools
    }

    pub(crate) fn connector_terms(&self) -> &[u32] {
        &self.connector_terms
    }

    /// The tool's compact input shape, rendered once.
    pub(crate) fn compact_input(&self, tool: u32) -> &CompactSchema {
        &self.shapes(tool).input
    }

    /// The tool's compact output shape, if it declares one, rendered once.
    pub(crate) fn compact_output(&self, tool: u32) -> Option<&CompactSchema> {
        let def = self.tool(tool);
        self.shapes(tool)
            .output
            .get_or_init(|| {
                def.output_schema
                    .as_ref()
                    .map(|s| render_compact(&s.value(), SHAPE_CAP_BYTES))
            })
            .as_ref()
    }

    fn shapes(&self, tool: u32) -> &Shapes {
        self.shapes[tool as usize].get_or_init(|| {
            Box::new(Shapes {
                input: render_compact(&self.tool(tool).input_schema.value(), SHAPE_CAP_BYTES),
                output: OnceLock::new(),
            })
        })
    }

    /// Approximate heap bytes held by the index itself (the catalog it
    /// points to is not counted; compact shapes rendered so far are).
    pub fn heap_bytes(&self) -> usize {
        let shapes: usize = self
            .shapes
            .iter()
            .filter_map(OnceLock::get)
            .map(|s| {
                let out = s.output.get().and_then(Option::as_ref);
                std::mem::size_of::<Shapes>()
                    + std::iter::once(&s.input)
                        .chain(out)
                        .map(compact_bytes)
                        .sum::<usize>()
            })
            .sum();
        self.terms.heap_bytes()
            + self.term_flags.capacity()
            + 4 * (self.offsets.capacity()
                + self.postings.capacity()
                + self.name_offsets.capacity()
                + self.name_terms.capacity()
                + self.connector_terms.capacity())
            + 8 * (self.name_keys.capacity()
                + self.name_extra.capacity()
                + self.synonym_only.capacity()
                + self.synonym_pairs.capacity())
            + self.tool_info.capacity()
            + self.ops.len() * std::mem::size_of::<Op>()
            + self.changes.len() * std::mem::size_of::<Option<Change>>()
            + std::mem::size_of_val(&*self.shapes)
            + shapes
    }
}

fn compact_bytes(c: &CompactSchema) -> usize {
    let list = |l: &Option<Vec<String>>| {
        l.iter()
            .flatten()
            .map(|k| k.capacity() + std::mem::size_of::<String>())
            .sum::<usize>()
    };
    c.text.capacity() + list(&c.keys) + list(&c.required_keys)
}

/// Index construction: each distinct word is tokenized once (its terms are
/// replayed from `words` when it recurs, as most words of a catalog do), a
/// tool's repeated terms are merged through `last_tool` without sorting,
/// then a counting sort fills the flat posting array.
struct Builder {
    vocab: VocabBuilder,
    scratch: Scratch,
    /// Distinct raw words seen; word `w`'s terms are
    /// `emits[spans[w].0..spans[w].1]`, `spans[w].2` says it is a compound.
    words: VocabBuilder,
    spans: Vec<(u32, u32, bool)>,
    emits: Vec<Emit>,
    /// Text of the terms in `emits`, for those interned only when needed.
    emit_text: String,
    /// Per term: flags, and the last tool that carried it with the slot of
    /// that tool's entry in `triples` (to merge fields).
    term_flags: Vec<u8>,
    last_tool: Vec<u32>,
    last_slot: Vec<u32>,
    /// `(term, tool, fields)`, grouped by tool, in tool order; `SYNONYM`
    /// marks a posting made only by an action synonym so far.
    triples: Vec<(u32, u32, u8)>,
    name_offsets: Vec<u32>,
    name_terms: Vec<u32>,
    name_extra: Vec<(u32, u32)>,
    synonym_pairs: Vec<(u32, u32)>,
    /// The name being indexed: the operation of its leading verb so far,
    /// and how many of its terms have been looked at.
    name_op: (Op, u8),
    /// The current name's kind of change (see `name_op`).
    name_change: Option<Change>,
    /// The connector's configured search terms: name term → the query
    /// terms that also find it.
    configured: HashMap<String, Vec<String>>,
    /// Name-synonym lists that add configured terms to the built-in ones
    /// (`Emit::own_synonyms`).
    own_synonyms: Vec<Rc<[String]>>,
}

/// The second halves of the pairs whose first half is `key`, in a table
/// sorted by pair.
fn paired_with(pairs: &[(u32, u32)], key: u32) -> impl Iterator<Item = u32> + '_ {
    let start = pairs.partition_point(|&(k, _)| k < key);
    pairs[start..]
        .iter()
        .take_while(move |&&(k, _)| k == key)
        .map(|&(_, v)| v)
}

/// One term of a word, as the tokenizer produced it.
#[derive(Debug, Clone, Copy)]
struct Emit {
    /// The interned term; `NOT_INTERNED` for a function word until a name
    /// needs it (only indexed terms and name terms are interned).
    id: u32,
    text: (u32, u32),
    /// The joined form of a compound.
    joined: bool,
    /// Not indexed: the term or its surface is a function word.
    stop: bool,
    /// The term itself is a function word.
    term_stop: bool,
    /// A generic read verb or a version marker: a query may leave it out
    /// of a name.
    optional_verb: bool,
    /// The words a name carrying the term is also found by (the built-in
    /// groups).
    synonyms: &'static [String],
    /// The same with the connector's configured terms added: an index into
    /// `Builder::own_synonyms` (names only).
    own_synonyms: Option<u32>,
    /// Those synonyms apply in descriptions and titles too (nouns).
    prose: bool,
    /// What a name leading with the term does.
    op: Op,
    /// The kind of change the term names, when it is such a verb.
    change: Option<Change>,
    /// What the word says as a name's first word when no operation is
    /// known (`post_comment`; not `comments` or `log_search`).
    lead_change: Option<Change>,
}

const NOT_INTERNED: u32 = u32::MAX;

impl Builder {
    /// A builder sized for `n` tools with `bytes` of names and descriptions
    /// (estimates: about one word per 7 bytes, half of them distinct in a
    /// small catalog, fewer in a large one; tables grow when short).
    fn new(n: usize, bytes: usize) -> Builder {
        let words = bytes / 7 + 16;
        let distinct = (words / 2).min(4096 + words / 8);
        let mut name_offsets = Vec::with_capacity(n + 1);
        name_offsets.push(0);
        Builder {
            vocab: VocabBuilder::with_capacity(distinct, distinct * 8),
            scratch: Scratch::default(),
            words: VocabBuilder::with_capacity(distinct, distinct * 8),
            spans: Vec::with_capacity(distinct),
            emits: Vec::with_capacity(distinct),
            emit_text: String::with_capacity(distinct * 8),
            term_flags: Vec::with_capacity(distinct),
            last_tool: Vec::with_capacity(distinct),
            last_slot: Vec::with_capacity(distinct),
            triples: Vec::with_capacity(words),
            name_offsets,
            name_terms: Vec::with_capacity(n * 3),
            name_extra: Vec::new(),
            synonym_pairs: Vec::new(),
            name_op: (Op::Unknown, 0),
            name_change: None,
            configured: HashMap::new(),
            own_synonyms: Vec::new(),
        }
    }

    fn intern(&mut self, term: &str) -> u32 {
        let id = self.vocab.intern(term);
        if id as usize == self.term_flags.len() {
            self.term_flags.push(0);
            self.last_tool.push(u32::MAX);
            self.last_slot.push(0);
        }
        id
    }

    fn posting(&mut self, term: u32, tool: u32, field: u8) {
        let t = term as usize;
        if self.last_tool[t] == tool {
            let fields = &mut self.triples[self.last_slot[t] as usize].2;
            *fields = (*fields & !SYNONYM) | field;
        } else {
            self.last_tool[t] = tool;
            self.last_slot[t] = self.triples.len() as u32;
            self.triples.push((term, tool, field));
        }
    }

    /// A synonym's posting (`F_SYN` for a name word's, `F_DESC` for a
    /// description noun's; both at description weight), only when the tool
    /// has no posting of the term yet (the tool's own words come first).
    fn synonym_posting(&mut self, term: u32, tool: u32, field: u8) {
        let t = term as usize;
        if self.last_tool[t] != tool {
            self.last_tool[t] = tool;
            self.last_slot[t] = self.triples.len() as u32;
            self.triples.push((term, tool, field | SYNONYM));
        }
    }

    /// Postings for the words a name term is also found by (`F_SYN`), and
    /// the term's pairs for the name check the first time it is seen.
    fn name_synonyms(&mut self, id: u32, tool: u32, emit: &Emit) {
        let own = emit
            .own_synonyms
            .map(|i| self.own_synonyms[i as usize].clone());
        let list = own.as_deref().unwrap_or(emit.synonyms);
        if list.is_empty() {
            return;
        }
        let paired = self.term_flags[id as usize] & T_PAIRED != 0;
        self.term_flags[id as usize] |= T_PAIRED;
        for synonym in list {
            let synonym = self.intern(synonym);
            self.synonym_posting(synonym, tool, F_SYN);
            if !paired {
                self.synonym_pairs.push((id, synonym));
            }
        }
    }

    /// Tokenize a word seen for the first time and record its terms.
    fn learn(&mut self, word: &str) {
        let start = self.emits.len() as u32;
        let mut scratch = std::mem::take(&mut self.scratch);
        let compound = word_terms(&mut scratch, word, |t, surface, joined, stop| {
            // Verbs count as written (the tokenizer's surface is
            // lowercase): `settings` is no `set`.
            let (op, change) = name_verb(surface);
            let text_start = self.emit_text.len() as u32;
            self.emit_text.push_str(t);
            let id = if stop { NOT_INTERNED } else { self.intern(t) };
            let synonyms = name_synonyms(t);
            let configured = (!self.configured.is_empty())
                .then(|| self.configured.get(t))
                .flatten();
            let own_synonyms = configured.map(|own| {
                let mut all = synonyms.to_vec();
                all.extend(own.iter().filter(|w| !synonyms.contains(w)).cloned());
                self.own_synonyms.push(all.into());
                self.own_synonyms.len() as u32 - 1
            });
            self.emits.push(Emit {
                id,
                text: (text_start, self.emit_text.len() as u32),
                joined,
                stop,
                term_stop: is_stopword(t),
                optional_verb: OPTIONAL_NAME_VERBS.contains(&t) || is_version(t),
                synonyms,
                own_synonyms,
                prose: !prose_synonyms(t).is_empty(),
                op,
                change,
                lead_change: first_word_change(surface),
            });
        });
        self.scratch = scratch;
        self.spans.push((start, self.emits.len() as u32, compound));
    }

    /// Index `text` in one field of `tool`; a name also records its term
    /// sequence.
    fn field(&mut self, tool: u32, text: &str, mode: Compounds, field: u8) {
        for_each_word(text, |word| {
            let w = self.words.intern(word) as usize;
            if w == self.spans.len() {
                self.learn(word);
            }
            let (start, end, compound) = self.spans[w];
            for e in start as usize..end as usize {
                let emit = self.emits[e];
                let skip = match mode {
                    Compounds::Parts => emit.joined,
                    Compounds::Both => false,
                    Compounds::Joined => compound && !emit.joined,
                };
                let in_name = field == F_NAME && !emit.joined;
                if skip || (emit.stop && !in_name) {
                    continue;
                }
                let id = if emit.id == NOT_INTERNED {
                    let (a, b) = emit.text;
                    let text = std::mem::take(&mut self.emit_text);
                    let id = self.intern(&text[a as usize..b as usize]);
                    self.emit_text = text;
                    self.emits[e].id = id;
                    id
                } else {
                    emit.id
                };
                if in_name {
                    self.name_terms.push(id);
                    let (op, seen) = &mut self.name_op;
                    if *op == Op::Unknown && *seen < NAME_VERB_SPAN {
                        // The verb that decides the operation says the
                        // kind of change; a name's first word may say it
                        // alone (`post_comment`, `download_images`).
                        if emit.op != Op::Unknown {
                            self.name_change = emit.change;
                        } else if *seen == 0 {
                            self.name_change = emit.lead_change;
                        }
                        *op = emit.op;
                        *seen += 1;
                        // A first word that is a verb of no operation
                        // list (`update`, `post`, `export`) is the name's
                        // verb: the words after it are its object, not
                        // another verb (`update_list_status` does not
                        // list).
                        if *seen == 1 && emit.op == Op::Unknown && emit.lead_change.is_some() {
                            *seen = NAME_VERB_SPAN;
                        }
                    }
                    if emit.stop || emit.optional_verb {
                        self.term_flags[id as usize] |= T_NAME_STOP;
                    }
                    if emit.stop && !emit.term_stop {
                        self.name_extra.push((id, tool));
                    }
                }
                if !emit.stop {
                    self.posting(id, tool, field);
                    if emit.prose && field != F_NAME {
                        for synonym in emit.synonyms {
                            let synonym = self.intern(synonym);
                            self.synonym_posting(synonym, tool, F_DESC);
                        }
                    }
                    if in_name {
                        self.name_synonyms(id, tool, &emit);
                    }
                }
            }
        });
    }

    fn build(mut self, n: usize, catalog: Arc<Catalog>, description: Option<&str>) -> CatalogIndex {
        let mut tool_info = Vec::with_capacity(n);
        let mut ops = Vec::with_capacity(n);
        let mut changes = Vec::with_capacity(n);
        // Tools that may change something and whose leading verb said no
        // kind: their names are read again once the catalog's namespaces
        // are known (most catalogs have none to read).
        let mut unkinded: Vec<(u32, bool)> = Vec::new();
        for (i, tool) in catalog.tools().iter().take(n).enumerate() {
            let i = i as u32;
            self.name_op = (Op::Unknown, 0);
            self.name_change = None;
            self.field(i, &tool.name, Compounds::Both, F_NAME);
            let op = if tool.read_only() {
                Op::Read
            } else if self.name_op.0 == Op::Unknown
                && tool.annotations.read_only_hint == Some(false)
                && first_name_word(&tool.name)
                    .is_some_and(|w| lead_verb_only_changes(&w.to_ascii_lowercase()))
            {
                // A name led by a verb that is as often a noun (`update`,
                // `post`, `merge`) says no operation by itself; a server
                // that declares the tool not read-only has said it: the
                // tool changes something.
                Op::Write
            } else {
                self.name_op.0
            };
            ops.push(op);
            // A tool that only reads makes no change.
            let change = self.name_change.filter(|_| op != Op::Read);
            if op != Op::Read && change.is_none() {
                unkinded.push((i, op == Op::Write));
            }
            changes.push(change);
            self.name_offsets.push(self.name_terms.len() as u32);
            let titles = tool.title.iter().chain(tool.annotations.title.iter());
            for title in titles {
                self.field(i, title, Compounds::Both, F_TITLE);
            }
            self.field(i, tool.description(), Compounds::Joined, F_DESC);
            tool_info.push(if tool.read_only() { READ_ONLY } else { 0 });
        }
        if !unkinded.is_empty() {
            kinds_after_namespaces(&catalog, n, &unkinded, &mut changes);
        }
        let mut connector_terms = Vec::new();
        let mut scratch = std::mem::take(&mut self.scratch);
        terms(
            &mut scratch,
            &catalog.connector,
            Compounds::Parts,
            |t, _, _, _| connector_terms.push(self.intern(t)),
        );
        for &t in &connector_terms {
            self.term_flags[t as usize] |= T_CONNECTOR;
        }
        terms(
            &mut scratch,
            description.unwrap_or(""),
            Compounds::Joined,
            |t, _, _, stop| {
                if !stop {
                    let id = self.intern(t) as usize;
                    if self.term_flags[id] & T_CONNECTOR == 0 {
                        self.term_flags[id] |= T_TOPIC;
                    }
                }
            },
        );

        // Necessary name terms per tool, and the exact-name table.
        let mut name_keys = Vec::with_capacity(n);
        let read_only_tools = tool_info.iter().filter(|&&b| b & READ_ONLY != 0).count();
        for (i, info) in tool_info.iter_mut().enumerate() {
            let name =
                &self.name_terms[self.name_offsets[i] as usize..self.name_offsets[i + 1] as usize];
            if !name.is_empty() {
                name_keys.push(u64::from(seq_hash(name)) << 32 | i as u64);
            }
            let mut need = 0u8;
            for (k, &term) in name.iter().enumerate() {
                let necessary = self.term_flags[term as usize] & (T_CONNECTOR | T_NAME_STOP) == 0;
                if necessary && !name[..k].contains(&term) {
                    need = need.saturating_add(1);
                }
            }
            *info |= need.min(NEED_MAX);
        }
        name_keys.sort_unstable();
        self.name_extra.sort_unstable();
        self.name_extra.dedup();
        self.synonym_pairs.sort_unstable();
        self.synonym_pairs.shrink_to_fit();
        for flags in &mut self.term_flags {
            *flags &= !T_PAIRED;
        }

        // Counting sort into the flat posting array. Tools were visited in
        // order, so each term's postings stay in tool order.
        let terms = self.vocab.len();
        let mut offsets = vec![0u32; terms + 1];
        for &(t, _, _) in &self.triples {
            offsets[t as usize + 1] += 1;
        }
        for t in 0..terms {
            offsets[t + 1] += offsets[t];
        }
        let mut fill = std::mem::take(&mut self.last_slot);
        fill.clear();
        fill.extend_from_slice(&offsets[..terms]);
        let mut postings = vec![0u32; self.triples.len()];
        let mut synonym_only: Vec<(u32, u32)> = Vec::new();
        for &(t, tool, fields) in &self.triples {
            let slot = &mut fill[t as usize];
            postings[*slot as usize] = tool << FIELD_BITS | u32::from(fields & !SYNONYM);
            *slot += 1;
            if fields & SYNONYM != 0 {
                synonym_only.push((t, 1));
            }
        }
        synonym_only.sort_unstable();
        synonym_only.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 += next.1;
            }
            same
        });
        synonym_only.shrink_to_fit();
        self.name_terms.shrink_to_fit();
        self.name_extra.shrink_to_fit();
        self.term_flags.shrink_to_fit();
        let shapes = (0..n).map(|_| OnceLock::new()).collect();
        CatalogIndex {
            catalog,
            terms: self.vocab.share(),
            term_flags: self.term_flags,
            offsets,
            postings,
            name_offsets: self.name_offsets,
            name_terms: self.name_terms,
            name_keys,
            name_extra: self.name_extra,
            synonym_only,
            synonym_pairs: self.synonym_pairs,
            tool_info,
            ops: ops.into_boxed_slice(),
            changes: changes.into_boxed_slice(),
            read_only_tools,
            connector_terms,
            shapes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connecta_core::policy::Annotations;
    use serde_json::json;

    fn tool(name: &str, desc: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            title: None,
            description: Some(desc.into()),
            input_schema: connecta_core::Schema::from(json!({"type": "object"})),
            output_schema: None,
            annotations: Annotations::default(),
        }
    }

    fn postings(idx: &CatalogIndex, term: u32) -> Vec<(u32, u8)> {
        idx.raw_postings(term)
            .iter()
            .map(|&p| (p >> FIELD_BITS, (p & FIELD_MASK) as u8))
            .collect()
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
        assert_eq!(
            postings(&idx, issue),
            vec![(0, F_NAME | F_DESC), (2, F_NAME)]
        );
        assert_eq!(idx.fields_of(issue, 0), F_NAME | F_DESC);
        assert_eq!(idx.fields_of(issue, 1), 0);
        assert_eq!(idx.fields_of(issue, 2), F_NAME);
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

    #[test]
    fn a_name_word_brings_its_name_synonyms_as_marked_postings() {
        let cat = Catalog::new(
            "tasks",
            vec![
                tool("delete_task", "Delete a task."),
                tool("delete_note", "Remove a note for good."),
                tool("list_tasks", "List tasks."),
            ],
        );
        let idx = CatalogIndex::build(Arc::new(cat));
        let delet = idx.term_id("delet").expect("indexed");
        let remov = idx.term_id("remov").expect("synonym indexed");
        // Only a synonym for `delete_task`; a word of its own description
        // too for `delete_note`, which keeps the mark.
        assert_eq!(postings(&idx, remov), vec![(0, F_SYN), (1, F_SYN | F_DESC)]);
        assert_eq!(idx.doc_freq(remov), 1, "only delete_note says remove");
        let group: Vec<u32> = idx.synonyms_of(delet).collect();
        assert_eq!(
            group.len(),
            6,
            "remove, erase, destroy, drop and the two aliases once each"
        );
        assert!(group.contains(&remov));
        let list = idx.term_id("list").expect("indexed");
        assert_eq!(idx.synonyms_of(list).count(), 0);
    }

    #[test]
    fn a_noun_in_a_description_brings_its_synonyms_and_a_verb_does_not() {
        let cat = Catalog::new(
            "music",
            vec![
                tool("skip_to_next", "Skip to the next track."),
                tool("remove_item", "Delete an item from the queue."),
            ],
        );
        let idx = CatalogIndex::build(Arc::new(cat));
        let song = idx.term_id("song").expect("the synonym of track");
        assert_eq!(postings(&idx, song), vec![(0, F_DESC)]);
        assert_eq!(idx.doc_freq(song), 0, "no tool says song itself");
        // "delete" in a description brings nothing: only the name's verb
        // (`remove`) brings its group, marked as standing for the name.
        let erase = idx.term_id("eras").expect("the synonym of remove");
        assert_eq!(postings(&idx, erase), vec![(1, F_SYN)]);
    }

    #[test]
    fn names_are_found_exactly_and_need_counts_necessary_terms() {
        let cat = Catalog::new(
            "slack",
            vec![
                tool("list_issues", ""),
                tool("reply_to_thread", ""),
                tool("slack_post_message", ""),
                tool("get_mine", ""),
                tool("list-issues", ""),
            ],
        );
        let idx = CatalogIndex::build(Arc::new(cat));
        let ids = |words: &[&str]| -> Vec<u32> {
            words
                .iter()
                .map(|w| idx.term_id(w).expect("known"))
                .collect()
        };
        let named: Vec<u32> = idx.tools_named(&ids(&["list", "issu"])).collect();
        assert_eq!(named, vec![0, 4]);
        assert_eq!(idx.tools_named(&ids(&["issu", "list"])).count(), 0);
        // `list` is an optional verb, `to` a function word, `slack` the id.
        assert_eq!(idx.name_need(0), 1);
        assert_eq!(idx.name_need(1), 2);
        assert_eq!(idx.name_need(2), 2);
        // `mine` is a function word, but its stem `min` is not: a query
        // saying `min` still reaches the name through `name_extra`.
        let min = idx.term_id("min").expect("interned");
        assert!(idx.raw_postings(min).is_empty());
        assert_eq!(idx.name_extra(min).collect::<Vec<_>>(), vec![3]);
        assert_eq!(idx.tool_id("get_mine"), Some(3));
        assert_eq!(idx.tool_id("nope"), None);
    }

    #[test]
    fn a_tools_kind_of_change_is_its_names_leading_verb() {
        let mut read_only = tool("delete_preview", "");
        read_only.annotations.read_only_hint = Some(true);
        let names = [
            "asana_create_task",
            "ps_restart",
            "post_comment",
            "figma_post_comment",
            "maintenance_on",
            "update_app",
            "reset_password",
            "PostComment",
            "comments",
            "log_search",
            "deleted_items",
        ];
        let mut tools: Vec<ToolDef> = names.iter().map(|n| tool(n, "")).collect();
        tools.push(read_only);
        let idx = CatalogIndex::build(Arc::new(Catalog::new("c", tools)));
        let kinds: Vec<Option<Change>> = (0..idx.len() as u32).map(|t| idx.change(t)).collect();
        assert_eq!(
            kinds,
            [
                // The verb that decides the operation, within the first
                // three words.
                Some(Change::Add),
                Some(Change::Restart),
                // A verb of no operation counts only as the first word.
                Some(Change::Add),
                None,
                None,
                Some(Change::Any),
                // `reset` changes, in no particular kind: any.
                Some(Change::Any),
                Some(Change::Add),
                // Words as written: a plural noun, a noun that is also a
                // verb, an adjective.
                None,
                None,
                None,
                // A tool that only reads makes no change.
                None,
            ]
        );
        // Nor does an inflected word decide the operation.
        let deleted = idx.tool_id("deleted_items").expect("a tool");
        assert_eq!(idx.op(deleted), Op::Unknown);
    }

    #[test]
    fn a_namespace_opening_most_names_leaves_the_verb_after_it_first() {
        let names = [
            "HassTurnOn",
            "HassTurnOff",
            "HassLightSet",
            "maintenance_on",
        ];
        let tools: Vec<ToolDef> = names.iter().map(|n| tool(n, "")).collect();
        let idx = CatalogIndex::build(Arc::new(Catalog::new("home", tools)));
        let kinds: Vec<Option<Change>> = (0..idx.len() as u32).map(|t| idx.change(t)).collect();
        assert_eq!(
            kinds,
            [
                Some(Change::Start),
                Some(Change::Stop),
                Some(Change::Any),
                None
            ]
        );
        // The connector's id is a namespace in its own names.
        let tools = vec![tool("wms_transfer_stock", ""), tool("wms_count", "")];
        let idx = CatalogIndex::build(Arc::new(Catalog::new("wms", tools)));
        assert_eq!(idx.change(0), Some(Change::Move));
        // Elsewhere, opening one name of two, it is a name's first word,
        // and the verb after it says nothing.
        let tools = vec![tool("wms_transfer_stock", ""), tool("count", "")];
        let idx = CatalogIndex::build(Arc::new(Catalog::new("stock", tools)));
        assert_eq!(idx.change(0), None);
    }

    #[test]
    fn a_version_marker_is_v_and_digits() {
        for t in ["v2", "v10"] {
            assert!(is_version(t), "{t}");
        }
        for t in ["v", "vx", "2", "dev2", "v2beta"] {
            assert!(!is_version(t), "{t}");
        }
    }

    #[test]
    fn shapes_are_rendered_once_and_kept() {
        let mut t = tool("a", "");
        t.output_schema = Some(connecta_core::Schema::from(json!({"type": "string"})));
        let idx = CatalogIndex::build(Arc::new(Catalog::new("c", vec![t, tool("b", "")])));
        let before = idx.heap_bytes();
        let first: *const CompactSchema = idx.compact_input(0);
        assert!(std::ptr::eq(first, idx.compact_input(0)));
        assert_eq!(idx.compact_input(0).text, "{}");
        assert_eq!(
            idx.compact_output(0).map(|c| c.text.as_str()),
            Some("string")
        );
        assert!(idx.compact_output(1).is_none());
        assert!(idx.heap_bytes() > before);
    }
}
