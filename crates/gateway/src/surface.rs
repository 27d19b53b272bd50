//! What an agent sees before it calls anything: the server instructions, the
//! meta-tool definitions, and the built-in `usage` skill. Every byte here is
//! paid in every conversation, so it is kept short and measured in tests.

use serde_json::{Value, json};

use crate::Gateway;

/// A meta-tool definition, independent of the wire library.
#[derive(Debug, Clone)]
pub struct MetaToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub input_schema: Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// The server `instructions`: route selection, the fail-closed boundary and
/// the minimum program syntax. At most 1,000 bytes (a test checks).
pub fn instructions(code_mode: bool) -> &'static str {
    if code_mode {
        "connecta puts many tool servers behind a few tools. Find tools with search_tools; each match has an address <connector>.<tool>. \
One read-only call: call_tool {address, args}. Several calls, joins or big data: execute_code with an async arrow function, e.g. \
async () => { const r = await connecta.call(\"a.b\", {id: 1}); return r.items.map(i => i.id); } and return only what you need. \
Only tools marked readOnly run in call_tool or programs; anything that writes goes through call_destructive_tool with a reason, and a human may be asked. \
On auth_required use authorize_connector. Large call_tool results return a resultId for get_result. Details: skills {name: \"usage\"}."
    } else {
        "connecta puts many tool servers behind a few tools. Find tools with search_tools; each match has an address <connector>.<tool>. \
Call a read-only tool with call_tool {address, args}; use fields to keep only what you need. \
Only tools marked readOnly run in call_tool; anything that writes goes through call_destructive_tool with a reason, and a human may be asked. \
On auth_required use authorize_connector. Large results return a resultId for get_result. Details: skills {name: \"usage\"}."
    }
}

/// The built-in `usage` skill.
pub const USAGE_GUIDE: &str = r#"# Using connecta

connecta is one MCP server in front of many. You always see the same few tools; the real tools live behind them and are found by search.

## Find
search_tools {query, connector?, safety?, limit?, offset?, includeSchemas?, fullDescriptions?}
- query: 2-4 distinctive words about the action and the object ("list open issues"). An empty query browses.
- safety: "readOnly" (callable with call_tool), "approvalRequired" (needs call_destructive_tool) or "all".
- Every match carries its address <connector>.<tool>; use it byte for byte.
- matchMode "partial" means no tool matched every word; queryAnalysis says which words matched nothing.
- Pages: limit 1-100 (default 8), then offset = nextOffset while hasMore.

## Call
call_tool {address, args?, fields?, resultMode?, timeoutMs?, maxRetries?}
- Only tools that are explicitly read-only. Anything else fails with destructive_tool_requires_approval.
- fields: dot paths to keep, [] walks arrays: ["items[].id", "total"]. Paths that match nothing are reported.
- resultMode "mcp" (default) passes the tool's content through; "value" returns its JSON value.
- maxRetries 0-2 retries transient failures of read-only tools, honouring Retry-After.
- A result larger than the cap comes back as {truncated, resultId, head, nextAction}: page it with get_result {id, offset} until nextOffset is absent. With the result stash full it is {truncated, stashed: false, head} and cannot be paged: project with fields.

call_destructive_tool {address, args?, reason?, ...} runs anything, including writes. Say why in reason: a human approver may see it. It is never sent to the tool.

## Errors
Every failure is {error: {code, message, retryable, retryAfterMs?, nextAction?}}. If nextAction is present, it is the call to make next. Never retry retryable: false. Wait retryAfterMs before retrying rate_limited or unavailable.
- unknown_address / unknown_tool: search again.
- invalid_args: fix the arguments the message points at.
- auth_required: call authorize_connector {connector}. It returns a consent link for the user to open (OAuth connectors; retry after they have), or says what a human operator must set.
"#;

/// The program guidance appended to the usage guide when code mode is on.
pub const USAGE_PROGRAMS: &str = r#"
## Programs
execute_code {code} runs one JavaScript async arrow function next to the tools and returns its value:
async () => {
  const page = await connecta.search({query: "list issues", safety: "readOnly"});
  const issues = await connecta.call(page.tools[0].address, {state: "open"});
  return issues.items.filter(i => i.comments > 5).map(i => ({id: i.id, title: i.title}));
}
- await connecta.search(args), await connecta.describe({addresses}), await connecta.call(address, args), await connecta.batch([{address, args}]) (1-10 in parallel, each {ok, data} or {ok: false, error, errorDetails}), await connecta.emit({type: "text"|"image"|"audio", ...}) (shown after the result).
- Each connector is also a global: notes.get_note({id: 1}) (names sanitized to identifiers).
- Only read-only tools run in programs. No network, files, timers or imports; values cross as JSON.
- A failed call throws an Error with code, retryable, retryAfterMs, details and nextAction; to hand a failure to the user, let it escape, or throw your own with {cause: err}.
- Return little: results over 24,000 characters are truncated. Reduce inside the program.
"#;

/// The connector inventory line of `execute_code`'s description: whole
/// entries only, at most 256 bytes, then `+N more`.
pub(crate) fn inventory_line(names: &[&str]) -> String {
    const MAX: usize = 256;
    let mut line = String::from("Connectors: ");
    for (i, name) in names.iter().enumerate() {
        let rest = names.len() - i - 1;
        let sep = if i == 0 { "" } else { ", " };
        let tail = if rest > 0 {
            format!(", +{rest} more")
        } else {
            String::new()
        };
        if line.len() + sep.len() + name.len() + tail.len() + 1 > MAX {
            let more = names.len() - i;
            line.push_str(&format!("{}+{more} more", if i == 0 { "" } else { ", " }));
            line.push('.');
            return line;
        }
        line.push_str(sep);
        line.push_str(name);
    }
    if names.is_empty() {
        line.push_str("none");
    }
    line.push('.');
    line
}

