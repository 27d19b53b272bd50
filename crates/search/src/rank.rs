//! Ranking a query across the indexes of the catalogs being searched.
//!
//! The model is deliberately simple and explainable:
//! - every query term gets an IDF weight computed over exactly the catalogs
//!   searched (a term no tool of them carries itself, in a name, title or
//!   description, gets half the weight of the rarest, or all of it when it
//!   is the change the query asks for or a well-known service's name);
//! - a tool earns a term's weight times the strongest field it appears in
//!   (name > title > description > connector text); matches are whole terms;
//! - tiers come first: an exact tool name (0), then *complete* matches (1) —
//!   tools carrying every scored term, or whose whole name is spelled out in
//!   the query (a word of an action verb's group may stand in for the verb:
//!   "remove" for `delete`) — then partial matches (2); within a tier,
//!   score decides (with equal evidence, the name with fewer words the
//!   query does not explain first) and catalog order breaks ties, so
//!   results are deterministic;
//! - a query that spells a tool's whole name as a run of words (two or
//!   more; articles may sit between them) names that tool: when the tool
//!   also carries every other query word, anywhere, the tools so named are
//!   the whole answer ("delete an item" is `delete_item`, not also
//!   `delete_board`; "list organizations projects" is `List-Organizations`,
//!   not every tool whose description lists organizations and projects);
//! - a result list is cut to the plausible answers: a partial page needs a
//!   best match covering at least half the query's weight (otherwise it is a
//!   clear no-match), and partial matches far below the best are dropped;
//! - a word that the catalogs knowing it know only as their connector's id
//!   restricts the answers to those connectors;
//! - a query that plainly asks to read (or to change) something has no
//!   answer in a tool that plainly does the other ([`super::operation`]).
//!
//! How it stays fast (the model above is what it computes, exactly):
//! - an exact name is looked up by the hash of the query's term sequence in
//!   each index; when one exists it is the whole answer and no other tool is
//!   looked at;
//! - otherwise evidence is accumulated term by term from the postings into a
//!   per-thread scratch array (reused across queries, reset lazily through a
//!   generation stamp, so a query touching ten tools costs ten tools, not the
//!   catalog); the same pass counts, per tool, the query words its name
//!   carries, so only tools that could have a complete name or a phrase in
//!   their name have their name read ([`score`]);
//! - complete matches go straight into a bounded top-k selection (only
//!   `offset + limit` hits are ever ordered); partial ones wait for the
//!   relevance cut, which needs the best evidence of all.

mod named;
mod score;

use std::cmp::Ordering;

use connecta_core::policy::Safety;

use super::index::{CatalogIndex, F_NAME, OPTIONAL_NAME_VERBS};
use super::operation::{
    Op, Parts, for_each_part_start, has_several_parts, is_copula, is_object_opener,
    is_operation_stem, is_operation_word, query_intent,
};
use super::services::{Mention, missing_services, service_mentions};
use super::tokenize::{
    TermKind, for_each_term, is_context_word, is_stopword, phrases_for, query_phrase, query_words,
    stem, term_kind,
};
use super::vocab::{shared_find, term_hash};

use score::{Cand, Found, Query, with_scratch};

const W_NAME: f32 = 1.0;
const W_TITLE: f32 = 0.8;
const W_DESC: f32 = 0.55;
/// A query word naming the connector (its id) matches each of its tools.
const W_CONNECTOR: f32 = 0.45;
/// A word of the connector's configured description: topical, weak.
const W_TOPIC: f32 = 0.3;
/// Bonus for a complete name (share of the query's total weight), plus a
/// little per name term so the longer spelled-out name wins
/// (`list all organizations` → `List-All-Organizations`).
const COMPLETE_NAME_BONUS: f32 = 0.3;
const NAME_TERM_BONUS: f32 = 0.05;
/// Bonus when the whole name appears in the query as one phrase, and per
/// pair of adjacent query words that are adjacent in the name.
const PHRASE_BONUS: f32 = 0.05;
const BIGRAM_BONUS: f32 = 0.05;
/// Equal evidence: the tool that needs no approval first.
const READ_ONLY_BONUS: f32 = 0.025;
/// Per name term the query leaves unexplained (up to three): with equal
/// evidence, the name that says no more than the query asked for first.
const UNEXPLAINED_NAME_PENALTY: f32 = 0.02;
/// A partial page needs its best match to cover this share of the weight,
/// or to match at least two of the query's words.
const MIN_BEST_COVERAGE: f32 = 0.5;
/// Matches are kept only within this ratio of the best evidence (scores
/// without bonuses)…
const KEEP_RATIO: f32 = 0.6;
/// A partial match that alone carries a query word is kept down to this.
const RESCUE_RATIO: f32 = 0.3;
/// …and when they cover at least this share of the query's weight.
const KEEP_COVERAGE: f32 = 0.2;
/// The share of the rarest word's weight that a word no catalog searched
/// knows carries (a verb the query asks with carries it all).
const UNKNOWN_WEIGHT: f32 = 0.5;
/// Scored terms beyond this many are ignored (match masks are `u32`).
pub const MAX_QUERY_TERMS: usize = 32;

