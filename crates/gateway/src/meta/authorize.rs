//! `authorize_connector`: the recovery route for `auth_required`. It tells the
//! agent honestly whether a connector needs anything, and when an operator
//! must act, exactly what to set and where.

use connecta_core::config::{ConnectorKind, McpTransport};
use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{MetaOutput, parse_args};
use crate::Gateway;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    connector: String,
    #[serde(default)]
    force: Option<bool>,
}

impl Gateway {
    pub(crate) async fn authorize_connector(
        &self,
        args: Map<String, Value>,
    ) -> Result<MetaOutput, ToolError> {
        let a: Args = parse_args("authorize_connector", args)?;
        let _ = a.force;
        let Some(h) = self.connector(&a.connector) else {
            let known: Vec<&str> = self
                .connectors()
                .iter()
                .map(|h| h.config.id.as_str())
                .collect();
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!(
                    "no connector \"{}\"; connectors: {}",
                    clamp_text(&a.connector, 128),
                    known.join(", ")
                ),
            ));
        };
        let id = h.config.id.as_str();
        let static_headers = match &h.config.kind {
            ConnectorKind::Mcp(m) => match &m.transport {
                McpTransport::Http { headers, .. } => {
                    headers.iter().map(|(k, _)| k.clone()).collect()
                }
                McpTransport::Stdio { .. } => Vec::new(),
            },
            ConnectorKind::Api(api) => api
                .headers
                .iter()
                .map(|(k, _)| k.clone())
                .collect::<Vec<_>>(),
        };
        let value = if static_headers.is_empty() {
            json!({
                "connector": id,
                "status": "not_required",
                "message": format!("{id} needs no authorization from you. If a call failed with auth_required, the downstream itself refused; ask an operator to check the connector."),
            })
        } else {
            json!({
                "connector": id,
                "status": "operator_managed",
                "recovery": "operator_config",
                "message": format!(
                    "{id} authenticates with credentials an operator sets in the gateway's configuration (headers: {}). An agent cannot change them; if calls fail with auth_required, tell the user an operator must update the connector's credentials and restart or reload connecta.",
                    static_headers.join(", ")
                ),
            })
        };
        Ok(MetaOutput::value(value))
    }
}
