//! The MCP surface of connecta. Only this crate knows JSON-RPC: it turns MCP
//! requests (streamable HTTP at `/mcp`, or stdio) into gateway calls and
//! gateway answers into MCP results, and it serves `/health` and `/metrics`.
//!
//! `serve_http` takes its listener and shutdown signal as arguments, so tests
//! bind `127.0.0.1:0` and stop it when they like. On that signal both
//! surfaces drain (`drain.rs`): a request in flight always gets an answer.

#![forbid(unsafe_code)]

pub mod access_tokens;
mod admission;
mod auth;
mod batch;
mod connections;
mod convert;
mod direct;
#[cfg(test)]
mod direct_tests;
mod drain;
mod framing;
#[cfg(test)]
mod framing_properties;
mod handler;
mod health;
mod metrics;
pub mod oauth;
pub mod operator;
mod self_wake;
mod stdio_framing;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use connecta_gateway::Gateway;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use handler::ConnectaServer;

/// Everything the HTTP routes share.
#[derive(Clone)]
pub struct AppState {
    pub gateway: Arc<Gateway>,
    pub admission: Arc<admission::RequestAdmission>,
    pub auth: Arc<auth::Authenticator>,
    /// The operator UI, when it is on and has a secret.
    pub operator: Option<Arc<operator::Operator>>,
    /// What `/metrics` encodes.
    metrics: Arc<prometheus_client::registry::Registry>,
    /// Gives freed memory back to the system, called (off the async
    /// workers) after a request that needed a lot of it; the binary passes
    /// the allocator's, this crate has no `unsafe`.
    pub release_memory: Option<fn()>,
}

impl AppState {
    pub fn new(gateway: Arc<Gateway>) -> AppState {
        let s = &gateway.config.server;
        let admission = Arc::new(admission::RequestAdmission::new(
            s.max_concurrent_requests,
            s.max_queued_requests,
            s.queue_timeout,
        ));
        AppState {
            metrics: Arc::new(metrics::registry(&gateway, &admission)),
            admission,
            auth: Arc::new(auth::Authenticator::new(
                &gateway.config.auth,
                gateway.store.clone(),
                &gateway.config.server.public_url,
            )),
            gateway,
            operator: None,
            release_memory: None,
        }
    }

    /// Call `release` after a request that needed many MB (see
    /// `release_memory`).
    pub fn with_memory_release(mut self, release: fn()) -> AppState {
        self.release_memory = Some(release);
        self
    }

    /// Serve the operator UI at `/ui`, signed in to with `secret`.
    pub fn with_operator(mut self, secret: &connecta_core::secret::Secret) -> AppState {
        self.operator = Some(operator::new_operator(secret, &self.gateway.config));
        self
    }
}

/// The full HTTP router: `/mcp` (auth, then framing and admission, then
/// MCP), and the
/// unqueued `/health` and `/metrics`.
pub fn router(state: AppState, cancel: CancellationToken) -> Router {
    router_with(state, cancel, true)
}

/// [`router`], with the direct lane for plain `tools/call` messages
/// (`direct.rs`) on or off; off, rmcp serves every message.
fn router_with(state: AppState, cancel: CancellationToken, direct: bool) -> Router {
    let server = ConnectaServer::new(state.gateway.clone());
    let s = &state.gateway.config.server;
    let hosts = allowed_hosts(&state.gateway.config);
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(s.max_request_bytes)
        .with_cancellation_token(cancel.clone())
        .with_allowed_hosts(hosts.clone())
        // A request carrying an `Origin` not listed is refused with 403, also
        // when the list is empty (MCP: validate Origin against DNS rebinding).
        .with_allowed_origins(s.allowed_origins.iter().cloned())
        .enforce_origin_validation();
    let direct = direct.then(|| direct::DirectCalls::new(server.clone(), &hosts, cancel));
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    // `route_layer`: auth, admission and CORS guard `/mcp` only; any other
    // path is a plain 404 (not a 401 that suggests something is there).
    // Admission is inside framing: a request is admitted once its body has
    // arrived, and each message of a batch on its own.
    let framed = framing::Framing::new(
        mcp,
        state.admission.clone(),
        framing::FramingLimits::of(s),
        state.release_memory,
        direct,
    );
    let mcp_routes = Router::new()
        .nest_service("/mcp", framed)
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .route_layer(auth::cors(&state.gateway.config.server.allowed_origins));
    Router::new()
        .route("/health", get(health::health))
        .route("/metrics", get(metrics::metrics))
        .route(
            connecta_gateway::oauth_flow::CALLBACK_PATH,
            get(oauth_callback),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .merge(operator::routes(&state))
        .merge(mcp_routes)
        .with_state(state)
}

/// The `Host` names `/mcp` and `/ui` answer to (DNS-rebinding defence):
/// loopback names, `server.allowed_hosts`, and the public URL's host.
pub(crate) fn allowed_hosts(config: &connecta_core::config::Config) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    hosts.extend(config.server.allowed_hosts.iter().cloned());
    hosts
}

