//! Building one catalog's index.

use super::*;
use connecta_core::policy::Annotations;
use serde_json::json;

fn tool(name: &str, desc: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        title: None,
        description: Some(desc.into()),
        input_schema: connecta_core::Schema::from(json!({"type": "object"})),
        output_schema: None,
        annotations: Annotations::default(),
    }
}

fn postings(idx: &CatalogIndex, term: u32) -> Vec<(u32, u8)> {
    idx.raw_postings(term)
        .iter()
        .map(|&p| (p >> FIELD_BITS, (p & FIELD_MASK) as u8))
        .collect()
}

#[test]
fn postings_carry_fields_and_stay_in_tool_order() {
    let cat = Catalog::new(
        "gh",
        vec![
            tool("list_issues", "List issues in a repository"),
            tool("get_repo", "Get one repository"),
            tool("issue_stats", "Statistics"),
        ],
    );
    let idx = CatalogIndex::with_description(Arc::new(cat), Some("GitHub code hosting"));
    let issue = idx.term_id("issu").expect("indexed");
    assert_eq!(
        postings(&idx, issue),
        vec![(0, F_NAME | F_DESC), (2, F_NAME)]
    );
    assert_eq!(idx.fields_of(issue, 0), F_NAME | F_DESC);
    assert_eq!(idx.fields_of(issue, 1), 0);
    assert_eq!(idx.fields_of(issue, 2), F_NAME);
    let repo = idx.term_id("repository").expect("abbreviation folded");
    assert_eq!(idx.doc_freq(repo), 2);
    let github = idx
        .term_id("github")
        .expect("connector description indexed");
    assert!(idx.is_topic_term(github));
    assert_eq!(idx.doc_freq(github), 0, "topic words do not raise df");
    assert_eq!(idx.doc_freq(idx.term_id("gh").expect("id")), 3);
    assert!(idx.term_id("in").is_none(), "stopwords are not indexed");
    assert_eq!(idx.name_terms(0).len(), 2);
    assert!(idx.heap_bytes() > 0);
}

#[test]
fn a_name_word_brings_its_name_synonyms_as_marked_postings() {
    let cat = Catalog::new(
        "tasks",
        vec![
            tool("delete_task", "Delete a task."),
            tool("delete_note", "Remove a note for good."),
            tool("list_tasks", "List tasks."),
        ],
    );
    let idx = CatalogIndex::build(Arc::new(cat));
    let delet = idx.term_id("delet").expect("indexed");
    let remov = idx.term_id("remov").expect("synonym indexed");
    // Only a synonym for `delete_task`; a word of its own description
    // too for `delete_note`, which keeps the mark.
    assert_eq!(postings(&idx, remov), vec![(0, F_SYN), (1, F_SYN | F_DESC)]);
    assert_eq!(idx.doc_freq(remov), 1, "only delete_note says remove");
    let group: Vec<u32> = idx.synonyms_of(delet).collect();
    assert_eq!(
        group.len(),
        6,
        "remove, erase, destroy, drop and the two aliases once each"
    );
    assert!(group.contains(&remov));
    let list = idx.term_id("list").expect("indexed");
    assert_eq!(idx.synonyms_of(list).count(), 0);
}

#[test]
fn a_noun_in_a_description_brings_its_synonyms_and_a_verb_does_not() {
    let cat = Catalog::new(
        "music",
        vec![
            tool("skip_to_next", "Skip to the next track."),
            tool("remove_item", "Delete an item from the queue."),
        ],
    );
    let idx = CatalogIndex::build(Arc::new(cat));
    let song = idx.term_id("song").expect("the synonym of track");
    assert_eq!(postings(&idx, song), vec![(0, F_DESC)]);
    assert_eq!(idx.doc_freq(song), 0, "no tool says song itself");
    // "delete" in a description brings nothing: only the name's verb
    // (`remove`) brings its group, marked as standing for the name.
    let erase = idx.term_id("eras").expect("the synonym of remove");
    assert_eq!(postings(&idx, erase), vec![(1, F_SYN)]);
}

