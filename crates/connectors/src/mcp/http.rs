//! Streamable HTTP downstreams: a session is connected on demand, one
//! connection attempt at a time, with backoff after failures. Requests go
//! over kept-alive connections (rmcp's default client keeps none, which
//! would cost a TCP handshake and an accept on both ends of every call).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use connecta_core::error::{ErrorCode, MAX_ECHO_BYTES, ToolError, clamp_text};
use connecta_core::secret::Secret;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use tokio::sync::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::direct::{Direct, Recording, SessionId};
use super::handler::{GatewayClient, lifecycle};
use super::{Session, Shared, errors};
use crate::ConnectorState;
use crate::credential::{CredentialBinding, Framed};

pub(crate) struct HttpTransport {
    shared: Arc<Shared>,
    config: StreamableHttpClientTransportConfig,
    /// The pooled HTTP client every session uses (one per process, shared
    /// by every HTTP connector); `None` when it could not be built (rmcp's
    /// default client is used then).
    http: Option<reqwest::Client>,
    /// A header that could not be used (reported on every connect).
    bad_header: Option<String>,
    /// The vault credential, loaded (and framed into a header) per call, so
    /// a value set or replaced while the gateway runs takes effect at once.
    credential: Option<CredentialBinding>,
    /// The credential header the live session was connected with.
    live_credential: std::sync::Mutex<Option<(HeaderName, HeaderValue)>>,
    connect: Mutex<ConnectState>,
}

struct ConnectState {
    /// Cancels the running client service of the current session.
    service: Option<CancellationToken>,
    /// No new attempt before this instant (backoff after a failure).
    not_before: Option<Instant>,
    backoff: Duration,
}

