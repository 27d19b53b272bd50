//! A downstream MCP server, over streamable HTTP or as a supervised stdio
//! child process, spoken to through `rmcp`'s client; a `tools/call` on an
//! HTTP session is posted from the calling task (`direct.rs`).
//!
//! Both transports publish their live session through one `watch` channel;
//! calls take the current session, and a failure that says the session is
//! gone resets it. Over HTTP a new session is connected on demand (single
//! flight, with backoff after failures); over stdio a supervisor task owns the
//! child and restarts it with backoff when it dies.

mod convert;
mod direct;
mod errors;
mod handler;
mod http;
mod post;
mod stdio;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use connecta_core::catalog::ToolDef;
use connecta_core::config::{Handshake, McpTransport, StartMode};
use connecta_core::error::{ErrorCode, ToolError};
use connecta_core::result::ToolResult;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResponse, PaginatedRequestParams};
use rmcp::service::Peer;
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::credential::CredentialBinding;
use crate::{CallOptions, Connector, ConnectorState, ConnectorStatus};
use handler::GatewayClient;

pub use errors::parse_retry_after;

/// Per-connector options the gateway lowers from config.
#[derive(Debug, Clone)]
pub struct McpOptions {
    pub handshake: Handshake,
    pub start: StartMode,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// How long a handshake may take before the attempt counts as failed.
    pub connect_timeout: Duration,
    /// Ordinary HTTP POSTs in flight to the downstream at once.
    pub max_http_requests: usize,
    /// The largest JSON response accepted from the downstream.
    pub max_response_bytes: usize,
    /// Paths a stdio child must not reach: the gateway's data directory
    /// and vault key file.
    pub hidden_paths: Vec<std::path::PathBuf>,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            handshake: Handshake::Initialize,
            start: StartMode::Boot,
            backoff_min: Duration::from_millis(250),
            backoff_max: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(30),
            max_http_requests: 256,
            max_response_bytes: 64 * 1024 * 1024,
            hidden_paths: Vec::new(),
        }
    }
}

/// The most pages a `tools/list` walk follows before calling the catalog
/// broken (a server that loops on its cursor must not hang the gateway).
const MAX_LIST_PAGES: usize = 10_000;

/// A live session: the peer to send requests on, and a generation number so a
/// failure only resets the session it happened on.
#[derive(Clone)]
pub(crate) struct Session {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) generation: u64,
    /// Where calls are posted without rmcp's service (HTTP sessions on a
    /// protocol version that allows it).
    pub(crate) direct: Option<Arc<direct::Direct>>,
}

pub(crate) struct Shared {
    pub(crate) id: String,
    pub(crate) options: McpOptions,
    pub(crate) session: watch::Sender<Option<Session>>,
    pub(crate) status: std::sync::Mutex<ConnectorStatus>,
    pub(crate) generation: AtomicU64,
    pub(crate) shutdown: CancellationToken,
    pub(crate) started: AtomicBool,
    /// Elicitations the downstream sent and connecta refused (any session).
    pub(crate) refused_elicitations: Arc<AtomicU64>,
}

impl Shared {
    /// The client handler for a new session.
    pub(crate) fn client(&self) -> GatewayClient {
        GatewayClient {
            refused_elicitations: self.refused_elicitations.clone(),
        }
    }

    pub(crate) fn set_state(&self, state: ConnectorState, last_error: Option<String>) {
        let mut s = self.status.lock().unwrap_or_else(|p| p.into_inner());
        s.state = state;
        if last_error.is_some() || state == ConnectorState::Ready {
            s.last_error = last_error;
        }
    }

    pub(crate) fn publish(
        &self,
        peer: Peer<RoleClient>,
        direct: Option<Arc<direct::Direct>>,
    ) -> Session {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let session = Session {
            peer,
            generation,
            direct,
        };
        self.session.send_replace(Some(session.clone()));
        session
    }

