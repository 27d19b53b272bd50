//! Search benchmarks (compact schemas are timed with the other hot
//! functions, in `crates/bench/benches/hot_paths.rs`).
//!
//! Synthetic catalogs in the benchmark shape of `PERFORMANCE.md`: connector
//! `connector_<c>`, tools `lookup_record_<t>` described as "Retrieve synthetic
//! performance record <t> from shard <c>.", input `{value: integer}`.
//! Shapes: 10×10 (100 tools), 25×40 (1,000), 100×100 (10,000) and the wide
//! 1×10,000 (one connector with every tool).
//!
//! - `build`: build every index of the shape (what a catalog load costs);
//! - `cold`: build every index, then answer one query (what the first
//!   `search_tools` after a catalog change costs);
//! - `warm`: indexes built; one page at the default limit, page building and
//!   compact shapes included — an exact name, a selective query (its best
//!   answer is one tool, though its words occur in every description), a rare
//!   word (`42`: a handful of tools carry it), a query matching every tool,
//!   and a browse;
//!
//! The `mixed` groups use realistic text instead: the tools of the discovery
//! development corpus (`crates/eval/corpus/development.json`, 173 tools of
//! 17 real MCP servers), copied under numbered connector ids (`github_3`) up
//! to 100, 1,000 and 10,000 tools, each given one of five typical input
//! schemas. `mixed/build` builds every index; `mixed/warm` runs all 105
//! development queries (direct, conversational, multi-intent, short,
//! negative, connector-filtered, paginated) once per iteration — divide by
//! 105 for the cost of one query.
//!
//! Index memory per tool is printed once per shape (`heap_bytes`).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

use connecta_core::catalog::{Catalog, Schema, ToolDef};
use connecta_core::policy::Annotations;
use connecta_search::{
    CatalogIndex, SearchRequest, Source, Surface, parse_search_args, search_page,
};

const SHAPES: &[(usize, usize)] = &[(10, 10), (25, 40), (100, 100), (1, 10_000)];

fn label(conns: usize, tools: usize) -> String {
    format!("{conns}x{tools}")
}

fn catalogs(connectors: usize, tools: usize) -> Vec<Arc<Catalog>> {
    let schema = Schema::from(json!({
        "type": "object",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"]
    }));
    (0..connectors)
        .map(|c| {
            let defs = (0..tools)
                .map(|t| {
                    let t = c * tools + t;
                    ToolDef {
                        name: format!("lookup_record_{t}"),
                        title: None,
                        description: Some(format!(
                            "Retrieve synthetic performance record {t} from shard {c}."
                        )),
                        input_schema: schema.clone(),
                        output_schema: None,
                        annotations: Annotations {
                            read_only_hint: Some(true),
                            ..Annotations::default()
                        },
                    }
                })
                .collect();
            Arc::new(Catalog::new(format!("connector_{c}"), defs))
        })
        .collect()
}

const CORPUS: &str = include_str!("../../eval/corpus/development.json");
const MIXED_SIZES: &[usize] = &[100, 1_000, 10_000];

fn typical_schemas() -> Vec<Schema> {
    [
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string"},
                "state": {"enum": ["open", "closed", "all"], "default": "open"},
                "labels": {"type": "array", "items": {"type": "string"}},
                "since": {"type": "string", "format": "date-time"},
                "perPage": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["owner", "repo"]
        }),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "cursor": {"type": ["string", "null"]}
            },
            "required": ["query"]
        }),
        json!({
            "type": "object",
            "properties": {
                "filter": {"$ref": "#/$defs/Filter"},
                "sort": {"anyOf": [{"const": "created"}, {"const": "updated"}]}
            },
            "$defs": {"Filter": {"allOf": [
                {"type": "object", "properties": {"team": {"type": "string"}}, "required": ["team"]},
                {"type": "object", "properties": {"assignee": {"type": "string"}}}
            ]}}
        }),
        json!({"type": "object", "properties": {}}),
    ]
    .into_iter()
    .map(Schema::from)
    .collect()
}

/// Copies of the development corpus's connectors, in order, until `n` tools.
/// Also returns the corpus queries as `search_tools` arguments.
fn mixed_catalogs(n: usize) -> (Vec<Arc<Catalog>>, Vec<SearchRequest>) {
    let corpus: Value = serde_json::from_str(CORPUS).expect("the development corpus parses");
    let connectors = corpus["connectors"].as_array().expect("connectors");
    let schemas = typical_schemas();
    let mut cats = Vec::new();
    let mut made = 0;
    'copies: for copy in 0.. {
        for c in connectors {
            if made == n {
                break 'copies;
            }
            let id = c["id"].as_str().expect("id");
            let tools: Vec<ToolDef> = c["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .take(n - made)
                .map(|t| {
                    made += 1;
                    ToolDef {
                        name: t["name"].as_str().expect("name").to_owned(),
                        title: t["title"].as_str().map(str::to_owned),
                        description: t["description"].as_str().map(str::to_owned),
                        input_schema: schemas[made % schemas.len()].clone(),
                        output_schema: None,
                        annotations: serde_json::from_value(t["annotations"].clone())
                            .unwrap_or_default(),
                    }
                })
                .collect();
            let id = if copy == 0 {
                id.to_owned()
            } else {
                format!("{id}_{copy}")
            };
            cats.push(Arc::new(Catalog::new(id, tools)));
        }
    }
    let queries = corpus["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            let mut args = serde_json::Map::new();
            for key in ["query", "connector", "safety", "limit", "offset"] {
                if let Some(v) = q.get(key) {
                    args.insert(key.into(), v.clone());
                }
            }
            parse_search_args(&Value::Object(args), Surface::SearchTools)
                .expect("corpus queries are valid arguments")
        })
        .collect();
    (cats, queries)
}

