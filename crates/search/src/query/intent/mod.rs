//! What a query asks: to read or to change something ([`Op`]), and for a
//! change, which kinds ([`Change`]); and where its parts begin.
//!
//! Both sides fail open. A query has an operation only when every clause
//! of it opens with a verb (or a question word) the lexicon knows, or a
//! word it does not know before an object (a command, guessed to change
//! something: "pay the crew"), and no word of the other kind appears
//! anywhere in it: "see if you can add…" and "query prometheus and open an
//! incident" have none. Beside a request ("can you…", "please…"), a clause
//! whose opening is no verb is context and asks nothing. A guess never
//! removes a tool: the ranking only demotes the tools it opposes.

use crate::lexicon::{Article, Conjunction, Lexicon, Word};
use crate::op::{Change, Op};

use super::Raw;

/// What a query asks: its operation and, when it asks to change and every
/// clause opens with a verb of one particular kind, those kinds with the
/// verbs' terms (stemmed, as the query's terms are).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Intent {
    pub op: Op,
    pub changes: Vec<(Change, String)>,
}

/// A question word or a copula.
fn is_question_word(w: &Word) -> bool {
    w.question || w.copula
}

/// The operation a clause's first word asks for, given the word after it:
/// a word that opens noun phrases as often ([`Word::before_object`]) is a
/// verb only before an object; a word the lexicon does not know as a verb,
/// before an object, is a command, guessed to change something.
pub(super) fn opening_op(lex: &Lexicon, word: &str, next: Option<&str>) -> Op {
    let w = lex.word(word);
    if w.query_op != Op::Unknown {
        return w.query_op;
    }
    let next_w = next.map(|n| lex.word(n));
    let object = next
        .is_some_and(|n| next_w.is_some_and(|x| x.opener) || n.bytes().all(|b| b.is_ascii_digit()));
    match w.before_object {
        Op::Unknown => {}
        op => {
            // A reading verb's object may be a question ("check which
            // contracts are unsigned").
            let question = next_w.is_some_and(|x| x.question);
            return if object || (op == Op::Read && question) {
                op
            } else {
                Op::Unknown
            };
        }
    }
    let unknown = word.len() >= 3
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && !w.stop
        && !is_question_word(w)
        && !w.is_verb();
    if unknown && object {
        Op::Write
    } else {
        Op::Unknown
    }
}

/// The action a light verb's object names: `word` is a light verb, an
/// indefinite article follows, and then a verb that changes something in
/// a particular way ("issue a refund" asks to refund).
fn light_verb_action<'w>(
    lex: &Lexicon,
    word: &str,
    next: Option<&str>,
    then: Option<&'w str>,
) -> Option<&'w str> {
    let indefinite = next.is_some_and(|n| lex.word(n).article == Some(Article::Indefinite));
    let action = then.filter(|_| lex.word(word).light && indefinite)?;
    let a = lex.word(action);
    let particular = a.change.is_some_and(|c| c != Change::Any);
    // As a noun the action may be one that leads only names as a verb
    // ("a rollback", "a copy").
    let writes = a.query_op == Op::Write || a.name_op == Op::Write;
    (particular && writes).then_some(action)
}

/// The operation a phrasal verb folds to ("pull up" → `get`, a read; "shut
/// down" → `stop`, a write): the verb's own, else what it means in a name.
fn phrase_op(lex: &Lexicon, to: &str) -> Op {
    match lex.word(to).query_op {
        Op::Unknown => lex.word(to).name_op,
        op => op,
    }
}

/// The state of reading a query's clauses.
#[derive(Default)]
struct Clauses {
    /// The query makes a request somewhere ("can you…", "please…").
    requests: bool,
    /// The current clause opens with a request.
    requested: bool,
    /// The current clause is context, so far.
    context: bool,
    opening: bool,
    read: bool,
    write: bool,
    /// Every clause's verb is of a particular kind.
    particular: bool,
    changes: Vec<(Change, String)>,
}