    /// Forget the session `generation`, if it is still the current one.
    pub(crate) fn reset(&self, generation: u64) {
        self.session.send_if_modified(|s| {
            if s.as_ref().is_some_and(|s| s.generation == generation) {
                *s = None;
                true
            } else {
                false
            }
        });
    }
}

enum Transport {
    // Boxed: the HTTP transport's client config is several times the size
    // of the stdio supervisor.
    Http(Box<http::HttpTransport>),
    Stdio(stdio::Supervisor),
}

pub struct McpConnector {
    shared: Arc<Shared>,
    transport: Transport,
    /// The credential, so an `auth_required` names its label and fields (or
    /// asks for consent) and a refusal reaches its source.
    credential: Option<CredentialBinding>,
}

impl McpConnector {
    pub fn new(id: &str, transport: McpTransport, options: McpOptions) -> McpConnector {
        McpConnector::with_credential(id, transport, options, None)
    }

    /// A connector whose HTTP requests carry a vault credential (framed into
    /// its header, loaded per call). Stdio connectors take none.
    pub fn with_credential(
        id: &str,
        transport: McpTransport,
        options: McpOptions,
        credential: Option<CredentialBinding>,
    ) -> McpConnector {
        let (session, _) = watch::channel(None);
        let hidden = options.hidden_paths.clone();
        let shared = Arc::new(Shared {
            id: id.to_owned(),
            options,
            session,
            status: std::sync::Mutex::new(ConnectorStatus {
                state: ConnectorState::Idle,
                last_error: None,
                restarts: 0,
                pid: None,
            }),
            generation: AtomicU64::new(0),
            shutdown: CancellationToken::new(),
            started: AtomicBool::new(false),
            refused_elicitations: Arc::new(AtomicU64::new(0)),
        });
        let transport = match transport {
            McpTransport::Http { url, headers } => Transport::Http(Box::new(
                http::HttpTransport::new(shared.clone(), url, headers, credential.clone()),
            )),
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => Transport::Stdio(stdio::Supervisor::new(
                shared.clone(),
                stdio::ChildSpec {
                    command,
                    args,
                    env,
                    cwd,
                    hidden,
                },
            )),
        };
        McpConnector {
            shared,
            transport,
            credential,
        }
    }

    /// An `auth_required` from the downstream gets the slot's label and
    /// fields, so the agent can say exactly what an operator must set.
    fn refreshes_on_refusal(&self) -> bool {
        self.credential.as_ref().is_some_and(|b| b.consent)
    }

    /// The downstream refused an OAuth connector's token (not: no token
    /// could be had). The source is told, so the next load refreshes it.
    async fn token_refused(&self, e: &ToolError) -> bool {
        let Some(binding) = self.credential.as_ref().filter(|b| b.consent) else {
            return false;
        };
        let refused = e.code == ErrorCode::AuthRequired
            && e.details.get("recovery").and_then(Value::as_str) != Some("user_consent")
            && !is_forbidden(e);
        if refused {
            binding.source.rejected().await;
        }
        refused
    }

    /// An OAuth connector's refusal asks for consent instead.
    async fn enrich(&self, e: ToolError) -> ToolError {
        let Some(binding) = &self.credential else {
            return e;
        };
        if e.code != ErrorCode::AuthRequired {
            return e;
        }
        if binding.consent {
            if e.details.get("recovery").and_then(Value::as_str) == Some("user_consent") {
                return e;
            }
            if is_forbidden(&e) {
                return e.detail(
                    "retry",
                    "the downstream refused this call with the gateway's authorization (HTTP 403): it lacks a permission or scope; a new token would not help. Tell the user an operator must look at the connector's scopes or the account it was authorized with",
                );
            }
            // `token_refused` told the source already (once per call).
            return crate::credential::consent_required(
                &self.shared.id,
                "the downstream refused the gateway's token",
            );
        }
        if e.details.contains_key("label") {
            return e;
        }
        e.detail("label", binding.slot.label.clone())
            .detail("fields", binding.slot.fields.clone())
    }