#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SearchQuery<'a> {
    pub query: &'a str,
    pub safety: Safety,
    /// The caller chose the connector (the `connector` argument): the
    /// query is about that connector's service, whatever else it names.
    pub scoped: bool,
}

impl<'a> SearchQuery<'a> {
    /// A query over every catalog given, not scoped to one connector.
    pub fn new(query: &'a str, safety: Safety) -> SearchQuery<'a> {
        SearchQuery {
            query,
            safety,
            scoped: false,
        }
    }

    /// The same query, scoped by the caller to one connector or not.
    pub fn scoped(self, scoped: bool) -> SearchQuery<'a> {
        SearchQuery { scoped, ..self }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// Empty query: every admitted tool, in catalog order.
    Browse,
    /// Some returned tool matched every scored term (or the exact name).
    All,
    /// No tool matched every term; the plausible partial matches follow.
    Partial,
    /// Nothing plausible matched, or the query had no usable terms.
    None,
}

/// Which of the query's words the results represent. Words are reported as
/// the caller wrote them (lowercased), not as stems.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryAnalysis {
    pub represented: Vec<String>,
    pub unmatched: Vec<String>,
    /// Function words that were not used for scoring.
    pub ignored: Vec<String>,
}

/// One ranked tool: `source` indexes the slice of indexes given to [`rank`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub source: usize,
    pub tool: u32,
    pub tier: u8,
    pub score: f32,
}

#[derive(Debug, Clone)]
pub struct Ranked {
    /// The first `window` hits in rank order (fewer when fewer matched).
    pub hits: Vec<Hit>,
    /// How many tools matched in all.
    pub total: usize,
    pub mode: MatchMode,
    pub analysis: QueryAnalysis,
    /// What the query plainly asks to do, if anything.
    pub asks: Op,
    /// Tools that matched the query's words but do the opposite of what
    /// it asks, and so were left out.
    pub opposed: usize,
    /// Tools that matched the query's words but whose names say they make
    /// another kind of change than it asks for, and so were left out.
    pub other_change: usize,
    /// Well-known services the query names that no catalog searched
    /// knows (lowercased), in query order.
    pub missing_services: Vec<String>,
}

struct QTerm {
    text: String,
    surface: String,
    kind: TermKind,
    /// The term's id in the shared vocabulary (`None`: no index has it).
    shared: Option<u32>,
    /// Which part of a query asking for several things the term is in
    /// (counted from 0, at most 63; see [`Parts::Joined`]).
    part: u8,
}