impl HttpTransport {
    pub(crate) fn new(
        shared: Arc<Shared>,
        url: String,
        headers: Vec<(String, Secret)>,
        credential: Option<CredentialBinding>,
    ) -> Self {
        let mut map = HashMap::new();
        let mut bad_header = None;
        for (name, value) in headers {
            match (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value.expose()),
            ) {
                (Ok(n), Ok(mut v)) => {
                    v.set_sensitive(true);
                    map.insert(n, v);
                }
                _ => bad_header = Some(name),
            }
        }
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(map)
            .max_concurrent_requests(shared.options.max_http_requests)
            .max_json_response_size(shared.options.max_response_bytes)
            .reinit_on_expired_session(true);
        let backoff = shared.options.backoff_min;
        let http = shared_client();
        HttpTransport {
            shared,
            config,
            http,
            bad_header,
            credential,
            live_credential: std::sync::Mutex::new(None),
            connect: Mutex::new(ConnectState {
                service: None,
                not_before: None,
                backoff,
            }),
        }
    }

    /// The credential header as it should be now, if the connector has one.
    async fn wanted_credential(&self) -> Result<Option<(HeaderName, HeaderValue)>, ToolError> {
        let Some(binding) = &self.credential else {
            return Ok(None);
        };
        match binding.apply(&self.shared.id).await?.framed {
            Framed::Header(name, value) => Ok(Some((name, value))),
            // Lowering allows only header placement for mcp connectors.
            Framed::Query(..) => Err(errors::auth_required(
                &self.shared.id,
                "an mcp connector's credential must go in a header",
            )),
        }
    }

    fn live_credential(&self) -> std::sync::MutexGuard<'_, Option<(HeaderName, HeaderValue)>> {
        self.live_credential
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) async fn session(&self, deadline: Instant) -> Result<Session, ToolError> {
        let wanted = self.wanted_credential().await?;
        let current = self.shared.session.borrow().clone();
        if let Some(s) = current {
            if self.credential.is_none() || *self.live_credential() == wanted {
                return Ok(s);
            }
            // The credential changed since this session was connected: the
            // next session carries the new one.
            self.shared.reset(s.generation);
        }
        let id = &self.shared.id;
        let Ok(mut state) = tokio::time::timeout_at(deadline, self.connect.lock()).await else {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!("{id} is still connecting"),
            ));
        };
        if let Some(s) = self.shared.session.borrow().clone() {
            return Ok(s);
        }
        if let Some(name) = &self.bad_header {
            return Err(ToolError::with_cause(
                ErrorCode::Unavailable,
                format!("{id}: header \"{name}\" has a value that cannot be sent"),
                false,
            ));
        }
        let now = Instant::now();
        if let Some(until) = state.not_before.filter(|u| *u > now) {
            let last = self.last_error();
            return Err(ToolError::with_cause(
                ErrorCode::Unavailable,
                format!(
                    "{id} is unreachable ({last}); the next attempt is in {} ms",
                    (until - now).as_millis()
                ),
                true,
            )
            .retry_after((until - now).as_millis() as u64));
        }
        self.shared.set_state(ConnectorState::Starting, None);
        let ct = CancellationToken::new();
        let mut config = self.config.clone();
        if let Some((name, value)) = &wanted {
            config.custom_headers.insert(name.clone(), value.clone());
        }
        let recording = self.http.as_ref().map(|http| Recording {
            http: http.clone(),
            session: SessionId::default(),
        });
        let attempt = match &recording {
            Some(recording) => self.handshake(
                StreamableHttpClientTransport::with_client(recording.clone(), config.clone()),
                ct.clone(),
            ),
            None => self.handshake(
                StreamableHttpClientTransport::from_config(config.clone()),
                ct.clone(),
            ),
        };
        let limit = deadline.min(now + self.shared.options.connect_timeout);
        let failure = match tokio::time::timeout_at(limit, attempt).await {
            Ok(Ok(running)) => {
                let peer = running.peer().clone();
                let direct = recording
                    .zip(peer.peer_info())
                    .and_then(|(recording, info)| {
                        Direct::for_session(
                            recording,
                            &config,
                            &info.protocol_version,
                            self.shared.refused_elicitations.clone(),
                        )
                        .map(Arc::new)
                    });
                // The service runs until its token is cancelled or the
                // connection dies; nobody needs to await it.
                tokio::spawn(async move {
                    let _ = running.waiting().await;
                });
                if let Some(old) = state.service.replace(ct) {
                    old.cancel();
                }
                state.not_before = None;
                state.backoff = self.shared.options.backoff_min;
                *self.live_credential() = wanted;
                let session = self.shared.publish(peer, direct);
                self.shared.set_state(ConnectorState::Ready, None);
                return Ok(session);
            }
            Ok(Err(e)) => {
                ct.cancel();
                if let Some(challenge) = e.auth_challenge() {
                    return Err(if errors::is_scope_challenge(challenge) {
                        errors::forbidden(id)
                    } else {
                        errors::auth_required(id, "the downstream server asked for authorization")
                    });
                }
                clamp_text(&e.to_string(), MAX_ECHO_BYTES).into_owned()
            }
            Err(_) => {
                ct.cancel();
                "the handshake did not finish in time".to_owned()
            }
        };
        let wait = state.backoff;
        state.not_before = Some(Instant::now() + wait);
        state.backoff = (state.backoff * 2).min(self.shared.options.backoff_max);
        self.shared
            .set_state(ConnectorState::Down, Some(failure.clone()));
        Err(ToolError::with_cause(
            ErrorCode::Unavailable,
            format!("{id} is unreachable: {failure}"),
            true,
        )
        .retry_after(wait.as_millis() as u64))
    }

    /// rmcp's handshake over `transport`, as one future whatever its client.
    fn handshake<C>(
        &self,
        transport: StreamableHttpClientTransport<C>,
        ct: CancellationToken,
    ) -> BoxFuture<'static, Result<RunningService<RoleClient, GatewayClient>, ClientInitializeError>>
    where
        C: StreamableHttpClient + Send + Sync + 'static,
    {
        rmcp::service::serve_client_with_lifecycle_and_ct(
            self.shared.client(),
            transport,
            lifecycle(self.shared.options.handshake),
            ct,
        )
        .boxed()
    }

    /// A call found the session dead: the next call reconnects at once.
    pub(crate) fn note_failure(&self, message: &str) {
        self.shared
            .set_state(ConnectorState::Down, Some(message.to_owned()));
    }

    fn last_error(&self) -> String {
        self.shared
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last_error
            .clone()
            .unwrap_or_else(|| "no answer".into())
    }

    pub(crate) async fn shutdown(&self) {
        let mut state = self.connect.lock().await;
        if let Some(ct) = state.service.take() {
            ct.cancel();
        }
    }
}

/// Most redirects followed for one request (rmcp's default client's limit).
const MAX_REDIRECTS: usize = 10;

/// One client for the whole process: building one loads and parses the
/// system's root certificates, which a hundred connectors would otherwise
/// do a hundred times at boot, and connections to one host are pooled
/// across the connectors it serves.
fn shared_client() -> Option<reqwest::Client> {
    static CLIENT: std::sync::OnceLock<Option<reqwest::Client>> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            pooled_client()
                .inspect_err(|e| {
                    tracing::warn!(error = %e, "no pooled HTTP client; one connection per request");
                })
                .ok()
        })
        .clone()
}

/// A client that keeps connections alive. `TCP_NODELAY` avoids the
/// delayed-ACK stall that made rmcp give up pooling (a small request written
/// after an unacknowledged one waits for the peer's delayed ACK). Redirects
/// follow rmcp's rule: same-origin 307 and 308 only (they keep the method and
/// body; anything else, or another origin, would lose the message or replay
/// the session id and headers elsewhere).
pub(crate) fn pooled_client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        }))
        .build()
}
