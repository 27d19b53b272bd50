//! `connecta demo-server`: a small MCP server on stdio over an in-memory
//! notebook, so a new user gets a working gateway with one command and no
//! network. Read-only tools are annotated `readOnlyHint: true`; the two that
//! change the notebook are not, and `delete_note` is `destructiveHint: true`.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 16×16 PNG (a teal square), returned by `tag_badge` so clients can see an
/// image block pass through the gateway intact.
const BADGE_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFUlEQVR42mNgaGggDY1qGNUwfDUAAJn5ABDeJGvjAAAAAElFTkSuQmCC";

#[derive(Debug, Clone)]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
}

fn seed() -> Vec<Note> {
    let raw: &[(&str, &str, &[&str])] = &[
        (
            "Team offsite plan",
            "Offsite on the 14th: agenda is roadmap review, hiring, and a long lunch.",
            &["planning", "team"],
        ),
        (
            "Release checklist",
            "Freeze the branch, run the full test suite, tag, write the changelog, announce.",
            &["release", "process"],
        ),
        (
            "Database migration notes",
            "Migrations run at boot. Never edit an applied migration; add a new one.",
            &["engineering", "database"],
        ),
        (
            "Customer call: Acme",
            "Acme wants SSO and an audit log export. Follow up on pricing next week.",
            &["customers", "sales"],
        ),
        (
            "Onboarding guide",
            "Day one: laptop, accounts, read the architecture doc, pair on a small fix.",
            &["team", "process"],
        ),
        (
            "Incident 42 postmortem",
            "Cache stampede after deploy. Fix: single-flight refresh and jittered TTLs.",
            &["engineering", "incident"],
        ),
        (
            "Q3 goals",
            "Ship the gateway, halve p95 latency, publish the security model.",
            &["planning"],
        ),
        (
            "Reading list",
            "Designing Data-Intensive Applications; The Rust Book; Release It!",
            &["personal"],
        ),
        (
            "API naming rules",
            "Verbs first: list_, get_, create_, delete_. Plural for collections.",
            &["engineering", "process"],
        ),
        (
            "Support rotation",
            "One week each, handover on Mondays, escalate P1s to the on-call lead.",
            &["team", "support"],
        ),
        (
            "Pricing experiment",
            "Try a usage-based tier for small teams; measure conversion for six weeks.",
            &["sales", "planning"],
        ),
        (
            "Retro notes",
            "Keep: pairing. Stop: late reviews. Start: smaller pull requests.",
            &["team", "process"],
        ),
    ];
    raw.iter()
        .enumerate()
        .map(|(i, (title, body, tags))| Note {
            id: i as u64 + 1,
            title: (*title).to_owned(),
            body: (*body).to_owned(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        })
        .collect()
}

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn tools() -> Vec<Tool> {
    let ro = |title: &str| {
        ToolAnnotations::with_title(title)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false)
    };
    vec![
        Tool::new(
            "list_notes",
            "List notes in the notebook, optionally only those with a tag.",
            schema(json!({"type": "object", "properties": {"tag": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 100}}, "additionalProperties": false})),
        )
        .with_annotations(ro("List notes")),
        Tool::new(
            "get_note",
            "Get one note by id, with its full body.",
            schema(json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false})),
        )
        .with_annotations(ro("Get a note")),
        Tool::new(
            "search_notes",
            "Search notes by words in their title or body.",
            schema(json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"], "additionalProperties": false})),
        )
        .with_annotations(ro("Search notes")),
        Tool::new(
            "note_stats",
            "Count notes and words, per tag.",
            schema(json!({"type": "object", "properties": {}, "additionalProperties": false})),
        )
        .with_annotations(ro("Notebook statistics")),
        Tool::new(
            "tag_badge",
            "Render a small badge image for a tag.",
            schema(json!({"type": "object", "properties": {"tag": {"type": "string"}}, "required": ["tag"], "additionalProperties": false})),
        )
        .with_annotations(ro("Tag badge")),
        Tool::new(
            "create_note",
            "Create a note.",
            schema(json!({"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["title", "body"], "additionalProperties": false})),
        )
        .with_annotations(ToolAnnotations::with_title("Create a note").read_only(false).destructive(false).idempotent(false).open_world(false)),
        Tool::new(
            "delete_note",
            "Delete a note permanently.",
            schema(json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false})),
        )
        .with_annotations(ToolAnnotations::with_title("Delete a note").read_only(false).destructive(true).idempotent(true).open_world(false)),
    ]
}