/// The query as a term sequence, compounds resolved against the catalogs:
/// `GitHub` is one term where some catalog knows `github`, else two.
fn query_terms(query: &str, indexes: &[&CatalogIndex]) -> Vec<QTerm> {
    let mut raw = Vec::new();
    let words = query_words(query);
    let simple: Vec<Option<&str>> = words
        .iter()
        .map(|w| match (&w.parts[..], &w.joined) {
            ([(_, surface)], None) => Some(surface.as_str()),
            _ => None,
        })
        .collect();
    // Each word's part, counted from 0 (the 64th and later parts share
    // the last number).
    let mut parts: Vec<u8> = Vec::with_capacity(words.len());
    let mut part = 0u8;
    for_each_part_start(query, Parts::Joined, |start| {
        part = (part + u8::from(start)).min(63);
        parts.push(part);
    });
    let mut next = 0;
    for (i, word) in words.iter().enumerate() {
        if i < next {
            continue;
        }
        let part = parts.get(i).copied().unwrap_or(part);
        // "Let the team know…" and "tell the team…" ask to send word:
        // `send`, where "know" follows "let" within seven words of the
        // same clause. Told to the caller ("let me know", "tell us") or
        // about a question ("tell which…"), they ask to read.
        let addressee = words
            .get(i + 1)
            .filter(|next| !next.after_break)
            .and_then(|_| simple[i + 1])
            .filter(|w| !SELF_OR_QUESTION.contains(w));
        let tells = match simple[i] {
            Some("let") => {
                addressee.is_some()
                    && (i + 2..(i + 9).min(words.len()))
                        .take_while(|&j| !words[j].after_break)
                        .any(|j| simple[j] == Some("know"))
            }
            // "Tell the difference", "tell the status of…": what is told
            // is a question's answer, to the caller.
            Some("tell") => {
                let told_about = simple[i + 1].is_some_and(|w| ARTICLES.contains(&w))
                    && simple
                        .get(i + 2)
                        .copied()
                        .flatten()
                        .is_some_and(|w| TOLD_ABOUT.contains(&w));
                // "Tell the results to the customer" names whom.
                let to_someone = (i + 3..(i + 9).min(words.len()))
                    .take_while(|&j| !words[j].after_break)
                    .any(|j| simple[j] == Some("to"));
                addressee.is_some() && (!told_about || to_someone)
            }
            _ => false,
        };
        // "Text the customer…", "please text me": a clause's verb before
        // whom it addresses asks to send an SMS (`send`, beside the word
        // itself, which finds `sms`).
        let texts = simple[i] == Some("text")
            && (i == 0
                || word.after_break
                || simple[i - 1].is_some_and(|w| is_stopword(w) && !is_object_opener(w)))
            && words
                .get(i + 1)
                .filter(|next| !next.after_break)
                .and_then(|_| simple[i + 1])
                .is_some_and(|w| {
                    is_object_opener(w)
                        || OBJECT_PRONOUNS.contains(&w)
                        || matches!(w, "everyone" | "everybody")
                });
        if texts {
            raw.push(implied_term(part, "send".to_owned(), "text"));
        }
        // "Where is my package", "where are the trucks": the question asks
        // for a location, where some catalog knows the word ("…the
        // current GPS location of vehicles").
        let asks_where = simple[i] == Some("where")
            && (i == 0 || word.after_break || simple[i - 1].is_some_and(is_stopword))
            && simple
                .get(i + 1)
                .copied()
                .flatten()
                .is_some_and(|w| w == "s" || is_copula(w));
        if asks_where {
            let location = stem("location").into_owned();
            if known_id(indexes, &location).is_some() {
                raw.push(implied_term(part, location, "where"));
            }
        }
        if tells {
            raw.push(implied_term(
                part,
                "send".to_owned(),
                simple[i].unwrap_or_default(),
            ));
            continue;
        }
        // A phrasal verb is one term: "get rid of" is `delete` (unless a
        // tool's name spells the phrase: `turn_on_light`).
        if let Some((len, to)) = query_phrase(&simple[i..]).filter(|&(len, _)| {
            !a_name_holds(indexes, simple[i..i + len].iter().flatten().copied())
        }) {
            let surface = simple[i..i + len]
                .iter()
                .flatten()
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            for text in phrase_terms(indexes, &simple[i..i + len], to) {
                raw.push(QTerm {
                    part,
                    kind: TermKind::Scored,
                    shared: shared_find(&text, term_hash(&text)),
                    surface: surface.clone(),
                    text,
                });
            }
            next = i + len;
            continue;
        }
        // Two content words, one of them unknown alone, that some catalog
        // knows as one word are that word ("front page" for
        // `get_frontpage_posts`). Two known words stay two: "work item"
        // is `wit_get_work_item` (and "list videos" `listVideos`) even
        // where another name runs them together. Function words,
        // particles and punctuation never join: "check out", "log in" and
        // "back up" are verbs, and their nouns (`checkout`) would mislead.
        if let Some(joined) = words
            .get(i + 1)
            .filter(|next| !next.after_break)
            .and_then(|next| {
                Some((
                    simple[i]?,
                    simple[i + 1]?,
                    &word.parts[0].0,
                    &next.parts[0].0,
                ))
            })
            .filter(|(a, b, _, _)| {
                ![a, b]
                    .iter()
                    .any(|w| is_stopword(w) || PARTICLES.contains(w))
            })
            .filter(|(_, _, ta, tb)| {
                known_id(indexes, ta).is_none() || known_id(indexes, tb).is_none()
            })
            .and_then(|(a, b, _, _)| {
                // The one term the tokenizer makes of the joined word, as
                // the index made it of the name.
                let mut terms = Vec::new();
                for_each_term(&format!("{a}{b}"), |t, _| terms.push(t.to_owned()));
                let [text] = <[String; 1]>::try_from(terms).ok()?;
                let id = known_id(indexes, &text)?;
                Some(QTerm {
                    part,
                    kind: TermKind::Scored,
                    shared: Some(id),
                    surface: format!("{a} {b}"),
                    text,
                })
            })
        {
            raw.push(joined);
            next = i + 2;
            continue;
        }
        let known = word
            .joined
            .as_ref()
            .filter(|(t, _)| known_id(indexes, t).is_some());
        let terms = match known {
            Some(j) => std::slice::from_ref(j),
            None => &word.parts[..],
        };
        // "a playlist called Focus Beats", "files named report": the word
        // introduces a value, it asks for no call and no name.
        let naming = simple[i].is_some_and(|w| NAMING.contains(&w))
            && i > 0
            && simple[i - 1].is_some_and(|w| !is_stopword(w))
            && !word.after_break
            && words.get(i + 1).is_some_and(|next| {
                !next.after_break && simple[i + 1].is_none_or(|w| !is_stopword(w))
            });
        // "8xk2Lm", "5KsDBWseXY6Qeg": an identifier is a value (as a
        // number is), whose pieces name nothing.
        let identifier = looks_like_identifier(&word.parts, |t| known_id(indexes, t).is_some());
        // "help me out": a particle after a pronoun object is its verb's,
        // and names nothing when the verb is a function word itself
        // ("block her off" still asks to block off).
        let particle = simple[i].is_some_and(|w| PARTICLES.contains(&w))
            && !word.after_break
            && i > 1
            && simple[i - 1].is_some_and(|w| OBJECT_PRONOUNS.contains(&w))
            && simple[i - 2].is_some_and(|w| {
                // "is it down?": the pronoun is the subject, the particle
                // the question.
                (is_stopword(w) || is_context_word(w, None)) && !is_copula(w)
            });
        for (t, s) in terms {
            raw.push(QTerm {
                part,
                kind: if naming || particle {
                    TermKind::Stop
                } else if identifier {
                    TermKind::Soft
                } else {
                    term_kind(t, s)
                },
                shared: shared_find(t, term_hash(t)),
                text: t.clone(),
                surface: s.clone(),
            });
        }
    }
    raw
}

