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
    pub async fn call_meta(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> MetaOutput {
        let out = match name {
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
        };
        match out {
            Ok(o) => o,
            Err(e) => MetaOutput::Error(e),
        }
    }
}