/// What a whole query asks: `Read` or `Write` when every clause opens with
/// a known word of that kind and no word of the other kind appears in it,
/// with the kinds of change its clauses' verbs make; otherwise nothing.
pub(super) fn intent(lex: &Lexicon, raw: &[Raw<'_>]) -> Intent {
    let words: Vec<Option<&str>> = raw.iter().map(|r| Some(r.lower.as_str())).collect();
    let mut c = Clauses {
        requests: (0..words.len()).any(|i| lex.request_at(&words, i)),
        opening: true,
        particular: true,
        ..Clauses::default()
    };
    let mut i = 0;
    while i < raw.len() {
        match step(lex, raw, &words, i, &mut c) {
            Some(len) => i += len,
            None => return Intent::default(),
        }
    }
    match (c.read, c.write) {
        (true, false) => Intent {
            op: Op::Read,
            changes: Vec::new(),
        },
        (false, true) => Intent {
            op: Op::Write,
            changes: if c.particular { c.changes } else { Vec::new() },
        },
        _ => Intent::default(),
    }
}

/// Read word `i`: how many words it took, or `None` when the query asks
/// nothing after all.
fn step(
    lex: &Lexicon,
    raw: &[Raw<'_>],
    words: &[Option<&str>],
    i: usize,
    c: &mut Clauses,
) -> Option<usize> {
    let word = raw[i].lower.as_str();
    let w = lex.word(word);
    if raw[i].breaks || w.conjunction.is_some() {
        c.opening = true;
        c.requested = false;
        c.context = false;
        if w.conjunction.is_some() {
            return Some(1);
        }
    }
    if c.context && lex.request_at(words, i) {
        // "Hey team, … please cancel the meeting": the request opens its
        // own clause where it comes.
        c.opening = true;
        c.requested = true;
        c.context = false;
        return Some(1);
    }
    let phrase = lex.phrase_means(&words[i..]);
    let next = words.get(i + 1).copied().flatten();
    let light = if c.opening {
        light_verb_action(lex, word, next, words.get(i + 2).copied().flatten())
    } else {
        None
    };
    let (op, len, verb) = match (phrase, light) {
        (Some((len, to)), _) => (phrase_op(lex, to), len, to),
        (None, Some(action)) => (Op::Write, 3, action),
        (None, None) if c.opening => (opening_op(lex, word, next), 1, word),
        // Inside a clause, a question word is a relative pronoun or a
        // copula ("the meeting that is live"): it asks nothing.
        (None, None) if is_question_word(w) => (Op::Unknown, 1, word),
        (None, None) => (w.query_op, 1, word),
    };
    if c.opening && !open_clause(lex, words, i, op, phrase.is_some(), verb, c)? {
        return Some(1);
    }
    match op {
        Op::Read => c.read = true,
        Op::Write => c.write = true,
        Op::Unknown => {}
    }
    Some(len)
}

/// A clause opens at word `i` with `op` (of `verb`): `Some(true)` when the
/// clause has its verb, `Some(false)` when the word is skipped (a function
/// word before the verb, or context beside a request), `None` when the
/// query asks nothing.
fn open_clause(
    lex: &Lexicon,
    words: &[Option<&str>],
    i: usize,
    op: Op,
    phrase: bool,
    verb: &str,
    c: &mut Clauses,
) -> Option<bool> {
    let w = lex.word(words[i].unwrap_or_default());
    if w.condition {
        // "see if you can add…": the verb is a condition's.
        return None;
    }
    if op == Op::Unknown {
        if !phrase && w.stop {
            c.requested |= lex.request_at(words, i);
            return Some(false);
        }
        if c.requests && !c.requested {
            // Context beside a request: its words still count, its
            // opening asks nothing.
            c.opening = false;
            c.context = true;
            return Some(false);
        }
        return None;
    }
    match lex.word(verb).change {
        Some(change) if change != Change::Any => {
            c.changes
                .push((change, crate::tokenize::stem(verb).into_owned()));
        }
        _ => c.particular = false,
    }
    c.opening = false;
    Some(true)
}

/// Which boundaries make parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Parts {
    /// Conjunctions of either kind, and lists.
    Listed,
    /// Requests joined as such: a request conjunction ("and", "then", after
    /// a comma too), ";", a standalone "&", and a comma before a verb
    /// ("schedule the call, send the offer"). Not other commas (context
    /// before a request: "the site is down, can you…"; a question word or
    /// a copula: "…for checkout, which started…"), nor a clause
    /// conjunction (a time clause: "deploy before the tests run").
    Joined,
}

/// Whether word `i` of `raw` starts a new part (`parts`); the first word
/// starts none.
pub(super) fn starts_part(lex: &Lexicon, raw: &[Raw<'_>], i: usize, parts: Parts) -> bool {
    let (w, gap) = (&raw[i].lower, raw[i].gap);
    let last = i.checked_sub(1).map_or("", |j| raw[j].word);
    let in_number = gap == ","
        && last.ends_with(|c: char| c.is_ascii_digit())
        && w.starts_with(|c: char| c.is_ascii_digit());
    // A conjunction stands apart: after white space or a comma ("…, and
    // update…"), not inside a word ("drag-and-drop").
    let apart = gap.chars().all(|c| c.is_whitespace() || c == ',');
    // A comma before a verb lists requests ("schedule the call, send the
    // offer, and update the title"); before anything else, a question word
    // or a copula too, it ends context.
    let listed = gap.contains(',')
        && !in_number
        && (parts == Parts::Listed || {
            let next = raw.get(i + 1).map(|n| n.lower.as_str());
            !is_question_word(lex.word(w)) && opening_op(lex, w, next) != Op::Unknown
        });
    let joins = match lex.word(w).conjunction {
        Some(Conjunction::Request) => true,
        Some(Conjunction::Clause) => parts == Parts::Listed,
        None => false,
    };
    (gap.contains(';') || listed)
        || gap.trim() == "&" && gap.len() > 1
        || (apart && !last.is_empty() && joins)
}

#[cfg(test)]
mod tests;