    /// The current session, connecting (HTTP) or waiting for the supervisor
    /// (stdio) until `deadline`.
    async fn session(&self, deadline: Instant) -> Result<Session, ToolError> {
        if self.shared.shutdown.is_cancelled() {
            return Err(ToolError::with_cause(
                ErrorCode::Unavailable,
                format!("{} is shutting down", self.shared.id),
                false,
            ));
        }
        self.start().await;
        match &self.transport {
            Transport::Http(h) => h.session(deadline).await,
            Transport::Stdio(s) => s.session(deadline).await,
        }
    }

    async fn list_all(&self, peer: &Peer<RoleClient>) -> Result<Vec<ToolDef>, rmcp::ServiceError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen_cursors = std::collections::HashSet::new();
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor
                .clone()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = peer.list_tools(params).await?;
            tools.extend(page.tools.into_iter().map(convert::tool_def));
            match page.next_cursor {
                Some(next) if !next.is_empty() => {
                    if !seen_cursors.insert(next.clone()) {
                        return Err(rmcp::ServiceError::UnexpectedResponse);
                    }
                    cursor = Some(next);
                }
                _ => return Ok(tools),
            }
        }
        Err(rmcp::ServiceError::UnexpectedResponse)
    }

    fn fail(&self, session: &Session, e: &rmcp::ServiceError) -> ToolError {
        let (err, fate) = errors::from_service_error(&self.shared.id, e);
        if fate == errors::SessionFate::Reset {
            self.shared.reset(session.generation);
            if let Transport::Http(h) = &self.transport {
                h.note_failure(&err.message);
            }
        }
        err
    }
}

fn timeout_error(id: &str, timeout: Duration, what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Timeout,
        format!("{id} did not {what} within {} ms", timeout.as_millis()),
    )
}

#[async_trait]
impl Connector for McpConnector {
    fn id(&self) -> &str {
        &self.shared.id
    }

    fn kind(&self) -> &'static str {
        "mcp"
    }

    async fn start(&self) {
        if self.shared.started.swap(true, Ordering::AcqRel) {
            return;
        }
        match &self.transport {
            Transport::Http(_) => {}
            Transport::Stdio(s) => s.spawn(),
        }
    }

    async fn list_tools(&self, timeout: Duration) -> Result<Vec<ToolDef>, ToolError> {
        let first = self.list_inner(timeout).await;
        let outcome = match first {
            Err(e) if self.token_refused(&e).await => self.list_inner(timeout).await,
            other => other,
        };
        match outcome {
            Ok(tools) => Ok(tools),
            Err(e) => Err(self.enrich(e).await),
        }
    }

    async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        options: CallOptions,
    ) -> Result<ToolResult, ToolError> {
        // A refused OAuth token is refreshed and the call made once more:
        // a 401 means the downstream did nothing, so that is safe even for
        // a destructive tool.
        let again = self
            .refreshes_on_refusal()
            .then(|| (args.clone(), options.clone()));
        let first = self.call_inner(tool, args, options).await;
        let outcome = match (first, again) {
            (Err(e), Some((args, options))) if self.token_refused(&e).await => {
                self.call_inner(tool, args, options).await
            }
            (other, _) => other,
        };
        match outcome {
            Ok(r) => Ok(r),
            Err(e) => Err(self.enrich(e).await),
        }
    }

    fn status(&self) -> ConnectorStatus {
        self.shared
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn shutdown(&self) {
        self.shared.shutdown.cancel();
        match &self.transport {
            Transport::Http(h) => h.shutdown().await,
            Transport::Stdio(s) => s.shutdown().await,
        }
        self.shared.session.send_replace(None);
        self.shared.set_state(ConnectorState::Stopped, None);
    }
}

