//! The discovery evaluation.
//!
//! A corpus (the schema of `shared/data/discovery-development.json`: connectors
//! with tools, and labelled queries) is turned into real [`Catalog`]s and
//! [`CatalogIndex`]es, and every query runs through the same page builder the
//! gateway serves `search_tools` with ([`search_page`]). Metrics follow the
//! reference harness's definitions so numbers are comparable:
//! - **top-1**: the first returned tool is relevant (positive queries);
//! - **expected top-1**: the first returned tool is the labelled `expectedTop`;
//! - **recall**: relevant tools returned / relevant tools (positive queries;
//!   paginated queries walk every page through `nextOffset`);
//! - **precision**: relevant returned / returned, an empty answer to a
//!   negative query scoring 1 (mean over all queries);
//! - **false-positive rate**: negative queries that returned anything.
//!
//! Architecture invariant: the evaluation never re-implements ranking; if a
//! number here moves, the gateway's answers moved.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use connecta_core::catalog::{Catalog, Schema, ToolDef};
use connecta_core::policy::Annotations;
use connecta_search::{CatalogIndex, Source, Surface, parse_search_args, search_page};

/// The bars of `PERFORMANCE.md` ("Discovery quality").
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Bars {
    pub top1: f64,
    pub recall: f64,
    pub false_positive_rate: f64,
    pub precision: f64,
}

