//! Criterion benches for the functions every call or every listing passes
//! through, outside search (search has its own bench in
//! `crates/search/benches/search.rs`: index build at 100 / 1,000 / 10,000
//! tools, cold and warm queries).
//!
//! - `schema`: compact rendering of a tool's input schema (what
//!   `search_tools` shows per match and `describe` per tool): the synthetic
//!   benchmark schema, a typical API schema with `$defs`, and an oversized
//!   one that hits the 1,024-byte cap;
//! - `address`: parsing `<connector>.<tool>`, resolving it in a 100-tool
//!   and a 10,000-tool catalog, and the A2 sanitizing rule that names
//!   program shortcuts (one name, and a whole 10,000-tool catalog as the
//!   alias map build does);
//! - `args`: validating `{value: 7}` against the compiled input schema, as
//!   every call does before leaving the gateway;
//! - `result`: the S5 unwrap of a downstream result, the 24,000-character
//!   truncation envelope of `execute_code` results (under the cap, 100 KB
//!   and 1 MB over it), clamping an echoed text, and paging a stashed
//!   result for `get_result`.
//!
//! Shapes are the benchmark's (PERFORMANCE.md): connector `connector_<c>`,
//! tools `lookup_record_<t>`, input `{value: integer}`. These time one
//! function each; the whole path is `connecta-bench run`.

use std::hint::black_box;

use connecta_core::address::{Address, sanitize_identifier};
use connecta_core::catalog::{Catalog, Schema, ToolDef};
use connecta_core::error::clamp_text;
use connecta_core::policy::Annotations;
use connecta_core::result::{ToolResult, page_utf8, text_block};
use connecta_core::schema::{SHAPE_CAP_BYTES, render_compact};
use connecta_gateway::{ArgValidator, truncate_result};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

/// The code-mode result cap (`code.result_chars` default).
const RESULT_CHARS: usize = 24_000;

fn synthetic_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"],
        "additionalProperties": false
    })
}

/// A schema the size of a typical SaaS API tool: nested objects, enums,
/// bounds, an array of `$ref`'d items.
fn typical_schema() -> Value {
    json!({
        "type": "object",
        "$defs": {
            "label": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Label name", "maxLength": 50},
                    "color": {"type": "string", "pattern": "^[0-9a-f]{6}$"}
                },
                "required": ["name"]
            }
        },
        "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "repo": {"type": "string", "description": "Repository name"},
            "state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
            "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}},
            "since": {"type": "string", "format": "date-time"},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
            "page": {"type": "integer", "minimum": 1},
            "sort": {"anyOf": [{"const": "created"}, {"const": "updated"}, {"const": "comments"}]},
            "assignee": {"type": ["string", "null"]}
        },
        "required": ["owner", "repo"]
    })
}

/// Sixty optional properties with nested objects: rendering hits the cap.
fn oversized_schema() -> Value {
    let mut properties = serde_json::Map::new();
    for i in 0..60 {
        properties.insert(
            format!("field_number_{i}"),
            json!({
                "type": "object",
                "description": "A nested object whose own members are rendered too.",
                "properties": {
                    "alpha": {"type": "string", "maxLength": 200},
                    "beta": {"type": "integer", "minimum": 0},
                    "gamma": {"type": "array", "items": {"type": "boolean"}}
                }
            }),
        );
    }
    json!({"type": "object", "properties": properties})
}

fn catalog(connector: usize, tools: usize) -> Catalog {
    let schema = Schema::new(&synthetic_schema());
    let defs = (0..tools)
        .map(|t| ToolDef {
            name: format!("lookup_record_{t}"),
            title: None,
            description: Some(format!(
                "Retrieve synthetic performance record {t} from shard {connector}."
            )),
            input_schema: schema.clone(),
            output_schema: None,
            annotations: Annotations {
                read_only_hint: Some(true),
                idempotent_hint: Some(true),
                ..Annotations::default()
            },
        })
        .collect();
    Catalog::new(format!("connector_{connector}"), defs)
}