/// The terms a phrasal verb of the query (`words`, folding to `to`) stands
/// for: the operation's word, unless no tool's name carries it (or a word
/// of its group) while a name spells another phrase of the same meaning
/// and particle: then that phrase, particle and all ("switch off" beside
/// `HassTurnOff`; "on" tells `HassTurnOn` from it). Articles make no
/// phrase of a name: "file a" is no `file`.
fn phrase_terms(indexes: &[&CatalogIndex], words: &[Option<&str>], to: &str) -> Vec<String> {
    let folded = stem(to).into_owned();
    if a_name_carries(indexes, &folded) {
        return vec![folded];
    }
    let particle = words.last().copied().flatten();
    phrases_for(to)
        .find(|p| {
            p.len() >= 2
                && p.last().copied() == particle
                && !p.iter().any(|w| ARTICLES.contains(w))
                && name_spells(indexes, p)
        })
        .map_or_else(
            || vec![folded.clone()],
            |phrase| phrase.iter().map(|w| stem(w).into_owned()).collect(),
        )
}

/// A query word shaped like a record's id: six characters or more,
/// letters and digits alternating at least twice ("8xk2Lm" of
/// "tr_8xk2Lm", "550e8400", "5KsDBWseXY6Qeg"), and not a term some
/// catalog knows. "oauth2", "sha256" and "2041" are words or numbers.
fn looks_like_identifier(parts: &[(String, String)], known: impl Fn(&str) -> bool) -> bool {
    let bytes = || parts.iter().flat_map(|(_, s)| s.bytes());
    if bytes().count() < 6 || !bytes().all(|b| b.is_ascii_alphanumeric()) {
        return false;
    }
    let changes = bytes()
        .zip(bytes().skip(1))
        .filter(|(a, b)| a.is_ascii_digit() != b.is_ascii_digit())
        .count();
    changes >= 2 && {
        let whole: String = parts.iter().map(|(_, s)| s.to_ascii_lowercase()).collect();
        !known(&whole)
    }
}

/// A scored term the query implies by a word (`send` for "tell" or
/// "text", `location` for "where is"), reported as that word.
fn implied_term(part: u8, text: String, surface: &str) -> QTerm {
    QTerm {
        part,
        kind: TermKind::Scored,
        shared: shared_find(&text, term_hash(&text)),
        surface: surface.to_owned(),
        text,
    }
}

/// After "let" or "tell": the caller, or a question, is told nothing to
/// send ("let me know", "tell us", "tell which…").
const SELF_OR_QUESTION: &[&str] = &[
    "me", "us", "which", "what", "who", "whose", "how", "if", "whether", "when", "where", "why",
];

/// What "tell the …" tells the caller rather than someone else.
const TOLD_ABOUT: &[&str] = &[
    "difference",
    "status",
    "state",
    "time",
    "date",
    "reason",
    "cost",
    "price",
    "number",
    "size",
    "truth",
    "result",
    "results",
    "outcome",
];

/// Articles: never a word of a name's phrase.
const ARTICLES: &[&str] = &["a", "an", "the"];

/// Participles that introduce a value's name after a noun.
const NAMING: &[&str] = &["called", "named", "titled", "entitled"];

/// Adverbs that make phrasal verbs: a word beside one is no half of a
/// compound noun.
const PARTICLES: &[&str] = &[
    "away", "back", "down", "in", "off", "on", "out", "over", "through", "up",
];

/// Pronouns that stand for a verb's object ("help me out", "turn it
/// off").
const OBJECT_PRONOUNS: &[&str] = &["me", "it", "them", "us", "him", "her", "this", "that"];

/// The shared id of `term` (already normalized), if some index knows it.
fn known_id(indexes: &[&CatalogIndex], term: &str) -> Option<u32> {
    shared_find(term, term_hash(term))
        .filter(|&id| indexes.iter().any(|ix| ix.local_term(id).is_some()))
}

/// Some index knows the word (stemmed) as a term.
fn known_term(indexes: &[&CatalogIndex], word: &str) -> bool {
    known_id(indexes, &stem(word)).is_some()
}

