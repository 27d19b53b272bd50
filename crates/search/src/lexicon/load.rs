//! Reading a lexicon file: its entries (`[words]`, one per word or phrase)
//! into roles, checked for contradictions and for entries nobody reads.

use std::collections::BTreeMap;

use connecta_core::config::{Diagnostic, Positions};
use serde::Deserialize;
use serde_spanned::Spanned;

use super::{Article, Conjunction, Lexicon, Phrase, PhraseRole, Word, WordMap};
use crate::op::{Change, Op};
use crate::tokenize::stem;

/// Entries by their word or phrase, as written.
pub(super) type Entries = BTreeMap<String, Entry>;

/// One entry and where it was written.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    raw: RawEntry,
    /// Its line and column in the file it came from.
    at: (usize, usize),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    words: BTreeMap<Spanned<String>, Spanned<RawEntry>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    #[serde(default)]
    stop: bool,
    expands: Option<String>,
    verb: Option<Side>,
    query: Option<Side>,
    name: Option<Side>,
    before_object: Option<Side>,
    change: Option<String>,
    #[serde(default)]
    first_word: bool,
    #[serde(default)]
    light: bool,
    #[serde(default)]
    neutral: bool,
    #[serde(default)]
    question: bool,
    #[serde(default)]
    copula: bool,
    #[serde(default)]
    condition: bool,
    #[serde(default)]
    opener: bool,
    article: Option<RawArticle>,
    #[serde(default)]
    particle: bool,
    conjunction: Option<RawConjunction>,
    #[serde(default)]
    generic: bool,
    #[serde(default)]
    service: bool,
    #[serde(default)]
    request: bool,
    implies: Option<String>,
    same: Option<String>,
    finds: Option<String>,
    means: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Side {
    Read,
    Write,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawArticle {
    Definite,
    Indefinite,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawConjunction {
    Request,
    Clause,
}

impl Side {
    fn op(side: Option<Side>) -> Op {
        match side {
            None => Op::Unknown,
            Some(Side::Read) => Op::Read,
            Some(Side::Write) => Op::Write,
        }
    }
}

/// The entries of a lexicon file, or its syntax errors, located.
pub(super) fn entries(text: &str) -> Result<Entries, Vec<Diagnostic>> {
    let file: RawFile = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        vec![Diagnostic::at(text, at, first_line(e.message()))]
    })?;
    let positions = Positions::new(text);
    Ok(file
        .words
        .into_iter()
        .map(|(key, value)| {
            let entry = Entry {
                raw: value.into_inner(),
                at: positions.of(key.span().start),
            };
            (key.into_inner(), entry)
        })
        .collect())
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).to_owned()
}

