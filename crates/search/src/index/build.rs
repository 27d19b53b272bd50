//! Index construction: each distinct word is tokenized once (its terms are
//! replayed from `emits` when it recurs, as most words of a catalog do), a
//! tool's repeated terms are merged through `last_tool` without sorting,
//! then a counting sort fills the flat posting array.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use connecta_core::catalog::{Catalog, ToolDef};

use super::{
    CatalogIndex, F_DESC, F_NAME, F_SYN, F_TITLE, FIELD_BITS, NEED_MAX, READ_ONLY, SYNONYM,
    T_CONNECTOR, T_NAME_STOP, T_PAIRED, T_TOPIC,
};
use crate::lexicon::{Lexicon, Word};
use crate::op::{Change, Op};
use crate::tokenize::{Compounds, Scratch, first_name_word, for_each_word, terms, word_terms};
use crate::vocab::{VocabBuilder, seq_hash};

/// A name's operation is its first known verb among this many leading
/// terms (`asana_create_task`, `wp_add_post`, `wit_get_work_item`).
const NAME_VERB_SPAN: u8 = 3;

pub(super) struct Builder {
    lex: Arc<Lexicon>,
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
    /// marks a posting made only by a synonym so far.
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
    pub(super) configured: HashMap<String, Vec<String>>,
    /// The synonym lists of the terms seen (`Emit::synonyms`).
    lists: Vec<Rc<[String]>>,
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
    /// The words a name carrying the term is also found by (the lexicon's
    /// and the connector's configured ones): an index into
    /// `Builder::lists`.
    synonyms: Option<u32>,
    /// The lexicon's synonyms, when they apply in descriptions and titles
    /// too (nouns): an index into `Builder::lists`.
    prose: Option<u32>,
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
    pub(super) fn new(n: usize, bytes: usize, lex: Arc<Lexicon>) -> Builder {
        let words = bytes / 7 + 16;
        let distinct = (words / 2).min(4096 + words / 8);
        let mut name_offsets = Vec::with_capacity(n + 1);
        name_offsets.push(0);
        Builder {
            lex,
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
            lists: Vec::new(),
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

    /// Postings for the words of list `list` (`field`), and for a name
    /// term, its pairs for the name check the first time it is seen.
    fn synonyms(&mut self, id: u32, tool: u32, list: u32, field: u8) {
        let list = self.lists[list as usize].clone();
        let paired = field != F_SYN || self.term_flags[id as usize] & T_PAIRED != 0;
        if field == F_SYN {
            self.term_flags[id as usize] |= T_PAIRED;
        }
        for synonym in list.iter() {
            let synonym = self.intern(synonym);
            self.synonym_posting(synonym, tool, field);
            if !paired {
                self.synonym_pairs.push((id, synonym));
            }
        }
    }

    /// A term's synonym lists: with the connector's configured terms (for
    /// names), and the lexicon's when they apply in prose.
    fn lists_of(&mut self, term: &str) -> (Option<u32>, Option<u32>) {
        let (lexicon, nouns) = self.lex.synonyms(term);
        let prose = nouns && !lexicon.is_empty();
        let configured = self.configured.get(term);
        if lexicon.is_empty() && configured.is_none() {
            return (None, None);
        }
        let mut all = lexicon.to_vec();
        if let Some(own) = configured {
            all.extend(own.iter().filter(|w| !lexicon.contains(w)).cloned());
        }
        self.lists.push(all.into());
        let names = self.lists.len() as u32 - 1;
        let prose = prose.then(|| {
            self.lists.push(lexicon.into());
            self.lists.len() as u32 - 1
        });
        (Some(names), prose)
    }

    /// Tokenize a word seen for the first time and record its terms.
    fn learn(&mut self, word: &str) {
        let start = self.emits.len() as u32;
        let mut scratch = std::mem::take(&mut self.scratch);
        let lex = self.lex.clone();
        let compound = word_terms(&lex, &mut scratch, word, |t, surface, joined, stop| {
            // Verbs count as written (the tokenizer's surface is
            // lowercase): `settings` is no `set`.
            let w: &Word = lex.word(surface);
            let text_start = self.emit_text.len() as u32;
            self.emit_text.push_str(t);
            let id = if stop { NOT_INTERNED } else { self.intern(t) };
            let (synonyms, prose) = self.lists_of(t);
            self.emits.push(Emit {
                id,
                text: (text_start, self.emit_text.len() as u32),
                joined,
                stop,
                term_stop: lex.is_stop(t),
                synonyms,
                prose,
                op: w.name_op,
                change: w.change,
                lead_change: w.change.filter(|_| w.first_word),
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
                if !skip && (!emit.stop || in_name) {
                    let id = self.interned(e);
                    self.term(tool, id, &emit, field, in_name);
                }
            }
        });
    }

    /// The id of emit `e`'s term, interning it now if it was not.
    fn interned(&mut self, e: usize) -> u32 {
        let emit = self.emits[e];
        if emit.id != NOT_INTERNED {
            return emit.id;
        }
        let (a, b) = emit.text;
        let text = std::mem::take(&mut self.emit_text);
        let id = self.intern(&text[a as usize..b as usize]);
        self.emit_text = text;
        self.emits[e].id = id;
        id
    }

    /// One term of `tool`'s text in `field`.
    fn term(&mut self, tool: u32, id: u32, emit: &Emit, field: u8, in_name: bool) {
        if in_name {
            self.name_term(tool, id, emit);
        }
        if emit.stop {
            return;
        }
        self.posting(id, tool, field);
        if let Some(list) = emit.prose.filter(|_| field != F_NAME) {
            self.synonyms(id, tool, list, F_DESC);
        }
        if let Some(list) = emit.synonyms.filter(|_| in_name) {
            self.synonyms(id, tool, list, F_SYN);
        }
    }

    /// A term of `tool`'s name: its sequence, and the name's verb.
    fn name_term(&mut self, tool: u32, id: u32, emit: &Emit) {
        self.name_terms.push(id);
        let (op, seen) = &mut self.name_op;
        if *op == Op::Unknown && *seen < NAME_VERB_SPAN {
            // The verb that decides the operation says the kind of change;
            // a name's first word may say it alone (`post_comment`,
            // `download_images`).
            if emit.op != Op::Unknown {
                self.name_change = emit.change;
            } else if *seen == 0 {
                self.name_change = emit.lead_change;
            }
            *op = emit.op;
            *seen += 1;
            // A first word that is a verb of no operation list (`update`,
            // `post`, `export`) is the name's verb: the words after it are
            // its object, not another verb (`update_list_status` does not
            // list).
            if *seen == 1 && emit.op == Op::Unknown && emit.lead_change.is_some() {
                *seen = NAME_VERB_SPAN;
            }
        }
        if emit.stop {
            self.term_flags[id as usize] |= T_NAME_STOP;
            if !emit.term_stop {
                self.name_extra.push((id, tool));
            }
        }
    }

    /// What a tool does: a read when it is read-only; else what its name's
    /// leading verb says, or a write when its server declares it not
    /// read-only and its name leads with a verb that is as often a noun
    /// (`update`, `post`, `merge`), which says no operation by itself.
    fn tool_op(&self, tool: &ToolDef) -> Op {
        if tool.read_only() {
            return Op::Read;
        }
        let lead_writes = || {
            first_name_word(&tool.name).is_some_and(|w| {
                let w = self.lex.word(&w.to_ascii_lowercase());
                w.first_word && w.change.is_some()
            })
        };
        if self.name_op.0 == Op::Unknown
            && tool.annotations.read_only_hint == Some(false)
            && lead_writes()
        {
            Op::Write
        } else {
            self.name_op.0
        }
    }

    /// Index every tool's fields: the read-only bit, the operation and the
    /// kind of change of each.
    fn tools(&mut self, catalog: &Catalog, n: usize) -> (Vec<u8>, Vec<Op>, Vec<Option<Change>>) {
        let mut tool_info = Vec::with_capacity(n);
        let mut ops = Vec::with_capacity(n);
        let mut changes = Vec::with_capacity(n);
        for (i, tool) in catalog.tools().iter().take(n).enumerate() {
            let i = i as u32;
            self.name_op = (Op::Unknown, 0);
            self.name_change = None;
            self.field(i, &tool.name, Compounds::Both, F_NAME);
            let op = self.tool_op(tool);
            ops.push(op);
            // A tool that only reads makes no change.
            changes.push(self.name_change.filter(|_| op != Op::Read));
            self.name_offsets.push(self.name_terms.len() as u32);
            let titles = tool.title.iter().chain(tool.annotations.title.iter());
            for title in titles {
                self.field(i, title, Compounds::Both, F_TITLE);
            }
            self.field(i, tool.description(), Compounds::Joined, F_DESC);
            tool_info.push(if tool.read_only() { READ_ONLY } else { 0 });
        }
        (tool_info, ops, changes)
    }

    /// The connector's id terms (flagged as such) and the words of its
    /// configured description (flagged as topic words).
    fn connector(&mut self, id: &str, description: Option<&str>) -> Vec<u32> {
        let mut connector_terms = Vec::new();
        let mut scratch = std::mem::take(&mut self.scratch);
        let lex = self.lex.clone();
        terms(&lex, &mut scratch, id, Compounds::Parts, |t, _, _, _| {
            connector_terms.push(self.intern(t))
        });
        for &t in &connector_terms {
            self.term_flags[t as usize] |= T_CONNECTOR;
        }
        let text = description.unwrap_or("");
        terms(
            &lex,
            &mut scratch,
            text,
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
        self.scratch = scratch;
        connector_terms
    }

    /// Each name's count of necessary terms (into `tool_info`), and the
    /// sorted exact-name table.
    fn names(&mut self, tool_info: &mut [u8]) -> Vec<u64> {
        let mut name_keys = Vec::with_capacity(tool_info.len());
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
        name_keys
    }

    /// Counting sort into the flat posting array (tools were visited in
    /// order, so each term's postings stay in tool order), and per term the
    /// postings that exist only through a synonym.
    fn postings(&mut self) -> (Vec<u32>, Vec<u32>, Vec<(u32, u32)>) {
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
        (offsets, postings, synonym_only)
    }

    pub(super) fn build(
        mut self,
        n: usize,
        catalog: Arc<Catalog>,
        description: Option<&str>,
    ) -> CatalogIndex {
        let (mut tool_info, ops, changes) = self.tools(&catalog, n);
        let connector_terms = self.connector(&catalog.connector, description);
        let read_only_tools = tool_info.iter().filter(|&&b| b & READ_ONLY != 0).count();
        let name_keys = self.names(&mut tool_info);
        let (offsets, postings, synonym_only) = self.postings();
        self.name_terms.shrink_to_fit();
        self.name_extra.shrink_to_fit();
        self.term_flags.shrink_to_fit();
        CatalogIndex {
            catalog,
            lexicon: self.lex,
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
            shapes: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }
}
