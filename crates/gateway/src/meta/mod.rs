//! The meta-tools an agent sees. Each takes its arguments as JSON (validated
//! strictly: an unknown argument is an error, not ignored) and returns a
//! [`MetaOutput`] that the server crate turns into an MCP result.

mod authorize;
mod call;
mod get_result;
mod search;
mod skills;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use connecta_core::result::ToolResult;

use crate::{Gateway, RequestCtx};

/// What a meta-tool answers.
#[derive(Debug, Clone)]
pub enum MetaOutput {
    /// A JSON value: structured content (objects as-is, other values wrapped
    /// as `{value}`) plus the same value as compact JSON text. `notes` become
    /// extra text blocks (e.g. `fields` that matched nothing).
    Value {
        value: Value,
        /// The compact JSON text, when the producer already serialized it.
        text: Option<String>,
        notes: Vec<String>,
    },
    /// A downstream result passed through untouched (`resultMode: "mcp"`).
    Passthrough(ToolResult),
    /// A typed failure: `{error: {...}}` with `isError: true`.
    Error(ToolError),
    /// A program's envelope followed by the content blocks it emitted.
    Rich { value: Value, blocks: Vec<Value> },
}

impl MetaOutput {
    pub fn value(value: Value) -> MetaOutput {
        MetaOutput::Value {
            value,
            text: None,
            notes: Vec::new(),
        }
    }

    pub fn error(&self) -> Option<&ToolError> {
        match self {
            MetaOutput::Error(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ToolError> for MetaOutput {
    fn from(e: ToolError) -> Self {
        MetaOutput::Error(e)
    }
}

/// Parse meta-tool arguments into their typed form. Unknown arguments and
/// wrong types are `invalid_args` naming the problem.
pub(crate) fn parse_args<T: DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        ToolError::invalid_args(format!(
            "{tool}: {}",
            clamp_text(&e.to_string(), connecta_core::error::MAX_ECHO_BYTES)
        ))
    })
}

impl Gateway {
    /// Run one meta-tool by name.
    ///
    /// A shutdown whose grace runs out ([`Gateway::stop_in_flight`]) cancels
    /// the request like a client going away would, and the answer says why:
    /// `executor_closed` (E5), not `cancelled`, so the model knows the
    /// gateway went away rather than its own request.
    pub async fn call_meta(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> MetaOutput {
        let started = std::time::Instant::now();
        let out = self.call_meta_inner(name, args, ctx).await;
        self.metrics.request(name, &out, started.elapsed());
        out
    }

    async fn call_meta_inner(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> MetaOutput {
        if self.stopping.is_cancelled() {
            return MetaOutput::Error(shut_down(
                "connecta is shutting down and takes no new requests",
            ));
        }
        let ctx = &RequestCtx {
            cancel: ctx.cancel.child_token(),
            ..ctx.clone()
        };
        let stop_on_shutdown = async {
            self.stopping.cancelled().await;
            ctx.cancel.cancel();
            // The request itself now ends through its own cancellation path,
            // which records its activity and stops its downstream call.
            std::future::pending::<()>().await
        };
        let out = tokio::select! {
            out = self.run_meta(name, args, ctx) => out,
            () = stop_on_shutdown => unreachable!("waits forever once it has cancelled"),
        };
        match out {
            Err(e)
                if self.stopping.is_cancelled()
                    && matches!(e.code, ErrorCode::Cancelled | ErrorCode::ExecutorCancelled) =>
            {
                // Keep what the run gathered (logs, diagnostics); only the
                // reason changes.
                let mut closed = shut_down(
                    "connecta shut down before this request finished (server.shutdown_grace_ms ran out); a downstream call it made may or may not have completed",
                );
                closed.details = e.details;
                MetaOutput::Error(closed)
            }
            Err(e) => MetaOutput::Error(e),
            Ok(o) => o,
        }
    }

    async fn run_meta(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        match name {
            "execute_code" => self.execute_code(args, ctx).await,
            "search_tools" => self.search_tools(args).await,
            "call_tool" => self.call_tool(args, ctx).await,
            "call_destructive_tool" => self.call_destructive_tool(args, ctx).await,
            "get_result" => self.get_result(args, ctx).await,
            "skills" => self.skills(args),
            "authorize_connector" => self.authorize_connector(args).await,
            other => Err(ToolError::new(
                ErrorCode::UnknownTool,
                format!(
                    "connecta has no meta-tool \"{}\"; downstream tools are called through call_tool with their address",
                    clamp_text(other, 128)
                ),
            )),
        }
    }
}

fn shut_down(message: &str) -> ToolError {
    ToolError::new(ErrorCode::ExecutorClosed, message)
}
