//! The word knowledge of search, as data: which words are function words,
//! which verbs read or write (and what kind of change they make), which
//! words mean the same, which phrases fold to one verb, which abbreviations
//! expand, which names are well-known services. It is `lexicon.toml`,
//! compiled in, one entry per word with its roles (the file's header
//! documents each role), validated when it is read ([`load`]): no word with
//! contradictory roles, no entry nobody reads.
//!
//! A deployment may extend it with a file of the same shape
//! (`[search] lexicon = "FILE"`): its entries add words or replace the
//! built-in entry of a word. The binary reads that file once at start and
//! [`install`]s the result; indexes built afterwards, and the queries run
//! against them, use it ([`Lexicon::current`]).
//!
//! Architecture invariant: no other module of this crate names a word.
//! Rules read roles ("a question word opening a clause", "a verb that
//! writes"); the words are here.

mod load;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, LazyLock, OnceLock};

use connecta_core::config::Diagnostic;

use crate::op::{Change, Op};

/// The built-in lexicon's text.
pub const BUILTIN: &str = include_str!("../../lexicon.toml");

/// A validated lexicon: single words by their lowercase form, phrases, and
/// tables derived by normalized term.
#[derive(Debug)]
pub struct Lexicon {
    /// The entries it was built from (what an extension merges into).
    entries: load::Entries,
    words: WordMap<Word>,
    phrases: Vec<Phrase>,
    /// Normalized term → the terms a name carrying it is also found by,
    /// and whether they apply in descriptions too (noun groups).
    synonyms: WordMap<(Box<[String]>, bool)>,
    /// Normalized abbreviation → the terms it stands for.
    expansions: WordMap<Box<[String]>>,
    /// Normalized terms of the generic read verbs (`get`, `list`, …).
    generic: Box<[String]>,
    /// The words `implies` roles name, by [`Word::implies`].
    implied: Box<[String]>,
}

