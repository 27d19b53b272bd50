//! The first stage: the query's words as a term sequence over the catalogs
//! searched. Where a catalog decides: a phrasal verb folds to its verb
//! unless some tool's name carries the phrase's words (`turn_on_light`);
//! two words one of which no catalog knows are one term where a catalog
//! knows them joined ("front page" for `get_frontpage_posts`); a compound
//! is its joined form where a catalog knows it (`GitHub`), else its parts;
//! "where is…" asks for `location` where a catalog knows the word.

use crate::index::{CatalogIndex, F_NAME};
use crate::lexicon::Lexicon;
use crate::query::{QWord, Query};
use crate::tokenize::{TermKind, for_each_term, stem, term_kind};
use crate::vocab::{shared_find, term_hash};

/// One term of the query.
#[derive(Debug, Clone)]
pub(super) struct QTerm {
    pub text: String,
    /// The caller's word(s) it stands for, lowercased.
    pub surface: String,
    pub kind: TermKind,
    /// The term's id in the shared vocabulary (`None`: no index has it).
    pub shared: Option<u32>,
    /// Which part of a query asking for several things the term is in.
    pub part: u8,
}

impl QTerm {
    fn scored(part: u8, text: String, surface: String) -> QTerm {
        QTerm {
            part,
            kind: TermKind::Scored,
            shared: shared_find(&text, term_hash(&text)),
            surface,
            text,
        }
    }
}

/// The query's term sequence over `indexes`.
pub(super) fn bind(query: &Query, lex: &Lexicon, indexes: &[&CatalogIndex]) -> Vec<QTerm> {
    let words = &query.words;
    let simple: Vec<Option<&str>> = words.iter().map(QWord::simple).collect();
    let mut raw = Vec::new();
    let mut next = 0;
    for (i, word) in words.iter().enumerate() {
        if i < next {
            continue;
        }
        if let Some(implied) = word
            .implies
            .as_ref()
            .filter(|t| known_id(indexes, t).is_some())
        {
            let surface = simple[i].unwrap_or_default().to_owned();
            raw.push(QTerm::scored(word.part, implied.clone(), surface));
        }
        next = i + 1;
        if let Some(len) = phrase(lex, indexes, word, &simple[i..], &mut raw) {
            next = i + len;
        } else if let Some(joined) = joined_pair(lex, indexes, words, &simple, i) {
            raw.push(joined);
            next = i + 2;
        } else {
            own_terms(lex, indexes, word, &mut raw);
        }
    }
    raw
}

/// A phrasal verb starting here is one term, its verb's ("get rid of" is
/// `delete`), unless a tool's name carries the phrase's words
/// (`turn_on_light`). Returns the words it took.
fn phrase(
    lex: &Lexicon,
    indexes: &[&CatalogIndex],
    word: &QWord,
    simple: &[Option<&str>],
    raw: &mut Vec<QTerm>,
) -> Option<usize> {
    let (len, to) = word.phrase.as_ref()?;
    let words: Vec<&str> = simple[..*len].iter().flatten().copied().collect();
    if a_name_holds(lex, indexes, &words) {
        return None;
    }
    raw.push(QTerm::scored(
        word.part,
        stem(to).into_owned(),
        words.join(" "),
    ));
    Some(*len)
}

/// Two content words, one of them unknown alone, that some catalog knows
/// as one word are that word ("front page" for `get_frontpage_posts`).
/// Two known words stay two: "work item" is `wit_get_work_item`. Function
/// words, particles and punctuation never join: "check out", "log in" and
/// "back up" are verbs, and their nouns (`checkout`) would mislead.
fn joined_pair(
    lex: &Lexicon,
    indexes: &[&CatalogIndex],
    words: &[QWord],
    simple: &[Option<&str>],
    i: usize,
) -> Option<QTerm> {
    let next = words.get(i + 1).filter(|n| !n.after_break)?;
    let (a, b) = (simple[i]?, simple[i + 1]?);
    if [a, b]
        .iter()
        .any(|w| lex.is_stop(w) || lex.word(w).particle)
    {
        return None;
    }
    let (ta, tb) = (&words[i].parts[0].0, &next.parts[0].0);
    if known_id(indexes, ta).is_some() && known_id(indexes, tb).is_some() {
        return None;
    }
    // The one term the tokenizer makes of the joined word, as the index
    // made it of the name.
    let mut terms = Vec::new();
    for_each_term(lex, &format!("{a}{b}"), |t, _| terms.push(t.to_owned()));
    let [text] = <[String; 1]>::try_from(terms).ok()?;
    let id = known_id(indexes, &text)?;
    Some(QTerm {
        part: words[i].part,
        kind: TermKind::Scored,
        shared: Some(id),
        surface: format!("{a} {b}"),
        text,
    })
}

/// A word's own terms: a compound's joined form where some catalog knows
/// it, else its parts.
fn own_terms(lex: &Lexicon, indexes: &[&CatalogIndex], word: &QWord, raw: &mut Vec<QTerm>) {
    let known = word
        .joined
        .as_ref()
        .filter(|(t, _)| known_id(indexes, t).is_some());
    let terms = match known {
        Some(j) => std::slice::from_ref(j),
        None => &word.parts[..],
    };
    for (t, s) in terms {
        raw.push(QTerm {
            part: word.part,
            kind: term_kind(lex, t, s),
            shared: shared_find(t, term_hash(t)),
            text: t.clone(),
            surface: s.clone(),
        });
    }
}

/// The shared id of `term` (already normalized), if some index knows it.
pub(super) fn known_id(indexes: &[&CatalogIndex], term: &str) -> Option<u32> {
    shared_find(term, term_hash(term))
        .filter(|&id| indexes.iter().any(|ix| ix.local_term(id).is_some()))
}

/// Some tool of `indexes` carries every content word of `words` in its
/// name.
fn a_name_holds(lex: &Lexicon, indexes: &[&CatalogIndex], words: &[&str]) -> bool {
    let terms: Vec<String> = words
        .iter()
        .filter(|w| !lex.is_stop(w))
        .map(|w| stem(w).into_owned())
        .collect();
    indexes.iter().any(|ix| {
        let ids: Option<Vec<u32>> = terms.iter().map(|t| ix.term_id(t)).collect();
        let Some((first, rest)) = ids.as_deref().and_then(<[u32]>::split_first) else {
            return false;
        };
        ix.raw_postings(*first).iter().any(|&p| {
            let tool = CatalogIndex::posting_tool(p) as u32;
            CatalogIndex::posting_fields(p) & F_NAME != 0
                && rest.iter().all(|&id| ix.fields_of(id, tool) & F_NAME != 0)
        })
    })
}
