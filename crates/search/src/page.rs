//! The search page builder: `search_tools` and `connecta.search` arguments in,
//! one page (contract S1) out. The gateway and the discovery evaluation call
//! exactly this code.
//!
//! Decisions, written down:
//! - **Default shape.** Without `includeSchemas`, every match carries its
//!   compact *input* shape (so `search_tools` → `call_tool` needs no second
//!   read) but no output shape. `includeSchemas: "compact"` adds the compact
//!   output shape; `"json"` returns the exact input and output schemas and the
//!   raw `annotations`. Every match carries `readOnly` (from the one
//!   predicate, [`connecta_core::policy::is_read_only`]) so the agent knows whether
//!   `call_tool` or `call_destructive_tool` applies.
//! - **Descriptions.** Without `fullDescriptions`, a description is its first
//!   sentence, at most 160 bytes, cut on a word boundary and marked `…`.
//! - **Guides.** A connector's guide appears once per page, on that
//!   connector's first match: `guideSummary` (≤ 120 characters) and
//!   `guideRequired: true` when the operator requires it; the full `guide`
//!   text only with `fullDescriptions` (otherwise `skills {name: connector}`).
//! - **Key lists** (`inputKeys`, `requiredInputKeys`, `outputKeys`) are
//!   code-mode only ([`Surface::CodeMode`], `includeSchemaKeys` default true);
//!   `search_tools` never carries them and rejects `includeSchemaKeys`.
//! - **No match.** A query whose words are all function words, or whose best
//!   match is implausible, returns an empty page with `matchMode: "none"`, a
//!   `queryAnalysis`, and a `hint`; an empty query browses.
//! - **Bounds.** `limit` outside 1–100 is `invalid_args`; a page over 256,000
//!   serialized bytes is `result_too_large`; both name the ways to ask for
//!   less. Nothing is silently shrunk (contract S3).

use serde_json::{Map, Value, json};

use connecta_core::config::Guide;
use connecta_core::error::{ErrorCode, MAX_ECHO_BYTES, NextAction, ToolError, clamp_text};
use connecta_core::policy::Safety;

use super::entry::{EntryOptions, Schemas, entry};
use super::index::CatalogIndex;
use super::op::Op;
use super::rank::{MatchMode, QueryAnalysis, Ranked, SearchQuery, rank};
use super::source::Source;
use super::suggest::nearest;

pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 100;
/// Contract S3: the serialized page ceiling.
pub const MAX_PAGE_BYTES: usize = 256_000;
/// Queries longer than this are refused: discovery wants 2–4 terms.
pub const MAX_QUERY_BYTES: usize = 1_024;

/// Which surface is asking: the arguments differ by one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The `search_tools` meta-tool.
    SearchTools,
    /// `connecta.search` inside a program.
    CodeMode,
}

impl Surface {
    fn tool(self) -> &'static str {
        match self {
            Surface::SearchTools => "search_tools",
            Surface::CodeMode => "connecta.search",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaFormat {
    Compact,
    Json,
}

/// Validated search arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    pub surface: Surface,
    pub query: String,
    pub connector: Option<String>,
    pub safety: Safety,
    pub limit: usize,
    pub offset: usize,
    /// `None`: the default (compact input shape only).
    pub include_schemas: Option<SchemaFormat>,
    pub full_descriptions: bool,
    /// Always false on `search_tools`.
    pub include_schema_keys: bool,
}

impl SearchRequest {
    /// A request with every default, for `query`.
    pub fn new(surface: Surface, query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            surface,
            query: query.into(),
            connector: None,
            safety: Safety::All,
            limit: DEFAULT_LIMIT,
            offset: 0,
            include_schemas: None,
            full_descriptions: false,
            include_schema_keys: surface == Surface::CodeMode,
        }
    }
}