pub const BARS: Bars = Bars {
    top1: 0.97,
    recall: 1.0,
    false_positive_rate: 0.05,
    precision: 0.80,
};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Corpus {
    #[serde(default)]
    pub name: String,
    pub connectors: Vec<CorpusConnector>,
    pub queries: Vec<CorpusQuery>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorpusConnector {
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    pub tools: Vec<CorpusTool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorpusTool {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Option<Value>,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: Annotations,
}

/// One labelled query. Besides the shared schema's fields, a query may set
/// the search arguments `connector`, `safety`, `limit`, `offset`, and
/// `paginate: "all"` to walk every page through `nextOffset`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorpusQuery {
    #[serde(default)]
    pub id: Option<String>,
    pub category: String,
    pub query: String,
    #[serde(default)]
    pub relevant: Vec<String>,
    #[serde(default)]
    pub expected_top: Option<String>,
    #[serde(default)]
    pub connector: Option<String>,
    #[serde(default)]
    pub safety: Option<String>,
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub paginate: Option<String>,
    /// The exact rows, in order, of the one page `limit` and `offset` ask
    /// for. A query naming it is scored on that page: its recall is the share
    /// of these rows the page holds, and "expected page" counts the pages that
    /// are exactly this list.
    #[serde(default)]
    pub expected_page: Option<Vec<String>>,
}

pub fn load(text: &str) -> Result<Corpus, String> {
    serde_json::from_str(text).map_err(|e| format!("corpus does not parse: {e}"))
}

/// The indexes of a corpus, built once (as the gateway caches them).
pub struct Built {
    pub indexes: Vec<CatalogIndex>,
}

pub fn build(corpus: &Corpus) -> Built {
    let indexes = corpus
        .connectors
        .iter()
        .map(|c| {
            let tools = c
                .tools
                .iter()
                .map(|t| ToolDef {
                    name: t.name.clone(),
                    title: t.title.clone(),
                    description: t.description.clone(),
                    input_schema: t
                        .input_schema
                        .as_ref()
                        .map_or_else(|| json!({"type": "object"}).into(), Schema::new),
                    output_schema: t.output_schema.as_ref().map(Schema::new),
                    annotations: t.annotations.clone(),
                })
                .collect();
            CatalogIndex::with_description(
                Arc::new(Catalog::new(c.id.clone(), tools)),
                c.description.as_deref(),
            )
        })
        .collect();
    Built { indexes }
}

/// What one query returned and how it scored.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Case {
    pub id: String,
    pub category: String,
    pub query: String,
    pub returned: Vec<String>,
    pub relevant: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_top: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_mode: Option<String>,
    pub positive: bool,
    pub top1: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_top1: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_page: Option<bool>,
    pub recall: f64,
    pub precision: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Run one query through the page builder.
pub fn run_query(built: &Built, q: &CorpusQuery) -> Case {
    let sources: Vec<Source<'_>> = built.indexes.iter().map(Source::ready).collect();
    let mut args = serde_json::Map::new();
    args.insert("query".into(), json!(q.query));
    if let Some(c) = &q.connector {
        args.insert("connector".into(), json!(c));
    }
    if let Some(s) = &q.safety {
        args.insert("safety".into(), json!(s));
    }
    if let Some(l) = q.limit {
        args.insert("limit".into(), json!(l));
    }
    let walk_all = q.paginate.as_deref() == Some("all");
    let mut offset = q.offset.unwrap_or(0);
    let mut returned = Vec::new();
    let mut match_mode = None;
    let mut error = None;
    for page_no in 0..1000 {
        let mut a = args.clone();
        if offset > 0 {
            a.insert("offset".into(), json!(offset));
        }
        let page = match parse_search_args(&Value::Object(a), Surface::SearchTools) {
            Ok(req) => search_page(&req, &sources),
            Err(e) => Err(e),
        };
        let page = match page {
            Ok(p) => p,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        };
        if page_no == 0 {
            match_mode = page
                .get("matchMode")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        for t in page["tools"].as_array().into_iter().flatten() {
            if let Some(a) = t["address"].as_str() {
                returned.push(a.to_owned());
            }
        }
        match page.get("nextOffset").and_then(Value::as_u64) {
            Some(next) if walk_all && page["hasMore"] == true => offset = next,
            _ => break,
        }
    }
    score(q, returned, match_mode, error)
}

fn score(
    q: &CorpusQuery,
    returned: Vec<String>,
    match_mode: Option<String>,
    error: Option<String>,
) -> Case {
    let positive = !q.relevant.is_empty();
    let hits = returned.iter().filter(|a| q.relevant.contains(a)).count();
    let first = returned.first();
    Case {
        id: q.id.clone().unwrap_or_else(|| q.query.clone()),
        category: q.category.clone(),
        query: q.query.clone(),
        top1: positive && first.is_some_and(|a| q.relevant.contains(a)),
        // The labelled first row of the ranking: a page further on does
        // not show it.
        expected_top1: q
            .expected_top
            .as_ref()
            .filter(|_| q.offset.unwrap_or(0) == 0)
            .map(|e| first == Some(e)),
        expected_page: q.expected_page.as_ref().map(|page| *page == returned),
        recall: if let Some(page) = q.expected_page.as_ref().filter(|p| !p.is_empty()) {
            // One page was asked for: what it should hold is the expected page,
            // not every relevant tool of the query.
            page.iter().filter(|r| returned.contains(r)).count() as f64 / page.len() as f64
        } else if positive {
            // Each relevant tool counts once, however often it was returned.
            q.relevant.iter().filter(|r| returned.contains(r)).count() as f64
                / q.relevant.len() as f64
        } else if returned.is_empty() {
            1.0
        } else {
            0.0
        },
        precision: if !returned.is_empty() {
            hits as f64 / returned.len() as f64
        } else if positive {
            0.0
        } else {
            1.0
        },
        positive,
        relevant: q.relevant.clone(),
        expected_top: q.expected_top.clone(),
        returned,
        match_mode,
        error,
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub queries: usize,
    pub positives: usize,
    pub negatives: usize,
    /// `None` when there are no positive queries.
    pub top1: Option<f64>,
    pub expected_top1: Option<f64>,
    pub expected_top_queries: usize,
    /// The share of `expectedPage` queries whose page was exactly that list.
    pub expected_page: Option<f64>,
    pub expected_page_queries: usize,
    pub recall: Option<f64>,
    pub precision: f64,
    pub false_positive_rate: Option<f64>,
    pub mean_returned: f64,
}

pub fn summarize<'a>(cases: impl IntoIterator<Item = &'a Case>) -> Summary {
    let cases: Vec<&Case> = cases.into_iter().collect();
    let pos: Vec<&&Case> = cases.iter().filter(|c| c.positive).collect();
    let neg: Vec<&&Case> = cases.iter().filter(|c| !c.positive).collect();
    let exp: Vec<bool> = cases.iter().filter_map(|c| c.expected_top1).collect();
    let pages: Vec<bool> = cases.iter().filter_map(|c| c.expected_page).collect();
    let mean =
        |v: &mut dyn Iterator<Item = f64>, n: usize| (n > 0).then(|| v.sum::<f64>() / n as f64);
    Summary {
        queries: cases.len(),
        positives: pos.len(),
        negatives: neg.len(),
        top1: mean(
            &mut pos.iter().map(|c| f64::from(u8::from(c.top1))),
            pos.len(),
        ),
        expected_top1: mean(&mut exp.iter().map(|&b| f64::from(u8::from(b))), exp.len()),
        expected_top_queries: exp.len(),
        expected_page: mean(
            &mut pages.iter().map(|&b| f64::from(u8::from(b))),
            pages.len(),
        ),
        expected_page_queries: pages.len(),
        recall: mean(&mut pos.iter().map(|c| c.recall), pos.len()),
        precision: mean(&mut cases.iter().map(|c| c.precision), cases.len()).unwrap_or(1.0),
        false_positive_rate: mean(
            &mut neg
                .iter()
                .map(|c| f64::from(u8::from(!c.returned.is_empty()))),
            neg.len(),
        ),
        mean_returned: mean(
            &mut cases.iter().map(|c| c.returned.len() as f64),
            cases.len(),
        )
        .unwrap_or(0.0),
    }
}

/// The evaluation of one corpus.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub corpus: String,
    pub tools: usize,
    pub connectors: usize,
    pub overall: Summary,
    pub categories: BTreeMap<String, Summary>,
    pub cases: Vec<Case>,
    /// Bars that were missed (empty: all met).
    pub missed_bars: Vec<String>,
}

pub fn evaluate(corpus: &Corpus) -> Report {
    let built = build(corpus);
    let cases: Vec<Case> = corpus
        .queries
        .iter()
        .map(|q| run_query(&built, q))
        .collect();
    let tools = built.indexes.iter().map(CatalogIndex::len).sum();
    report(&corpus.name, tools, built.indexes.len(), cases)
}

/// Several corpora's reports as one: every case of each, scored together
/// (the figures of a pool of corpora, such as the blind holdouts).
pub fn pool(name: &str, reports: &[Report]) -> Report {
    let cases: Vec<Case> = reports.iter().flat_map(|r| r.cases.clone()).collect();
    let tools = reports.iter().map(|r| r.tools).sum();
    let connectors = reports.iter().map(|r| r.connectors).sum();
    report(name, tools, connectors, cases)
}

/// The report of `cases`: overall, by category, and the bars missed.
fn report(name: &str, tools: usize, connectors: usize, cases: Vec<Case>) -> Report {
    let overall = summarize(&cases);
    let mut categories: BTreeMap<String, Vec<&Case>> = BTreeMap::new();
    for c in &cases {
        categories.entry(c.category.clone()).or_default().push(c);
    }
    let categories = categories
        .into_iter()
        .map(|(k, v)| (k, summarize(v)))
        .collect();
    let missed_bars = check_bars(&overall, &cases);
    Report {
        corpus: name.to_owned(),
        tools,
        connectors,
        overall,
        categories,
        cases,
        missed_bars,
    }
}

fn check_bars(s: &Summary, cases: &[Case]) -> Vec<String> {
    let mut missed = Vec::new();
    if let Some(t) = s.top1
        && t < BARS.top1
    {
        missed.push(format!(
            "top-1 {:.1}% < {:.0}%",
            t * 100.0,
            BARS.top1 * 100.0
        ));
    }
    if let Some(r) = s.recall
        && r < BARS.recall
    {
        missed.push(format!(
            "recall {:.1}% < {:.0}%",
            r * 100.0,
            BARS.recall * 100.0
        ));
    }
    if let Some(f) = s.false_positive_rate
        && f > BARS.false_positive_rate
    {
        missed.push(format!(
            "false positives {:.1}% > {:.0}%",
            f * 100.0,
            BARS.false_positive_rate * 100.0
        ));
    }
    if s.precision < BARS.precision {
        missed.push(format!(
            "precision {:.1}% < {:.0}%",
            s.precision * 100.0,
            BARS.precision * 100.0
        ));
    }
    for c in cases.iter().filter(|c| c.error.is_some()) {
        missed.push(format!(
            "query {} failed: {}",
            c.id,
            c.error.as_deref().unwrap_or("")
        ));
    }
    missed
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), |x| format!("{:.1}%", x * 100.0))
}

