//! A query's analysis: its parts, the services it names, the phrasal verbs
//! and implied terms it carries.

use super::*;

fn parse(q: &str) -> Query {
    Query::parse(q, Lexicon::builtin())
}

fn parts(q: &str) -> Vec<u8> {
    parse(q).words.iter().map(|w| w.part).collect()
}

#[test]
fn a_conjunction_or_a_list_makes_a_query_of_several_parts() {
    for q in [
        "hubspot contact and company records",
        "list objects, then download one",
        "zones; dns records",
        "contacts & companies",
        "deploy the site before the tests run",
    ] {
        assert!(parse(q).several_parts, "{q}");
    }
    // Whole words only, and no number, compound or initialism.
    for q in [
        "git staged changes diff",
        "brand new handoff",
        "pull request 1,024 changed files",
        "drag-and-drop upload",
        "R&D budget",
    ] {
        assert!(!parse(q).several_parts, "{q}");
    }
}

#[test]
fn requests_joined_as_such_start_parts() {
    assert_eq!(parts("deploy the site then post"), [0, 0, 0, 1, 1]);
    // No time clause, no comma before context.
    assert_eq!(parts("deploy the site before the tests run"), [0; 7]);
    assert_eq!(parts("the site is down, can you post"), [0; 7]);
    // A list of requests: a comma before a verb, and a conjunction after a
    // comma.
    assert_eq!(
        parts("schedule a call, send the offer, and update the title"),
        [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    );
    // Not a comma before a question word or a copula: a relative clause or
    // a question about what came before.
    assert!(
        parts("check the sentry errors for checkout, which started today")
            .iter()
            .all(|&p| p == 0)
    );
    assert!(
        parts("our supabase app is slow, is the database down")
            .iter()
            .all(|&p| p == 0)
    );
    // A verb that opens noun phrases too lists a request only before its
    // object.
    assert_eq!(
        parts("send the offer, schedule the call"),
        [0, 0, 0, 1, 1, 1]
    );
    assert!(
        parts("see the calendar, schedule for monday")
            .iter()
            .all(|&p| p == 0)
    );
    assert_eq!(
        parts("send the offer, then update the title"),
        [0, 0, 0, 1, 1, 1, 1]
    );
}

#[test]
fn a_service_counts_as_a_word_of_its_own() {
    let services = |q: &str| parse(q).services;
    assert_eq!(
        services("post a message in the #support Slack channel"),
        ["slack"]
    );
    assert_eq!(
        services("PagerDuty's on-call, then (github)."),
        ["pagerduty", "github"]
    );
    assert_eq!(services("slack and Slack"), ["slack"]);
    assert_eq!(services("search for slack messages"), ["slack"]);
    // Inside identifiers, addresses and paths it names nothing.
    for query in [
        "set the STRIPE_KEY variable",
        "look up priya@gmail.com",
        "open github.com/acme/api",
        "the slack-bot user",
        "slack'S",
    ] {
        assert!(services(query).is_empty(), "{query}");
    }
    for (query, named) in [
        ("", &[][..]),
        ("   ", &[]),
        ("'s", &[]),
        ("— slack —", &["slack"]),
        ("🙂slack", &["slack"]),
        ("\u{0}slack", &["slack"]),
        ("x🙂slack", &[]),
        // Full-width letters are not the name.
        ("ｓｌａｃｋ", &[]),
    ] {
        assert_eq!(services(query), named, "{query:?}");
    }
}

#[test]
fn a_phrasal_verb_is_found_as_a_whole_phrase_only() {
    let phrase = |q: &str| parse(q).words[0].phrase.clone();
    assert_eq!(phrase("get rid of the card"), Some((3, "delete".into())));
    assert_eq!(
        phrase("money back for the label"),
        Some((2, "refund".into()))
    );
    assert_eq!(phrase("open a ticket"), Some((2, "create".into())));
    assert_eq!(phrase("sign off on it"), Some((3, "approve".into())));
    assert_eq!(
        phrase("open the file"),
        None,
        "reading a file is not creating one"
    );
    assert_eq!(phrase("get the card"), None);
    assert_eq!(phrase("get rid"), None, "a phrase needs all its words");
    assert_eq!(phrase("sign the contract"), None);
}

#[test]
fn where_opening_a_question_implies_a_location() {
    let implies = |q: &str, i: usize| parse(q).words[i].implies.clone();
    assert_eq!(implies("where is my package", 0), Some("location".into()));
    assert_eq!(
        implies("where's Marco right now?", 0),
        Some("location".into())
    );
    assert_eq!(
        implies("hey, where are the trucks", 1),
        Some("location".into())
    );
    // Not inside a clause, nor without a copula.
    assert_eq!(implies("the place where the trucks park", 2), None);
    assert_eq!(implies("where to park", 0), None);
}

#[test]
fn a_word_is_split_into_terms_once() {
    let q = parse("list GitHub PRs");
    assert_eq!(q.words.len(), 3);
    assert_eq!(
        q.words[1].joined.as_ref().map(|j| j.0.as_str()),
        Some("github")
    );
    let parts: Vec<&str> = q.words[2].parts.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(parts, ["pull", "request"]);
    assert_eq!(q.words[0].simple(), Some("list"));
    assert_eq!(q.words[1].simple(), None, "a compound is no simple word");
}
