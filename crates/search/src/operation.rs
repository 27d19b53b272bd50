//! Whether a query asks to read or to change something, and whether a tool
//! reads or changes.
//!
//! A tool that does the opposite of what the query asks is not an answer:
//! "cancel a booked meeting" is not answered by `list_scheduled_events`,
//! and "submit a new post to a subreddit" is not answered by the read-only
//! post listings, however many words they share. The ranker drops such
//! tools ([`Op::opposes`]), and a query whose every match does the
//! opposite is a no-match.
//!
//! Both sides fail open. A query has an operation only when every clause
//! of it opens with a verb (or a question word) this module knows, and no
//! word of the other kind appears anywhere in it: "see if you can add…",
//! "add jane to the mailing list" and "query prometheus and open an
//! incident" have none. A tool has one when it is read-only (after the
//! operator's overrides), or when its name leads with a known verb;
//! `maintenance_on` or `run_query` without annotations have none, and are
//! never dropped as readers or writers.
//!
//! A change has a kind ([`Change`]): a query whose every clause opens with
//! a verb of a particular kind ("delete the app", "merge the tickets") is
//! not answered by a tool whose name leads with a verb of another kind
//! (`create_app`, `create_ticket`), unless that name carries the query's
//! verb. General verbs (`update`, `set`, `run`) are of any kind. A name's
//! verb may follow a namespace (`wms_transfer_stock`) or be a phrase
//! (`turn_off_light`): [`name_kind`]. A tool that may change something
//! but whose name says no kind at all (`maintenance_on`) does not answer
//! a query asking for a particular kind either, unless its words carry
//! the query's verb ("enable maintenance" finds it when its description
//! says "enable"); a query asking for any change ("update…") may have
//! it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::tokenize::{for_each_word_with_gap, is_stopword, phrase_opening, query_phrase, stem};

/// What a query asks, or what a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// Not known: nothing is dropped on its account.
    #[default]
    Unknown,
    Read,
    Write,
}

impl Op {
    /// A tool doing `tool` is no answer to a query asking `self`.
    pub(crate) fn opposes(self, tool: Op) -> bool {
        matches!((self, tool), (Op::Read, Op::Write) | (Op::Write, Op::Read))
    }
}

/// Verbs that read, in a query (opening a clause) and leading a tool's
/// name, matched as written (lowercased): `lists` or `posts` opening a
/// query, and `settings_get` or `news_search` in a name, are nouns.
const READ_VERBS: &[&str] = &[
    "list",
    "show",
    "find",
    "search",
    "fetch",
    "read",
    "view",
    "retrieve",
    "describe",
    "display",
    "browse",
    "count",
    "lookup",
    "inspect",
    "summarize",
    "summarise",
    "compare",
];

/// Question words: a query opening a clause with one asks to read ("how
/// many…", "who is…"). Inside a clause they ask nothing ("pause whatever
/// is playing"), and only the wh-words may open a question that is a
/// verb's object ("check which…"; "check is ok" is no command).
const WH_WORDS: &[&str] = &[
    "what", "whats", "which", "who", "whos", "whose", "how", "where", "when",
];
const COPULAS: &[&str] = &["is", "are", "was", "were", "does", "did"];

fn is_question_word(word: &str) -> bool {
    WH_WORDS.contains(&word) || is_copula(word)
}

/// "is", "are", "was", "were", "does", "did".
pub(crate) fn is_copula(word: &str) -> bool {
    COPULAS.contains(&word)
}

/// Read verbs of names only. In a query, `get` has a second sense ("get a
/// new key") and `query` is as often a noun. Left out of both sides:
/// `check` ("check in", "check out"; see [`QUERY_VERB_BEFORE_OBJECT`]),
/// `download` and `export` (they often create a file), `open`, `do`,
/// `have`.
const NAME_ONLY_READ: &[&str] = &["get", "query"];

/// Verbs that change something, in a query and leading a tool's name.
/// Left out of both sides: verbs whose object may be a read (`run`,
/// `execute`, `make`, `build`, `generate`, `open`, `pull`, `push`,
/// `sync`), and words that are nouns as often in both (`comment`,
/// `message`, `tag`, `commit`, `change`, `order`).
const WRITE_VERBS: &[&str] = &[
    "create",
    "add",
    "insert",
    "publish",
    "unpublish",
    "submit",
    "upload",
    "send",
    "invite",
    "delete",
    "remove",
    "erase",
    "destroy",
    "purge",
    "discard",
    "drop",
    "archive",
    "unarchive",
    "cancel",
    "approve",
    "decline",
    "reject",
    "accept",
    "edit",
    "modify",
    "rename",
    "move",
    "assign",
    "reassign",
    "unassign",
    "restart",
    "reboot",
    "deploy",
    "redeploy",
    "pause",
    "enable",
    "disable",
    "activate",
    "deactivate",
    "install",
    "uninstall",
    "revert",
    "restore",
    "refund",
    "subscribe",
    "unsubscribe",
    "terminate",
    "kill",
    "close",
    "reopen",
    "complete",
    "finish",
    "mark",
    "reset",
    "trigger",
    "upgrade",
    "downgrade",
    "notify",
    "remind",
    "block",
    "unblock",
    "ban",
    "unban",
    "mute",
    "unmute",
    "lock",
    "unlock",
    "grant",
    "revoke",
    "rotate",
    "renew",
    "duplicate",
    "write",
    "save",
    "void",
    "abort",
    "resend",
    "unfavorite",
    "rerun",
    "dismiss",
    "acknowledge",
    "ack",
];

/// Write verbs of queries only: `post` and `update` lead as many names as
/// nouns (`posts_search`, `updates_list`) as verbs, and the verbs of an
/// update in everyday words (`bump`, `adjust`, `postpone`) say nothing of
/// a name they lead (`adjust_stock` changes in a way only its words tell).
const QUERY_ONLY_WRITE: &[&str] = &[
    "post",
    "update",
    "adjust",
    "bump",
    "resize",
    "escalate",
    "reschedule",
    "postpone",
    "snooze",
];

/// Read verbs of queries only: "see what's running" reads, and no tool
/// name leads with `see`.
const QUERY_ONLY_READ: &[&str] = &["see"];

