//! The tokenizer shared by indexing and querying.
//!
//! Text is split into words at every non-alphanumeric character, each word is
//! split at case boundaries (`camelCase`, `HTTPServer`, `getV2Users`), then
//! lowercased and folded with a deliberately narrow stemmer: plurals, `-ies`
//! to `-y`, `-ed`, and a final `e`. Letters and digits stay together
//! (`s3`, `v2`, `k8s`), because splitting them produces one-letter terms that
//! match everything. Matching is always whole-term: `issue` and `issues` meet,
//! `is` and `issue` never do.
//!
//! A handful of software abbreviations are expanded on both sides (`repo`,
//! `PRs`, `db`, `k8s`…). This is normalization of spelling, not a synonym
//! list: it never relates two different words, only two spellings of one.
//!
//! Stopwords are conversational function words. They are never scored, but
//! they stay in the raw token sequence so that an exact tool name such as
//! `list_all_organizations` is still recognized.

use std::borrow::Cow;

/// What a query token is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermKind {
    /// A content word: scored, counted for coverage.
    Scored,
    /// A number: scored when some tool carries it, never counted as missing
    /// (numbers in queries are usually argument values such as an issue id).
    Soft,
    /// A conversational function word: ignored for scoring only.
    Stop,
}

/// Call `f` with every normalized term of `text`, in order, with the
/// lowercased surface word it came from.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str, &str)) {
    terms(
        &mut Scratch::default(),
        text,
        Compounds::Parts,
        |t, s, _, _| f(t, s),
    )
}

/// Like [`for_each_term`], and a word split at case boundaries into two or
/// three parts also yields its joined form, so that a query typed `github`
/// finds a name written `GitHub` (and `GitHub` finds it through the parts).
#[cfg(test)]
pub(crate) fn for_each_index_term(text: &str, mut f: impl FnMut(&str, &str)) {
    terms(
        &mut Scratch::default(),
        text,
        Compounds::Both,
        |t, s, _, _| f(t, s),
    )
}

/// For prose (descriptions): a short compound is a brand or product word
/// (`GitHub`, `PostgreSQL`), so only its joined form is indexed — its parts
/// would make `git` match every GitHub tool.
#[cfg(test)]
pub(crate) fn for_each_prose_term(text: &str, mut f: impl FnMut(&str, &str)) {
    terms(
        &mut Scratch::default(),
        text,
        Compounds::Joined,
        |t, s, _, _| f(t, s),
    )
}

/// Which forms of a short case-split compound (`GitHub`) are emitted.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compounds {
    /// Only the parts (`git`, `hub`): names as term sequences, queries.
    Parts,
    /// The joined form, then the parts: names and titles in the index.
    Both,
    /// Only the joined form: prose.
    Joined,
}

/// Buffers reused across words and texts, so that tokenizing a whole
/// catalog allocates a handful of times instead of a few times per word.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    cuts: Vec<usize>,
    lower: String,
    stemmed: String,
}

/// The tokenizer. `f(term, surface, joined, stop)`: `joined` marks the
/// joined form of a compound (it is never part of a name's term sequence);
/// `stop` says the term or its surface is a function word (computed here
/// once per word part, so callers need not look the word up again).
///
/// ASCII text (nearly all tool text) takes a byte-level path that allocates
/// nothing per word; any other text goes through the same rules on `char`s.
/// Both paths produce identical terms for ASCII input.
pub(crate) fn terms(
    s: &mut Scratch,
    text: &str,
    mode: Compounds,
    mut f: impl FnMut(&str, &str, bool, bool),
) {
    for_each_word(text, |w| {
        word(s, w, mode, &mut f);
    });
}

/// The words of `text`: maximal runs of alphanumeric characters.
///
/// One pass over the bytes: ASCII letters and digits, and every byte of a
/// non-ASCII character, extend a run; a run holding non-ASCII characters
/// is split again by `char::is_alphanumeric` (ASCII punctuation ends a run
/// either way, so the result is the same as splitting the text by chars).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    loop {
        while i < n && !WORD_BYTE[usize::from(bytes[i])] {
            i += 1;
        }
        if i == n {
            return;
        }
        let start = i;
        let mut high = 0u8;
        while i < n && WORD_BYTE[usize::from(bytes[i])] {
            high |= bytes[i];
            i += 1;
        }
        run(&text[start..i], high < 0x80, &mut f);
    }
}

/// [`for_each_word`], with the text between each word and the one before
/// it (for the first, the text before it).
pub(crate) fn for_each_word_with_gap<'t>(text: &'t str, mut f: impl FnMut(&'t str, &'t str)) {
    let mut last_end = 0usize;
    for_each_word(text, |w| {
        let start = w.as_ptr() as usize - text.as_ptr() as usize;
        f(&text[start..start + w.len()], &text[last_end..start]);
        last_end = start + w.len();
    });
}

fn run(run: &str, ascii: bool, f: &mut impl FnMut(&str)) {
    if ascii {
        f(run);
    } else {
        for w in run.split(|c: char| !c.is_alphanumeric()) {
            if !w.is_empty() {
                f(w);
            }
        }
    }
}

/// Bytes that may belong to a word: ASCII alphanumerics and any byte of a
/// multi-byte UTF-8 character.
const WORD_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric() || b >= 0x80;
        b += 1;
    }
    t
};