/// Some tool of `indexes` carries every content word of `words` in its
/// name.
fn a_name_holds<'w>(indexes: &[&CatalogIndex], words: impl Iterator<Item = &'w str>) -> bool {
    let terms: Vec<String> = words
        .filter(|w| !is_stopword(w))
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

/// Some tool of `indexes` carries `term` in its name, or a word of its
/// group there.
fn a_name_carries(indexes: &[&CatalogIndex], term: &str) -> bool {
    indexes
        .iter()
        .any(|ix| ix.term_id(term).is_some_and(|id| ix.in_a_name(id)))
}

/// Some tool of `indexes` has every word of `phrase` in its name,
/// function words ("on") included.
fn name_spells(indexes: &[&CatalogIndex], phrase: &[&str]) -> bool {
    let terms: Vec<String> = phrase.iter().map(|w| stem(w).into_owned()).collect();
    let Some(anchor) = terms.iter().position(|t| !is_stopword(t)) else {
        return false;
    };
    indexes.iter().any(|ix| {
        let ids: Option<Vec<u32>> = terms.iter().map(|t| ix.term_id(t)).collect();
        let Some(ids) = ids else {
            return false;
        };
        ix.raw_postings(ids[anchor]).iter().any(|&p| {
            let tool = CatalogIndex::posting_tool(p) as u32;
            CatalogIndex::posting_fields(p) & F_NAME != 0
                && ids.iter().all(|id| ix.name_terms(tool).contains(id))
        })
    })
}

/// Rank every admitted tool of `indexes` against `q`, returning the first
/// `window` hits sorted (the rest are only counted, which keeps a query that
/// matches 10,000 tools cheap).
pub fn rank(indexes: &[&CatalogIndex], q: &SearchQuery<'_>, window: usize) -> Ranked {
    if q.query.trim().is_empty() {
        return browse(indexes, q.safety, window);
    }
    if let Some(named) = named::answer(indexes, q, window) {
        return named;
    }
    let mut raw = query_terms(q.query, indexes);
    // A generic read verb no catalog here knows ("get organizations" where
    // the tools say `list`) asks for nothing these tools lack: it is a
    // function word here, not a word to find.
    // So is a word of context ("everybody", "for tomorrow") that no
    // catalog here knows.
    for i in 0..raw.len() {
        let t = &raw[i];
        // (Surfaces are lowercase.)
        let context = || {
            let before = i.checked_sub(1).map(|b| raw[b].surface.as_str());
            is_context_word(&t.surface, before)
        };
        if t.kind == TermKind::Scored
            && (OPTIONAL_NAME_VERBS.contains(&t.text.as_str()) || context())
            && known_id(indexes, &t.text).is_none()
        {
            raw[i].kind = TermKind::Stop;
        }
    }
    // Distinct scored terms; soft terms (numbers) only when nothing else.
    let mut terms: Vec<usize> = Vec::new();
    let has_scored = raw.iter().any(|t| t.kind == TermKind::Scored);
    for (i, t) in raw.iter().enumerate() {
        let usable = t.kind == TermKind::Scored || t.kind == TermKind::Soft;
        if usable && !terms.iter().any(|&j| raw[j].text == t.text) && terms.len() < MAX_QUERY_TERMS
        {
            terms.push(i);
        }
    }
    let required = |i: usize| raw[i].kind == TermKind::Scored || !has_scored;
    let mut ignored: Vec<String> = Vec::new();
    for t in raw.iter().filter(|t| t.kind == TermKind::Stop) {
        if !ignored.contains(&t.surface) {
            ignored.push(t.surface.clone());
        }
    }
    if terms.is_empty() {
        return Ranked {
            hits: Vec::new(),
            total: 0,
            mode: MatchMode::None,
            analysis: QueryAnalysis {
                ignored,
                ..QueryAnalysis::default()
            },
            asks: Op::Unknown,
            opposed: 0,
            other_change: 0,
            missing_services: Vec::new(),
        };
    }

    // Distinct texts of the raw sequence, looked up once per index.
    let mut distinct: Vec<usize> = Vec::new();
    let mut raw_distinct: Vec<usize> = Vec::with_capacity(raw.len());
    for (i, t) in raw.iter().enumerate() {
        match distinct.iter().position(|&j| raw[j].text == t.text) {
            Some(d) => raw_distinct.push(d),
            None => {
                raw_distinct.push(distinct.len());
                distinct.push(i);
            }
        }
    }
    let local: Vec<Option<u32>> = indexes
        .iter()
        .flat_map(|ix| {
            distinct
                .iter()
                .map(|&i| raw[i].shared.and_then(|id| ix.local_term(id)))
        })
        .collect();
    let n_distinct = distinct.len();
    let term_distinct: Vec<usize> = terms.iter().map(|&i| raw_distinct[i]).collect();

    let intent = query_intent(q.query);
    let services = service_mentions(q.query);
    let mut service_terms: Vec<String> = Vec::new();
    for m in &services {
        for_each_term(&m.word, |t, _| service_terms.push(t.to_owned()));
    }
    // IDF over exactly these indexes.
    let n_docs: usize = indexes.iter().map(|ix| ix.len()).sum();
    // (And per scored term, whether some catalog knows it at all.)
    let mut known_mask = 0u32;
    let weights: Vec<f32> = term_distinct
        .iter()
        .enumerate()
        .map(|(k, &d)| {
            let mut known = false;
            let df: usize = indexes
                .iter()
                .enumerate()
                .filter_map(|(src, ix)| {
                    let id = local[src * n_distinct + d]?;
                    known = true;
                    Some(ix.doc_freq(id))
                })
                .sum();
            known_mask |= u32::from(known) << k;
            // A word no tool carries itself (no catalog knows it, or only
            // as a connector's description word or a name word's group
            // word) may be the operation nobody here offers, but is as
            // often a value or context ("yesterday", a name): it weighs
            // less, unless it is the change the query asks for or a
            // service's name.
            let text = &raw[distinct[d]].text;
            let asked = intent.changes.iter().any(|(_, v)| v == text);
            if df == 0 && !asked && !service_terms.contains(text) {
                idf(n_docs, df) * UNKNOWN_WEIGHT
            } else {
                idf(n_docs, df)
            }
        })
        .collect();
    // A content word that the catalogs knowing it all know only as their
    // connector's id ("figma") names those connectors: other catalogs'
    // tools are not answers. A query may name several. Numbers and the
    // generic read verbs (a connector called `fetch`) name nothing.
    let mut named = vec![false; indexes.len()];
    // The parts that name a connector, as a bit set.
    let mut naming_parts = 0u64;
    let parts_of = |d: usize| {
        raw.iter()
            .zip(&raw_distinct)
            .filter(|&(_, &rd)| rd == d)
            .fold(0u64, |m, (t, _)| m | 1 << t.part)
    };
    for &i in &terms {
        if raw[i].kind != TermKind::Scored || OPTIONAL_NAME_VERBS.contains(&raw[i].text.as_str()) {
            continue;
        }
        let d = raw_distinct[i];
        let holds = |src: usize| local[src * n_distinct + d];
        let mut held = false;
        let mut as_connector = true;
        for (src, ix) in indexes.iter().enumerate() {
            if let Some(id) = holds(src) {
                held = true;
                as_connector &= ix.is_connector_term(id);
            }
        }
        if held && as_connector {
            (0..indexes.len())
                .filter(|&src| holds(src).is_some())
                .for_each(|src| named[src] = true);
            naming_parts |= parts_of(d);
        }
    }
    // A service's own word ("subreddit") names the connector whose id is
    // that service (`reddit`), as the id itself would: when every catalog
    // knowing the service's name knows it only as its connector's id (a
    // `zapier` connector's `slack_send_message` keeps "slack" shared).
    // The name itself was judged above, as any other word.
    for &Mention { service, ref word } in &services {
        if word.eq_ignore_ascii_case(service) {
            continue;
        }
        let Some(id) = shared_find(service, term_hash(service)) else {
            continue;
        };
        let holds: Vec<(usize, bool)> = indexes
            .iter()
            .enumerate()
            .filter_map(|(src, ix)| {
                let id = ix.local_term(id)?;
                Some((src, ix.is_connector_term(id)))
            })
            .collect();
        if !holds.is_empty() && holds.iter().all(|&(_, as_connector)| as_connector) {
            holds.iter().for_each(|&(src, _)| named[src] = true);
            naming_parts |= raw
                .iter()
                .filter(|t| t.surface.eq_ignore_ascii_case(word))
                .fold(0u64, |m, t| m | 1 << t.part);
        }
    }
    let names_connector = named.contains(&true);
    // In a query of several parts, a part that names no connector may be
    // answered by any catalog: "redeploy the site to Vercel and announce
    // it in the Teams channel" is Vercel's for its first part only. The
    // other catalogs see only the words of such parts. A part whose
    // words the named connectors' tool names all carry (the generic read
    // verbs and words no catalog knows aside) is theirs: "show vercel
    // deployments and list projects" stays Vercel's, whose
    // `list_projects` says "projects".
    let mut open = vec![false; n_distinct];
    if names_connector {
        let in_named_name = |d: usize| {
            indexes.iter().enumerate().any(|(src, ix)| {
                named[src] && local[src * n_distinct + d].is_some_and(|id| ix.in_a_name(id))
            })
        };
        let known = |d: usize| (0..indexes.len()).any(|src| local[src * n_distinct + d].is_some());
        let mut covered = !naming_parts;
        for (t, &d) in raw.iter().zip(&raw_distinct) {
            if covered & 1 << t.part != 0
                && t.kind == TermKind::Scored
                && !OPTIONAL_NAME_VERBS.contains(&t.text.as_str())
                && known(d)
                && !in_named_name(d)
            {
                covered &= !(1 << t.part);
            }
        }
        naming_parts |= covered;
        for (t, &d) in raw.iter().zip(&raw_distinct) {
            open[d] |= t.kind != TermKind::Stop && naming_parts & 1 << t.part == 0;
        }
    }
    let spread = names_connector && terms.iter().any(|&i| open[raw_distinct[i]] && required(i));
    let local: Vec<Option<u32>> = if spread {
        let mut local = local;
        for (src, &named) in named.iter().enumerate() {
            if !named {
                for d in (0..n_distinct).filter(|&d| !open[d]) {
                    local[src * n_distinct + d] = None;
                }
            }
        }
        local
    } else {
        local
    };
    let by_name_only: Vec<bool> = if spread {
        named.iter().map(|&named| !named).collect()
    } else {
        Vec::new()
    };
    let open_words: u32 = (0..terms.len())
        .filter(|&k| {
            open[raw_distinct[terms[k]]]
                && !OPTIONAL_NAME_VERBS.contains(&raw[terms[k]].text.as_str())
        })
        .fold(0, |m, k| m | 1 << k);
    let in_scope: Vec<bool> = if names_connector && !spread {
        named
    } else {
        vec![true; indexes.len()]
    };
    let required_mask: u32 = (0..terms.len())
        .filter(|&k| required(terms[k]))
        .fold(0, |m, k| m | 1 << k);
    let total_weight: f32 = (0..terms.len())
        .filter(|&k| required_mask & 1 << k != 0)
        .map(|k| weights[k])
        .sum::<f32>()
        .max(f32::EPSILON);
    // Adjacent scored query terms, as positions into `raw`.
    let bigrams: Vec<(usize, usize)> = raw
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0].kind != TermKind::Stop && w[1].kind != TermKind::Stop)
        .map(|(i, _)| (i, i + 1))
        .collect();
    // A distinct text is "scored" when some occurrence of it is not a
    // function word.
    let mut distinct_scored = vec![false; n_distinct];
    for (i, t) in raw.iter().enumerate() {
        if t.kind != TermKind::Stop {
            distinct_scored[raw_distinct[i]] = true;
        }
    }

    // Articles may sit inside a spelled name ("delete an item").
    let articles: Vec<bool> = raw
        .iter()
        .map(|t| ARTICLES.contains(&t.text.as_str()))
        .collect();
    // The query's own verbs, as scored terms: a tool of another kind of
    // change that carries one of them is not dropped for its kind.
    let verb_mask: u32 = (0..terms.len())
        .filter(|&k| intent.changes.iter().any(|(_, v)| *v == raw[terms[k]].text))
        .fold(0, |m, k| m | 1 << k);
    // Terms that are verbs of an operation ("find", "list", "create"):
    // a name carrying only those says what it does, not what about.
    let operation_words: u32 = (0..terms.len())
        .filter(|&k| {
            let term = &raw[terms[k]];
            let surface = term.surface.as_str();
            // A folded term ("tell" is `send`, "get rid of" `delet`) or a
            // verb's -ed/-ing form ("created") is asked by its stem; a
            // plural ("refunds") is a noun.
            let folded = stem(surface) != term.text.as_str()
                || surface.ends_with("ed")
                || surface.ends_with("ing");
            is_operation_word(surface) || (folded && is_operation_stem(&term.text))
        })
        .fold(0, |m, k| m | 1 << k);
    // Services the query names that no catalog here knows: unless the
    // query names a connector (a word its catalogs know only as the
    // connector's id, above) or the caller chose one, they say what the
    // query is about ("the slack channel"); beside a named connector,
    // they are its objects ("designers at figma on linkedin").
    let missing: Vec<String> = if q.scoped || names_connector {
        Vec::new()
    } else {
        missing_services(&services, |word| known_term(indexes, word))
    };
    let service_mask: u32 = (0..terms.len())
        .filter(|&k| service_terms.contains(&raw[terms[k]].text))
        .fold(0, |m, k| m | 1 << k);
    // A query asking for one thing is the tool whose name it spells when
    // that tool carries its other words that some catalog knows: a word
    // none knows ("3pm", a name) is carried by no tool, so it tells no
    // tool from another.
    let several_parts = has_several_parts(q.query);
    let carried: u32 = if several_parts {
        required_mask
    } else if !names_connector {
        known_mask & required_mask
    } else {
        (0..terms.len())
            .filter(|&k| {
                (0..indexes.len()).any(|src| {
                    in_scope[src] && local[src * n_distinct + term_distinct[k]].is_some()
                })
            })
            .fold(0, |m, k| m | 1 << k)
            & required_mask
    };
    let query = Query {
        service_mask,
        carried,
        several_parts,
        raw_distinct: &raw_distinct,
        distinct_scored: &distinct_scored,
        articles: &articles,
        term_distinct: &term_distinct,
        weights: &weights,
        required_mask,
        total_weight,
        n_required: required_mask.count_ones() as usize,
        bigrams: &bigrams,
        self_bigram: bigrams
            .iter()
            .any(|&(a, b)| raw_distinct[a] == raw_distinct[b]),
        safety: q.safety,
        in_scope: &in_scope,
        by_name_only: &by_name_only,
        open_words,
        op: intent.op,
        missing: &missing,
        scoped: q.scoped,
        changes: &intent.changes,
        verb_mask,
        operation_words,
        local: &local,
        n_distinct,
    };
    with_scratch(|scratch| {
        // The query spells a tool's name exactly: that is the answer.
        let exact = scratch.exact(indexes, &query);
        if !exact.is_empty() {
            let total = exact.len();
            exact.sort_unstable_by(order);
            return Ranked {
                hits: exact.iter().take(window).map(Cand::hit).collect(),
                total,
                mode: MatchMode::All,
                analysis: QueryAnalysis::default(),
                asks: query.op,
                opposed: 0,
                other_change: 0,
                missing_services: Vec::new(),
            };
        }
        let found = scratch.candidates(indexes, &query, window);
        if found.plausible == 0 {
            return no_match(&raw, &terms, ignored, &query, &found);
        }
        let (hits, total, all_terms, union) =
            scratch.cut(&query, found.best_base.max(found.left_out_base));
        if total == 0 {
            // Plausible by two words, but too little of a long query for
            // the cut: nothing to show is a no-match, not an empty partial
            // page.
            return no_match(&raw, &terms, ignored, &query, &found);
        }
        let mode = if all_terms {
            MatchMode::All
        } else {
            MatchMode::Partial
        };
        let analysis = if mode == MatchMode::Partial {
            let mut a = QueryAnalysis {
                ignored,
                ..QueryAnalysis::default()
            };
            for (k, &i) in terms.iter().enumerate() {
                if !required(i) {
                    continue;
                }
                let list = if union & 1 << k != 0 {
                    &mut a.represented
                } else {
                    &mut a.unmatched
                };
                if !list.contains(&raw[i].surface) {
                    list.push(raw[i].surface.clone());
                }
            }
            // A word that made two terms ("text" is `send` too; "where"
            // asks for `location`) is represented when either matched, and
            // is ignored only when neither is scored.
            a.unmatched.retain(|w| !a.represented.contains(w));
            a.ignored
                .retain(|w| !a.represented.contains(w) && !a.unmatched.contains(w));
            a
        } else {
            QueryAnalysis::default()
        };
        Ranked {
            hits,
            total,
            mode,
            analysis,
            asks: query.op,
            opposed: found.opposed,
            other_change: found.other_change,
            missing_services: missing.clone(),
        }
    })
}