/// Write verbs of names only: in a query they open a noun phrase as often
/// as a command (`set`, `import`, `resume`, `start`, `stop`, `store`: see
/// [`QUERY_VERB_BEFORE_OBJECT`]), or rarely lead one at all.
const NAME_ONLY_WRITE: &[&str] = &[
    "new", "set", "put", "patch", "store", "resume", "rollback", "scale", "clear", "start", "stop",
    "import", "apply", "toggle", "copy", "clone", "fork", "reserve", "retry",
];

/// Words that open a noun phrase as often as a command ("merge requests",
/// "schedule for monday", "check-in times", "favorite tracks", "increase
/// in signups", "retry count"): they open a clause as a verb
/// only when an object follows at once ("merge the tickets", "check the
/// status"), and then ask to change (`Write`) or to read (`Read`).
const QUERY_VERB_BEFORE_OBJECT: &[(&str, Op)] = &[
    ("merge", Op::Write),
    ("schedule", Op::Write),
    ("import", Op::Write),
    ("resume", Op::Write),
    ("star", Op::Write),
    ("pin", Op::Write),
    ("log", Op::Write),
    ("record", Op::Write),
    ("set", Op::Write),
    ("start", Op::Write),
    ("stop", Op::Write),
    ("tag", Op::Write),
    ("label", Op::Write),
    ("book", Op::Write),
    ("reply", Op::Write),
    ("forward", Op::Write),
    ("share", Op::Write),
    ("transfer", Op::Write),
    ("sign", Op::Write),
    ("store", Op::Write),
    ("change", Op::Write),
    ("replace", Op::Write),
    ("reserve", Op::Write),
    ("retry", Op::Write),
    ("favorite", Op::Write),
    ("bookmark", Op::Write),
    ("increase", Op::Write),
    ("decrease", Op::Write),
    ("extend", Op::Write),
    ("check", Op::Read),
];

/// Words that show an object follows: articles, possessives and object
/// pronouns.
const OBJECT_OPENERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "my", "our", "your", "their", "his", "her",
    "its", "all", "every", "each", "some", "it", "them", "both", "two", "three", "four", "five",
    "several", "multiple",
];

/// An article, possessive or object pronoun: a noun phrase (an object)
/// starts here ([`OBJECT_OPENERS`]).
pub(crate) fn is_object_opener(word: &str) -> bool {
    OBJECT_OPENERS.contains(&word)
}

/// Words between clauses: each clause needs its own leading verb.
const CONJUNCTIONS: &[&str] = &["and", "then", "also", "plus", "or", "after", "before"];

/// The conjunctions that join requests ([`Parts::Joined`]): not "after"
/// and "before", which open a time clause.
const REQUEST_JOINS: &[&str] = &["and", "then", "also", "plus", "or"];

/// A query of more than one clause or item: a conjunction joins its words
/// ("contacts and companies", "contacts & companies"), or punctuation
/// lists them ("contacts, companies"; not "1,024", "drag-and-drop" or
/// "R&D").
pub(crate) fn has_several_parts(query: &str) -> bool {
    let mut several = false;
    for_each_part_start(query, Parts::Listed, |start| several |= start);
    several
}

/// Which boundaries make parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parts {
    /// Every one [`has_several_parts`] knows: conjunctions, lists.
    Listed,
    /// Requests joined as such: "and", "then", "also", "plus", "or" (after
    /// a comma too), ";", a standalone "&", and a comma before a verb
    /// ("schedule the call, send the offer"; a word of
    /// [`QUERY_VERB_BEFORE_OBJECT`] only before its object). Not other
    /// commas (context before a request: "the site is down, can you…";
    /// a question word or a copula: "…for checkout, which started…"),
    /// nor "before" and "after" (a time clause: "deploy before the tests
    /// run").
    Joined,
}

/// Calls `f` once per word of `query` (as [`for_each_word_with_gap`]
/// splits it) with whether the word starts a new part (`parts`); the
/// first word starts none.
pub(crate) fn for_each_part_start(query: &str, parts: Parts, mut f: impl FnMut(bool)) {
    let mut words: Vec<(&str, &str)> = Vec::new();
    for_each_word_with_gap(query, |w, gap| words.push((w, gap)));
    let joins = match parts {
        Parts::Listed => CONJUNCTIONS,
        Parts::Joined => REQUEST_JOINS,
    };
    for (i, &(w, gap)) in words.iter().enumerate() {
        let last = i.checked_sub(1).map_or("", |j| words[j].0);
        let in_number = gap == ","
            && last.ends_with(|c: char| c.is_ascii_digit())
            && w.starts_with(|c: char| c.is_ascii_digit());
        // A conjunction stands apart: after white space or a comma ("…,
        // and update…"), not inside a word ("drag-and-drop").
        let apart = gap.chars().all(|c| c.is_whitespace() || c == ',');
        // A comma before a verb lists requests ("schedule the call, send
        // the offer, and update the title"); before anything else, a
        // question word or a copula too, it ends context ("the site is
        // down, can you…", "…for checkout, which started…").
        let listed = gap.contains(',')
            && !in_number
            && (parts == Parts::Listed || {
                let word = w.to_ascii_lowercase();
                let next = words.get(i + 1).map(|(n, _)| n.to_ascii_lowercase());
                !is_question_word(&word) && opening_op(&word, next.as_deref()) != Op::Unknown
            });
        f((gap.contains(';') || listed)
            || gap.trim() == "&" && gap.len() > 1
            || (apart && !last.is_empty() && joins.iter().any(|c| w.eq_ignore_ascii_case(c))));
    }
}

/// The kind of change a verb makes. A query that asks for one kind is
/// not answered by a tool whose name leads with a verb of another ("delete
/// the app" by `create_app`, "merge the tickets" by `create_ticket`),
/// unless the tool's own words carry the query's verb ([`Change::admits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Any change at all (`update`, `edit`, `set`, `manage`, `run`): a tool
    /// named so may do what is asked, and a query asking so asks nothing
    /// in particular.
    Any,
    /// Brings something into being or out to someone: create, send,
    /// upload, invite, schedule, deploy.
    Add,
    Remove,
    /// Ends something under way: cancel, abort, terminate.
    Cancel,
    Start,
    Stop,
    Restart,
    Close,
    Restore,
    Merge,
    Move,
    Assign,
    Refund,
    Approve,
    Reject,
    /// Takes a copy out: download, export. Only a tool's kind: a query
    /// opening with these asks to read as often as to change.
    Export,
}