fn schema(c: &mut Criterion) {
    let mut group = c.benchmark_group("schema");
    for (name, schema) in [
        ("synthetic", synthetic_schema()),
        ("typical", typical_schema()),
        ("oversized", oversized_schema()),
    ] {
        group.bench_with_input(BenchmarkId::new("render_compact", name), &schema, |b, s| {
            b.iter(|| render_compact(black_box(s), SHAPE_CAP_BYTES))
        });
    }
    group.finish();
}

fn address(c: &mut Criterion) {
    let mut group = c.benchmark_group("address");
    group.bench_function("parse", |b| {
        b.iter(|| Address::parse(black_box("connector_99.lookup_record_9999")))
    });
    for tools in [100, 10_000] {
        let catalog = catalog(0, tools);
        let address = format!("connector_0.lookup_record_{}", tools - 1);
        group.bench_with_input(
            BenchmarkId::new("parse_and_resolve", tools),
            &address,
            |b, address| {
                b.iter(|| {
                    let a = Address::parse(black_box(address)).expect("valid");
                    catalog.get(a.tool).map(|t| t.read_only())
                })
            },
        );
    }
    group.bench_function("sanitize_one", |b| {
        b.iter(|| sanitize_identifier(black_box("my-service.get.thing")))
    });
    let catalog = catalog(0, 10_000);
    group.throughput(Throughput::Elements(10_000));
    group.bench_function("sanitize_catalog_10000", |b| {
        b.iter(|| {
            catalog
                .tools()
                .iter()
                .map(|t| sanitize_identifier(&t.name).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

fn args(c: &mut Criterion) {
    let mut group = c.benchmark_group("args");
    let validator = ArgValidator::compile(&synthetic_schema());
    let valid = json!({"value": 7});
    let invalid = json!({"value": "seven", "extra": true});
    group.bench_function("validate_ok", |b| {
        b.iter(|| validator.check(black_box(&valid)).is_ok())
    });
    group.bench_function("validate_refused", |b| {
        b.iter(|| validator.check(black_box(&invalid)).is_err())
    });
    let typical = ArgValidator::compile(&typical_schema());
    let typical_args = json!({"owner": "acme", "repo": "web", "state": "open", "per_page": 50});
    group.bench_function("validate_typical_ok", |b| {
        b.iter(|| typical.check(black_box(&typical_args)).is_ok())
    });
    group.finish();
}

fn big_value(bytes: usize) -> Value {
    let row = json!({"id": 12345, "title": "An issue title with some words", "state": "open"});
    let per_row = row.to_string().len() + 1;
    Value::Array(vec![row; bytes / per_row])
}

fn result(c: &mut Criterion) {
    let mut group = c.benchmark_group("result");
    let trivial = ToolResult {
        content: vec![text_block(
            r#"{"connector":"connector_99","tool":"lookup_record_99","value":7}"#,
        )],
        structured_content: Some(
            json!({"connector": "connector_99", "tool": "lookup_record_99", "value": 7}),
        ),
        is_error: false,
    };
    group.bench_function("unwrap_value_structured", |b| {
        b.iter(|| black_box(&trivial).unwrap_value())
    });
    let text_only = ToolResult {
        content: vec![text_block(big_value(10_000).to_string())],
        ..ToolResult::default()
    };
    group.bench_function("unwrap_value_parse_10kb_text", |b| {
        b.iter(|| black_box(&text_only).unwrap_value())
    });
    for (name, value) in [
        ("under_cap", json!({"okCount": 10})),
        ("100kb", big_value(100_000)),
        ("1mb", big_value(1_000_000)),
    ] {
        group.bench_with_input(BenchmarkId::new("truncate", name), &value, |b, v| {
            b.iter_batched(
                || v.clone(),
                |v| truncate_result(v, RESULT_CHARS),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    let long = "é".repeat(5_000);
    group.bench_function("clamp_text_10kb", |b| {
        b.iter(|| clamp_text(black_box(&long), 1_000).len())
    });
    let stashed = big_value(1_000_000).to_string();
    group.bench_function("page_utf8_1mb_at_500k", |b| {
        b.iter(|| {
            page_utf8(black_box(&stashed), 500_000, RESULT_CHARS)
                .text
                .len()
        })
    });
    group.finish();
}

criterion_group!(benches, schema, address, args, result);
criterion_main!(benches);
