//! Snapshot tests of compact rendering, truncation validity, and key lists.

use serde_json::{Value, json};

use super::grammar::{object_members, validate};
use super::*;

/// Render at the default cap and check the grammar on the way.
fn check(schema: Value, expected: &str) -> CompactSchema {
    let c = render_compact(&schema, SHAPE_CAP_BYTES);
    assert_eq!(c.text, expected);
    assert_eq!(validate(&c.text), Ok(()), "{}", c.text);
    assert!(!c.truncated);
    c
}

#[test]
fn snapshot_required_first_with_constraints() {
    let c = check(
        json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 8,
                          "description": "prose is omitted"},
                "id": {"type": "string"},
                "since": {"type": "string", "format": "date-time"}
            },
            "required": ["id"]
        }),
        "{ id: string; limit?: integer /* >= 1, <= 100, default: 8 */; since?: string /* date-time */ }",
    );
    assert_eq!(
        c.keys,
        Some(vec!["id".into(), "limit".into(), "since".into()])
    );
    assert_eq!(c.required_keys, Some(vec!["id".into()]));
}

#[test]
fn snapshot_the_issue_example() {
    check(
        json!({"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["id"]}),
        "{ id: string; limit?: integer /* >= 1 */ }",
    );
}

#[test]
fn snapshot_enums_unions_arrays_and_nullables() {
    check(
        json!({
            "type": "object",
            "properties": {
                "state": {"enum": ["open", "closed", "all"]},
                "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                "ids": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                "assignee": {"type": ["string", "null"]},
                "note": {"type": "string", "nullable": true},
                "mode": {"const": "fast"},
                "pair": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
                "meta": {"type": "object", "additionalProperties": {"type": "string"}},
                "any": {},
                "x-odd key": {"type": "boolean"}
            },
            "required": ["state"]
        }),
        "{ state: \"open\" | \"closed\" | \"all\"; labels?: string[] /* items <= 10 */; ids?: (string | integer)[]; assignee?: string | null; note?: string | null; mode?: \"fast\"; pair?: [number, number]; meta?: { [key: string]: string }; any?: unknown; \"x-odd key\"?: boolean }",
    );
}

#[test]
fn snapshot_refs_defs_and_recursion() {
    let c = check(
        json!({
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {"type": "object", "properties": {
                    "filter": {"$ref": "#/$defs/Filter"},
                    "page": {"$ref": "#/definitions/Page"}
                }, "required": ["filter"]},
                "Filter": {"type": "object", "properties": {
                    "and": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
                    "field": {"type": "string"}
                }}
            },
            "definitions": {"Page": {"type": "integer", "minimum": 0}}
        }),
        "{ filter: { and?: unknown[]; field?: string }; page?: integer /* >= 0 */ }",
    );
    assert_eq!(c.keys, Some(vec!["filter".into(), "page".into()]));
    // A dangling or remote reference is unknown, never an error.
    check(
        json!({"$ref": "https://example.com/schema.json"}),
        "unknown",
    );
    check(json!({"$ref": "#/$defs/missing"}), "unknown");
}

#[test]
fn snapshot_all_of_merges_objects_and_intersects_otherwise() {
    let c = check(
        json!({
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"$ref": "#/$defs/B"}
            ],
            "$defs": {"B": {"type": "object", "properties": {"b": {"type": "number"}}, "required": ["b"]}}
        }),
        "{ a: string; b: number }",
    );
    assert_eq!(c.keys, Some(vec!["a".into(), "b".into()]));
    assert_eq!(c.required_keys, Some(vec!["a".into(), "b".into()]));
    let c = check(
        json!({"allOf": [{"type": "string"}, {"anyOf": [{"const": 1}, {"const": 2}]}]}),
        "string & (1 | 2)",
    );
    assert_eq!(c.keys, None, "an intersection is not an object shape");
}

#[test]
fn key_lists_are_absent_for_non_objects_and_empty_for_empty_objects() {
    let c = check(
        json!({"type": "array", "items": {"type": "string"}}),
        "string[]",
    );
    assert_eq!((c.keys, c.required_keys), (None, None));
    let c = check(
        json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "null"}]}),
        "{ a?: string } | null",
    );
    assert_eq!(c.keys, None);
    let c = check(json!({"type": "object"}), "{}");
    assert_eq!(c.keys, Some(vec![]));
    assert_eq!(c.required_keys, Some(vec![]));
    // Required names without a property schema are members too.
    let c = check(
        json!({"type": "object", "required": ["q"]}),
        "{ q: unknown }",
    );
    assert_eq!(c.keys, Some(vec!["q".into()]));
}