impl Change {
    /// A tool whose name leads with a verb of kind `tool` may answer a
    /// query asking for `self`.
    pub(crate) fn admits(self, tool: Change) -> bool {
        use Change::*;
        self == tool
            // An update may do any change but join two records into one
            // or pay money back.
            || (tool == Any && !matches!(self, Merge | Refund))
            || matches!(
                (self, tool),
                // Starting a run or a meeting creates one.
                (Add, Start)
                    | (Start, Add)
                    // A cancel removes or stops.
                    | (Cancel, Stop | Remove)
                    | (Stop | Remove, Cancel)
                    // A restart stops and starts; restarting something
                    // starts it, but does not leave it stopped.
                    | (Restart, Start | Stop)
                    | (Start, Restart)
                    // Assigning, approving and rejecting are often done
                    // by adding a record (`add_assignees`,
                    // `create_pull_request_review`).
                    | (Assign | Approve | Reject, Add)
            )
    }
}

/// Verbs by the kind of change they make, as written (lowercased). A verb
/// in no list makes no claim: a query opening with it asks for no kind.
/// A tool whose name says no verb at all makes no particular change, and
/// answers no query asking for one unless its words carry the query's
/// verb ([`name_kind`] reads a name again before it comes to that).
const CHANGES: &[(Change, &[&str])] = &[
    (
        Change::Any,
        &[
            "update",
            "edit",
            "modify",
            "patch",
            "put",
            "set",
            "change",
            "manage",
            "apply",
            "toggle",
            "save",
            "write",
            "upsert",
            "mark",
            "configure",
            "store",
            "run",
            "execute",
            "invoke",
            "call",
            "perform",
            "replace",
            "process",
            "handle",
            "sync",
        ],
    ),
    (
        Change::Add,
        &[
            "create",
            "add",
            "insert",
            "new",
            "make",
            "generate",
            "compose",
            "draft",
            "register",
            "post",
            "submit",
            "send",
            "produce",
            "publish",
            "notify",
            "remind",
            "reply",
            "respond",
            "forward",
            "share",
            "upload",
            "import",
            "attach",
            "invite",
            "schedule",
            "book",
            "log",
            "record",
            "deploy",
            "redeploy",
            "release",
            "copy",
            "duplicate",
            "clone",
            "fork",
            "install",
            "subscribe",
            "grant",
            "tag",
            "label",
            "star",
            "pin",
            "comment",
            "link",
            "enroll",
            "open",
            "resend",
            "reserve",
            "bookmark",
            "favorite",
        ],
    ),
    (
        Change::Remove,
        &[
            "delete",
            "remove",
            "erase",
            "destroy",
            "drop",
            "purge",
            "discard",
            "trash",
            "uninstall",
            "unsubscribe",
            "revoke",
            "detach",
            "unlink",
            "unshare",
            "unpublish",
            "unstar",
            "unpin",
            "unfavorite",
        ],
    ),
    (
        Change::Cancel,
        &["cancel", "abort", "void", "terminate", "kill", "halt"],
    ),
    (
        Change::Start,
        &[
            "start",
            "resume",
            "unpause",
            "enable",
            "activate",
            "unblock",
            "unban",
            "unmute",
            "unlock",
            "unsuspend",
            "trigger",
            "launch",
            "retry",
            "rerun",
        ],
    ),
    (
        Change::Stop,
        &[
            "stop",
            "pause",
            "suspend",
            "disable",
            "deactivate",
            "block",
            "ban",
            "mute",
            "lock",
        ],
    ),
    (Change::Restart, &["restart", "reboot", "reload"]),
    (
        Change::Close,
        &[
            "close",
            "complete",
            "finish",
            "resolve",
            "archive",
            "end",
            "dismiss",
            "acknowledge",
            "ack",
        ],
    ),
    (
        Change::Restore,
        &[
            "restore",
            "undelete",
            "recover",
            "revert",
            "rollback",
            "undo",
            "reopen",
            "unarchive",
        ],
    ),
    (Change::Merge, &["merge", "combine"]),
    (Change::Move, &["move", "transfer", "rename", "relocate"]),
    (Change::Assign, &["assign", "reassign", "unassign"]),
    (Change::Refund, &["refund"]),
    (
        Change::Approve,
        &["approve", "accept", "confirm", "authorize"],
    ),
    (Change::Reject, &["reject", "decline", "deny", "disqualify"]),
    (Change::Export, &["download", "export"]),
];

/// Query words and name words (as written, lowercased) → their operation,
/// and verbs → the kind of change they make.
struct Tables {
    query: HashMap<&'static str, Op>,
    name: HashMap<&'static str, (Op, Option<Change>)>,
    query_change: HashMap<&'static str, Change>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let ops = |words: &[&'static [&'static str]], op: Op| {
            words
                .iter()
                .flat_map(|list| list.iter())
                .map(move |&w| (w, op))
                .collect::<Vec<_>>()
        };
        let query = [
            ops(&[READ_VERBS, WH_WORDS, COPULAS, QUERY_ONLY_READ], Op::Read),
            ops(&[WRITE_VERBS, QUERY_ONLY_WRITE], Op::Write),
        ];
        let name = [
            ops(&[READ_VERBS, NAME_ONLY_READ], Op::Read),
            ops(&[WRITE_VERBS, NAME_ONLY_WRITE], Op::Write),
        ];
        let changes = || {
            CHANGES
                .iter()
                .flat_map(|&(change, words)| words.iter().map(move |&w| (w, change)))
        };
        // One lookup per name word while indexing: its operation and kind.
        let mut names: HashMap<&'static str, (Op, Option<Change>)> = HashMap::new();
        for (w, op) in name.into_iter().flatten() {
            names.entry(w).or_default().0 = op;
        }
        for (w, change) in changes() {
            names.entry(w).or_default().1 = Some(change);
        }
        Tables {
            query: query.into_iter().flatten().collect(),
            name: names,
            query_change: changes().collect(),
        }
    })
}

/// The operation a query word asks for.
fn query_word_op(word: &str) -> Op {
    tables().query.get(word).copied().unwrap_or_default()
}