#[test]
fn names_are_found_exactly_and_need_counts_necessary_terms() {
    let cat = Catalog::new(
        "slack",
        vec![
            tool("list_issues", ""),
            tool("reply_to_thread", ""),
            tool("slack_post_message", ""),
            tool("get_mine", ""),
            tool("list-issues", ""),
        ],
    );
    let idx = CatalogIndex::build(Arc::new(cat));
    let ids = |words: &[&str]| -> Vec<u32> {
        words
            .iter()
            .map(|w| idx.term_id(w).expect("known"))
            .collect()
    };
    let named: Vec<u32> = idx.tools_named(&ids(&["list", "issu"])).collect();
    assert_eq!(named, vec![0, 4]);
    assert_eq!(idx.tools_named(&ids(&["issu", "list"])).count(), 0);
    // `to` is a function word, `slack` the id.
    assert_eq!(idx.name_need(0), 2);
    assert_eq!(idx.name_need(1), 2);
    assert_eq!(idx.name_need(2), 2);
    // `mine` is a function word, but its stem `min` is not: a query
    // saying `min` still reaches the name through `name_extra`.
    let min = idx.term_id("min").expect("interned");
    assert!(idx.raw_postings(min).is_empty());
    assert_eq!(idx.name_extra(min).collect::<Vec<_>>(), vec![3]);
    assert_eq!(idx.tool_id("get_mine"), Some(3));
    assert_eq!(idx.tool_id("nope"), None);
}

#[test]
fn a_tools_kind_of_change_is_its_names_leading_verb() {
    let mut read_only = tool("delete_preview", "");
    read_only.annotations.read_only_hint = Some(true);
    let names = [
        "asana_create_task",
        "ps_cancel",
        "post_comment",
        "figma_post_comment",
        "maintenance_on",
        "update_app",
        "reset_password",
        "PostComment",
        "comments",
        "log_search",
        "deleted_items",
    ];
    let mut tools: Vec<ToolDef> = names.iter().map(|n| tool(n, "")).collect();
    tools.push(read_only);
    let idx = CatalogIndex::build(Arc::new(Catalog::new("c", tools)));
    let kinds: Vec<Option<Change>> = (0..idx.len() as u32).map(|t| idx.change(t)).collect();
    assert_eq!(
        kinds,
        [
            // The verb that decides the operation, within the first
            // three words.
            Some(Change::Add),
            Some(Change::Cancel),
            // A verb of no operation counts only as the first word.
            Some(Change::Add),
            None,
            None,
            Some(Change::Any),
            // `reset` changes, in no kind the lexicon names.
            None,
            Some(Change::Add),
            // Words as written: a plural noun, a noun that is also a
            // verb, an adjective.
            None,
            None,
            None,
            // A tool that only reads makes no change.
            None,
        ]
    );
    // Nor does an inflected word decide the operation.
    let deleted = idx.tool_id("deleted_items").expect("a tool");
    assert_eq!(idx.op(deleted), Op::Unknown);
}

#[test]
fn shapes_are_rendered_once_and_kept() {
    let mut t = tool("a", "");
    t.output_schema = Some(connecta_core::Schema::from(json!({"type": "string"})));
    let idx = CatalogIndex::build(Arc::new(Catalog::new("c", vec![t, tool("b", "")])));
    let before = idx.heap_bytes();
    let first: *const CompactSchema = idx.compact_input(0);
    assert!(std::ptr::eq(first, idx.compact_input(0)));
    assert_eq!(idx.compact_input(0).text, "{}");
    assert_eq!(
        idx.compact_output(0).map(|c| c.text.as_str()),
        Some("string")
    );
    assert!(idx.compact_output(1).is_none());
    assert!(idx.heap_bytes() > before);
}