/// Tokenize one word (a run of alphanumeric characters) in `Both` mode:
/// the joined form first when it is a short compound, then its parts.
/// Returns whether it is such a compound; the other modes are filters over
/// this sequence (`Parts`: no joined form; `Joined`: a compound's joined
/// form only), so callers may cache a word's terms once for every mode.
pub(crate) fn word_terms(
    s: &mut Scratch,
    w: &str,
    mut f: impl FnMut(&str, &str, bool, bool),
) -> bool {
    word(s, w, Compounds::Both, &mut f)
}

fn word(
    s: &mut Scratch,
    word: &str,
    mode: Compounds,
    f: &mut impl FnMut(&str, &str, bool, bool),
) -> bool {
    split_case(word, &mut s.cuts);
    let parts = s.cuts.len() + 1;
    let compound = (2..=3).contains(&parts);
    if mode != Compounds::Parts && compound {
        lowercase_into(&mut s.lower, acronym_singular(word));
        emit_stemmed(s, f, true, false);
        if mode == Compounds::Joined {
            return true;
        }
    }
    for p in 0..parts {
        let start = if p == 0 { 0 } else { s.cuts[p - 1] };
        let end = s.cuts.get(p).copied().unwrap_or(word.len());
        lowercase_into(&mut s.lower, acronym_singular(&word[start..end]));
        emit_stemmed(s, f, false, true);
    }
    compound
}

/// Stem `s.lower` and emit it (expanded, for parts).
fn emit_stemmed(
    s: &mut Scratch,
    f: &mut impl FnMut(&str, &str, bool, bool),
    joined: bool,
    expand_abbreviations: bool,
) {
    let surface_stop = is_stopword(&s.lower);
    let (len, y) = stem_parts(&s.lower);
    let term: &str = if y {
        s.stemmed.clear();
        s.stemmed.push_str(&s.lower[..len]);
        s.stemmed.push('y');
        &s.stemmed
    } else {
        &s.lower[..len]
    };
    let stop = |t: &str| surface_stop || (t.len() != s.lower.len() && is_stopword(t));
    match expand(term).filter(|_| expand_abbreviations) {
        Some(parts) => {
            for p in parts {
                f(p, &s.lower, joined, surface_stop || is_stopword(p));
            }
        }
        None => f(term, &s.lower, joined, stop(term)),
    }
}

fn lowercase_into(out: &mut String, text: &str) {
    out.clear();
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        out.extend(text.chars().flat_map(char::to_lowercase));
    }
}

/// A configured search word as the index and the ranker see it: its one
/// normalized term (`"Closing"` → `clos`), or `None` when the text is
/// empty, more than one term, or a function word.
pub fn search_term(word: &str) -> Option<String> {
    let mut terms = Vec::new();
    let mut function_word = false;
    for_each_term(word, |t, surface| {
        function_word |= is_stopword(surface) || is_stopword(t);
        terms.push(t.to_owned());
    });
    match terms.as_slice() {
        [one] if !function_word => Some(one.clone()),
        _ => None,
    }
}

/// Split text into normalized terms (convenience over [`for_each_term`]).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t, _| out.push(t.to_owned()));
    out
}

/// One word of a query: its terms, and for a short case-split compound
/// (`GitHub`) its joined form, which the ranker prefers when some catalog
/// knows it.
#[derive(Debug, Clone)]
pub(crate) struct QueryWord {
    pub parts: Vec<(String, String)>,
    pub joined: Option<(String, String)>,
    /// Something other than white space comes between this word and the
    /// one before ("front, page").
    pub after_break: bool,
}

pub(crate) fn query_words(text: &str) -> Vec<QueryWord> {
    let mut out = Vec::new();
    let mut s = Scratch::default();
    for_each_word_with_gap(text, |w, gap| {
        let after_break = gap.chars().any(|c| !c.is_whitespace());
        let mut q = QueryWord {
            parts: Vec::new(),
            joined: None,
            after_break,
        };
        word(&mut s, w, Compounds::Both, &mut |t, surface, joined, _| {
            let pair = (t.to_owned(), surface.to_owned());
            if joined {
                q.joined = Some(pair);
            } else {
                q.parts.push(pair);
            }
        });
        out.push(q);
    });
    out
}

/// The kind of a normalized query term, judged on its surface word so that
/// stemming cannot turn a stopword into a content word or back.
pub fn term_kind(term: &str, surface: &str) -> TermKind {
    if is_stopword(surface) || is_stopword(term) {
        TermKind::Stop
    } else if term.bytes().all(|b| b.is_ascii_digit()) {
        TermKind::Soft
    } else {
        TermKind::Scored
    }
}

/// Membership in [`STOPWORDS`]: a word of at most 16 bytes packed into a
/// `u128` and looked up in a table built at compile time (one or two
/// probes, no string comparisons).
pub(crate) fn is_stopword(word: &str) -> bool {
    let b = word.as_bytes();
    if b.is_empty() || b.len() > MAX_STOPWORD_LEN {
        return false;
    }
    let mut key = 0u128;
    for (i, &c) in b.iter().enumerate() {
        key |= u128::from(c) << (8 * i);
    }
    let mut slot = stop_slot(key);
    loop {
        match STOP_TABLE[slot] {
            0 => return false,
            k if k == key => return true,
            _ => slot = (slot + 1) % STOP_TABLE.len(),
        }
    }
}