/// The operation a clause's first word asks for, given the word after it:
/// a word of [`QUERY_VERB_BEFORE_OBJECT`] is a verb only before an object.
fn opening_op(word: &str, next: Option<&str>) -> Op {
    match query_word_op(word) {
        Op::Unknown => QUERY_VERB_BEFORE_OBJECT
            .iter()
            .find(|&&(w, _)| w == word)
            .filter(|&&(_, op)| {
                // A reading verb's object may be a question ("check which
                // contracts are unsigned").
                next.is_some_and(|n| {
                    OBJECT_OPENERS.contains(&n)
                        || n.bytes().all(|b| b.is_ascii_digit())
                        || (op == Op::Read && (WH_WORDS.contains(&n) || n == "whether"))
                        || (matches!(word, "start" | "stop") && is_gerund(n))
                })
            })
            .map_or(Op::Unknown, |&(_, op)| op),
        op => op,
    }
}

/// A word ending in "-ing" whose stem has three letters or more and a
/// vowel ("recording", "sharing"; not "ring" or "thing"), and that is no
/// function word or common noun of that shape ("during", "morning"):
/// starting or stopping one is an action ("start recording").
fn is_gerund(word: &str) -> bool {
    const NOT_ACTIONS: &[&str] = &[
        "anything",
        "building",
        "ceiling",
        "during",
        "evening",
        "everything",
        "morning",
        "nothing",
        "something",
        "spring",
        "string",
        "wedding",
    ];
    word.strip_suffix("ing")
        .is_some_and(|stem| stem.len() >= 3 && stem.bytes().any(|b| b"aeiouy".contains(&b)))
        && !is_stopword(word)
        && !NOT_ACTIONS.contains(&word)
}

/// Whether word `i` of `words` makes a request: "please", or "you" after
/// "can", "could", "would" or "will".
fn is_request(words: &[(String, bool)], i: usize) -> bool {
    match words[i].0.as_str() {
        "please" => true,
        "you" => i > 0 && matches!(words[i - 1].0.as_str(), "can" | "could" | "would" | "will"),
        _ => false,
    }
}

/// Verbs that lend their clause to the action named by their object
/// ("issue a refund", "do a restart", "make a copy").
const LIGHT_VERBS: &[&str] = &["issue", "give", "make", "do", "perform", "process"];

/// The action a light verb's object names, when `word` is one of
/// [`LIGHT_VERBS`], "a" or "an" follows, and then a verb that changes
/// something in a particular way: "issue a refund" asks to refund.
fn light_verb_action<'w>(word: &str, next: Option<&str>, then: Option<&'w str>) -> Option<&'w str> {
    let action =
        then.filter(|_| LIGHT_VERBS.contains(&word) && matches!(next, Some("a" | "an")))?;
    let particular = tables()
        .query_change
        .get(action)
        .is_some_and(|&c| c != Change::Any);
    // As a noun the action may be one that leads only names as a verb
    // ("a rollback", "a copy").
    let writes = query_word_op(action) == Op::Write || name_word_op(action) == Op::Write;
    (particular && writes).then_some(action)
}

/// The operation a phrasal verb folds to ("pull up" → `get`, a read; "shut
/// down" → `stop`, a write): the word's own, else what it means in a name.
fn phrase_op(to: &str) -> Op {
    match query_word_op(to) {
        Op::Unknown => name_word_op(to),
        op => op,
    }
}

/// What a name leading with a word (lowercase, as written) does, and the
/// kind of change it makes if it is a verb of [`CHANGES`]. Inflected
/// words are names' nouns and adjectives (`settings`, `deleted_items`),
/// not their verbs.
pub(crate) fn name_verb(word: &str) -> (Op, Option<Change>) {
    tables().name.get(word).copied().unwrap_or_default()
}

/// Words of verbs that name an object as often ("which release is live",
/// "the failed runs", "my draft"): beside [`QUERY_VERB_BEFORE_OBJECT`],
/// these say what a query is about as well as what it does.
const NOUNS_TOO: &[&str] = &[
    "comment", "draft", "end", "link", "release", "call", "run", "process", "message", "order",
    "commit", "post", "update", "open",
];

/// A word (as written, or a query term's folded text: "tell" is `send`)
/// that names an operation and nothing else: a tool name carrying only
/// such words says what it does, not what about.
pub(crate) fn is_operation_word(word: &str) -> bool {
    (name_verb(word).0 != Op::Unknown || tables().query_change.contains_key(word))
        && !NOUNS_TOO.contains(&word)
        && !QUERY_VERB_BEFORE_OBJECT.iter().any(|&(w, _)| w == word)
}

/// [`is_operation_word`] for a query term's folded text ("get rid of" is
/// `delet`, "created" `creat`): the stems of the operation words.
pub(crate) fn is_operation_stem(term: &str) -> bool {
    static STEMS: OnceLock<std::collections::HashSet<String>> = OnceLock::new();
    STEMS
        .get_or_init(|| {
            let t = tables();
            t.name
                .keys()
                .chain(t.query_change.keys())
                .filter(|w| is_operation_word(w))
                .map(|w| stem(w).into_owned())
                .collect()
        })
        .contains(term)
}

/// The operation a name leading with a word (as written) does.
pub(crate) fn name_word_op(word: &str) -> Op {
    name_verb(word).0
}

/// Verbs of no operation list that say a name's kind of change when they
/// are its first word (`post_comment`, `download_images`,
/// `forward_message`). Words that lead as many names as nouns (`log`,
/// `tag`, `label`, `comment`, `link`, `release`, `schedule`, …) are not
/// here: a name leading with one gets its kind only when nothing else in
/// it says one ([`name_kind`]).
const FIRST_WORD_VERBS: &[&str] = &[
    "post",
    "reply",
    "respond",
    "forward",
    "share",
    "compose",
    "register",
    "generate",
    "attach",
    "enroll",
    "download",
    "export",
    "merge",
    "combine",
    "transfer",
    "relocate",
    "produce",
    "disqualify",
    "update",
    "upsert",
    "manage",
    "configure",
];

/// Leading a name, these verbs may read as well as change: `manage_forms`
/// lists forms too, and `generate_report` or `export_rows` read to make a
/// file.
const LEADS_THAT_MAY_READ: &[&str] = &[
    "manage",
    "configure",
    "generate",
    "download",
    "export",
    "produce",
];