impl Gateway {
    pub fn code_mode_enabled(&self) -> bool {
        self.code.is_some()
    }

    /// The `usage` skill: the guide, plus program guidance in code mode.
    pub fn usage_guide(&self) -> String {
        if self.code_mode_enabled() {
            format!("{USAGE_GUIDE}{USAGE_PROGRAMS}")
        } else {
            USAGE_GUIDE.to_owned()
        }
    }

    fn execute_code_def(&self) -> Option<MetaToolDef> {
        let code = self.code.as_ref()?;
        let c = &code.config;
        let names = code.shortcut_names();
        Some(MetaToolDef {
            name: "execute_code",
            title: "Run a program next to the tools",
            description: format!(
                "Run one JavaScript async arrow function next to the tools; only its return value comes back. \
Inside: connecta.search/describe/call/batch/emit, and each connector as a global (conn.tool(args)). Read-only tools only; \
a failed call throws an Error with code and retryable. {} Budget: {} calls, batch <= {}, {} s per call, {} s per program, {} result chars.",
                inventory_line(&names),
                c.host_calls,
                c.batch_size,
                c.call_deadline.as_secs(),
                c.deadline.as_secs(),
                c.result_chars
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "async () => { ... return result; }"},
                    "diagnostics": {"type": "boolean"}
                },
                "required": ["code"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: false,
            open_world: true,
        })
    }

    /// The meta-tools `tools/list` returns, in a stable order.
    pub fn meta_tools(&self) -> Vec<MetaToolDef> {
        let mut tools = Vec::with_capacity(7);
        tools.extend(self.execute_code_def());
        tools.push(MetaToolDef {
            name: "search_tools",
            title: "Search tools",
            description: "Search every connected tool by keywords. Matches carry an address <connector>.<tool> for call_tool. Empty query browses.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "2-4 words about the action and object"},
                    "connector": {"type": "string"},
                    "safety": {"enum": ["readOnly", "approvalRequired", "all"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "offset": {"type": "integer", "minimum": 0},
                    "includeSchemas": {"enum": ["compact", "json"]},
                    "fullDescriptions": {"type": "boolean"}
                },
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        });
        tools.push(MetaToolDef {
            name: "call_tool",
            title: "Call a read-only tool",
            description: "Call one read-only tool by address. fields projects the result (\"items[].id\"); large results return a resultId for get_result.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "address": {"type": "string"},
                    "args": {"type": "object"},
                    "fields": {"type": "array", "items": {"type": "string"}},
                    "resultMode": {"enum": ["mcp", "value"]},
                    "timeoutMs": {"type": "integer", "minimum": 1},
                    "maxRetries": {"type": "integer", "minimum": 0, "maximum": 2}
                },
                "required": ["address"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: false,
            open_world: true,
        });
        tools.push(MetaToolDef {
            name: "call_destructive_tool",
            title: "Call a tool that may write",
            description: "Call any tool, including ones that change things. Say why in reason (shown to a human approver, never sent to the tool).".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "address": {"type": "string"},
                    "args": {"type": "object"},
                    "reason": {"type": "string"},
                    "fields": {"type": "array", "items": {"type": "string"}},
                    "resultMode": {"enum": ["mcp", "value"]},
                    "timeoutMs": {"type": "integer", "minimum": 1}
                },
                "required": ["address"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        });
        tools.push(MetaToolDef {
            name: "authorize_connector",
            title: "Recover from auth_required",
            description: "After auth_required: start or resume a connector's authorization, or learn what an operator must set.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "connector": {"type": "string"},
                    "force": {"type": "boolean"}
                },
                "required": ["connector"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: true,
        });
        tools.push(MetaToolDef {
            name: "get_result",
            title: "Page a large result",
            description: "Read a stored oversized call_tool result by resultId, in byte pages: repeat with offset = nextOffset.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 0},
                    "maxBytes": {"type": "integer", "minimum": 1}
                },
                "required": ["id"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        });
        tools.push(MetaToolDef {
            name: "skills",
            title: "Guides",
            description: "Guides: name \"usage\" explains connecta; a connector id gives its guide. No name lists them.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        });
        tools
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m2_the_program_guide_awaits_every_connecta_call_it_shows() {
        let shown: Vec<&str> = USAGE_PROGRAMS
            .match_indices("connecta.")
            .map(|(i, _)| &USAGE_PROGRAMS[..i])
            .collect();
        assert!(shown.len() >= 6, "{USAGE_PROGRAMS}");
        for before in shown {
            assert!(
                before.ends_with("await "),
                "not awaited after: {}",
                &before[before.len().saturating_sub(40)..]
            );
        }
    }

    #[test]
    fn inventory_line_keeps_whole_entries_within_256_bytes() {
        assert_eq!(inventory_line(&["demo"]), "Connectors: demo.");
        let many: Vec<String> = (0..100).map(|i| format!("connector_{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let line = inventory_line(&refs);
        assert!(line.len() <= 256, "{}", line.len());
        assert!(line.contains("connector_0, connector_1"), "{line}");
        assert!(line.ends_with("more."), "{line}");
        let shown = line.matches("connector_").count();
        assert!(line.contains(&format!("+{} more", 100 - shown)), "{line}");
    }

    #[test]
    fn instructions_fit_their_budget() {
        assert!(instructions(true).len() <= 1_000);
        assert!(instructions(false).len() <= 1_000);
    }
}