/// The longest stopword (at most 16 bytes, the packed key's size).
const MAX_STOPWORD_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < STOPWORDS.len() {
        if STOPWORDS[i].len() > max {
            max = STOPWORDS[i].len();
        }
        i += 1;
    }
    assert!(max <= 16);
    max
};

const fn pack(word: &str) -> u128 {
    let b = word.as_bytes();
    let mut key = 0u128;
    let mut i = 0;
    while i < b.len() {
        key |= (b[i] as u128) << (8 * i);
        i += 1;
    }
    key
}

const fn stop_slot(key: u128) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64);
    (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - STOP_BITS)) as usize
}

const STOP_BITS: u32 = 10;

/// [`STOPWORDS`] packed, by [`stop_slot`], linear probing; `0` is free.
const STOP_TABLE: [u128; 1 << STOP_BITS] = {
    let mut table = [0u128; 1 << STOP_BITS];
    let mut i = 0;
    while i < STOPWORDS.len() {
        let key = pack(STOPWORDS[i]);
        let mut slot = stop_slot(key);
        while table[slot] != 0 {
            slot = (slot + 1) % table.len();
        }
        table[slot] = key;
        i += 1;
    }
    table
};

/// The words of a name as written, lowercased, split at punctuation and
/// case changes (`HassTurnOff` → `hass`, `turn`, `off`).
pub(crate) fn name_words(name: &str) -> Vec<String> {
    let mut words = NameWords::default();
    words.read(name);
    words.iter().map(str::to_owned).collect()
}

/// [`name_words`] into buffers kept from one name to the next.
#[derive(Debug, Default)]
pub(crate) struct NameWords {
    text: String,
    ranges: Vec<(usize, usize)>,
    cuts: Vec<usize>,
}

impl NameWords {
    /// Read `name`'s words, replacing the last name's.
    pub(crate) fn read(&mut self, name: &str) {
        let NameWords { text, ranges, cuts } = self;
        text.clear();
        ranges.clear();
        for_each_word(name, |w| {
            split_case(w, cuts);
            let mut start = 0;
            for &c in cuts.iter().chain(std::iter::once(&w.len())) {
                let from = text.len();
                text.extend(w[start..c].chars().flat_map(char::to_lowercase));
                ranges.push((from, text.len()));
                start = c;
            }
        });
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.ranges.iter().map(|&(a, b)| &self.text[a..b])
    }
}

/// The first of [`name_words`], as written (not lowercased), without
/// splitting the rest.
pub(crate) fn first_name_word(name: &str) -> Option<&str> {
    let mut first = None;
    let mut cuts = Vec::new();
    for_each_word_with_gap(name, |w, _| {
        if first.is_none() {
            split_case(w, &mut cuts);
            first = Some(&w[..cuts.first().copied().unwrap_or(w.len())]);
        }
    });
    first
}

/// The case-split cut points of `word` (byte offsets where a new part
/// starts): `getHTTPResponse` → `get`, `HTTP`, `Response`; `listPRs` →
/// `list`, `PRs`; `getV2Users` → `get`, `V2`, `Users`.
fn split_case(word: &str, cuts: &mut Vec<usize>) {
    cuts.clear();
    if word.is_ascii() {
        let b = word.as_bytes();
        if !b.iter().skip(1).any(u8::is_ascii_uppercase) {
            return;
        }
        for i in 1..b.len() {
            let (prev, c) = (b[i - 1], b[i]);
            if !c.is_ascii_uppercase() {
                continue;
            }
            let lower_to_upper = prev.is_ascii_lowercase() || prev.is_ascii_digit();
            // `HTTPServer`: cut before the last capital of a run that starts
            // a lowercase word, except a plural `s` closing an acronym (`PRs`).
            let acronym_end = prev.is_ascii_uppercase()
                && b.get(i + 1).is_some_and(u8::is_ascii_lowercase)
                && !(b[i + 1] == b's' && b.get(i + 2).is_none_or(|n| !n.is_ascii_lowercase()));
            if lower_to_upper || acronym_end {
                cuts.push(i);
            }
        }
        return;
    }
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    for i in 1..chars.len() {
        let (idx, c) = chars[i];
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|&(_, n)| n);
        let lower_to_upper = (prev.is_lowercase() || prev.is_ascii_digit()) && c.is_uppercase();
        let acronym_end = prev.is_uppercase()
            && c.is_uppercase()
            && next.is_some_and(char::is_lowercase)
            && !(next == Some('s') && chars.get(i + 2).is_none_or(|&(_, n)| !n.is_lowercase()));
        if lower_to_upper || acronym_end {
            cuts.push(idx);
        }
    }
}

/// `PRs` → `PR`, `IDs` → `ID`: an acronym's plural is marked by a lowercase
/// `s` that ordinary stemming would not see on a three-letter word.
fn acronym_singular(part: &str) -> &str {
    match part.strip_suffix('s') {
        Some(base) if base.len() >= 2 && base.bytes().all(|b| b.is_ascii_uppercase()) => base,
        _ => part,
    }
}

/// Narrow inflection folding: plurals, `-ies`, `-ed`, `-ing` and a final
/// `e`. Both sides of a match go through it, so the result only has to be
/// consistent, not a dictionary form: `create`, `creates`, `created` and
/// `creating` all become `creat`.
pub fn stem(word: &str) -> Cow<'_, str> {
    match stem_parts(word) {
        (len, true) => Cow::Owned(format!("{}y", &word[..len])),
        (len, false) if len == word.len() => Cow::Borrowed(word),
        (len, false) => Cow::Owned(word[..len].to_owned()),
    }
}

