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
pub fn for_each_term(text: &str, f: impl FnMut(&str, &str)) {
    terms(text, Compounds::Parts, f)
}

/// Like [`for_each_term`], and a word split at case boundaries into two or
/// three parts also yields its joined form, so that a query typed `github`
/// finds a name written `GitHub` (and `GitHub` finds it through the parts).
pub(crate) fn for_each_index_term(text: &str, f: impl FnMut(&str, &str)) {
    terms(text, Compounds::Both, f)
}

/// For prose (descriptions): a short compound is a brand or product word
/// (`GitHub`, `PostgreSQL`), so only its joined form is indexed — its parts
/// would make `git` match every GitHub tool.
pub(crate) fn for_each_prose_term(text: &str, f: impl FnMut(&str, &str)) {
    terms(text, Compounds::Joined, f)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Compounds {
    Parts,
    Both,
    Joined,
}

fn terms(text: &str, mode: Compounds, mut f: impl FnMut(&str, &str)) {
    let mut lower = String::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let parts = split_case(word);
        let compound = (2..=3).contains(&parts.len());
        if mode != Compounds::Parts && compound {
            lower.clear();
            lower.extend(acronym_singular(word).chars().flat_map(char::to_lowercase));
            let stemmed = stem(&lower);
            f(&stemmed, &lower);
            if mode == Compounds::Joined {
                continue;
            }
        }
        for part in parts {
            let part = acronym_singular(part);
            lower.clear();
            lower.extend(part.chars().flat_map(char::to_lowercase));
            let stemmed = stem(&lower);
            match expand(&stemmed) {
                Some(parts) => {
                    for p in parts {
                        f(p, &lower);
                    }
                }
                None => f(&stemmed, &lower),
            }
        }
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
}

pub(crate) fn query_words(text: &str) -> Vec<QueryWord> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        for_each_term(word, |t, s| parts.push((t.to_owned(), s.to_owned())));
        let mut joined = None;
        if (2..=3).contains(&split_case(word).len()) {
            terms(word, Compounds::Joined, |t, s| {
                if joined.is_none() {
                    joined = Some((t.to_owned(), s.to_owned()));
                }
            });
        }
        out.push(QueryWord { parts, joined });
    }
    out
}

/// The kind of a normalized query term, judged on its surface word so that
/// stemming cannot turn a stopword into a content word or back.
pub fn term_kind(term: &str, surface: &str) -> TermKind {
    if STOPWORDS.binary_search(&surface).is_ok() || STOPWORDS.binary_search(&term).is_ok() {
        TermKind::Stop
    } else if term.bytes().all(|b| b.is_ascii_digit()) {
        TermKind::Soft
    } else {
        TermKind::Scored
    }
}

/// Whether a normalized document term is worth a posting. Stopwords never
/// score, so indexing them would only cost memory.
pub(crate) fn is_indexed(term: &str, surface: &str) -> bool {
    term_kind(term, surface) != TermKind::Stop
}

/// `getHTTPResponse` → `get`, `HTTP`, `Response`; `listPRs` → `list`, `PRs`;
/// `getV2Users` → `get`, `V2`, `Users`.
fn split_case(word: &str) -> Vec<&str> {
    let bytes: Vec<(usize, char)> = word.char_indices().collect();
    let mut cuts = Vec::new();
    for i in 1..bytes.len() {
        let (idx, c) = bytes[i];
        let prev = bytes[i - 1].1;
        let next = bytes.get(i + 1).map(|&(_, n)| n);
        let lower_to_upper = (prev.is_lowercase() || prev.is_ascii_digit()) && c.is_uppercase();
        // `HTTPServer`: cut before the last capital of a run that starts a
        // lowercase word, except a plural `s` closing an acronym (`PRs`).
        let acronym_end = prev.is_uppercase()
            && c.is_uppercase()
            && next.is_some_and(char::is_lowercase)
            && !(next == Some('s') && bytes.get(i + 2).is_none_or(|&(_, n)| !n.is_lowercase()));
        if lower_to_upper || acronym_end {
            cuts.push(idx);
        }
    }
    let mut start = 0;
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    for cut in cuts {
        pieces.push(&word[start..cut]);
        start = cut;
    }
    pieces.push(&word[start..]);
    pieces
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
    let n = word.len();
    if !word.is_ascii() || n <= 3 || word.bytes().any(|b| b.is_ascii_digit()) {
        return Cow::Borrowed(word);
    }
    let mut w: &str = word;
    let owned: String;
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        owned = format!("{base}y");
        return Cow::Owned(owned);
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
        let b = base.as_bytes();
        let doubled = b.len() >= 4
            && b[b.len() - 1] == b[b.len() - 2]
            && !matches!(b[b.len() - 1], b'l' | b's' | b'z' | b'f');
        w = if doubled {
            &base[..base.len() - 1]
        } else {
            base
        };
        return Cow::Owned(w.to_owned());
    }
    if let Some(base) = w
        .strip_suffix("ing")
        .filter(|b| b.len() >= 3 && b.bytes().any(|c| b"aeiouy".contains(&c)))
    {
        // `adding` → `add`, `logging` → `log`; `string` and `thing` stay.
        let b = base.as_bytes();
        let doubled = b.len() >= 4
            && b[b.len() - 1] == b[b.len() - 2]
            && !matches!(b[b.len() - 1], b'l' | b's' | b'z' | b'f');
        w = if doubled {
            &base[..base.len() - 1]
        } else {
            base
        };
        return Cow::Owned(w.to_owned());
    }
    if w.len() >= 4
        && let Some(base) = w.strip_suffix('e')
    {
        w = base;
    }
    if w.len() == n {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(w.to_owned())
    }
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
    fn stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
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
