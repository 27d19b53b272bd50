//! Downstream connectors. Every connector, whatever its kind, offers the same
//! three things: an id, a way to list its tools, and a way to call one.
//!
//! Architecture invariant: this crate knows the downstream wire protocols
//! (MCP through `rmcp`, HTTP through the guarded fetch) and nothing about the
//! agent-facing surface. It never decides policy: classification, admission
//! and activity live in the gateway.

pub mod api;
pub mod credential;
mod http_status;
mod mcp;
pub mod oauth;
mod process;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use connecta_core::catalog::ToolDef;
use connecta_core::error::ToolError;
use connecta_core::result::ToolResult;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use api::ApiConnector;
pub use credential::{CredentialBinding, CredentialSource, CredentialUnavailable};
pub use mcp::{McpConnector, McpOptions, parse_retry_after};

/// What a connector reports about itself for `/health` and the operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorStatus {
    pub state: ConnectorState,
    /// A short, secret-free description of the last failure, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// How many times a child process was restarted after it died.
    pub restarts: u64,
    /// The child process id, for stdio connectors that are running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorState {
    /// Not started yet (lazy connectors before first use).
    Idle,
    Starting,
    Ready,
    /// Down; a restart or reconnect is pending.
    Down,
    Stopped,
}

/// Per-call options the gateway decides.
#[derive(Debug, Clone)]
pub struct CallOptions {
    pub timeout: Duration,
    /// Fires when the caller goes away; the downstream request is cancelled.
    pub cancel: CancellationToken,
}

#[async_trait]
pub trait Connector: Send + Sync {
    fn id(&self) -> &str;
    fn kind(&self) -> &'static str;

    /// Start eagerly (boot-time start for stdio children). Idempotent.
    async fn start(&self);

    /// The full tool list, every page walked; a partial list is an error.
    async fn list_tools(&self, timeout: Duration) -> Result<Vec<ToolDef>, ToolError>;

    /// Call one tool. A downstream `isError` result is returned as `Ok` with
    /// `is_error` set: turning it into a typed failure is policy.
    async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        options: CallOptions,
    ) -> Result<ToolResult, ToolError>;

    fn status(&self) -> ConnectorStatus;

    /// Stop: close sessions, stop and reap child processes. Idempotent.
    async fn shutdown(&self);
}

pub type DynConnector = Arc<dyn Connector>;
