//! What queries ask, clause by clause.

use super::*;
use crate::tokenize::stem;

fn query_intent(query: &str) -> Intent {
    crate::query::Query::parse(query, Lexicon::builtin()).intent
}

fn query_op(query: &str) -> Op {
    query_intent(query).op
}

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
    assert_eq!(changes("start the meeting that is live"), [Change::Start]);
    // Opening a clause, it still reads.
    assert_eq!(
        query_op("delete the draft, which one is oldest?"),
        Op::Unknown
    );
    assert_eq!(query_op("who is on call"), Op::Read);
}

#[test]
fn beside_a_request_a_clause_of_context_asks_nothing() {
    assert_eq!(
        query_op("our rep just got off a call with Globex — can you add a note on their account?"),
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
    // The request's own verb need not be known: a word before its object
    // is a command, guessed to change something.
    assert_eq!(
        query_op("the jacket is gone, can you flip it to archived"),
        Op::Write
    );
    assert_eq!(
        query_op("the jacket is gone, can you flip to archived"),
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
fn each_clause_verb_gives_its_kind_of_change() {
    assert_eq!(changes("delete the heroku app"), [Change::Remove]);
    assert_eq!(
        changes("archive the ticket, then send the customer a note"),
        [Change::Close, Change::Add]
    );
    // Phrasal verbs count as the verb they fold to.
    assert_eq!(query_op("tear down the staging server"), Op::Write);
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
    assert_eq!(changes("please do a cancel of the api"), [Change::Cancel]);
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

fn changes(query: &str) -> Vec<Change> {
    query_intent(query)
        .changes
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

#[test]
fn an_unknown_word_before_an_object_is_a_command_guessed_to_change() {
    assert_eq!(query_op("pay the crew members their overtime"), Op::Write);
    assert_eq!(query_op("sell tickets for the new exhibition"), Op::Unknown);
    // A verb the lexicon knows in another role is not guessed.
    assert_eq!(query_op("take the last build"), Op::Unknown);
    assert_eq!(query_op("execute the nightly job"), Op::Unknown);
    // Nor a short word or a name.
    assert_eq!(query_op("go the extra mile"), Op::Unknown);
}