/// The human report: one table per corpus, categories then overall.
pub fn render_markdown(r: &Report, verbose: bool) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {} — {} tools, {} connectors, {} queries\n",
        if r.corpus.is_empty() {
            "corpus"
        } else {
            &r.corpus
        },
        r.tools,
        r.connectors,
        r.overall.queries
    );
    let _ = writeln!(
        out,
        "| category | queries | top-1 | expected top-1 | recall | precision | false positives | mean returned |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let row = |out: &mut String, name: &str, s: &Summary| {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {:.2} |",
            s.queries,
            pct(s.top1),
            if s.expected_top_queries > 0 {
                format!("{} ({})", pct(s.expected_top1), s.expected_top_queries)
            } else {
                "—".to_owned()
            },
            pct(s.recall),
            pct(Some(s.precision)),
            pct(s.false_positive_rate),
            s.mean_returned
        );
    };
    for (k, s) in &r.categories {
        row(&mut out, k, s);
    }
    row(&mut out, "**overall**", &r.overall);
    if r.overall.expected_page_queries > 0 {
        let _ = writeln!(
            out,
            "\nExpected pages: {} of {} exactly as labelled.",
            r.cases
                .iter()
                .filter(|c| c.expected_page == Some(true))
                .count(),
            r.overall.expected_page_queries
        );
    }
    let _ = writeln!(
        out,
        "\nBars: top-1 ≥ {:.0}%, recall {:.0}%, false positives ≤ {:.0}%, precision ≥ {:.0}% — {}",
        BARS.top1 * 100.0,
        BARS.recall * 100.0,
        BARS.false_positive_rate * 100.0,
        BARS.precision * 100.0,
        if r.missed_bars.is_empty() {
            "**met**".to_owned()
        } else {
            format!("**missed**: {}", r.missed_bars.join("; "))
        }
    );
    let imperfect: Vec<&Case> = r
        .cases
        .iter()
        .filter(|c| {
            verbose
                || !c.top1 && c.positive
                || c.recall < 1.0
                || c.expected_top1 == Some(false)
                || c.expected_page == Some(false)
                || c.error.is_some()
        })
        .collect();
    if !imperfect.is_empty() {
        let _ = writeln!(
            out,
            "\n{} queries:\n",
            if verbose { "All" } else { "Missed" }
        );
        for c in imperfect {
            let _ = writeln!(
                out,
                "- `{}` [{}] \"{}\" → {:?}{} (relevant {:?}, precision {:.2})",
                c.id,
                c.category,
                c.query,
                c.returned,
                c.match_mode
                    .as_deref()
                    .map(|m| format!(" matchMode={m}"))
                    .unwrap_or_default(),
                c.relevant,
                c.precision
            );
        }
    }
    out
}
