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
//! Abbreviations the lexicon expands are read as their words on both sides
//! (`repo`, `PRs`, `db`): spelling, not synonyms.
//!
//! Function words (the lexicon's `stop` role) are never scored, but they
//! stay in the raw token sequence so that an exact tool name such as
//! `list_all_organizations` is still recognized.

use std::borrow::Cow;

use crate::lexicon::Lexicon;

/// What a query token is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermKind {
    /// A content word: scored, counted for coverage.
    Scored,
    /// A number: scored when some tool carries it, never counted as missing
    /// (numbers in queries are usually argument values such as an issue id).
    Soft,
    /// A function word: ignored for scoring only.
    Stop,
}

/// Call `f` with every normalized term of `text`, in order, with the
/// lowercased surface word it came from.
pub(crate) fn for_each_term(lex: &Lexicon, text: &str, mut f: impl FnMut(&str, &str)) {
    terms(
        lex,
        &mut Scratch::default(),
        text,
        Compounds::Parts,
        |t, s, _, _| f(t, s),
    )
}

/// The terms of `text` in `mode`, for tests: names and titles index a
/// short case-split compound (`GitHub`) whole and split (`Both`), so that a
/// query typed `github` finds a name written `GitHub`; prose indexes it
/// whole only (`Joined`), or `git` would match every GitHub tool.
#[cfg(test)]
pub(crate) fn terms_in(mode: Compounds, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lex = Lexicon::builtin();
    terms(lex, &mut Scratch::default(), text, mode, |t, _, _, _| {
        out.push(t.to_owned())
    });
    out
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
pub(crate) fn terms(
    lex: &Lexicon,
    s: &mut Scratch,
    text: &str,
    mode: Compounds,
    mut f: impl FnMut(&str, &str, bool, bool),
) {
    for_each_word(text, |w| {
        word(lex, s, w, mode, &mut f);
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
    lex: &Lexicon,
    s: &mut Scratch,
    w: &str,
    mut f: impl FnMut(&str, &str, bool, bool),
) -> bool {
    word(lex, s, w, Compounds::Both, &mut f)
}

fn word(
    lex: &Lexicon,
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
        emit_stemmed(lex, s, f, true, false);
        if mode == Compounds::Joined {
            return true;
        }
    }
    for p in 0..parts {
        let start = if p == 0 { 0 } else { s.cuts[p - 1] };
        let end = s.cuts.get(p).copied().unwrap_or(word.len());
        lowercase_into(&mut s.lower, acronym_singular(&word[start..end]));
        emit_stemmed(lex, s, f, false, true);
    }
    compound
}

/// Stem `s.lower` and emit it (expanded, for parts).
fn emit_stemmed(
    lex: &Lexicon,
    s: &mut Scratch,
    f: &mut impl FnMut(&str, &str, bool, bool),
    joined: bool,
    expand_abbreviations: bool,
) {
    let surface_stop = lex.is_stop(&s.lower);
    let (len, y) = stem_parts(&s.lower);
    let term: &str = if y {
        s.stemmed.clear();
        s.stemmed.push_str(&s.lower[..len]);
        s.stemmed.push('y');
        &s.stemmed
    } else {
        &s.lower[..len]
    };
    let stop = |t: &str| surface_stop || (t.len() != s.lower.len() && lex.is_stop(t));
    match lex.expansion(term).filter(|_| expand_abbreviations) {
        Some(parts) => {
            for p in parts {
                f(p, &s.lower, joined, surface_stop || lex.is_stop(p));
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
pub(crate) fn search_term(lex: &Lexicon, word: &str) -> Option<String> {
    let mut terms = Vec::new();
    let mut function_word = false;
    for_each_term(lex, word, |t, surface| {
        function_word |= lex.is_stop(surface) || lex.is_stop(t);
        terms.push(t.to_owned());
    });
    match terms.as_slice() {
        [one] if !function_word => Some(one.clone()),
        _ => None,
    }
}

/// Split text into normalized terms.
pub(crate) fn tokenize_with(lex: &Lexicon, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(lex, text, |t, _| out.push(t.to_owned()));
    out
}

/// [`tokenize_with`] the deployment's lexicon.
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    tokenize_with(Lexicon::current(), text)
}

/// The kind of a normalized query term, judged on its surface word so that
/// stemming cannot turn a function word into a content word or back.
pub(crate) fn term_kind(lex: &Lexicon, term: &str, surface: &str) -> TermKind {
    if lex.is_stop(surface) || lex.is_stop(term) {
        TermKind::Stop
    } else if term.bytes().all(|b| b.is_ascii_digit()) {
        TermKind::Soft
    } else {
        TermKind::Scored
    }
}

/// The first word of a name, split at punctuation and case changes
/// (`HassTurnOff` → `Hass`), as written (not lowercased), without
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(q: &str) -> Vec<(String, TermKind)> {
        let mut out = Vec::new();
        let lex = Lexicon::builtin();
        for_each_term(lex, q, |t, s| {
            out.push((t.to_owned(), term_kind(lex, t, s)))
        });
        out
    }

    #[test]
    fn a_names_first_word_is_split_at_punctuation_and_case_as_written() {
        assert_eq!(first_name_word("HassTurnOff"), Some("Hass"));
        assert_eq!(first_name_word("wms_transfer_stock"), Some("wms"));
        assert_eq!(first_name_word("getHTTPResponse"), Some("get"));
        assert_eq!(first_name_word("PRs_open"), Some("PRs"));
        assert_eq!(first_name_word(""), None);
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
        assert_eq!(
            terms_in(Compounds::Both, "GitHub repos"),
            ["github", "git", "hub", "repository"]
        );
        assert_eq!(
            terms_in(Compounds::Both, "searchJiraIssuesUsingJql").len(),
            5,
            "long identifiers only yield their parts"
        );
        assert_eq!(
            terms_in(Compounds::Joined, "a GitHub repo"),
            ["a", "github", "repository"]
        );
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
