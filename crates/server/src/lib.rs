//! The MCP surface of connecta. Only this crate knows JSON-RPC: it turns MCP
//! requests (streamable HTTP at `/mcp`, or stdio) into gateway calls and
//! gateway answers into MCP results, and it serves `/health` and `/metrics`.
//!
//! `serve_http` takes its listener and shutdown signal as arguments, so tests
//! bind `127.0.0.1:0` and stop it when they like.

#![forbid(unsafe_code)]

mod admission;
mod auth;
mod convert;
mod handler;
mod health;

use std::future::Future;
use std::sync::Arc;

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
}

impl AppState {
    pub fn new(gateway: Arc<Gateway>) -> AppState {
        let s = &gateway.config.server;
        AppState {
            admission: Arc::new(admission::RequestAdmission::new(
                s.max_concurrent_requests,
                s.max_queued_requests,
                s.queue_timeout,
            )),
            auth: Arc::new(auth::Authenticator::new(&gateway.config.auth)),
            gateway,
        }
    }
}

/// The full HTTP router: `/mcp` (auth, then admission, then MCP), and the
/// unqueued `/health` and `/metrics`.
pub fn router(state: AppState, cancel: CancellationToken) -> Router {
    let server = ConnectaServer::new(state.gateway.clone());
    let s = &state.gateway.config.server;
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    hosts.extend(s.allowed_hosts.iter().cloned());
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(s.max_request_bytes)
        .with_cancellation_token(cancel)
        .with_allowed_hosts(hosts);
    if !s.allowed_origins.is_empty() {
        mcp_config = mcp_config.with_allowed_origins(s.allowed_origins.iter().cloned());
    }
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    let mcp_routes = Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            admission::admit,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(auth::cors(&state.gateway.config.server.allowed_origins));
    Router::new()
        .route("/health", get(health::health))
        .route("/metrics", get(health::metrics))
        .merge(mcp_routes)
        .with_state(state)
}

/// Serve HTTP until `shutdown` resolves, then drain in-flight requests.
pub async fn serve_http(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cancel = CancellationToken::new();
    let app = router(state, cancel.clone());
    let stop = cancel.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            stop.cancel();
        })
        .await
}

/// Serve the same surface on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(gateway: Arc<Gateway>) -> std::io::Result<()> {
    let server = ConnectaServer::new(gateway);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}