/// Where a person's browser returns from a downstream authorization server.
/// Every refusal gets the same page (the reason is logged), so nobody can
/// learn which connectors exist or which states are pending by probing.
async fn oauth_callback(
    axum::extract::State(state): axum::extract::State<AppState>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut params: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut repeated = false;
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        repeated |= params.insert(k.into_owned(), v.into_owned()).is_some();
    }
    let get = |k: &str| params.get(k).map(String::as_str);
    let outcome = if repeated {
        Err(connecta_gateway::oauth_flow::CallbackRefusal(
            "a parameter is repeated".into(),
        ))
    } else {
        state
            .gateway
            .complete_oauth(
                get("state").unwrap_or(""),
                get("code"),
                get("iss"),
                get("error"),
            )
            .await
    };
    let (status, text) = match outcome {
        Ok(connector) => {
            tracing::info!(connector = %connector, "downstream authorization completed");
            (
                axum::http::StatusCode::OK,
                "Authorized. You can close this page and go back to your agent.",
            )
        }
        Err(why) => {
            tracing::warn!("a downstream authorization callback was refused: {}", why.0);
            (
                axum::http::StatusCode::BAD_REQUEST,
                "This authorization link is not valid (any more). Ask your agent to call authorize_connector again for a new one.",
            )
        }
    };
    let page = format!(
        "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>connecta</title><p>{text}</p></html>"
    );
    (
        status,
        [
            (axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (axum::http::header::CACHE_CONTROL, "no-store"),
            (axum::http::header::REFERRER_POLICY, "no-referrer"),
            (
                axum::http::header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; frame-ancestors 'none'",
            ),
        ],
        page,
    )
        .into_response()
}

/// RFC 9728 metadata for `/mcp` when `[auth.oauth]` is configured; 404
/// otherwise. Unauthenticated, like `/health`.
async fn protected_resource(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match &state.auth.oauth {
        Some(o) => axum::Json(o.metadata(&state.gateway.config.server.public_url)).into_response(),
        None => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

/// Serve HTTP until `shutdown` resolves, then drain: the listener closes (new
/// connections are refused), the requests in flight keep their connections
/// and get `server.shutdown_grace_ms` to answer, and those still running
/// after that answer `executor_closed` (see `drain.rs`).
pub async fn serve_http(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let gateway = state.gateway.clone();
    let grace = gateway.config.server.shutdown_grace;
    // Cancelling rmcp's token makes it answer every request it still owes
    // with an empty 500, so it is the very last step, never the first.
    let drop_unanswered = CancellationToken::new();
    let app = router(state, drop_unanswered.clone());
    let signalled = CancellationToken::new();
    let on_signal = signalled.clone();
    let header_timeout = gateway.config.server.request_header_timeout;
    let server = connections::serve(listener, app, header_timeout, async move {
        shutdown.await;
        on_signal.cancel();
    });
    let mut server = std::pin::pin!(server);
    tokio::select! {
        r = &mut server => return r,
        () = signalled.cancelled() => {}
    }
    // The server now holds only the connections of requests in flight, and ends
    // once each has written its response.
    if let Some(r) = drain::drain(&mut server, &gateway, grace).await {
        return r;
    }
    drop_unanswered.cancel();
    tokio::time::timeout(LAST_WRITE, server)
        .await
        .unwrap_or(Ok(()))
}

/// After rmcp has been told to drop what it owes: time for those last
/// responses to be written before the server is abandoned.
const LAST_WRITE: Duration = Duration::from_secs(1);

/// Serve the same surface on stdin/stdout until the client closes stdin, or
/// until `shutdown` resolves; then the calls in flight drain as on HTTP and
/// their answers are written before stdout closes.
pub async fn serve_stdio(
    gateway: Arc<Gateway>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let grace = gateway.config.server.shutdown_grace;
    let server = ConnectaServer::new(gateway.clone());
    let in_flight = server.in_flight.clone();
    let mut shutdown = std::pin::pin!(shutdown);
    let framed = stdio_framing::frame(
        tokio::io::stdin(),
        tokio::io::stdout(),
        gateway.config.server.max_request_bytes,
    );
    let (reader, writer) = (framed.reader, framed.writer);
    let outcome = serve_framed_stdio(
        server,
        in_flight,
        (framed.to_rmcp, framed.from_rmcp),
        &gateway,
        grace,
        &mut shutdown,
    )
    .await;
    // rmcp has closed its side: the writer sends what is left and ends once
    // the reader (which may still be waiting on stdin) is gone.
    reader.abort();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
    outcome
}

async fn serve_framed_stdio(
    server: ConnectaServer,
    in_flight: tokio_util::task::TaskTracker,
    transport: (tokio::io::DuplexStream, tokio::io::DuplexStream),
    gateway: &Arc<Gateway>,
    grace: Duration,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> std::io::Result<()> {
    let running = tokio::select! {
        r = server.serve(transport) => {
            r.map_err(|e| std::io::Error::other(e.to_string()))?
        }
        // No session yet, so nothing to drain.
        () = shutdown.as_mut() => return Ok(()),
    };
    let stop = running.cancellation_token();
    let mut ended = std::pin::pin!(running.waiting());
    tokio::select! {
        r = &mut ended => {
            r.map_err(|e| std::io::Error::other(e.to_string()))?;
            return Ok(());
        }
        () = shutdown.as_mut() => {}
    }
    in_flight.close();
    let mut idle = std::pin::pin!(in_flight.wait());
    let _ = drain::drain(&mut idle, gateway, grace).await;
    // Cancelling the session makes rmcp write the answers its handlers have
    // already handed it, then close stdout.
    stop.cancel();
    ended
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}