#[test]
fn comments_cannot_close_early() {
    let c = check(
        json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "a*/b"}}}),
        "{ p?: string /* pattern a*\\/b */ }",
    );
    assert!(!c.truncated);
}

#[test]
fn exact_keys_match_compact_keys() {
    let s = json!({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}},"required":["a"]});
    let c = render_compact(&s, SHAPE_CAP_BYTES);
    let (keys, req) = object_keys(&s).expect("object");
    assert_eq!(Some(keys), c.keys);
    assert_eq!(Some(req), c.required_keys);
    assert_eq!(object_keys(&json!({"type": "string"})), None);
}

fn wide_object(n: usize) -> Value {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for i in 0..n {
        props.insert(
            format!("property_number_{i}"),
            json!({"type": "object", "properties": {
                "inner": {"enum": ["alpha", "beta", "gamma", "delta"]},
                "deep": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}}}}
            }}),
        );
        if i % 3 == 0 {
            required.push(json!(format!("property_number_{i}")));
        }
    }
    json!({"type": "object", "properties": props, "required": required})
}

#[test]
fn truncated_shapes_fit_the_cap_stay_valid_and_drop_key_lists() {
    let schema = wide_object(60);
    for cap in [19, 20, 25, 40, 64, 100, 257, 512, 1024, 2048] {
        let c = render_compact(&schema, cap);
        assert!(c.text.len() <= cap, "cap {cap}: {} bytes", c.text.len());
        assert_eq!(validate(&c.text), Ok(()), "cap {cap}: {}", c.text);
        assert!(c.truncated, "cap {cap}");
        assert!(c.text.contains("/* truncated */"), "cap {cap}: {}", c.text);
        assert_eq!(c.keys, None);
        assert_eq!(c.required_keys, None);
    }
    let c = render_compact(&schema, SHAPE_CAP_BYTES);
    // Required members come first even when truncated.
    let members = object_members(&c.text).expect("still an object");
    assert!(members.first().is_some_and(|(_, required)| *required));
}

#[test]
fn truncation_is_valid_for_every_cap_on_nested_unions_and_enums() {
    let big_enum: Vec<Value> = (0..300).map(|i| json!(format!("value-{i}"))).collect();
    let schemas = [
        json!({"type": "object", "properties": {"e": {"enum": big_enum}, "n": {"type": "integer"}}}),
        json!({"anyOf": [wide_object(5), wide_object(6), {"type": "null"}]}),
        json!({"type": "array", "items": wide_object(10)}),
        json!({"type": "array", "prefixItems": [wide_object(4), wide_object(4)]}),
        json!({"allOf": [{"type": "string"}, wide_object(8)]}),
        wide_object(3),
    ];
    for schema in &schemas {
        let full = render_compact(schema, usize::MAX);
        assert_eq!(validate(&full.text), Ok(()), "{}", full.text);
        for cap in (19..=full.text.len() + 1).step_by(7) {
            let c = render_compact(schema, cap);
            assert!(c.text.len() <= cap, "cap {cap}: {}", c.text);
            assert_eq!(validate(&c.text), Ok(()), "cap {cap}: {}", c.text);
            assert_eq!(c.truncated, c.text != full.text, "cap {cap}: {}", c.text);
        }
    }
    // An enum too long for the cap falls back to its base type.
    let c = render_compact(&schemas[0], 60);
    assert_eq!(c.text, "{ e?: string; n?: integer }");
    assert!(c.truncated);
}

#[test]
fn any_json_value_renders_to_something_valid() {
    for v in [
        json!(null),
        json!(true),
        json!(false),
        json!(42),
        json!("x"),
        json!([1, 2]),
        json!({"type": 7}),
        json!({"type": ["string", 3]}),
        json!({"properties": "nope"}),
        json!({"enum": [{"a": 1}]}),
        json!({"anyOf": []}),
        json!({"$ref": "#"}),
        json!({"allOf": [{"$ref": "#"}]}),
    ] {
        let c = render_compact(&v, SHAPE_CAP_BYTES);
        assert_eq!(validate(&c.text), Ok(()), "{v} → {}", c.text);
    }
}
