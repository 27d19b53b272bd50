//! `authorize_connector`: the recovery route for `auth_required`. It tells the
//! agent honestly whether a connector needs anything, and when an operator
//! must act, exactly what to set and where.

use connecta_core::config::{ConnectorKind, McpTransport};
use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{MetaOutput, parse_args};
use crate::oauth_flow::OAuthStatus;
use crate::{Gateway, VaultCredentials};

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
        if let Some(oauth) = &h.oauth {
            let status = oauth.authorize(a.force.unwrap_or(false), false).await?;
            return Ok(MetaOutput::value(oauth_answer(id, status)));
        }
        if let Some(source) = &h.credential {
            return Ok(MetaOutput::value(credential_status(id, source).await));
        }
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

/// What the agent is told about an OAuth connector: authorized, or the
/// link the user must open.
fn oauth_answer(id: &str, status: OAuthStatus) -> Value {
    match status {
        OAuthStatus::Authorized {
            issuer,
            expires_at_ms,
            authorization_url,
        } => json!({
            "connector": id,
            "status": "authorized",
            "issuer": issuer,
            "expiresAtMs": expires_at_ms,
            "authorizationUrl": authorization_url,
            "message": format!("{id} is authorized (for every caller of this gateway). If calls still fail with auth_required, tell the user an operator must re-authorize it (the operator UI's Connections tab)."),
        }),
        OAuthStatus::ConsentRequired {
            authorization_url,
            expires_at_ms,
        } => json!({
            "connector": id,
            "status": "consent_required",
            "recovery": "user_consent",
            "authorizationUrl": authorization_url,
            "expiresAtMs": expires_at_ms,
            "message": format!("Give the user this link and ask them to open it and allow access: it lets connecta act for them at the authorization server of {id}. It works once, for ten minutes; asking again before then returns the same link. Retry the call once they have."),
        }),
        OAuthStatus::NotAuthorized => json!({
            "connector": id,
            "status": "not_authorized",
            "message": format!("{id} is not authorized; call authorize_connector again for a consent link."),
        }),
    }
}

/// A connector with a vault credential slot: configured, or what an
/// operator must set and how. Never a value, never a masked value either.
async fn credential_status(id: &str, source: &VaultCredentials) -> Value {
    use connecta_connectors::{CredentialSource, CredentialUnavailable};
    let slot = source.slot();
    let how = json!({
        "cli": format!("connecta credential set {id}"),
        "fields": slot.fields.iter().map(|f| format!("connecta credential set {id} --field {f}")).collect::<Vec<_>>(),
        "test": format!("connecta credential test {id}"),
        "ui": "the Credentials tab of the operator UI (/ui)",
    });
    match source.load().await {
        Ok(_) => json!({
            "connector": id,
            "status": "configured",
            "label": slot.label,
            "message": format!("{id}'s credential ({}) is set. If calls still fail with auth_required, the downstream rejected it: tell the user an operator must replace it (connecta credential set {id}).", slot.label),
        }),
        Err(why) => {
            let state = match &why {
                CredentialUnavailable::Missing { .. } => "missing",
                CredentialUnavailable::NoKey(_) => "vault_key_missing",
                CredentialUnavailable::WrongKey => "vault_key_mismatch",
                CredentialUnavailable::Unreadable(_) => "unreadable",
                CredentialUnavailable::NotAuthorized => "not_authorized",
                CredentialUnavailable::Unreachable(_) => "unreachable",
            };
            let mut v = json!({
                "connector": id,
                "status": "operator_action_required",
                "recovery": "operator_config",
                "credential": state,
                "label": slot.label,
                "fields": slot.fields,
                "how": how,
                "message": format!(
                    "{id} needs its credential \"{}\" ({}): {}. An agent cannot set it; tell the user an operator must run `connecta credential set {id}`.",
                    slot.label,
                    slot.fields.join(", "),
                    why.describe()
                ),
            });
            if let (Some(help), Some(m)) = (&slot.help, v.as_object_mut()) {
                m.insert("help".into(), json!(help));
            }
            v
        }
    }
}