/// The stem of `word` as a prefix length, plus whether a `y` follows it
/// (`-ies` → `-y`, the one rule that does not just cut).
fn stem_parts(word: &str) -> (usize, bool) {
    let n = word.len();
    if !word.is_ascii() || n <= 3 || word.bytes().any(|b| b.is_ascii_digit()) {
        return (n, false);
    }
    let mut w: &str = word;
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        return (base.len(), true);
    }
    if let Some(base) = w.strip_suffix("es").filter(|b| {
        b.ends_with("ss")
            || b.ends_with("sh")
            || b.ends_with("ch")
            || b.ends_with('x')
            || b.ends_with('z')
    }) {
        w = base;
    } else if w.ends_with('s') && !(w.ends_with("ss") || w.ends_with("us") || w.ends_with("is")) {
        w = &w[..w.len() - 1];
    } else if let Some(base) = w
        .strip_suffix("ed")
        .filter(|b| b.len() >= 3 && !b.ends_with('e'))
    {
        // `committed` → `commit`, `mapped` → `map`; `called` keeps its `ll`.
        return (undouble(base), false);
    }
    if let Some(base) = w
        .strip_suffix("ing")
        .filter(|b| b.len() >= 3 && b.bytes().any(|c| b"aeiouy".contains(&c)))
    {
        // `adding` → `add`, `logging` → `log`; `string` and `thing` stay.
        return (undouble(base), false);
    }
    if w.len() >= 4
        && let Some(base) = w.strip_suffix('e')
    {
        w = base;
    }
    (w.len(), false)
}

/// The length of `base` without a doubled final consonant (`committ`).
fn undouble(base: &str) -> usize {
    let b = base.as_bytes();
    let doubled = b.len() >= 4
        && b[b.len() - 1] == b[b.len() - 2]
        && !matches!(b[b.len() - 1], b'l' | b's' | b'z' | b'f');
    if doubled { b.len() - 1 } else { b.len() }
}

/// Abbreviations folded to their spelled-out terms (after stemming).
fn expand(term: &str) -> Option<&'static [&'static str]> {
    Some(match term {
        "repo" => &["repository"],
        "pr" => &["pull", "request"],
        "db" => &["databas"],
        "dir" => &["directory"],
        "msg" => &["messag"],
        "dm" => &["direct", "messag"],
        "k8s" => &["kubernet"],
        "env" => &["environment"],
        "info" => &["information"],
        "configuration" => &["config"],
        "stat" => &["statistic"],
        _ => return None,
    })
}

/// Words that name the same operation or object, as groups of surface
/// words. A tool whose *name* carries a group's **member** is also found by
/// the group's other members and its **aliases**, at description weight
/// ([`name_synonyms`]): `remove an asana task` finds `asana_delete_task`,
/// `purge the index` finds `delete_index`, `skip this song` finds
/// `skipToNextTrack`. Aliases only go one way: a query word that means the
/// member, but names something else often enough that a tool named with it
/// must not be found by the member (`make_call` is not found by "create").
/// Words whose second sense is common in tool names or queries are in no
/// group: `open`, `pull`, `close`, `set`, `change`, `new`, `trigger` (a
/// noun in `list_triggers`), `trash` (a folder), `wipe` (stems to `wip`).
/// `drop` is a member in its database sense (`drop_collection`). Nor are
/// the read verbs (`get`, `fetch`, `read`, `view`…): nearly every catalog
/// names half its tools `get_…`, and a query may already leave them out of
/// a name. A synonym's posting does not count toward the word's document
/// frequency. Phrasal verbs ("get rid of", "tick off") are folded on the
/// query side ([`query_phrase`]).
struct SynonymGroup {
    members: &'static [&'static str],
    aliases: &'static [&'static str],
    /// Nouns: a member in a description is found by the others too (verbs
    /// are not: a description mentions many operations besides its own).
    prose: bool,
}

/// A group of operation words (they apply to tool names only).
const fn verbs(members: &'static [&'static str], aliases: &'static [&'static str]) -> SynonymGroup {
    SynonymGroup {
        members,
        aliases,
        prose: false,
    }
}

/// A group of object words (they apply to descriptions too).
const fn nouns(members: &'static [&'static str], aliases: &'static [&'static str]) -> SynonymGroup {
    SynonymGroup {
        members,
        aliases,
        prose: true,
    }
}

