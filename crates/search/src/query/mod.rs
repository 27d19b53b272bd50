//! A query, analysed once ([`Query::parse`]): its words (as written,
//! lowercased, and as terms), where its clauses and parts begin, what it
//! asks ([`Intent`]), the services it names, the phrasal verbs it uses and
//! the terms it implies. Every later stage reads this value; none splits
//! the query's text again.
//!
//! Nothing here depends on a catalog. What does (whether some tool's name
//! spells a phrase, whether a catalog knows a compound) is the ranking's
//! first stage ([`crate::rank`]).

mod intent;

use crate::lexicon::Lexicon;
use crate::tokenize::{Scratch, for_each_word_with_gap, stem, word_terms};

pub(crate) use intent::Intent;

/// A query's analysis.
#[derive(Debug, Clone)]
pub struct Query {
    pub(crate) words: Vec<QWord>,
    pub(crate) intent: Intent,
    /// A conjunction or a list joins the query's words: it may ask for
    /// several things.
    pub(crate) several_parts: bool,
    /// Well-known services the query names, each as a word of its own
    /// (lowercase, in order, each once).
    pub(crate) services: Vec<String>,
}

/// One word of a query.
#[derive(Debug, Clone)]
pub(crate) struct QWord {
    /// Its terms, each with the lowercased surface it came from.
    pub parts: Vec<(String, String)>,
    /// A short case-split compound's joined form (`GitHub`), which the
    /// ranking prefers when some catalog knows it.
    pub joined: Option<(String, String)>,
    /// Something other than white space comes between this word and the
    /// one before ("front, page").
    pub after_break: bool,
    /// Which part of a query asking for several things it is in (counted
    /// from 0; the 64th and later parts share the last number).
    pub part: u8,
    /// A phrasal verb starts here: its length in words and the verb it
    /// means ("get rid of" → `delete`).
    pub phrase: Option<(usize, String)>,
    /// The term a question opening here implies ("where is…" →
    /// `location`).
    pub implies: Option<String>,
}

impl QWord {
    /// The word, lowercased, when it is one term (no compound).
    pub(crate) fn simple(&self) -> Option<&str> {
        match (&self.parts[..], &self.joined) {
            ([(_, surface)], None) => Some(surface),
            _ => None,
        }
    }
}

/// A word as written and the text before it.
#[derive(Debug)]
pub(crate) struct Raw<'q> {
    pub word: &'q str,
    pub gap: &'q str,
    /// `word`, ASCII-lowercased.
    pub lower: String,
    /// Punctuation that ends a clause comes before it.
    pub breaks: bool,
}

impl Query {
    /// Analyse `text` with `lex`.
    pub fn parse(text: &str, lex: &Lexicon) -> Query {
        let raw = raw_words(text);
        let mut words = tokenized(lex, &raw);
        let mut part = 0u8;
        let mut several_parts = false;
        for (i, word) in words.iter_mut().enumerate() {
            if i > 0 {
                let start = intent::starts_part(lex, &raw, i, intent::Parts::Joined);
                part = (part + u8::from(start)).min(63);
                several_parts |= intent::starts_part(lex, &raw, i, intent::Parts::Listed);
            }
            word.part = part;
        }
        let simple: Vec<Option<String>> = words
            .iter()
            .map(|w| w.simple().map(str::to_owned))
            .collect();
        let simple: Vec<Option<&str>> = simple.iter().map(Option::as_deref).collect();
        for (i, w) in words.iter_mut().enumerate() {
            w.phrase = lex
                .phrase_means(&simple[i..])
                .map(|(len, to)| (len, to.to_owned()));
            w.implies = implied(lex, &simple, &raw, i);
        }
        Query {
            intent: intent::intent(lex, &raw),
            services: services(lex, &raw),
            several_parts,
            words,
        }
    }
}

/// The words of `text` with their gaps, once.
fn raw_words(text: &str) -> Vec<Raw<'_>> {
    let mut raw: Vec<Raw<'_>> = Vec::new();
    for_each_word_with_gap(text, |word, gap| {
        // Inside a number or a time ("1,000", "6:30", "v1.2") nothing
        // ends.
        let in_number = matches!(gap, "," | "." | ":")
            && raw
                .last()
                .is_some_and(|p| p.word.ends_with(|c: char| c.is_ascii_digit()))
            && word.starts_with(|c: char| c.is_ascii_digit());
        let breaks = !in_number
            && (gap.contains([',', ';', '!', '?', ':', '\n', '(', '—', '–'])
                || gap.contains(". ")
                || gap.contains(" - ")
                || gap.ends_with('.'));
        raw.push(Raw {
            word,
            gap,
            lower: word.to_ascii_lowercase(),
            breaks,
        });
    });
    raw
}

/// Each word's terms.
fn tokenized(lex: &Lexicon, raw: &[Raw<'_>]) -> Vec<QWord> {
    let mut s = Scratch::default();
    raw.iter()
        .map(|r| {
            let mut q = QWord {
                parts: Vec::new(),
                joined: None,
                after_break: r.gap.chars().any(|c| !c.is_whitespace()),
                part: 0,
                phrase: None,
                implies: None,
            };
            word_terms(lex, &mut s, r.word, |t, surface, joined, _| {
                let pair = (t.to_owned(), surface.to_owned());
                if joined {
                    q.joined = Some(pair);
                } else {
                    q.parts.push(pair);
                }
            });
            q
        })
        .collect()
}

/// The term a question word opening a question implies ("where is my
/// package", "where are the trucks" ask for a `location`): the word opens
/// the query or a clause, or follows a function word, and a copula
/// follows it.
fn implied(lex: &Lexicon, simple: &[Option<&str>], raw: &[Raw<'_>], i: usize) -> Option<String> {
    let word = lex.word(simple[i]?);
    let implied = lex.implied(word)?;
    let opens = i == 0
        || raw[i].gap.chars().any(|c| !c.is_whitespace())
        || simple[i - 1].is_some_and(|w| lex.is_stop(w));
    let question = simple
        .get(i + 1)
        .copied()
        .flatten()
        .is_some_and(|w| lex.word(w).copula);
    (opens && question).then(|| stem(implied).into_owned())
}

/// The services the query names, each as a word of its own: a word that
/// white space (or punctuation other than an apostrophe's `'s`) sets
/// apart, written in ASCII, is a service's name. `STRIPE_KEY`,
/// `jo@gmail.com` and `slack-bot` name none.
fn services(lex: &Lexicon, raw: &[Raw<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        // The words up to the next white space form one token.
        let mut end = i + 1;
        while end < raw.len() && !raw[end].gap.chars().any(char::is_whitespace) {
            end += 1;
        }
        let possessive =
            end == i + 2 && raw[i + 1].word == "s" && matches!(raw[i + 1].gap, "'" | "’");
        let alone = end == i + 1 || possessive;
        let w = &raw[i].lower;
        if alone && raw[i].word.is_ascii() && lex.word(w).service && !out.contains(w) {
            out.push(w.clone());
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests;
