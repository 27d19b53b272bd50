//! One synthetic connector as an rmcp `ServerHandler`, written by hand so
//! nothing is rebuilt per request: `tools/list` slices the precomputed
//! catalog, `tools/call` parses the tool index from its name.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::catalog::{ConnectorCatalog, parse_tool_name};

/// The handler for one connector. Cloning is one `Arc` increment, which
/// matters because stateless HTTP asks the factory for a handler per request.
#[derive(Debug, Clone)]
pub struct SyntheticConnector {
    catalog: Arc<ConnectorCatalog>,
}

impl SyntheticConnector {
    pub fn new(catalog: Arc<ConnectorCatalog>) -> Self {
        Self { catalog }
    }

    /// The result of `lookup_record_<tool>` for `arguments`: the echo on
    /// success, an error *result* (not a protocol error) for bad arguments,
    /// so a gateway sees the same thing a real tool's validation would give.
    pub fn lookup(
        &self,
        tool: usize,
        arguments: Option<&serde_json::Map<String, Value>>,
    ) -> CallToolResult {
        match validate_arguments(arguments) {
            Ok(value) => CallToolResult::structured(json!({
                "connector": self.catalog.index,
                "tool": tool,
                "value": value,
            })),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
    }
}

/// `{value: integer}` and nothing else, per the input schema. Returns the
/// integer as it should be echoed.
fn validate_arguments(arguments: Option<&serde_json::Map<String, Value>>) -> Result<Value, String> {
    let Some(arguments) = arguments else {
        return Err("invalid arguments: \"value\" is required".to_owned());
    };
    if let Some(extra) = arguments.keys().find(|k| k.as_str() != "value") {
        return Err(format!("invalid arguments: unexpected property {extra:?}"));
    }
    match arguments.get("value") {
        None => Err("invalid arguments: \"value\" is required".to_owned()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Value::Number(n.clone())),
        // JSON Schema's "integer" admits 2.0: echo it as the integer it is.
        Some(Value::Number(n))
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) =>
        {
            Ok(json!(n.as_f64().unwrap_or_default() as i64))
        }
        Some(other) => Err(format!(
            "invalid arguments: \"value\" must be an integer, got {other}"
        )),
    }
}

impl ServerHandler for SyntheticConnector {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("connecta-synthetic", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.catalog
            .page(cursor)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match parse_tool_name(&request.name).filter(|&t| t < self.catalog.len()) {
            Some(tool) => Ok(self.lookup(tool, request.arguments.as_ref()).into()),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            )),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalog.tool(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> serde_json::Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        }
    }

    #[test]
    fn integers_are_accepted_and_echoed() {
        assert_eq!(
            validate_arguments(Some(&args(json!({"value": 7})))),
            Ok(json!(7))
        );
        assert_eq!(
            validate_arguments(Some(&args(json!({"value": -3})))),
            Ok(json!(-3))
        );
        assert_eq!(
            validate_arguments(Some(&args(json!({"value": 2.0})))),
            Ok(json!(2))
        );
    }

    #[test]
    fn everything_else_is_an_error() {
        assert!(validate_arguments(None).is_err());
        assert!(validate_arguments(Some(&args(json!({})))).is_err());
        assert!(validate_arguments(Some(&args(json!({"value": 1.5})))).is_err());
        assert!(validate_arguments(Some(&args(json!({"value": "1"})))).is_err());
        assert!(validate_arguments(Some(&args(json!({"value": 1, "other": 2})))).is_err());
    }
}