/// Validate `search_tools` / `connecta.search` arguments. `args` may be
/// `null` (every default).
pub fn parse_search_args(args: &Value, surface: Surface) -> Result<SearchRequest, ToolError> {
    let mut req = SearchRequest::new(surface, "");
    let empty = Map::new();
    let map = match args {
        Value::Null => &empty,
        Value::Object(m) => m,
        _ => {
            return Err(ToolError::invalid_args(
                "search arguments must be an object",
            ));
        }
    };
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "query" => {
                let q = str_arg(key, value)?;
                if q.len() > MAX_QUERY_BYTES {
                    return Err(ToolError::invalid_args(format!(
                        "query is {} bytes; the limit is {MAX_QUERY_BYTES}. Use 2–4 distinctive action or object words",
                        q.len()
                    )));
                }
                req.query = q.to_owned();
            }
            "connector" => req.connector = Some(str_arg(key, value)?.to_owned()),
            "safety" => {
                req.safety = match value.as_str() {
                    Some("readOnly") => Safety::ReadOnly,
                    Some("approvalRequired") => Safety::ApprovalRequired,
                    Some("all") => Safety::All,
                    _ => {
                        return Err(ToolError::invalid_args(
                            "safety must be \"readOnly\", \"approvalRequired\" or \"all\"",
                        ));
                    }
                }
            }
            "limit" => {
                req.limit = match value.as_u64() {
                    Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => n as usize,
                    _ => {
                        return Err(ToolError::invalid_args(format!(
                            "limit must be an integer from 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}); got {}. Page through more with offset and nextOffset",
                            clamp_text(&value.to_string(), 64)
                        ))
                        .detail("hint", "use limit 1–100 and follow nextOffset"));
                    }
                }
            }
            "offset" => {
                req.offset = match value.as_u64() {
                    Some(n) if n <= u32::MAX as u64 => n as usize,
                    _ => {
                        return Err(ToolError::invalid_args(
                            "offset must be a non-negative integer (use nextOffset from the previous page)",
                        ));
                    }
                }
            }
            "includeSchemas" => {
                req.include_schemas = Some(match value.as_str() {
                    Some("compact") => SchemaFormat::Compact,
                    Some("json") => SchemaFormat::Json,
                    _ => {
                        return Err(ToolError::invalid_args(
                            "includeSchemas must be \"compact\" or \"json\"",
                        ));
                    }
                })
            }
            "fullDescriptions" => req.full_descriptions = bool_arg(key, value)?,
            "includeSchemaKeys" if surface == Surface::CodeMode => {
                req.include_schema_keys = bool_arg(key, value)?
            }
            other => {
                let allowed = match surface {
                    Surface::SearchTools => {
                        "query, connector, safety, limit, offset, includeSchemas, fullDescriptions"
                    }
                    Surface::CodeMode => {
                        "query, connector, safety, limit, offset, includeSchemas, fullDescriptions, includeSchemaKeys"
                    }
                };
                return Err(ToolError::invalid_args(format!(
                    "unknown argument \"{}\" for {}; it takes {allowed}",
                    clamp_text(other, 64),
                    surface.tool()
                )));
            }
        }
    }
    Ok(req)
}

fn str_arg<'v>(key: &str, value: &'v Value) -> Result<&'v str, ToolError> {
    value
        .as_str()
        .ok_or_else(|| ToolError::invalid_args(format!("{key} must be a string")))
}

fn bool_arg(key: &str, value: &Value) -> Result<bool, ToolError> {
    value
        .as_bool()
        .ok_or_else(|| ToolError::invalid_args(format!("{key} must be true or false")))
}

/// Build one search page over `sources` (the connectors in scope; the
/// gateway may pass only the requested connector's). IDF is computed over
/// exactly the ready catalogs of the connectors searched.
pub fn search_page(req: &SearchRequest, sources: &[Source<'_>]) -> Result<Value, ToolError> {
    let scope = Scope::of(req, sources)?;
    let indexes: Vec<&CatalogIndex> = scope.ready.iter().map(|(i, _)| *i).collect();
    let window = req.offset.saturating_add(req.limit);
    let ranked = rank(
        &indexes,
        &SearchQuery::new(&req.query, req.safety).scoped(req.connector.is_some()),
        window,
    );
    let tools = entries(req, &scope, &ranked);
    let returned = tools.len();
    let has_more = req.offset + returned < ranked.total;
    let mut page = Map::new();
    page.insert("tools".into(), Value::Array(tools));
    page.insert("total".into(), json!(ranked.total));
    page.insert("offset".into(), json!(req.offset));
    page.insert("limit".into(), json!(req.limit));
    page.insert("hasMore".into(), json!(has_more));
    if has_more {
        page.insert("nextOffset".into(), json!(req.offset + returned));
    }
    match ranked.mode {
        MatchMode::Partial => {
            page.insert("matchMode".into(), json!("partial"));
            page.insert("queryAnalysis".into(), analysis(&ranked.analysis, false));
        }
        MatchMode::None => {
            page.insert("matchMode".into(), json!("none"));
            page.insert("queryAnalysis".into(), analysis(&ranked.analysis, true));
            page.insert("hint".into(), json!(hint(&ranked, &scope.down_words)));
        }
        MatchMode::All | MatchMode::Browse => {}
    }
    if !scope.unavailable.is_empty() {
        page.insert("unavailable".into(), Value::Array(scope.unavailable));
    }
    let page = Value::Object(page);
    check_size(&page, req.surface.tool(), SEARCH_LESS)?;
    Ok(page)
}

/// The connectors a request searches: the ready ones with their guides,
/// and the unavailable ones as the page reports them.
struct Scope<'a> {
    ready: Vec<(&'a CatalogIndex, Option<&'a Guide>)>,
    unavailable: Vec<Value>,
    /// The words of the failed connectors' ids (`slack-prod` → slack, prod).
    down_words: Vec<String>,
}