/// A name's first word (lowercase, as written) is a verb that, leading a
/// name, only changes something (`update_page`, `post_comment`), though no
/// operation list can say so because the word is as often a noun.
pub(crate) fn lead_verb_only_changes(word: &str) -> bool {
    first_word_change(word).is_some() && !LEADS_THAT_MAY_READ.contains(&word)
}

/// The kind of change a name's first word (lowercase, as written) makes
/// when no operation list knows it.
pub(crate) fn first_word_change(word: &str) -> Option<Change> {
    if FIRST_WORD_VERBS.contains(&word) {
        tables().query_change.get(word).copied()
    } else {
        None
    }
}

/// The kind of change a name makes when its leading verb decided none,
/// from its words (lowercase, as written) after the first `skip` words,
/// a namespace (`wms_transfer_stock`, `HassTurnOff`): a phrasal verb
/// opening them or after their first (`turn_off_light`: `disable`), a
/// verb of any kind list opening them (`disqualify_candidate`,
/// `label_issue`, `open_ticket`), or a verb of any kind anywhere
/// (`salesforce_manage_field`, `storage_blob_batch_set_tier`). A name
/// whose verb changes something in no particular way (`writes`:
/// `reset_password`, `clear_cache`, `rotate_api_key`) may make any
/// change.
pub(crate) fn name_kind(words: &[&str], skip: usize, writes: bool) -> Option<Change> {
    let words = if skip < words.len() {
        &words[skip..]
    } else {
        words
    };
    // A phrasal verb may follow a first word that is no namespace of the
    // catalog (`HassTurnOff` among tools of other names).
    for start in 0..words.len().min(2) {
        if let Some(&c) =
            phrase_opening(&words[start..]).and_then(|to| tables().query_change.get(to))
        {
            return Some(c);
        }
    }
    // A word that leads as many names as nouns (`label`, `log`) says its
    // kind here: a name of no kind would answer no particular change.
    if let Some(c) = words
        .first()
        .and_then(|w| name_verb(w).1.or_else(|| first_word_change(w)))
    {
        return Some(c);
    }
    words
        .iter()
        .find_map(|w| name_verb(w).1.filter(|&c| c == Change::Any))
        .or(writes.then_some(Change::Any))
}

/// What a query asks: its operation and, when it asks to change and every
/// clause opens with a verb of one particular kind, those kinds with the
/// verbs' terms (stemmed, as the query's terms are).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Intent {
    pub op: Op,
    pub changes: Vec<(Change, String)>,
}

/// What a whole query asks: `Read` or `Write` when every clause opens with
/// a known word of that kind and no word of the other kind appears in it;
/// otherwise `Unknown`.
#[cfg(test)]
pub(crate) fn query_op(query: &str) -> Op {
    query_intent(query).op
}