fn build(cats: &[Arc<Catalog>]) -> Vec<CatalogIndex> {
    cats.iter()
        .map(|c| CatalogIndex::build(c.clone()))
        .collect()
}

fn page(indexes: &[CatalogIndex], query: &str) -> Value {
    let sources: Vec<Source<'_>> = indexes.iter().map(Source::ready).collect();
    let req = SearchRequest::new(Surface::SearchTools, query);
    match search_page(&req, &sources) {
        Ok(p) => p,
        Err(e) => panic!("search failed: {e}"),
    }
}

fn bench_search(c: &mut Criterion) {
    let mut built = c.benchmark_group("build");
    built.sample_size(20);
    for &(conns, tools) in SHAPES {
        let cats = catalogs(conns, tools);
        let id = label(conns, tools);
        built.bench_with_input(BenchmarkId::new("index", id), &cats, |b, cats| {
            b.iter(|| black_box(build(cats)))
        });
    }
    built.finish();

    let mut cold = c.benchmark_group("cold");
    cold.sample_size(20);
    for &(conns, tools) in SHAPES {
        let cats = catalogs(conns, tools);
        let id = label(conns, tools);
        cold.bench_with_input(BenchmarkId::new("build_and_query", id), &cats, |b, cats| {
            b.iter(|| {
                let idx = build(cats);
                black_box(page(&idx, "lookup record 42"))
            })
        });
    }
    cold.finish();

    let mut warm = c.benchmark_group("warm");
    for &(conns, tools) in SHAPES {
        let n = conns * tools;
        let id = label(conns, tools);
        let idx = build(&catalogs(conns, tools));
        let bytes: usize = idx.iter().map(CatalogIndex::heap_bytes).sum();
        eprintln!(
            "index memory at {id}: {bytes} bytes, {} bytes/tool",
            bytes / n
        );
        let all = page(&idx, "lookup record");
        assert_eq!(all["total"], n, "the broad query matches every tool");
        let one = page(&idx, "lookup_record_42");
        assert_eq!(one["tools"][0]["name"], "lookup_record_42");
        let rare = page(&idx, "42");
        assert!(
            rare["total"].as_u64().is_some_and(|t| t < 200),
            "42 is rare"
        );
        warm.bench_with_input(BenchmarkId::new("exact_name", &id), &idx, |b, idx| {
            b.iter(|| black_box(page(idx, "lookup_record_42")))
        });
        warm.bench_with_input(BenchmarkId::new("selective", &id), &idx, |b, idx| {
            b.iter(|| black_box(page(idx, "performance record 42 shard 3")))
        });
        warm.bench_with_input(BenchmarkId::new("rare_word", &id), &idx, |b, idx| {
            b.iter(|| black_box(page(idx, "42")))
        });
        warm.bench_with_input(
            BenchmarkId::new("matches_every_tool", &id),
            &idx,
            |b, idx| b.iter(|| black_box(page(idx, "lookup record"))),
        );
        warm.bench_with_input(BenchmarkId::new("browse", &id), &idx, |b, idx| {
            b.iter(|| black_box(page(idx, "")))
        });
    }
    warm.finish();
}

fn bench_mixed(c: &mut Criterion) {
    let mut built = c.benchmark_group("mixed/build");
    built.sample_size(20);
    for &n in MIXED_SIZES {
        let (cats, _) = mixed_catalogs(n);
        built.bench_with_input(BenchmarkId::new("index", n), &cats, |b, cats| {
            b.iter(|| black_box(build(cats)))
        });
    }
    built.finish();

    let mut warm = c.benchmark_group("mixed/warm");
    for &n in MIXED_SIZES {
        let (cats, requests) = mixed_catalogs(n);
        let idx = build(&cats);
        let sources: Vec<Source<'_>> = idx.iter().map(Source::ready).collect();
        warm.bench_with_input(
            BenchmarkId::new("all_105_dev_queries", n),
            &requests,
            |b, requests| {
                b.iter(|| {
                    for req in requests {
                        // A connector filter that names a copy not present
                        // at this size is an error page; it still counts.
                        let _ = black_box(search_page(req, &sources));
                    }
                })
            },
        );
    }
    warm.finish();
}

criterion_group!(benches, bench_search, bench_mixed);
criterion_main!(benches);
