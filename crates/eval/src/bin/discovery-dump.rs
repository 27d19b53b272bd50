//! `cargo run -p connecta-eval --bin discovery-dump -- CORPUS.json … > pages.jsonl`
//!
//! Prints every page the page builder returns for every query of the given
//! corpora, one JSON line per (query, argument variant), plus a synthetic
//! catalog in the benchmark shape. It exists for performance work: a change
//! meant to make search faster must leave this output byte-identical
//! (`diff before.jsonl after.jsonl`). Variants cover the arguments that
//! change ranking or entries: the default page, `limit: 100`, `offset: 3`,
//! each safety filter, compact and JSON schemas, and code mode.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};

use connecta_core::catalog::{Catalog, Schema, ToolDef};
use connecta_core::policy::Annotations;
use connecta_eval::{build, load};
use connecta_search::{CatalogIndex, Source, Surface, parse_search_args, search_page};

fn variants() -> Vec<(Surface, Value)> {
    vec![
        (Surface::SearchTools, json!({})),
        (Surface::SearchTools, json!({"limit": 100})),
        (Surface::SearchTools, json!({"limit": 2, "offset": 3})),
        (Surface::SearchTools, json!({"safety": "readOnly"})),
        (Surface::SearchTools, json!({"safety": "approvalRequired"})),
        (
            Surface::SearchTools,
            json!({"includeSchemas": "compact", "fullDescriptions": true}),
        ),
        (Surface::SearchTools, json!({"includeSchemas": "json"})),
        (Surface::CodeMode, json!({"limit": 20})),
    ]
}

fn dump(label: &str, indexes: &[CatalogIndex], queries: &[(String, Option<String>)]) {
    let sources: Vec<Source<'_>> = indexes.iter().map(Source::ready).collect();
    for (query, connector) in queries {
        for (surface, extra) in variants() {
            let mut args = extra.clone();
            args["query"] = json!(query);
            if let Some(c) = connector {
                args["connector"] = json!(c);
            }
            let page = match parse_search_args(&args, surface) {
                Ok(req) => search_page(&req, &sources),
                Err(e) => Err(e),
            }
            .unwrap_or_else(|e| json!({ "error": e.to_string() }));
            let line = json!({"corpus": label, "args": args, "page": page});
            println!("{line}");
        }
    }
}

/// The benchmark shape: `connector_<c>` × `lookup_record_<t>`.
fn synthetic(connectors: usize, tools: usize) -> Vec<CatalogIndex> {
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
                            read_only_hint: Some(!t.is_multiple_of(3)),
                            ..Annotations::default()
                        },
                    }
                })
                .collect();
            CatalogIndex::build(Arc::new(Catalog::new(format!("connector_{c}"), defs)))
        })
        .collect()
}

fn main() -> ExitCode {
    for path in std::env::args().skip(1).map(PathBuf::from) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        let corpus = match load(&text) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        let built = build(&corpus);
        let mut queries: Vec<(String, Option<String>)> = corpus
            .queries
            .iter()
            .map(|q| (q.query.clone(), q.connector.clone()))
            .collect();
        // Every tool's name, spelled as it is and as words: the exact tier.
        for c in &corpus.connectors {
            for t in &c.tools {
                queries.push((t.name.clone(), None));
                queries.push((format!("{}.{}", c.id, t.name), None));
                queries.push((t.name.replace(['_', '-'], " "), None));
            }
        }
        dump(&path.display().to_string(), &built.indexes, &queries);
    }
    let queries: Vec<(String, Option<String>)> = [
        "lookup record",
        "lookup_record_42",
        "connector_3 lookup_record_342",
        "performance record 42 shard 3",
        "shard 7",
        "connector 7",
        "record",
        "",
        "nothing matches this",
        "retrieve synthetic",
    ]
    .iter()
    .map(|q| ((*q).to_owned(), None))
    .chain([("record 5".to_owned(), Some("connector_5".to_owned()))])
    .collect();
    dump("synthetic 10x10", &synthetic(10, 10), &queries);
    dump("synthetic 1x1000", &synthetic(1, 1000), &queries);
    ExitCode::SUCCESS
}