const SYNONYM_GROUPS: &[SynonymGroup] = &[
    verbs(
        &["delete", "remove", "erase", "destroy", "drop"],
        &["purge", "discard"],
    ),
    verbs(&["create", "add", "insert"], &["make"]),
    verbs(
        &["update", "edit", "modify"],
        &["amend", "alter", "tweak", "adjust", "bump"],
    ),
    verbs(&["search", "find", "lookup"], &["locate"]),
    verbs(&["send", "post"], &["announce", "broadcast"]),
    verbs(&["run", "execute", "invoke", "trigger"], &["launch"]),
    verbs(&["complete", "finish"], &[]),
    verbs(&["cancel", "abort"], &[]),
    verbs(&["restart", "reboot"], &[]),
    verbs(&["enable", "activate"], &[]),
    verbs(&["disable", "deactivate"], &[]),
    verbs(&["copy", "duplicate"], &[]),
    verbs(&["deploy"], &["redeploy"]),
    nouns(&["folder", "directory"], &[]),
    nouns(&["email", "mail"], &[]),
    nouns(&["track"], &["song"]),
    nouns(&["image"], &["picture", "photo", "img"]),
    nouns(&["task"], &["todo", "reminder"]),
    nouns(&["issue"], &["bug"]),
    nouns(&["sms"], &["text"]),
    // Short forms that mean the long one. (`repo`, `db`, `env`, `msg`,
    // `stat` and `dir` are folded into theirs before this: `expand`.)
    // `app` goes one way: `list_apps` (Heroku, Vercel) lists no job
    // applications.
    nouns(&["application"], &["app", "applicant"]),
    nouns(&["document", "doc"], &[]),
    nouns(&["organization", "org"], &[]),
    nouns(&["certificate", "cert"], &[]),
    nouns(&["parameter", "param"], &[]),
    nouns(&["variable", "var"], &[]),
    nouns(&["production", "prod"], &[]),
    nouns(&["transaction", "txn"], &[]),
    nouns(&["account", "acct"], &[]),
    // Everyday words for what a service names otherwise.
    nouns(&["candidate"], &["applicant"]),
    nouns(&["customer"], &["client"]),
    nouns(
        &["event"],
        &["meetup", "webinar", "workshop", "appointment"],
    ),
    nouns(&["deal", "opportunity"], &[]),
    nouns(&["lead"], &["prospect"]),
    nouns(&["inventory"], &["stock"]),
    nouns(&["discount", "coupon"], &["promo"]),
    nouns(&["instance"], &["vm"]),
    nouns(&["attendee", "participant", "registrant"], &["guest"]),
    nouns(&["meeting"], &["standup"]),
    nouns(&["secret"], &["password", "credential"]),
    nouns(&["place"], &["restaurant", "venue", "spot"]),
    nouns(&["alert"], &["warning"]),
    nouns(&["comment"], &["feedback"]),
    nouns(&["presentation"], &["deck", "slideshow"]),
    nouns(&["temperature"], &["thermostat"]),
    nouns(&["direction"], &["route"]),
    nouns(&["time"], &["hour", "timesheet"]),
    nouns(&["vehicle"], &["truck", "van", "car"]),
    nouns(&["employee"], &["staff", "staffer"]),
    nouns(&["worker"], &["staff", "staffer"]),
];

/// The words a name term is also found by: the other members of its group
/// and the group's aliases, stemmed like index terms (`delet` → `remov`,
/// `eras`, `destroy`, `drop`, …); empty for other terms, aliases included.
pub(crate) fn name_synonyms(term: &str) -> &'static [String] {
    synonym_table()
        .get(term)
        .map_or(&[], |(words, _)| words.as_slice())
}

/// [`name_synonyms`] for a word of a description or title: only nouns
/// (`track` → `song`) have them there.
pub(crate) fn prose_synonyms(term: &str) -> &'static [String] {
    match synonym_table().get(term) {
        Some((words, true)) => words.as_slice(),
        _ => &[],
    }
}

type SynonymTable = std::collections::HashMap<String, (Vec<String>, bool)>;

fn synonym_table() -> &'static SynonymTable {
    static TABLE: std::sync::OnceLock<SynonymTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = SynonymTable::new();
        for group in SYNONYM_GROUPS {
            let stems: Vec<String> = group.members.iter().map(|w| stem(w).into_owned()).collect();
            let aliases = group.aliases.iter().map(|w| stem(w).into_owned());
            for (i, s) in stems.iter().enumerate() {
                let others = stems
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, o)| o.clone())
                    .chain(aliases.clone())
                    .collect();
                let before = table.insert(s.clone(), (others, group.prose));
                debug_assert!(before.is_none(), "{s} is in two synonym groups");
            }
        }
        table
    })
}

/// Phrasal verbs and set phrases a query uses for one operation, folded to
/// that operation's word before ranking (lowercased surface words, in
/// order). The phrase's own words are mostly function words ("up", "of",
/// "off") or too vague alone ("get", "take"), so without folding the query
/// loses its verb.
const QUERY_PHRASES: &[(&[&str], &str)] = &[
    (&["get", "rid", "of"], "delete"),
    (&["wipe", "out"], "delete"),
    (&["throw", "away"], "delete"),
    (&["take", "down"], "delete"),
    (&["tick", "off"], "complete"),
    (&["check", "off"], "complete"),
    (&["cross", "off"], "complete"),
    (&["mark", "as", "done"], "complete"),
    (&["mark", "done"], "complete"),
    (&["mark", "as", "complete"], "complete"),
    (&["mark", "as", "completed"], "complete"),
    (&["mark", "complete"], "complete"),
    (&["mark", "completed"], "complete"),
    (&["mark", "as", "finished"], "complete"),
    (&["set", "up"], "create"),
    (&["spin", "up"], "create"),
    (&["open", "a"], "create"),
    (&["open", "an"], "create"),
    (&["open", "new"], "create"),
    (&["file", "a"], "create"),
    (&["file", "an"], "create"),
    (&["kick", "off"], "run"),
    (&["fire", "off"], "send"),
    (&["turn", "on"], "enable"),
    (&["switch", "on"], "enable"),
    (&["turn", "off"], "disable"),
    (&["switch", "off"], "disable"),
    (&["shut", "down"], "stop"),
    (&["roll", "back"], "rollback"),
    (&["pull", "up"], "get"),
    (&["bring", "up"], "get"),
    (&["dig", "up"], "search"),
    (&["tear", "down"], "delete"),
    (&["clean", "up"], "delete"),
    (&["spin", "down"], "stop"),
    (&["put", "back"], "restore"),
    (&["jot", "down"], "create"),
    (&["note", "down"], "create"),
    (&["sign", "up"], "register"),
    (&["sign", "off", "on"], "approve"),
    (&["call", "off"], "cancel"),
    (&["opt", "out"], "unsubscribe"),
    (&["kick", "out"], "remove"),
    (&["reach", "out", "to"], "send"),
    (&["back", "up"], "backup"),
    (&["money", "back"], "refund"),
];