impl<'a> Scope<'a> {
    fn of(req: &SearchRequest, sources: &[Source<'a>]) -> Result<Scope<'a>, ToolError> {
        let scoped: Vec<Source<'a>> = match &req.connector {
            None => sources.to_vec(),
            Some(c) => {
                let hit: Vec<Source<'a>> = sources
                    .iter()
                    .filter(|s| s.connector() == c)
                    .copied()
                    .collect();
                if hit.is_empty() {
                    return Err(unknown_connector(c, sources));
                }
                hit
            }
        };
        let mut scope = Scope {
            ready: Vec::new(),
            unavailable: Vec::new(),
            down_words: Vec::new(),
        };
        for s in scoped {
            match s {
                Source::Ready { index, guide } => scope.ready.push((index, guide)),
                // A search scoped to a connector that failed is that error.
                Source::Failed { error, .. } if req.connector.is_some() => {
                    return Err(error.clone());
                }
                Source::Failed { connector, error } => {
                    scope.down_words.extend(id_words(connector));
                    let mut entry = json!({
                        "connector": connector,
                        "code": error.code.as_str(),
                        "retryable": error.retryable,
                    });
                    // When the connector is next worth asking (a child in
                    // its restart backoff, a downstream's Retry-After).
                    if let Some(ms) = error.retry_after_ms {
                        entry["retryAfterMs"] = json!(ms);
                    }
                    scope.unavailable.push(entry);
                }
            }
        }
        Ok(scope)
    }
}

/// The page's entries for the ranked hits past the offset; a connector's
/// guide rides on its first match only.
fn entries(req: &SearchRequest, scope: &Scope<'_>, ranked: &Ranked) -> Vec<Value> {
    let opts = EntryOptions {
        schemas: match req.include_schemas {
            None => Schemas::CompactInput,
            Some(SchemaFormat::Compact) => Schemas::Compact,
            Some(SchemaFormat::Json) => Schemas::Json,
        },
        full_descriptions: req.full_descriptions,
        keys: req.surface == Surface::CodeMode && req.include_schema_keys,
        annotations: req.include_schemas == Some(SchemaFormat::Json),
    };
    let mut guided: Vec<usize> = Vec::new();
    ranked
        .hits
        .iter()
        .skip(req.offset)
        .map(|h| {
            let (index, guide) = scope.ready[h.source];
            let guide = guide.filter(|_| {
                let first = !guided.contains(&h.source);
                guided.push(h.source);
                first
            });
            entry(index, h.tool, guide, opts)
        })
        .collect()
}

/// Why a query found nothing, and what to ask instead.
fn hint(ranked: &Ranked, down_words: &[String]) -> String {
    let (down, absent): (Vec<&String>, Vec<&String>) = ranked
        .missing_services
        .iter()
        .partition(|m| down_words.contains(m));
    let services = match (down.is_empty(), absent.is_empty()) {
        (true, true) => String::new(),
        (false, true) => format!(
            "the query names {}, whose connector is unavailable right now (see unavailable): its tools could not be searched; try again later",
            join_words(&down)
        ),
        (true, false) => format!(
            "the query names {}, which no connector here serves: no tool here is an answer; send an empty query to browse what is connected",
            join_words(&absent)
        ),
        (false, false) => format!(
            "the query names {}, which no connector here serves, and {}, whose connector is unavailable right now (see unavailable)",
            join_words(&absent),
            join_words(&down)
        ),
    };
    let hint = match (ranked.opposed, ranked.other_change, ranked.asks) {
        _ if !services.is_empty() => return services,
        (1.., 0, Op::Write) => {
            "the tools matching these words only read, and the query asks to change something: no tool here does that; to read instead, ask with a read verb (list, show, find)"
        }
        (0, 1.., Op::Write) => {
            "the tools matching these words make another kind of change than the query's verb names (create where it asks to delete, say): no tool here does that; search the object alone to see what its tools do"
        }
        (1.., 1.., Op::Write) => {
            "the tools matching these words only read, or make another kind of change than the query's verb names: no tool here does that; search the object alone to see what its tools do"
        }
        (1.., _, Op::Read) => {
            "the tools matching these words all change something, and the query asks to read; to change something, name the action (create, update, delete…)"
        }
        _ if ranked.analysis.unmatched.is_empty() => {
            "the query has only function words; search with 2–4 distinctive action or object words, or send an empty query to browse"
        }
        _ => {
            "no tool plausibly matches these words; try other words for the action or the object, or send an empty query (optionally with connector) to browse"
        }
    };
    hint.to_owned()
}

/// The words of a connector id, lowercased: split where the search splits
/// names (`slack-prod` and `slackProd` both carry `slack`), and each part
/// between punctuation whole, since the tokenizer only gives a camel-case
/// word's parts (`PagerDuty` carries `pagerduty`).
fn id_words(id: &str) -> Vec<String> {
    let mut words = Vec::new();
    crate::tokenize::for_each_term(crate::lexicon::Lexicon::current(), id, |_, surface| {
        words.push(surface.to_owned())
    });
    words.extend(
        id.split(|c: char| !c.is_ascii_alphanumeric())
            .map(str::to_ascii_lowercase),
    );
    words
}

fn join_words(words: &[&String]) -> String {
    words
        .iter()
        .map(|w| w.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

const SEARCH_LESS: &str = "a smaller limit, includeSchemas \"compact\" instead of \"json\", fullDescriptions false, or a connector filter";

/// Contract S3: refuse a page whose serialized form exceeds the ceiling.
///
/// Most pages are a few kilobytes: a bound computed from the tree (every
/// string byte counted as its longest escape) clears them without
/// serializing anything. A page whose bound passes the ceiling is
/// serialized into a byte counter for its exact size.
pub(crate) fn check_size(page: &Value, what: &str, ask_less: &str) -> Result<(), ToolError> {
    if size_bound(page) <= MAX_PAGE_BYTES {
        return Ok(());
    }
    let mut counter = ByteCounter(0);
    let bytes = match serde_json::to_writer(&mut counter, page) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    };
    if bytes <= MAX_PAGE_BYTES {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::ResultTooLarge,
        format!(
            "the {what} result is {bytes} bytes, over the {MAX_PAGE_BYTES}-byte ceiling; ask for less: {ask_less}"
        ),
    )
    .detail("bytes", bytes)
    .detail("maxBytes", MAX_PAGE_BYTES))
}

/// At least the length of `serde_json::to_vec(v)`, without looking at any
/// string's bytes: a byte escapes to at most six (`\u001f`), a number is
/// at most 24 bytes long.
fn size_bound(v: &Value) -> usize {
    let string = |s: &str| 2 + 6 * s.len();
    match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!*b),
        Value::Number(_) => 24,
        Value::String(s) => string(s),
        Value::Array(a) => 2 + a.len().saturating_sub(1) + a.iter().map(size_bound).sum::<usize>(),
        Value::Object(m) => {
            2 + m.len().saturating_sub(1)
                + m.iter()
                    .map(|(k, v)| string(k) + 1 + size_bound(v))
                    .sum::<usize>()
        }
    }
}

struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn analysis(a: &QueryAnalysis, with_ignored: bool) -> Value {
    let mut m = Map::new();
    m.insert("represented".into(), json!(a.represented));
    m.insert("unmatched".into(), json!(a.unmatched));
    if with_ignored && !a.ignored.is_empty() {
        m.insert("ignored".into(), json!(a.ignored));
    }
    Value::Object(m)
}

fn unknown_connector(wanted: &str, sources: &[Source<'_>]) -> ToolError {
    let names: Vec<&str> = sources.iter().map(Source::connector).collect();
    let suggestions = nearest(wanted, names.iter().copied(), 3);
    let mut e = ToolError::new(
        ErrorCode::InvalidArgs,
        format!(
            "no connector \"{}\" is configured",
            clamp_text(wanted, MAX_ECHO_BYTES)
        ),
    )
    .next(NextAction::new("search_tools", json!({ "query": "" })));
    if !suggestions.is_empty() {
        e = e.detail("suggestions", json!(suggestions));
    }
    e
}

#[cfg(test)]
mod tests;
