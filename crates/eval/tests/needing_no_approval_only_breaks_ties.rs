//! Needing no approval is a tie-breaker, not evidence. When the read-only
//! bonus grew with the query's weight, a long request to change something
//! ("…I need to add an early-bird ticket type…") put the catalog's readers
//! above the one tool whose name the request's verb stands for. These are
//! the studied corpora's queries where that happened.

mod studied;

#[test]
fn a_read_only_tool_never_outranks_better_evidence() {
    let cases: [(&str, &str, &str); 6] = [
        (
            include_str!("../corpus/holdout-4.json"),
            "h4-d11",
            "obsidian.obsidian_append_content",
        ),
        (
            include_str!("../corpus/holdout-6.json"),
            "h6-c6",
            "monday.create_update",
        ),
        (
            include_str!("../corpus/holdout-7.json"),
            "h7-c1",
            "freshdesk.create_ticket_reply",
        ),
        (
            include_str!("../corpus/holdout-8.json"),
            "h8-c7",
            "cloudinary.transform-asset",
        ),
        (
            include_str!("../corpus/holdout-8.json"),
            "h8-c9",
            "hue.turn_off_light",
        ),
        (
            include_str!("../corpus/holdout-8.json"),
            "h8-c10",
            "eventbrite.create_ticket_class",
        ),
    ];
    for (text, id, first) in cases {
        let (query, returned) = studied::returned(text, id);
        assert_eq!(
            returned.first().map(String::as_str),
            Some(first),
            "{id} ({query}): {returned:?}"
        );
    }
}