/// The phrases of [`QUERY_PHRASES`] that fold to `to` ("turn off" and
/// "switch off" both mean `disable`).
pub(crate) fn phrases_for(to: &str) -> impl Iterator<Item = &'static [&'static str]> + '_ {
    QUERY_PHRASES
        .iter()
        .filter(move |&&(_, t)| t == to)
        .map(|&(phrase, _)| phrase)
}

/// The phrase of [`QUERY_PHRASES`] that starts `words` (lowercased single
/// words of the query), as its length and the word it folds to.
pub(crate) fn query_phrase(words: &[Option<&str>]) -> Option<(usize, &'static str)> {
    phrase_starting(words.len(), |i| words[i])
}

/// The phrase of [`QUERY_PHRASES`] that opens `words` (lowercased), as the
/// word it folds to.
pub(crate) fn phrase_opening(words: &[&str]) -> Option<&'static str> {
    phrase_starting(words.len(), |i| Some(words[i])).map(|(_, to)| to)
}

/// The phrase of [`QUERY_PHRASES`] that the `len` words `word(0)`, … start
/// with (a word that is `None` matches none).
fn phrase_starting<'w>(
    len: usize,
    word: impl Fn(usize) -> Option<&'w str>,
) -> Option<(usize, &'static str)> {
    QUERY_PHRASES.iter().find_map(|&(phrase, to)| {
        (len >= phrase.len()
            && phrase
                .iter()
                .enumerate()
                .all(|(i, p)| word(i).is_some_and(|w| w == *p)))
        .then_some((phrase.len(), to))
    })
}

/// Words of people in general, of conversation and of vague time
/// ("everybody", "forgets", "quickly", "soon"): a request's context, not
/// what it asks for. Where no catalog searched knows one, it is a function
/// word for that search ([`super::rank`]); where one does, it is scored as
/// any word. Sorted.
const CONTEXT_WORDS: &[&str] = &[
    "ago",
    "anybody",
    "anymore",
    "apparently",
    "appreciate",
    "appreciated",
    "asap",
    "basically",
    "bother",
    "definitely",
    "earlier",
    "everybody",
    "folks",
    "forget",
    "forgets",
    "forgetting",
    "forgot",
    "forgotten",
    "guess",
    "guys",
    "happen",
    "happened",
    "happens",
    "honestly",
    "hope",
    "hoped",
    "hoping",
    "lately",
    "later",
    "literally",
    "meanwhile",
    "mind",
    "nobody",
    "probably",
    "quick",
    "quickly",
    "recently",
    "remember",
    "remembered",
    "remembers",
    "seem",
    "seemed",
    "seems",
    "somebody",
    "soon",
    "sorry",
    "think",
    "thinking",
    "thought",
    "wish",
    "wonder",
    "wondered",
    "wondering",
    "worried",
    "worry",
];

/// Days and parts of the calendar ("tomorrow", "friday", "week"): context
/// as [`CONTEXT_WORDS`] are when a preposition or a determiner of time
/// comes before ("coming in tomorrow", "for thursday", "next week"); alone
/// they may be what the query is about ("the price of bitcoin today").
/// Sorted.
const TIME_WORDS: &[&str] = &[
    "afternoon",
    "afternoons",
    "evening",
    "evenings",
    "friday",
    "fridays",
    "monday",
    "mondays",
    "month",
    "months",
    "morning",
    "mornings",
    "night",
    "nights",
    "saturday",
    "saturdays",
    "sunday",
    "sundays",
    "thursday",
    "thursdays",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "tuesdays",
    "wednesday",
    "wednesdays",
    "week",
    "weekday",
    "weekdays",
    "weekend",
    "weekends",
    "weeks",
    "yesterday",
];

/// The words that make a [`TIME_WORDS`] word after them an adverbial of
/// time. Sorted.
const BEFORE_TIME: &[&str] = &[
    "after", "at", "before", "by", "each", "every", "for", "from", "in", "last", "next", "on",
    "since", "this", "till", "until",
];

/// Whether `surface` (lowercased) is a word of context, given the query
/// word before it (lowercased): one of [`CONTEXT_WORDS`], or one of
/// [`TIME_WORDS`] after one of [`BEFORE_TIME`].
pub(crate) fn is_context_word(surface: &str, before: Option<&str>) -> bool {
    CONTEXT_WORDS.binary_search(&surface).is_ok()
        || (TIME_WORDS.binary_search(&surface).is_ok()
            && before.is_some_and(|b| BEFORE_TIME.binary_search(&b).is_ok()))
}

