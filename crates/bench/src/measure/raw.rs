//! The raw driver: JSON-RPC POSTs with `reqwest`, nothing in between.
//!
//! It exists to measure the measuring: run against the same downstream, the
//! difference between it and the rmcp client is the client's own cost, and
//! PERFORMANCE.md's "here" column was taken with a raw JSON-RPC driver. It
//! still speaks proper streamable HTTP: `initialize` (2025-11-25), then
//! `notifications/initialized`, the negotiated `MCP-Protocol-Version` and
//! any `Mcp-Session-Id` on every request, and it reads JSON or SSE answers.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};

const PROTOCOL_VERSION: &str = "2025-11-25";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// A raw JSON-RPC client for one endpoint.
#[derive(Debug)]
pub struct RawClient {
    http: reqwest::Client,
    url: String,
    /// Sent on every request after `initialize`.
    headers: HeaderMap,
    instructions: Option<String>,
    next_id: AtomicU64,
}

impl RawClient {
    /// `initialize` and `notifications/initialized` against `url`.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .context("building the HTTP client")?;
        let mut client = Self {
            http,
            url: url.to_owned(),
            headers: HeaderMap::new(),
            instructions: None,
            next_id: AtomicU64::new(1),
        };
        let (result, session) = client
            .request_with_headers(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "connecta-bench-raw", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(PROTOCOL_VERSION);
        client
            .headers
            .insert(VERSION_HEADER, HeaderValue::from_str(version)?);
        if let Some(session) = session {
            client.headers.insert(SESSION_HEADER, session);
        }
        client.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let response = client
            .http
            .post(&client.url)
            .headers(client.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .send()
            .await
            .context("notifications/initialized")?;
        if !response.status().is_success() {
            bail!("notifications/initialized: HTTP {}", response.status());
        }
        Ok(client)
    }

    pub fn instructions(&self) -> Option<String> {
        self.instructions.clone()
    }

    /// One request; the `result` of its response.
    pub async fn request(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        Ok(self.request_with_headers(method, params).await?.0)
    }

    async fn request_with_headers(
        &self,
        method: &str,
        params: Value,
    ) -> anyhow::Result<(Value, Option<HeaderValue>)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body.to_string())
            .send()
            .await
            .with_context(|| format!("{method}: sending"))?;
        let status = response.status();
        let session = response.headers().get(SESSION_HEADER).cloned();
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = response
            .text()
            .await
            .with_context(|| format!("{method}: reading"))?;
        if !status.is_success() {
            bail!(
                "{method}: HTTP {status}: {}",
                super::checks::clamp(&text, 300)
            );
        }
        let message = if is_sse {
            sse_response(&text, id)
                .with_context(|| format!("{method}: no response in the event stream"))?
        } else {
            serde_json::from_str(&text).with_context(|| format!("{method}: not JSON"))?
        };
        if let Some(error) = message.get("error") {
            bail!("{method}: JSON-RPC error {error}");
        }
        let result = message
            .get("result")
            .cloned()
            .with_context(|| format!("{method}: no result"))?;
        Ok((result, session))
    }
}

/// The response to request `id` among the `data:` events of an SSE body.
pub fn sse_response(body: &str, id: u64) -> Option<Value> {
    let mut data = String::new();
    let mut events = Vec::new();
    for line in body.lines().chain(std::iter::once("")) {
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        } else if line.is_empty() && !data.is_empty() {
            events.push(std::mem::take(&mut data));
        }
    }
    events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(e).ok())
        .find(|m| {
            m.get("id").and_then(Value::as_u64) == Some(id)
                && (m.get("result").is_some() || m.get("error").is_some())
        })
}

#[cfg(test)]
mod tests {
    use super::sse_response;

    #[test]
    fn the_matching_response_is_found_among_other_events() {
        let body = "id: 1\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n";
        let found = sse_response(body, 7).expect("response");
        assert_eq!(found["result"]["ok"], true);
        assert!(sse_response(body, 8).is_none());
    }
}
