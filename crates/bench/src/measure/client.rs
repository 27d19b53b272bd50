//! The measuring client: rmcp over streamable HTTP, `initialize` handshake
//! (the default), or the raw JSON-RPC driver of [`super::raw`].
//!
//! Choice: rmcp's own client by default, not hand-rolled JSON-RPC, because
//! the claim the figures support is "what an MCP client pays". Its transport
//! lets independent POSTs overlap (up to 16 per client), so it does not
//! serialize requests; the load generator still gives every in-flight worker
//! its own client (its own connection), as independent agents would be. The
//! raw driver is there to measure the client's own cost (same run, same
//! downstream) and to match how PERFORMANCE.md's "here" column was taken.
//!
//! One deliberate difference from rmcp's default HTTP client: connections
//! are kept alive. rmcp's default disables pooling, which would add a TCP
//! handshake to every request and measure the kernel rather than the server;
//! the reference harness (Node `fetch`) keeps connections alive too.

use std::time::Duration;

use anyhow::Context;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ListToolsResult, PaginatedRequestParams,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use super::raw::RawClient;

/// No single request may take longer than this; a hung server fails a figure
/// instead of hanging the run.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Which client measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "camelCase")]
pub enum Driver {
    /// rmcp's streamable HTTP client.
    #[default]
    Rmcp,
    /// JSON-RPC POSTs with reqwest.
    Raw,
}

/// A connected MCP client.
pub struct Client {
    inner: Inner,
}

enum Inner {
    Rmcp(RunningService<RoleClient, ClientConfig>),
    Raw(RawClient),
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

/// Connect to `url` with rmcp and complete the `initialize` handshake.
pub async fn connect(url: &str) -> anyhow::Result<Client> {
    connect_with(url, Driver::Rmcp).await
}

/// Connect to `url` with `driver`.
pub async fn connect_with(url: &str, driver: Driver) -> anyhow::Result<Client> {
    match driver {
        Driver::Rmcp => connect_rmcp(url).await,
        Driver::Raw => {
            let raw = tokio::time::timeout(REQUEST_TIMEOUT, RawClient::connect(url))
                .await
                .with_context(|| format!("initialize with {url} timed out"))?
                .with_context(|| format!("initialize with {url}"))?;
            Ok(Client {
                inner: Inner::Raw(raw),
            })
        }
    }
}

async fn connect_rmcp(url: &str) -> anyhow::Result<Client> {
    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .context("building the HTTP client")?;
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        // tools/list of a 10,000-tool connector is several MB of JSON.
        .max_json_response_size(256 << 20);
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("connecta-bench", env!("CARGO_PKG_VERSION")),
    );
    let service = tokio::time::timeout(REQUEST_TIMEOUT, info.serve(transport))
        .await
        .with_context(|| format!("initialize with {url} timed out"))?
        .with_context(|| format!("initialize with {url}"))?;
    Ok(Client {
        inner: Inner::Rmcp(service),
    })
}

impl Client {
    /// The server's `instructions`, if it sent any.
    pub fn instructions(&self) -> Option<String> {
        match &self.inner {
            Inner::Rmcp(service) => service.peer_info().and_then(|i| i.instructions.clone()),
            Inner::Raw(raw) => raw.instructions(),
        }
    }

    /// One `tools/list` page.
    pub async fn list_tools_page(&self, cursor: Option<String>) -> anyhow::Result<ListToolsResult> {
        let listing = async {
            match &self.inner {
                Inner::Rmcp(service) => {
                    let params =
                        cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
                    anyhow::Ok(service.list_tools(params).await?)
                }
                Inner::Raw(raw) => {
                    let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
                    let result = raw.request("tools/list", params).await?;
                    Ok(serde_json::from_value(result)?)
                }
            }
        };
        tokio::time::timeout(REQUEST_TIMEOUT, listing)
            .await
            .context("tools/list timed out")?
            .context("tools/list")
    }

    /// Walk `tools/list` to the end; returns the pages in order.
    pub async fn list_all_pages(&self) -> anyhow::Result<Vec<ListToolsResult>> {
        let mut pages = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.list_tools_page(cursor).await?;
            cursor = page.next_cursor.clone();
            pages.push(page);
            if cursor.is_none() {
                return Ok(pages);
            }
            if pages.len() > 100_000 {
                anyhow::bail!("tools/list did not end after 100,000 pages");
            }
        }
    }

    /// `tools/call` of `name` with `arguments` (an object).
    pub async fn call(&self, name: &str, arguments: Value) -> anyhow::Result<CallToolResult> {
        let calling = async {
            match &self.inner {
                Inner::Rmcp(service) => {
                    let mut params = CallToolRequestParams::new(name.to_owned());
                    if let Value::Object(map) = arguments {
                        params = params.with_arguments(map);
                    }
                    anyhow::Ok(service.call_tool(params).await?)
                }
                Inner::Raw(raw) => {
                    let result = raw
                        .request("tools/call", json!({"name": name, "arguments": arguments}))
                        .await?;
                    Ok(serde_json::from_value(result)?)
                }
            }
        };
        tokio::time::timeout(REQUEST_TIMEOUT, calling)
            .await
            .with_context(|| format!("tools/call {name} timed out"))?
            .with_context(|| format!("tools/call {name}"))
    }

    /// End the client (closes its transport).
    pub async fn close(self) {
        if let Inner::Rmcp(service) = self.inner {
            let _ = service.cancel().await;
        }
    }
}