fn order(a: &Cand, b: &Cand) -> Ordering {
    a.tier
        .cmp(&b.tier)
        .then(b.score.total_cmp(&a.score))
        .then(a.source.cmp(&b.source))
        .then(a.tool.cmp(&b.tool))
}

/// BM25's IDF, floored so that a term carried by every tool still counts.
fn idf(n: usize, df: usize) -> f32 {
    let n = n as f32;
    let df = df as f32;
    ((n - df + 0.5) / (df + 0.5) + 1.0).ln() + 0.1
}

/// A clear no-match: every scored word unmatched, and what the query asked
/// against how many matching tools do the opposite.
fn no_match(
    raw: &[QTerm],
    terms: &[usize],
    ignored: Vec<String>,
    query: &Query<'_>,
    found: &Found,
) -> Ranked {
    let mut unmatched: Vec<String> = Vec::new();
    for &i in terms {
        if raw[i].kind == TermKind::Scored && !unmatched.contains(&raw[i].surface) {
            unmatched.push(raw[i].surface.clone());
        }
    }
    Ranked {
        hits: Vec::new(),
        total: 0,
        mode: MatchMode::None,
        analysis: QueryAnalysis {
            represented: Vec::new(),
            unmatched,
            ignored,
        },
        asks: query.op,
        opposed: found.opposed,
        other_change: found.other_change,
        missing_services: query.missing.to_vec(),
    }
}