/// The lexicon of `entries`, or every problem found in them.
pub(super) fn build(entries: Entries) -> Result<Lexicon, Vec<Diagnostic>> {
    let mut problems = Vec::new();
    for (key, entry) in &entries {
        for p in check(key, &entry.raw, &entries) {
            problems.push(Diagnostic {
                line: entry.at.0,
                column: entry.at.1,
                message: format!("\"{key}\": {p}"),
            });
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let lexicon = assemble(entries);
    let problems = check_terms(&lexicon);
    if problems.is_empty() {
        Ok(lexicon)
    } else {
        Err(problems)
    }
}

/// The contradictions and dead roles of one entry.
fn check(key: &str, e: &RawEntry, all: &Entries) -> Vec<String> {
    let mut p = Vec::new();
    if key.contains(' ') {
        check_phrase(key, e, all, &mut p);
        return p;
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    {
        p.push("a word is lowercase letters and digits (a phrase is words and spaces)".into());
    }
    if e.means.is_some() {
        p.push("`means` is a phrase's role: a single word means itself".into());
    }
    if e.verb.is_some() && (e.query.is_some() || e.name.is_some() || e.before_object.is_some()) {
        p.push(
            "`verb` is both sides already: it takes no `query`, `name` or `before_object`".into(),
        );
    }
    if e.question && (e.verb.is_some() || e.query.is_some()) {
        p.push("a question word reads by itself: it takes no `verb` or `query`".into());
    }
    if e.query.is_some() && e.before_object.is_some() {
        p.push("a word is a query verb always (`query`) or only before an object (`before_object`), not both".into());
    }
    if e.change
        .as_deref()
        .is_some_and(|c| Change::named(c).is_none())
    {
        p.push("`change` is one of any, add, remove, cancel, start, close, restore, merge, move, refund, export".into());
    }
    if e.first_word && e.change.is_none() {
        p.push("`first_word` says a name's kind of change: it needs `change`".into());
    }
    if e.stop
        && (e.same.is_some() || e.finds.is_some() || e.service || e.expands.is_some() || e.generic)
    {
        p.push("a function word is never scored: it cannot have synonyms, be a service, expand or be a generic read verb".into());
    }
    if e.implies
        .as_deref()
        .is_some_and(|w| w.contains(' ') || w.is_empty())
    {
        p.push("`implies` names one word".into());
    }
    check_group(key, e, all, &mut p);
    if let Some(to) = &e.expands
        && to
            .split(' ')
            .any(|w| all.get(w).is_some_and(|x| x.raw.expands.is_some()))
    {
        p.push("an expansion's words do not expand again".into());
    }
    if !has_role(e) {
        p.push("has no role: nothing reads it".into());
    }
    p
}

fn check_phrase(key: &str, e: &RawEntry, all: &Entries, p: &mut Vec<String>) {
    let single = RawEntry {
        means: None,
        request: false,
        ..e.clone()
    };
    if has_role(&single) {
        p.push("a phrase takes only `means` or `request`".into());
    }
    match (&e.means, e.request) {
        (Some(_), true) | (None, false) => {
            p.push("a phrase either `means` a verb or is a `request`".into())
        }
        (Some(to), false) => {
            let verb = all.get(to).is_some_and(|t| {
                let t = &t.raw;
                t.verb.is_some()
                    || t.query.is_some()
                    || t.name.is_some()
                    || t.before_object.is_some()
                    || t.change.is_some()
            });
            if !verb {
                p.push(format!(
                    "`means` names a verb of this lexicon, and \"{to}\" is none"
                ));
            }
        }
        (None, true) => {}
    }
    if key.split(' ').any(str::is_empty) {
        p.push("a phrase's words are separated by single spaces".into());
    }
}

fn check_group(key: &str, e: &RawEntry, all: &Entries, p: &mut Vec<String>) {
    if let Some(head) = &e.same {
        match all.get(head) {
            Some(h) if h.raw.same.as_deref() == Some(head.as_str()) => {}
            _ => p.push(format!(
                "`same` names its group by its head word, whose own `same` is itself; \"{head}\" is no such word"
            )),
        }
        if head == key {
            let members = all
                .values()
                .filter(|x| {
                    x.raw.same.as_deref() == Some(key) || x.raw.finds.as_deref() == Some(key)
                })
                .count();
            if members < 2 {
                p.push("a group of one word finds nothing".into());
            }
        }
    }
    if let Some(head) = &e.finds {
        if e.same.as_deref() == Some(head.as_str()) {
            p.push(
                "a word is in its group (`same`) or finds it one way (`finds`), not both".into(),
            );
        }
        let heads = all
            .get(head)
            .is_some_and(|h| h.raw.same.as_deref() == Some(head.as_str()));
        if !heads {
            p.push(format!(
                "`finds` names a group's head word; \"{head}\" heads none"
            ));
        }
    }
}

fn has_role(e: &RawEntry) -> bool {
    e.stop
        || e.expands.is_some()
        || e.verb.is_some()
        || e.query.is_some()
        || e.name.is_some()
        || e.before_object.is_some()
        || e.change.is_some()
        || e.light
        || e.neutral
        || e.question
        || e.copula
        || e.condition
        || e.opener
        || e.article.is_some()
        || e.particle
        || e.conjunction.is_some()
        || e.generic
        || e.service
        || e.request
        || e.implies.is_some()
        || e.same.is_some()
        || e.finds.is_some()
        || e.means.is_some()
}

/// A synonym's or an abbreviation's words must be terms the tokenizer
/// makes, or they would never be looked up.
fn check_terms(lexicon: &Lexicon) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (key, entry) in &lexicon.entries {
        let grouped = entry.raw.same.is_some() || entry.raw.finds.is_some();
        if grouped && crate::tokenize::tokenize_with(lexicon, key) != [stem(key).into_owned()] {
            problems.push(Diagnostic {
                line: entry.at.0,
                column: entry.at.1,
                message: format!(
                    "\"{key}\": the tokenizer makes other terms of this word, so its group is never looked up"
                ),
            });
        }
    }
    problems
}

/// The lexicon of checked entries.
fn assemble(entries: Entries) -> Lexicon {
    let mut implied: Vec<String> = Vec::new();
    let mut words = WordMap::default();
    let mut phrases = Vec::new();
    for (key, entry) in &entries {
        let e = &entry.raw;
        if key.contains(' ') {
            let role = match &e.means {
                Some(to) => PhraseRole::Means(to.clone()),
                None => PhraseRole::Request,
            };
            let words = key.split(' ').map(str::to_owned).collect();
            phrases.push(Phrase { words, role });
            continue;
        }
        let implies = e.implies.as_ref().map(|w| {
            implied.push(w.clone());
            u16::try_from(implied.len() - 1).unwrap_or(u16::MAX)
        });
        words.insert(key.as_str().into(), word(e, implies));
    }
    // Longer phrases first: "mark as done" before "mark done".
    phrases.sort_by_key(|p: &Phrase| std::cmp::Reverse(p.words.len()));
    Lexicon {
        synonyms: synonyms(&entries),
        expansions: expansions(&entries),
        generic: entries
            .iter()
            .filter(|(_, e)| e.raw.generic)
            .map(|(k, _)| stem(k).into_owned())
            .collect(),
        implied: implied.into(),
        entries,
        words,
        phrases,
    }
}

fn word(e: &RawEntry, implies: Option<u16>) -> Word {
    let query_op = if e.question {
        Op::Read
    } else {
        Side::op(e.verb.or(e.query))
    };
    Word {
        stop: e.stop,
        query_op,
        name_op: Side::op(e.verb.or(e.name)),
        before_object: Side::op(e.before_object),
        change: e.change.as_deref().and_then(Change::named),
        first_word: e.first_word,
        light: e.light,
        neutral: e.neutral,
        question: e.question,
        copula: e.copula,
        condition: e.condition,
        opener: e.opener,
        article: e.article.map(|a| match a {
            RawArticle::Definite => Article::Definite,
            RawArticle::Indefinite => Article::Indefinite,
        }),
        particle: e.particle,
        conjunction: e.conjunction.map(|c| match c {
            RawConjunction::Request => Conjunction::Request,
            RawConjunction::Clause => Conjunction::Clause,
        }),
        service: e.service,
        request: e.request,
        implies,
    }
}

/// Each group member's normalized term → the group's other members and its
/// aliases (`finds`), and whether the group is of nouns (no member is a
/// verb), whose synonyms apply in descriptions too.
fn synonyms(entries: &Entries) -> WordMap<(Box<[String]>, bool)> {
    let mut groups: BTreeMap<&str, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for (key, entry) in entries {
        if let Some(head) = &entry.raw.same {
            groups.entry(head).or_default().0.push(key);
        }
        if let Some(head) = &entry.raw.finds {
            groups.entry(head).or_default().1.push(key);
        }
    }
    let mut out = WordMap::default();
    for (members, aliases) in groups.values() {
        let nouns = members.iter().all(|m| {
            entries
                .get(*m)
                .is_some_and(|e| !word(&e.raw, None).is_verb() && !e.raw.first_word)
        });
        for m in members {
            let others: Vec<String> = members
                .iter()
                .filter(|o| *o != m)
                .chain(aliases)
                .map(|w| stem(w).into_owned())
                .collect();
            out.insert(
                stem(m).into_owned().into_boxed_str(),
                (others.into(), nouns),
            );
        }
    }
    out
}

fn expansions(entries: &Entries) -> WordMap<Box<[String]>> {
    entries
        .iter()
        .filter_map(|(key, e)| {
            let to = e.raw.expands.as_ref()?;
            let terms: Vec<String> = to.split(' ').map(|w| stem(w).into_owned()).collect();
            Some((stem(key).into_owned().into_boxed_str(), terms.into()))
        })
        .collect()
}