/// [`query_op`], with the kinds of change its clauses' verbs make.
pub(crate) fn query_intent(query: &str) -> Intent {
    // Lowercased words, and whether punctuation that ends a clause comes
    // before each.
    let mut words: Vec<(String, bool)> = Vec::new();
    for_each_word_with_gap(query, |w, gap| {
        // Inside a number or a time ("1,000", "6:30", "v1.2") nothing
        // ends.
        let in_number = matches!(gap, "," | "." | ":")
            && words
                .last()
                .is_some_and(|(prev, _)| prev.ends_with(|c: char| c.is_ascii_digit()))
            && w.starts_with(|c: char| c.is_ascii_digit());
        let breaks = !in_number
            && (gap.contains([',', ';', '!', '?', ':', '\n', '(', '—', '–'])
                || gap.contains(". ")
                || gap.contains(" - ")
                || gap.ends_with('.'));
        words.push((w.to_ascii_lowercase(), breaks));
    });
    let simple: Vec<Option<&str>> = words.iter().map(|(w, _)| Some(w.as_str())).collect();
    // A query that makes a request ("can you…", "please…") gives context
    // in its other clauses: one whose opening is no known verb ("our rep
    // just got off a call with Globex") does not void what is requested.
    let requests = (0..words.len()).any(|i| is_request(&words, i));
    // The current clause opens with a request; the current clause is
    // context, so far.
    let mut requested = false;
    let mut context = false;
    let (mut read, mut write) = (false, false);
    let mut changes: Vec<(Change, String)> = Vec::new();
    // Every clause's verb is of a particular kind.
    let mut particular = true;
    let mut opening = true;
    let mut i = 0;
    while i < words.len() {
        let (word, breaks) = (&words[i].0, words[i].1);
        if breaks {
            opening = true;
            requested = false;
            context = false;
        }
        if CONJUNCTIONS.contains(&word.as_str()) {
            opening = true;
            requested = false;
            context = false;
            i += 1;
            continue;
        }
        if context && is_request(&words, i) {
            // "Hey team, … please cancel the meeting": the request
            // opens its own clause where it comes.
            opening = true;
            requested = true;
            context = false;
            i += 1;
            continue;
        }
        let phrase = query_phrase(&simple[i..]);
        let next = words.get(i + 1).map(|(w, _)| w.as_str());
        let light = opening
            .then(|| light_verb_action(word, next, words.get(i + 2).map(|(w, _)| w.as_str())))
            .flatten();
        let (op, len, verb) = match (phrase, light) {
            (Some((len, to)), _) => (phrase_op(to), len, to),
            (None, Some(action)) => (Op::Write, 3, action),
            (None, None) if opening => (opening_op(word, next), 1, word.as_str()),
            // Inside a clause, a question word is a relative pronoun or
            // a copula ("the meeting that is live"): it asks nothing.
            (None, None) if is_question_word(word) => (Op::Unknown, 1, word.as_str()),
            (None, None) => (query_word_op(word), 1, word.as_str()),
        };
        if opening {
            if matches!(word.as_str(), "if" | "whether") {
                // "see if you can add…": the verb is a condition's.
                return Intent::default();
            }
            if op == Op::Unknown {
                if phrase.is_none() && is_stopword(word) {
                    requested |= is_request(&words, i);
                    i += 1;
                    continue;
                }
                if requests && !requested {
                    // Context beside a request: its words still count
                    // below, its opening asks nothing.
                    opening = false;
                    context = true;
                    i += 1;
                    continue;
                }
                // A clause whose operation is not known.
                return Intent::default();
            }
            match tables().query_change.get(verb) {
                Some(&change) if change != Change::Any => {
                    changes.push((change, stem(verb).into_owned()));
                }
                _ => particular = false,
            }
            opening = false;
        }
        match op {
            Op::Read => read = true,
            Op::Write => write = true,
            Op::Unknown => {}
        }
        i += len;
    }
    match (read, write) {
        (true, false) => Intent {
            op: Op::Read,
            changes: Vec::new(),
        },
        (false, true) => Intent {
            op: Op::Write,
            changes: if particular { changes } else { Vec::new() },
        },
        _ => Intent::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_verb_gives_the_operation() {
        assert_eq!(query_op("cancel a booked meeting"), Op::Write);
        assert_eq!(query_op("list tables in a BigQuery dataset"), Op::Read);
        assert_eq!(query_op("please delete the old branch"), Op::Write);
        assert_eq!(query_op("can you show me the open incidents"), Op::Read);
    }

    #[test]
    fn question_words_read() {
        assert_eq!(query_op("who's on call right now?"), Op::Read);
        assert_eq!(
            query_op("how many vectors are in my index, and which namespaces does it have?"),
            Op::Read
        );
    }

    #[test]
    fn phrasal_verbs_count_as_their_operation() {
        assert_eq!(query_op("get rid of the sessions collection"), Op::Write);
        assert_eq!(query_op("pull up the page content"), Op::Read);
    }

    #[test]
    fn every_clause_needs_a_known_verb() {
        // "open" is not known: the second clause's operation is not.
        assert_eq!(
            query_op("query prometheus for cpu usage and open a grafana incident"),
            Op::Unknown
        );
        assert_eq!(query_op("hey, could you find me ramen spots?"), Op::Read);
        assert_eq!(query_op("slack messages from yesterday"), Op::Unknown);
        assert_eq!(query_op("get the latest build"), Op::Unknown);
    }

    #[test]
    fn seeing_reads_and_checking_a_question_reads() {
        assert_eq!(
            query_op("I'd like to see everything in the leads table"),
            Op::Read
        );
        assert_eq!(
            query_op("could you check which of our contracts are unsigned"),
            Op::Read
        );
        // A question after a verb that changes is no object of it, and a
        // copula opens no question.
        assert_eq!(query_op("log what happened"), Op::Unknown);
        assert_eq!(query_op("check is ok"), Op::Unknown);
        assert_eq!(query_op("check whether the tests are green"), Op::Read);
        assert_eq!(query_op("check-in times for the gym"), Op::Unknown);
        // "See if you can add…" still asks nothing.
        assert_eq!(query_op("see if you can add the user"), Op::Unknown);
    }

    #[test]
    fn inside_a_clause_a_question_word_asks_nothing() {
        assert_eq!(query_op("pause whatever is playing"), Op::Write);
        assert_eq!(
            query_op("open a new ticket for a customer who can't log in"),
            Op::Write
        );
        assert_eq!(
            changes("start recording the meeting that is live"),
            [Change::Start]
        );
        // Opening a clause, it still reads.
        assert_eq!(
            query_op("delete the draft, which one is oldest?"),
            Op::Unknown
        );
        assert_eq!(query_op("who is on call"), Op::Read);
    }

    #[test]
    fn starting_or_stopping_an_action_is_a_change() {
        assert_eq!(changes("start recording the meeting"), [Change::Start]);
        assert_eq!(changes("stop sharing the folder"), [Change::Stop]);
        // Not every "-ing" word is an action, nor every word after "start".
        assert_eq!(query_op("start date of the project"), Op::Unknown);
        assert_eq!(query_op("stop thing"), Op::Unknown);
        assert_eq!(query_op("stop during the deploy"), Op::Unknown);
        assert_eq!(query_op("start morning standup"), Op::Unknown);
        // The phrases fold to their verb: "please sign off on it" approves.
        assert_eq!(
            query_intent("please sign off on the pull request").changes,
            [(Change::Approve, stem("approve").into_owned())]
        );
    }

    #[test]
    fn beside_a_request_a_clause_of_context_asks_nothing() {
        assert_eq!(
            query_op(
                "our rep just got off a call with Globex — can you add a note on their account?"
            ),
            Op::Write
        );
        assert_eq!(
            query_intent("hi! the stand-up moved, could you please cancel the old meeting").changes,
            [(Change::Cancel, stem("cancel").into_owned())]
        );
        // A request inside a clause of context opens its own.
        assert_eq!(
            query_intent("hey team please cancel the meeting").changes,
            [(Change::Cancel, stem("cancel").into_owned())]
        );
        // Without a request, an opening that is no known verb still
        // leaves the query asking nothing.
        assert_eq!(
            query_op("our rep got off a call with Globex — add a note on their account"),
            Op::Unknown
        );
        // The request's own verb must be known.
        assert_eq!(
            query_op("the jacket is gone, can you flip it to archived"),
            Op::Unknown
        );
        // The context's words still count: a change beside a read.
        assert_eq!(
            query_op("we usually delete merged branches, can you show me the open ones"),
            Op::Unknown
        );
    }

    #[test]
    fn a_word_of_the_other_kind_anywhere_unsets_it() {
        assert_eq!(query_op("create a list and add a contact"), Op::Unknown);
        assert_eq!(query_op("find the ticket and close it"), Op::Unknown);
        assert_eq!(query_op("see if you can add the user"), Op::Unknown);
        assert_eq!(query_op("how do I delete a repo"), Op::Unknown);
    }

    #[test]
    fn noun_openings_are_not_commands() {
        // Plural nouns and words left out for their second sense.
        assert_eq!(query_op("posts from last week"), Op::Unknown);
        assert_eq!(query_op("merge requests assigned to me"), Op::Unknown);
        assert_eq!(query_op("resume of the candidate"), Op::Unknown);
    }

    #[test]
    fn a_word_that_opens_noun_phrases_is_a_verb_before_an_object() {
        assert_eq!(query_op("merge the two duplicate tickets"), Op::Write);
        assert_eq!(query_op("merge requests assigned to me"), Op::Unknown);
        assert_eq!(query_op("check the status of the nightly build"), Op::Read);
        assert_eq!(query_op("schedule for monday"), Op::Unknown);
        assert_eq!(query_op("set the env variable on my project"), Op::Write);
        assert_eq!(query_op("record a payment from the tenant"), Op::Write);
        assert_eq!(query_op("records of the tenant"), Op::Unknown);
        // Everyday verbs that are nouns or adjectives as often.
        assert_eq!(query_op("increase the memory limit to 2 GB"), Op::Write);
        assert_eq!(query_op("increase in 5xx since the deploy"), Op::Unknown);
        assert_eq!(query_op("favorite the playlist"), Op::Write);
        assert_eq!(query_op("favorite playlists from last month"), Op::Unknown);
        assert_eq!(query_op("retry the failed job"), Op::Write);
        // Inside a clause they ask nothing: the query still reads.
        assert_eq!(query_op("show my favorite tracks"), Op::Read);
        assert_eq!(query_op("list jobs whose retry count is above 3"), Op::Read);
        assert_eq!(
            query_op("what's the increase in signups this week"),
            Op::Read
        );
    }

    #[test]
    fn dashes_end_clauses() {
        assert_eq!(
            query_op("find the customer — and delete the duplicate"),
            Op::Unknown
        );
        assert_eq!(
            query_op("the build is red — restart the runner"),
            Op::Unknown
        );
        assert_eq!(
            query_op("list the incidents - show the open ones"),
            Op::Read
        );
    }

    #[test]
    fn numbers_and_times_end_no_clause() {
        assert_eq!(
            query_op("schedule the lights to dim at 6:30 every weekday"),
            Op::Write
        );
        assert_eq!(query_op("delete the 1,000 oldest rows"), Op::Write);
        assert_eq!(query_op("show the notes of v1.2"), Op::Read);
        // Between words they still do.
        assert_eq!(query_op("delete the note: list the rest"), Op::Unknown);
    }

    #[test]
    fn a_number_or_both_shows_an_object_follows() {
        assert_eq!(query_op("merge two duplicate tickets"), Op::Write);
        assert_eq!(query_op("merge 2 duplicate tickets"), Op::Write);
        assert_eq!(query_op("merge both profiles"), Op::Write);
    }

    #[test]
    fn any_text_gets_an_answer() {
        for (query, op) in [
            ("", Op::Unknown),
            ("—", Op::Unknown),
            ("🙂 delete 🙂 the note", Op::Write),
            ("délete the café", Op::Unknown),
            ("delete—list", Op::Unknown),
            ("list\u{0}the notes", Op::Read),
            ("ＬＩＳＴ the notes", Op::Unknown),
        ] {
            assert_eq!(query_op(query), op, "{query:?}");
        }
    }

    #[test]
    fn name_verbs_are_words_as_written() {
        assert_eq!(name_word_op("create"), Op::Write);
        assert_eq!(name_word_op("retrieve"), Op::Read);
        assert_eq!(name_word_op("post"), Op::Unknown);
        assert_eq!(name_word_op("zendesk"), Op::Unknown);
        // Nouns and adjectives that stem like verbs.
        for word in ["settings", "news", "deleted", "triggers", "archived"] {
            assert_eq!(name_verb(word), (Op::Unknown, None), "{word}");
        }
        // An update in everyday words asks to change in a query, and says
        // nothing of a name it leads (`adjust_stock`).
        for word in ["bump", "adjust", "postpone", "reschedule", "snooze"] {
            assert_eq!(
                query_op(&format!("{word} the priority")),
                Op::Write,
                "{word}"
            );
            assert_eq!(name_verb(word), (Op::Unknown, None), "{word}");
        }
        // Verbs of a particular change, on both sides.
        assert_eq!(name_verb("retry"), (Op::Write, Some(Change::Start)));
        assert_eq!(name_verb("acknowledge"), (Op::Write, Some(Change::Close)));
        assert_eq!(name_verb("resend"), (Op::Write, Some(Change::Add)));
        assert_eq!(changes("dismiss the alert"), [Change::Close]);
        assert_eq!(changes("rerun the failed build"), [Change::Start]);
    }

    fn changes(query: &str) -> Vec<Change> {
        query_intent(query)
            .changes
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    }

    #[test]
    fn each_clause_verb_gives_its_kind_of_change() {
        assert_eq!(changes("delete the heroku app"), [Change::Remove]);
        assert_eq!(
            changes("archive the ticket, then send the customer a note"),
            [Change::Close, Change::Add]
        );
        // Phrasal verbs count as the verb they fold to.
        assert_eq!(changes("roll back my site"), [Change::Restore]);
        assert_eq!(changes("get rid of the old branch"), [Change::Remove]);
        // The verb's term, stemmed as the query's terms are.
        assert_eq!(
            query_intent("merge the tickets").changes,
            [(Change::Merge, stem("merge").into_owned())]
        );
    }

    #[test]
    fn a_light_verb_lends_its_clause_to_the_action_its_object_names() {
        assert_eq!(
            query_intent("issue a refund to the customer").changes,
            [(Change::Refund, stem("refund").into_owned())]
        );
        assert_eq!(query_op("issue a refund to the customer"), Op::Write);
        assert_eq!(changes("please do a restart of the api"), [Change::Restart]);
        assert_eq!(
            changes("perform a rollback of the deploy"),
            [Change::Restore]
        );
        assert_eq!(changes("make a copy of the board"), [Change::Add]);
        // An object that is no verb of a particular kind lends nothing.
        assert_eq!(changes("issue a TLS certificate"), []);
        assert_eq!(changes("make an update to the ticket"), []);
        // Only with "a" or "an" between.
        assert_eq!(changes("issue refunds"), []);
        assert_eq!(changes("issue the refund"), []);
    }

    #[test]
    fn a_general_verb_or_a_read_asks_no_kind_of_change() {
        // "update" may mean any change: nothing is asked in particular.
        assert_eq!(changes("update the ticket"), []);
        assert_eq!(changes("update the ticket and delete the draft"), []);
        // A verb of no kind.
        assert_eq!(changes("rotate the api key"), []);
        assert_eq!(changes("list the tickets"), []);
        assert_eq!(changes("find the ticket and close it"), []);
    }

    #[test]
    fn kinds_admit_themselves_general_changes_and_their_kin() {
        use Change::*;
        assert!(Remove.admits(Remove));
        assert!(Remove.admits(Any));
        assert!(Assign.admits(Add) && !Add.admits(Assign));
        assert!(!Remove.admits(Add));
        assert!(!Restore.admits(Add));
        assert!(Cancel.admits(Remove) && Remove.admits(Cancel));
        assert!(Stop.admits(Cancel) && !Stop.admits(Remove));
        assert!(Restart.admits(Start) && Start.admits(Restart));
        assert!(Restart.admits(Stop) && !Stop.admits(Restart));
        // An update does not join two records or pay money back.
        assert!(!Merge.admits(Any));
        assert!(!Refund.admits(Any));
    }

    #[test]
    fn a_verb_has_one_kind() {
        let mut seen = std::collections::HashSet::new();
        for (_, words) in CHANGES {
            for w in *words {
                assert!(seen.insert(stem(w)), "{w} has two kinds");
            }
        }
    }

    #[test]
    fn name_verbs_have_kinds() {
        assert_eq!(name_verb("create").1, Some(Change::Add));
        assert_eq!(name_verb("delete").1, Some(Change::Remove));
        assert_eq!(name_verb("update").1, Some(Change::Any));
        assert_eq!(name_verb("download").1, Some(Change::Export));
        assert_eq!(name_verb("zendesk").1, None);
        assert_eq!(first_word_change("post"), Some(Change::Add));
        // Words that lead names as nouns as often say nothing there.
        assert_eq!(first_word_change("log"), None);
        assert_eq!(first_word_change("comment"), None);
        // Not the plural noun.
        assert_eq!(first_word_change("posts"), None);
        assert!(lead_verb_only_changes("update"));
        assert!(lead_verb_only_changes("post"));
        assert!(!lead_verb_only_changes("manage"));
        assert!(!lead_verb_only_changes("export"));
        assert!(!lead_verb_only_changes("updates"));
    }

    #[test]
    fn a_name_may_say_its_kind_after_a_namespace_in_a_phrase_or_by_a_general_verb() {
        // After a namespace word, not before it.
        assert_eq!(
            name_kind(&["wms", "transfer", "stock"], 1, false),
            Some(Change::Move)
        );
        assert_eq!(name_kind(&["wms", "transfer", "stock"], 0, false), None);
        assert_eq!(
            name_kind(&["acme", "wms", "transfer", "stock"], 2, false),
            Some(Change::Move)
        );
        // A phrasal verb, alone or after a namespace.
        assert_eq!(
            name_kind(&["turn", "off", "light"], 0, false),
            Some(Change::Stop)
        );
        assert_eq!(
            name_kind(&["hass", "turn", "on"], 1, false),
            Some(Change::Start)
        );
        // A verb of any kind, anywhere.
        assert_eq!(
            name_kind(&["storage", "blob", "batch", "set", "tier"], 0, false),
            Some(Change::Any)
        );
        assert_eq!(
            name_kind(&["disqualify", "candidate"], 0, false),
            Some(Change::Reject)
        );
        // A verb of a kind list that leads as many names as nouns.
        assert_eq!(name_kind(&["label", "issue"], 0, false), Some(Change::Add));
        assert_eq!(name_kind(&["open", "ticket"], 0, false), Some(Change::Add));
        // A verb that changes in no particular way.
        assert_eq!(
            name_kind(&["rotate", "api", "key"], 0, true),
            Some(Change::Any)
        );
        // No verb this module knows: no kind.
        assert_eq!(name_kind(&["maintenance", "on"], 0, false), None);
        assert_eq!(name_kind(&["withdraw", "student"], 0, false), None);
    }

    #[test]
    fn operation_words_are_verbs_that_name_no_object() {
        for verb in [
            "find", "list", "create", "cancel", "send", "remove", "archive",
        ] {
            assert!(is_operation_word(verb), "{verb}");
        }
        // Verbs that name objects as often, and words of no operation.
        for word in [
            "release", "runs", "run", "schedule", "favorite", "draft", "invoice", "tell",
        ] {
            assert!(!is_operation_word(word), "{word}");
        }
        // Stems, for folded and inflected terms.
        assert!(is_operation_stem(&stem("delete")));
        assert!(is_operation_stem(&stem("created")));
        assert!(!is_operation_stem(&stem("release")));
        assert!(!is_operation_stem(&stem("invoice")));
    }

    #[test]
    fn a_conjunction_or_a_list_makes_a_query_of_several_parts() {
        assert!(has_several_parts("hubspot contact and company records"));
        assert!(has_several_parts("list objects, then download one"));
        assert!(has_several_parts("zones; dns records"));
        assert!(!has_several_parts("git staged changes diff"));
        assert!(has_several_parts("contacts & companies"));
        // Requests joined as such: no comma, no time clause.
        let joined = |q: &str| {
            let mut starts = Vec::new();
            for_each_part_start(q, Parts::Joined, |s| starts.push(s));
            starts
        };
        assert_eq!(
            joined("deploy the site then post"),
            [false, false, false, true, false]
        );
        assert!(!joined("deploy the site before the tests run").contains(&true));
        assert!(!joined("the site is down, can you post").contains(&true));
        // A list of requests: a comma before a verb, and a conjunction
        // after a comma.
        assert_eq!(
            joined("schedule a call, send the offer, and update the title"),
            [
                false, false, false, true, false, false, true, false, false, false
            ]
        );
        // Not a comma before a question word or a copula: a relative
        // clause or a question about what came before.
        assert!(
            !joined("check the sentry errors for checkout, which started today").contains(&true)
        );
        assert!(!joined("our supabase app is slow, is the database down").contains(&true));
        // A verb that opens noun phrases too lists a request only before
        // its object.
        assert_eq!(
            joined("send the offer, schedule the call"),
            [false, false, false, true, false, false]
        );
        assert!(!joined("see the calendar, schedule for monday").contains(&true));
        assert_eq!(
            joined("send the offer, then update the title"),
            [false, false, false, true, false, false, false]
        );
        assert!(has_several_parts("deploy the site before the tests run"));
        // Whole words only, and no number, compound or initialism.
        assert!(!has_several_parts("brand new handoff"));
        assert!(!has_several_parts("pull request 1,024 changed files"));
        assert!(!has_several_parts("drag-and-drop upload"));
        assert!(!has_several_parts("R&D budget"));
    }

    #[test]
    fn only_read_and_write_oppose() {
        assert!(Op::Read.opposes(Op::Write));
        assert!(Op::Write.opposes(Op::Read));
        assert!(!Op::Write.opposes(Op::Unknown));
        assert!(!Op::Unknown.opposes(Op::Read));
        assert!(!Op::Read.opposes(Op::Read));
    }
}