/// Conversational function words, sorted for binary search. Action words
/// (`get`, `list`, `search`, `find`, `create`…) are deliberately absent.
pub const STOPWORDS: &[&str] = &[
    "a",
    "able",
    "about",
    "actually",
    "again",
    "all",
    "already",
    "also",
    "am",
    "an",
    "and",
    "another",
    "any",
    "anything",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "been",
    "being",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "current",
    "currently",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "done",
    "each",
    "either",
    "else",
    "every",
    "everyone",
    "everything",
    "for",
    "from",
    "give",
    "go",
    "going",
    "gonna",
    "got",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "hello",
    "help",
    "her",
    "here",
    "hey",
    "hi",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "just",
    "kindly",
    "know",
    "let",
    "lets",
    "like",
    "ll",
    "look",
    "m",
    "many",
    "maybe",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "my",
    "need",
    "needs",
    "now",
    "of",
    "ok",
    "okay",
    "on",
    "one",
    "or",
    "other",
    "our",
    "ours",
    "own",
    "please",
    "possible",
    "re",
    "really",
    "right",
    "s",
    "same",
    "see",
    "shall",
    "she",
    "should",
    "shouldn",
    "show",
    "so",
    "some",
    "someone",
    "something",
    "still",
    "such",
    "sure",
    "t",
    "tell",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "to",
    "tool",
    "tools",
    "try",
    "up",
    "us",
    "use",
    "using",
    "ve",
    "very",
    "via",
    "wanna",
    "want",
    "wants",
    "was",
    "wasn",
    "way",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "whether",
    "which",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "won",
    "would",
    "wouldn",
    "yet",
    "you",
    "your",
    "yours",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(q: &str) -> Vec<(String, TermKind)> {
        let mut out = Vec::new();
        for_each_term(q, |t, s| out.push((t.to_owned(), term_kind(t, s))));
        out
    }

    #[test]
    fn a_names_words_are_split_at_punctuation_and_case_as_written() {
        assert_eq!(name_words("HassTurnOff"), ["hass", "turn", "off"]);
        assert_eq!(
            name_words("wms_transfer_stock"),
            ["wms", "transfer", "stock"]
        );
        assert_eq!(
            name_words("List-All-Organizations"),
            ["list", "all", "organizations"]
        );
        assert_eq!(name_words("users.list"), ["users", "list"]);
        assert_eq!(first_name_word("getHTTPResponse"), Some("get"));
        assert_eq!(first_name_word("PRs_open"), Some("PRs"));
        assert_eq!(first_name_word(""), None);
    }

    #[test]
    fn phrasal_verbs_fold_only_as_whole_phrases() {
        let words = |q: &str| -> Vec<String> { q.split(' ').map(str::to_owned).collect() };
        let fold = |q: &str| {
            let w = words(q);
            let simple: Vec<Option<&str>> = w.iter().map(|s| Some(s.as_str())).collect();
            query_phrase(&simple)
        };
        assert_eq!(fold("get rid of the card"), Some((3, "delete")));
        assert_eq!(fold("money back for the label"), Some((2, "refund")));
        assert_eq!(fold("tick off it"), Some((2, "complete")));
        assert_eq!(fold("open a ticket"), Some((2, "create")));
        assert_eq!(fold("file an issue"), Some((2, "create")));
        assert_eq!(
            fold("open the file"),
            None,
            "reading a file is not creating one"
        );
        assert_eq!(fold("get the card"), None);
        assert_eq!(fold("get rid"), None, "a phrase needs all its words");
        assert_eq!(fold("sign off on it"), Some((3, "approve")));
        assert_eq!(fold("sign up for the webinar"), Some((2, "register")));
        assert_eq!(fold("tear down the stack"), Some((2, "delete")));
        assert_eq!(fold("put back the file"), Some((2, "restore")));
        assert_eq!(fold("sign the contract"), None);
        assert_eq!(query_phrase(&[Some("tick"), None]), None);
    }

    #[test]
    fn only_nouns_have_synonyms_in_prose() {
        assert_eq!(prose_synonyms("track"), ["song"]);
        assert_eq!(prose_synonyms("folder"), ["directory"]);
        assert!(prose_synonyms("delet").is_empty());
        assert!(prose_synonyms("song").is_empty(), "aliases go one way");
        assert_eq!(name_synonyms("track"), ["song"]);
        // A verb in a name is found by its group ("run the sync" finds
        // `triggerSync`), never in prose.
        assert!(name_synonyms("trigger").contains(&"run".to_owned()));
        assert!(prose_synonyms("trigger").is_empty());
    }

    #[test]
    fn short_forms_go_both_ways_and_everyday_words_one_way() {
        // A short form means exactly the long one, in names and prose.
        assert_eq!(name_synonyms("document"), ["doc"]);
        assert_eq!(prose_synonyms("doc"), ["document"]);
        // `app` finds applications, but a tool named `list_apps` is no
        // answer to "applications" or "applicants".
        assert_eq!(name_synonyms("application"), ["app", "applicant"]);
        assert!(name_synonyms("app").is_empty());
        // An everyday word finds the service's word, not the reverse: a
        // tool named `list_clients` (OAuth clients) is no customer list.
        assert_eq!(prose_synonyms("customer"), ["client"]);
        assert!(name_synonyms("client").is_empty());
        assert!(name_synonyms("applicant").is_empty());
        assert!(prose_synonyms("event").contains(&"meetup".to_owned()));
        assert_eq!(name_synonyms("secret"), ["password", "credential"]);
        // "trucks" finds vehicles, "staff" employees and workers; a
        // `list_cars` is no answer to "vehicles".
        let prose = |w: &str| prose_synonyms(&stem(w));
        assert!(prose("vehicle").contains(&stem("truck").into_owned()));
        assert!(name_synonyms(&stem("car")).is_empty());
        assert!(prose("worker").contains(&stem("staff").into_owned()));
        assert!(prose("employee").contains(&stem("staff").into_owned()));
    }

    #[test]
    fn every_synonym_is_a_term_the_tokenizer_makes() {
        // A word that the tokenizer folds into another (`repo` into
        // `repository`) or splits would never be looked up: its group
        // would do nothing.
        for group in SYNONYM_GROUPS {
            for w in group.members.iter().chain(group.aliases) {
                assert_eq!(tokenize(w), [stem(w).into_owned()], "{w}");
            }
        }
    }

    #[test]
    fn stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        for list in [CONTEXT_WORDS, TIME_WORDS, BEFORE_TIME] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }

    #[test]
    fn splits_camel_snake_kebab_and_acronyms() {
        assert_eq!(tokenize("getHTTPResponse"), vec!["get", "http", "respons"]);
        assert_eq!(tokenize("list_open-issues"), vec!["list", "open", "issu"]);
        assert_eq!(
            tokenize("List-All-Organizations"),
            ["list", "all", "organization"]
        );
        assert_eq!(
            tokenize("searchJiraIssuesUsingJql"),
            ["search", "jira", "issu", "using", "jql"]
        );
        assert_eq!(tokenize("XMLHttpRequest"), ["xml", "http", "request"]);
        assert_eq!(tokenize("parseJSON"), ["pars", "json"]);
    }

    #[test]
    fn index_terms_add_the_joined_form_of_short_compounds() {
        let mut got = Vec::new();
        for_each_index_term("GitHub repos", |t, _| got.push(t.to_owned()));
        assert_eq!(got, ["github", "git", "hub", "repository"]);
        let mut got = Vec::new();
        for_each_index_term("searchJiraIssuesUsingJql", |t, _| got.push(t.to_owned()));
        assert_eq!(got.len(), 5, "long identifiers only yield their parts");
        let mut got = Vec::new();
        for_each_prose_term("a GitHub repo", |t, _| got.push(t.to_owned()));
        assert_eq!(got, ["a", "github", "repository"]);
    }

    #[test]
    fn letters_and_digits_stay_together() {
        assert_eq!(tokenize("r2_buckets_list"), ["r2", "bucket", "list"]);
        assert_eq!(tokenize("list_objects_v2"), ["list", "object", "v2"]);
        assert_eq!(tokenize("getV2Users"), ["get", "v2", "user"]);
        assert_eq!(tokenize("S3Bucket"), ["s3", "bucket"]);
        assert_eq!(tokenize("issue 177"), ["issu", "177"]);
    }

    #[test]
    fn acronym_plurals_and_abbreviations_expand() {
        assert_eq!(tokenize("open PRs"), ["open", "pull", "request"]);
        assert_eq!(tokenize("pull requests"), ["pull", "request"]);
        assert_eq!(tokenize("our repo"), ["our", "repository"]);
        assert_eq!(tokenize("repositories"), ["repository"]);
        assert_eq!(tokenize("DBs"), tokenize("databases"));
        assert_eq!(tokenize("k8s"), tokenize("Kubernetes"));
        assert_eq!(tokenize("listIDs"), ["list", "id"]);
    }

    #[test]
    fn inflections_fold_narrowly_and_consistently() {
        for (a, b) in [
            ("issue", "issues"),
            ("entry", "entries"),
            ("branch", "branches"),
            ("create", "created"),
            ("create", "creates"),
            ("stage", "staged"),
            ("commit", "committed"),
            ("move", "moved"),
            ("deploy", "deployed"),
            ("index", "indexes"),
            ("query", "queries"),
            ("policy", "policies"),
            ("file", "files"),
            ("add", "adding"),
            ("log", "logging"),
            ("stage", "staging"),
            ("share", "sharing"),
            ("alert", "alerting"),
            ("create", "creating"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} ~ {b}");
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("analysis"), "analysis");
        assert_eq!(stem("address"), "address");
        assert_eq!(stem("called"), "call");
        assert_eq!(stem("need"), "need");
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("string"), "string");
        assert_eq!(stem("thing"), "thing");
    }

    #[test]
    fn no_substring_matches() {
        assert_ne!(stem("is"), stem("issue"));
        assert_ne!(stem("log"), stem("login"));
        assert_ne!(stem("pod"), stem("podcast"));
        assert_ne!(stem("list"), stem("listen"));
    }

    #[test]
    fn stopwords_and_numbers_are_classified_on_the_surface_word() {
        let k = kinds("can you show me issue 177 in our repos please");
        let scored: Vec<&str> = k
            .iter()
            .filter(|(_, k)| *k == TermKind::Scored)
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(scored, ["issu", "repository"]);
        assert!(k.iter().any(|(t, k)| t == "177" && *k == TermKind::Soft));
        assert!(
            kinds("how do I do it")
                .iter()
                .all(|(_, k)| *k == TermKind::Stop)
        );
        // "haven't" splits into two stopwords.
        assert!(kinds("haven't").iter().all(|(_, k)| *k == TermKind::Stop));
    }
}