/// Whether the safety filter admits a tool, from its read-only bit (the
/// same predicate as [`Safety::admits`]).
fn admits(safety: Safety, read_only: bool) -> bool {
    match safety {
        Safety::All => true,
        Safety::ReadOnly => read_only,
        Safety::ApprovalRequired => !read_only,
    }
}

/// Every admitted tool in catalog order: counted from each index's
/// read-only total, and only the first `window` are visited.
fn browse(indexes: &[&CatalogIndex], safety: Safety, window: usize) -> Ranked {
    let mut hits = Vec::with_capacity(window.min(256));
    let mut total = 0;
    for (source, ix) in indexes.iter().enumerate() {
        let admitted = match safety {
            Safety::All => ix.len(),
            Safety::ReadOnly => ix.read_only_tools(),
            Safety::ApprovalRequired => ix.len() - ix.read_only_tools(),
        };
        total += admitted;
        if admitted == 0 {
            continue;
        }
        for tool in 0..ix.len() as u32 {
            if hits.len() >= window {
                break;
            }
            if admits(safety, ix.read_only(tool)) {
                hits.push(Hit {
                    source,
                    tool,
                    tier: 1,
                    score: 0.0,
                });
            }
        }
    }
    Ranked {
        hits,
        total,
        mode: MatchMode::Browse,
        analysis: QueryAnalysis::default(),
        asks: Op::Unknown,
        opposed: 0,
        other_change: 0,
        missing_services: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