/// A table by word. Index builds look every distinct word up several
/// times, so the hash is a cheap multiplicative one (FxHash's): the keys
/// are the lexicon's own, so no input can crowd one bucket.
pub(crate) type WordMap<V> = HashMap<Box<str>, V, BuildHasherDefault<WordHasher>>;

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The roles of one word (see the header of `lexicon.toml`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Word {
    pub stop: bool,
    /// What the word asks opening a query's clause.
    pub query_op: Op,
    /// What a tool name leading with the word does.
    pub name_op: Op,
    /// What the word asks opening a clause, only before an object.
    pub before_object: Op,
    pub change: Option<Change>,
    /// As a name's first word, it says the name's kind of change.
    pub first_word: bool,
    pub light: bool,
    pub neutral: bool,
    pub question: bool,
    pub copula: bool,
    pub condition: bool,
    pub opener: bool,
    pub article: Option<Article>,
    pub particle: bool,
    pub conjunction: Option<Conjunction>,
    pub service: bool,
    pub request: bool,
    /// Index into [`Lexicon::implied`].
    pub implies: Option<u16>,
}

impl Word {
    /// The word is a verb in some role (so a clause opening with it is not
    /// guessed to be a change).
    pub(crate) fn is_verb(&self) -> bool {
        self.query_op != Op::Unknown
            || self.name_op != Op::Unknown
            || self.before_object != Op::Unknown
            || self.change.is_some()
            || self.light
            || self.neutral
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Article {
    Definite,
    Indefinite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conjunction {
    /// Joins requests ("and", "then"): a new clause and a new part.
    Request,
    /// Opens a clause of time ("before", "after"): a new clause only.
    Clause,
}

/// A multi-word entry.
#[derive(Debug, Clone)]
pub(crate) struct Phrase {
    pub words: Box<[String]>,
    pub role: PhraseRole,
}

#[derive(Debug, Clone)]
pub(crate) enum PhraseRole {
    /// A phrasal verb that means one verb ("get rid of" → `delete`).
    Means(String),
    /// A way to ask ("can you"): what follows is the request.
    Request,
}

const NO_WORD: Word = Word {
    stop: false,
    query_op: Op::Unknown,
    name_op: Op::Unknown,
    before_object: Op::Unknown,
    change: None,
    first_word: false,
    light: false,
    neutral: false,
    question: false,
    copula: false,
    condition: false,
    opener: false,
    article: None,
    particle: false,
    conjunction: None,
    service: false,
    request: false,
    implies: None,
};

impl Lexicon {
    /// The built-in lexicon (`lexicon.toml`, validated by this crate's
    /// tests).
    pub fn builtin() -> &'static Arc<Lexicon> {
        static BUILT: LazyLock<Arc<Lexicon>> = LazyLock::new(|| {
            let lexicon = load::entries(BUILTIN)
                .and_then(load::build)
                .unwrap_or_else(|e| panic!("the built-in lexicon is invalid: {e:?}"));
            Arc::new(lexicon)
        });
        &BUILT
    }

    /// The deployment's lexicon: the one [`install`]ed, else the built-in.
    pub fn current() -> &'static Arc<Lexicon> {
        CURRENT.get().unwrap_or_else(|| Lexicon::builtin())
    }

    /// A whole lexicon from a file of the built-in one's shape, in place of
    /// the built-in (the evaluation measures a changed lexicon this way,
    /// without a rebuild). Problems are located in `text`.
    pub fn from_text(text: &str) -> Result<Lexicon, Vec<Diagnostic>> {
        load::build(load::entries(text)?)
    }

    /// This lexicon extended by a file of the same shape: its entries add
    /// words or replace the entries of the same words. Problems are located
    /// in `text`.
    pub fn extended(&self, text: &str) -> Result<Lexicon, Vec<Diagnostic>> {
        let mut entries = self.entries.clone();
        entries.extend(load::entries(text)?);
        load::build(entries)
    }

    pub(crate) fn word(&self, word: &str) -> &Word {
        self.words.get(word).unwrap_or(&NO_WORD)
    }

    pub(crate) fn is_stop(&self, word: &str) -> bool {
        self.word(word).stop
    }

    /// The terms a name term is also found by (its group's other words and
    /// aliases); empty for other terms.
    #[cfg(test)]
    pub(crate) fn name_synonyms(&self, term: &str) -> &[String] {
        self.synonyms.get(term).map_or(&[], |(words, _)| words)
    }

    /// The terms a name term is also found by (its group's other words and
    /// aliases), and whether they apply in descriptions and titles too (a
    /// group of nouns), in one lookup.
    pub(crate) fn synonyms(&self, term: &str) -> (&[String], bool) {
        self.synonyms
            .get(term)
            .map_or((&[], false), |(words, nouns)| (words, *nouns))
    }

    /// [`Lexicon::name_synonyms`] for a word of a description or title:
    /// only nouns have them there.
    #[cfg(test)]
    pub(crate) fn prose_synonyms(&self, term: &str) -> &[String] {
        match self.synonyms.get(term) {
            Some((words, true)) => words,
            _ => &[],
        }
    }

    /// The terms an abbreviation (a normalized term) stands for.
    pub(crate) fn expansion(&self, term: &str) -> Option<&[String]> {
        self.expansions.get(term).map(|t| &**t)
    }

    /// A generic read verb's term (`get`, `list`, `retriev`).
    pub(crate) fn is_generic(&self, term: &str) -> bool {
        self.generic.iter().any(|g| g == term)
    }

    pub(crate) fn implied(&self, word: &Word) -> Option<&str> {
        word.implies.map(|i| self.implied[usize::from(i)].as_str())
    }

    /// The phrasal verb that `words` start with, as its length and the verb
    /// it means (`None` in `words` matches nothing).
    pub(crate) fn phrase_means(&self, words: &[Option<&str>]) -> Option<(usize, &str)> {
        self.phrases.iter().find_map(|p| match &p.role {
            PhraseRole::Means(to) if starts(words, &p.words) => Some((p.words.len(), to.as_str())),
            _ => None,
        })
    }

    /// Word `i` of `words` makes a request: a word with the `request` role
    /// ("please"), or the last word of a request phrase ("can you").
    pub(crate) fn request_at(&self, words: &[Option<&str>], i: usize) -> bool {
        words[i].is_some_and(|w| self.word(w).request)
            || self.phrases.iter().any(|p| {
                let len = p.words.len();
                matches!(p.role, PhraseRole::Request)
                    && i + 1 >= len
                    && starts(&words[i + 1 - len..=i], &p.words)
            })
    }
}

/// `words` start with `phrase`.
fn starts(words: &[Option<&str>], phrase: &[String]) -> bool {
    words.len() >= phrase.len()
        && phrase
            .iter()
            .zip(words)
            .all(|(p, w)| *w == Some(p.as_str()))
}

static CURRENT: OnceLock<Arc<Lexicon>> = OnceLock::new();

/// Make `lexicon` the deployment's lexicon, once per process, before any
/// index is built. Returns it back if one was installed already.
pub fn install(lexicon: Arc<Lexicon>) -> Result<(), Arc<Lexicon>> {
    CURRENT.set(lexicon)
}

#[cfg(test)]
mod tests;
