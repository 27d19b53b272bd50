//! The synthetic downstream over streamable HTTP: every connector of the
//! catalog at its own path, `/connector_<c>/mcp`, from one listener.
//!
//! Stateless (no sessions to create or expire) and answering plain JSON, the
//! cheapest shape a downstream can have, so the figures measured through a
//! gateway are dominated by the gateway.

use std::sync::Arc;

use axum::Router;
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::catalog::{ConnectorCatalog, connector_id};
use super::handler::SyntheticConnector;

/// The path connector `c` is served at.
pub fn connector_path(connector: usize) -> String {
    format!("/{}/mcp", connector_id(connector))
}

/// The MCP endpoint of connector `c` of a downstream on a loopback `port`.
pub fn connector_url(port: u16, c: usize) -> String {
    format!("http://127.0.0.1:{port}{}", connector_path(c))
}

/// The router serving every connector in `catalogs` at its own path.
pub fn router(catalogs: &[Arc<ConnectorCatalog>], shutdown: &CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .with_cancellation_token(shutdown.child_token());
    let sessions = Arc::new(LocalSessionManager::default());
    catalogs.iter().fold(Router::new(), |router, catalog| {
        let handler = SyntheticConnector::new(catalog.clone());
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            sessions.clone(),
            config.clone(),
        );
        router.route_service(&connector_path(catalog.index), service)
    })
}

/// Serve `catalogs` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    catalogs: &[Arc<ConnectorCatalog>],
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = router(catalogs, &shutdown);
    // Small JSON answers: Nagle would hold each one for the peer's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}