impl McpConnector {
    async fn list_inner(&self, timeout: Duration) -> Result<Vec<ToolDef>, ToolError> {
        let deadline = Instant::now() + timeout;
        let session = self.session(deadline).await?;
        match tokio::time::timeout_at(deadline, self.list_all(&session.peer)).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => {
                let mut err = self.fail(&session, &e);
                if matches!(e, rmcp::ServiceError::UnexpectedResponse) {
                    err = ToolError::with_cause(
                        ErrorCode::CatalogLookupFailed,
                        format!(
                            "{} returned a tool list that could not be walked to its end",
                            self.shared.id
                        ),
                        true,
                    );
                }
                Err(err)
            }
            Err(_) => Err(timeout_error(&self.shared.id, timeout, "list its tools")),
        }
    }

    async fn call_inner(
        &self,
        tool: &str,
        args: Map<String, Value>,
        options: CallOptions,
    ) -> Result<ToolResult, ToolError> {
        let deadline = Instant::now() + options.timeout;
        let session = self.session(deadline).await?;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        // Dropping the request future (timeout or cancellation) sends
        // `notifications/cancelled` downstream, on either route.
        let call = async {
            if let Some(direct) = &session.direct
                && let Some(answer) = direct.call(params.clone()).await
            {
                return answer;
            }
            Box::pin(session.peer.call_tool_once(params)).await
        };
        let refused_before = self.shared.refused_elicitations.load(Ordering::SeqCst);
        // A call that failed after the downstream asked for input (refused
        // above) failed for want of it. Attribution is by connector: a
        // failure of another call in flight at that moment reads the same.
        let asked_for_input =
            || self.shared.refused_elicitations.load(Ordering::SeqCst) != refused_before;
        let input_required = || {
            ToolError::new(
                ErrorCode::InputRequiredUnsupported,
                format!(
                    "{} asked for input in the middle of the call (elicitation), which connecta cannot relay; the call did not complete",
                    self.shared.id
                ),
            )
        };
        tokio::select! {
            r = tokio::time::timeout_at(deadline, call) => match r {
                Ok(Ok(CallToolResponse::Complete(result))) if result.is_error == Some(true) && asked_for_input() => {
                    Err(input_required())
                }
                Ok(Ok(CallToolResponse::Complete(result))) => Ok(convert::tool_result(result)),
                Ok(Ok(_)) => Err(ToolError::new(
                    ErrorCode::InputRequiredUnsupported,
                    format!("{} answered with an input request or a task, which connecta cannot relay", self.shared.id),
                )),
                Ok(Err(_)) if asked_for_input() => Err(input_required()),
                Ok(Err(e)) => Err(self.fail(&session, &e)),
                Err(_) => Err(timeout_error(&self.shared.id, options.timeout, "answer")),
            },
            () = options.cancel.cancelled() => Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled")),
        }
    }
}

/// The downstream answered HTTP 403: the token was accepted, a permission
/// is missing.
fn is_forbidden(e: &ToolError) -> bool {
    e.details.get("httpStatus").and_then(Value::as_u64) == Some(403)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call in flight holds this future, and it is moved into a box
    /// when the call starts: the routes a plain tool result does not take
    /// (any other answer, which may mean replying to the downstream's own
    /// request mid-call, and rmcp's route) are boxed where they are taken,
    /// and the request is serialized before the first await, so that a
    /// plain call does not carry their space. Before that it was 7,928
    /// bytes in a debug build (the profile tests run in); 2,112 after.
    #[test]
    fn a_call_future_carries_only_the_plain_route() {
        let connector = McpConnector::new(
            "sized",
            McpTransport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: Default::default(),
            },
            McpOptions::default(),
        );
        let options = CallOptions {
            timeout: Duration::from_secs(1),
            cancel: CancellationToken::new(),
        };
        let call = connector.call_inner("tool", Map::new(), options);
        let size = std::mem::size_of_val(&call);
        assert!(size <= 2560, "the call future is {size} bytes");
    }
}
