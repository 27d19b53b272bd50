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
//!   function word in names);
//! - connector-level text (the id and the configured description) is stored
//!   once per index, not copied into every tool's postings.
//!
//! Compact shapes are rendered lazily, the first time a page shows a tool,
//! and kept per tool ([`CatalogIndex::compact_input`]): building the index
//! never renders a schema.

mod build;

use std::sync::{Arc, OnceLock};

use connecta_core::catalog::{Catalog, ToolDef};
use connecta_core::config::SearchTerm;
use connecta_core::schema::{CompactSchema, SHAPE_CAP_BYTES, render_compact};

use crate::lexicon::Lexicon;
use crate::op::{Change, Op};
use crate::vocab::{IdMap, seq_hash, shared_find, term_hash};

use build::Builder;

/// Field bits carried by a posting.
pub(crate) const F_NAME: u8 = 1;
pub(crate) const F_TITLE: u8 = 2;
pub(crate) const F_DESC: u8 = 4;
/// The posting stands for a word of the tool's name by an action synonym
/// ("remove" on `delete_task`): description weight, and it counts toward
/// the name's completeness.
pub(crate) const F_SYN: u8 = 8;
pub(crate) const FIELD_BITS: u32 = 4;
/// Builder-only field bit: the posting exists only through a synonym.
pub(crate) const SYNONYM: u8 = 16;
const FIELD_MASK: u32 = (1 << FIELD_BITS) - 1;

/// Term flags.
pub(crate) const T_CONNECTOR: u8 = 1;
pub(crate) const T_TOPIC: u8 = 2;
pub(crate) const T_NAME_STOP: u8 = 4;
/// Builder-only: the term's name synonyms are in `synonym_pairs`.
pub(crate) const T_PAIRED: u8 = 8;

/// Tool info byte: read-only bit, and the count of distinct necessary name
/// terms in the low bits (saturating: `NEED_MAX` means "at least").
pub(crate) const READ_ONLY: u8 = 0x80;
pub(crate) const NEED_MAX: u8 = 0x7f;

/// Tools per index are bounded by the posting encoding (28 bits of id).
pub const MAX_TOOLS_PER_INDEX: usize = 1 << (32 - FIELD_BITS);

#[derive(Debug)]
pub struct CatalogIndex {
    catalog: Arc<Catalog>,
    /// The lexicon the index was built with; queries against it use it.
    lexicon: Arc<Lexicon>,
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
    /// search terms, with the deployment's lexicon: each entry the lexicon
    /// accepts makes every tool whose name carries its name word findable
    /// by its query word, as a synonym is (entries it refuses were reported
    /// by [`crate::check_search_terms`] and are left out).
    pub fn with_config(
        catalog: Arc<Catalog>,
        description: Option<&str>,
        search_terms: &[SearchTerm],
    ) -> CatalogIndex {
        CatalogIndex::with_lexicon(
            catalog,
            description,
            search_terms,
            Lexicon::current().clone(),
        )
    }

    /// Index a catalog with its connector's configured description and
    /// search terms, reading words with `lexicon`.
    pub fn with_lexicon(
        catalog: Arc<Catalog>,
        description: Option<&str>,
        search_terms: &[SearchTerm],
        lexicon: Arc<Lexicon>,
    ) -> CatalogIndex {
        let search_terms = crate::terms::normalized(&lexicon, search_terms);
        let n = catalog.len().min(MAX_TOOLS_PER_INDEX);
        let bytes: usize = catalog.tools()[..n]
            .iter()
            .map(|t| t.name.len() + t.description().len())
            .sum();
        let mut builder = Builder::new(n, bytes, lexicon);
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

    /// The lexicon the index was built with.
    pub fn lexicon(&self) -> &Arc<Lexicon> {
        &self.lexicon
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

/// The second halves of the pairs whose first half is `key`, in a table
/// sorted by pair.
fn paired_with(pairs: &[(u32, u32)], key: u32) -> impl Iterator<Item = u32> + '_ {
    let start = pairs.partition_point(|&(k, _)| k < key);
    pairs[start..]
        .iter()
        .take_while(move |&&(k, _)| k == key)
        .map(|&(_, v)| v)
}

#[cfg(test)]
mod tests;