#[derive(Clone)]
struct Demo {
    notes: Arc<Mutex<Vec<Note>>>,
    tools: Arc<Vec<Tool>>,
}

fn summary(n: &Note) -> Value {
    json!({"id": n.id, "title": n.title, "tags": n.tags})
}

fn full(n: &Note) -> Value {
    json!({"id": n.id, "title": n.title, "body": n.body, "tags": n.tags})
}

fn ok(v: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
    r.structured_content = Some(v);
    r
}

fn fail(msg: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(msg.to_owned())])
}

impl Demo {
    fn call(&self, name: &str, args: &JsonObject) -> CallToolResult {
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        let id = args.get("id").and_then(Value::as_u64);
        match name {
            "list_notes" => {
                let tag = args.get("tag").and_then(Value::as_str);
                let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(100) as usize;
                let hits: Vec<Value> = notes
                    .iter()
                    .filter(|n| tag.is_none_or(|t| n.tags.iter().any(|x| x == t)))
                    .take(limit)
                    .map(summary)
                    .collect();
                ok(json!({"notes": hits, "total": hits.len()}))
            }
            "get_note" => match notes.iter().find(|n| Some(n.id) == id) {
                Some(n) => ok(full(n)),
                None => fail("no note with that id"),
            },
            "search_notes" => {
                let q = args
                    .get("query")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_lowercase();
                let words: Vec<&str> = q.split_whitespace().collect();
                let hits: Vec<Value> = notes
                    .iter()
                    .filter(|n| {
                        let hay = format!("{} {}", n.title, n.body).to_lowercase();
                        !words.is_empty() && words.iter().all(|w| hay.contains(w))
                    })
                    .map(summary)
                    .collect();
                ok(json!({"notes": hits, "total": hits.len()}))
            }
            "note_stats" => {
                let mut by_tag = serde_json::Map::new();
                for n in notes.iter() {
                    for t in &n.tags {
                        let e = by_tag.entry(t.clone()).or_insert(json!(0));
                        *e = json!(e.as_u64().unwrap_or(0) + 1);
                    }
                }
                let words: usize = notes
                    .iter()
                    .map(|n| n.body.split_whitespace().count())
                    .sum();
                ok(json!({"notes": notes.len(), "words": words, "byTag": by_tag}))
            }
            "tag_badge" => {
                let tag = args.get("tag").and_then(Value::as_str).unwrap_or("");
                CallToolResult::success(vec![
                    ContentBlock::text(format!("badge for #{tag}")),
                    ContentBlock::image(BADGE_PNG, "image/png"),
                ])
            }
            "create_note" => {
                let title = args
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let body = args
                    .get("body")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let tags = args
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|t| t.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                let id = notes.iter().map(|n| n.id).max().unwrap_or(0) + 1;
                let note = Note {
                    id,
                    title,
                    body,
                    tags,
                };
                let v = full(&note);
                notes.push(note);
                ok(v)
            }
            "delete_note" => {
                let before = notes.len();
                notes.retain(|n| Some(n.id) != id);
                ok(json!({"deleted": before != notes.len()}))
            }
            other => fail(&format!("unknown tool {other}")),
        }
    }
}

impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "connecta-demo",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("An in-memory notebook for trying connecta.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        Ok(CallToolResponse::Complete(self.call(&request.name, &args)))
    }
}

pub async fn run() -> anyhow::Result<ExitCode> {
    let demo = Demo {
        notes: Arc::new(Mutex::new(seed())),
        tools: Arc::new(tools()),
    };
    let running = demo.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(ExitCode::SUCCESS)
}
