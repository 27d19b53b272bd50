//! Calls to a streamable HTTP downstream reuse their TCP connections: a
//! gateway that opened one connection per call would pay a handshake and an
//! accept on both ends of every call (rmcp's default client keeps no idle
//! connections). A counting proxy in front of a real rmcp server sees how
//! many connections twenty calls take.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use connecta_connectors::{CallOptions, Connector, McpConnector, McpOptions};
use connecta_core::config::McpTransport;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo",
            "Echo the arguments.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        Ok(CallToolResult::structured(args).into())
    }
}

/// The downstream behind a proxy that counts the connections it accepts:
/// stateless with JSON answers, or with sessions and event-stream answers.
async fn counted_downstream(sessions: bool) -> (String, Arc<AtomicUsize>) {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(sessions)
        .with_json_response(!sessions)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        || Ok(Echo),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let server = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let server_addr = server.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(server, app).await });

    let proxy = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let proxy_addr = proxy.local_addr().expect("addr");
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = proxy.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(server_addr).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (format!("http://{proxy_addr}/mcp"), accepted)
}

#[tokio::test]
async fn twenty_calls_reuse_a_kept_alive_connection() {
    twenty_calls(false).await;
}

/// An answer on an event stream is read to the stream's end after the
/// answer (drained in the background), or its connection could not go
/// back to the pool.
#[tokio::test]
async fn twenty_calls_answered_on_event_streams_reuse_a_kept_alive_connection() {
    twenty_calls(true).await;
}

async fn twenty_calls(sessions: bool) {
    let (url, accepted) = counted_downstream(sessions).await;
    let connector = McpConnector::new(
        "echo",
        McpTransport::Http {
            url,
            headers: Vec::new(),
        },
        McpOptions::default(),
    );
    let tools = connector
        .list_tools(Duration::from_secs(10))
        .await
        .expect("tools/list");
    assert_eq!(tools.len(), 1);
    for i in 0..20 {
        let mut args = Map::new();
        args.insert("i".into(), json!(i));
        let result = connector
            .call(
                "echo",
                args,
                CallOptions {
                    timeout: Duration::from_secs(10),
                    cancel: CancellationToken::new(),
                },
            )
            .await
            .expect("call");
        assert!(!result.is_error);
    }
    let connections = accepted.load(Ordering::SeqCst);
    // The handshake may open a second connection while the first is busy;
    // one per call would be twenty or more.
    assert!(
        connections <= 3,
        "{connections} TCP connections for a handshake, a listing and 20 calls"
    );
    connector.shutdown().await;
}
