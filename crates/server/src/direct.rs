//! `tools/call` served without rmcp's per-request service.
//!
//! rmcp's streamable HTTP service serves each stateless request by building
//! a one-shot transport and a service around it, spawning a task for that
//! service, and handing the message in and the answer out through channels;
//! the message is read a second time on the way (through serde's buffered
//! `Content`, framing has already read it once). That was about a fifth of
//! the gateway's CPU per call. Here a plain `tools/call` goes from framing
//! straight to the handler's code on the request's own task, and its answer
//! is serialized once, as rmcp's message type.
//!
//! This lane never refuses anything. A request takes it only when it is
//! certain rmcp would take it unchanged to the same handler, with the same
//! context; every other request goes to rmcp, which answers or refuses it as
//! before. A request qualifies when all of these hold:
//! - its `Host` is one rmcp allows (the same comparison as rmcp's
//!   DNS-rebinding check), it has no `Origin`, and its content type is JSON
//!   (framing's check; `Accept` is settled by framing before this);
//! - its only `Mcp-*` header is at most one `MCP-Protocol-Version` naming a
//!   revision rmcp knows from before per-request metadata and standard
//!   headers (2026-07-28), so rmcp's header and `_meta` checks have nothing
//!   to check;
//! - the auth layer put an `Actor` on it;
//! - the body is exactly `{"jsonrpc": "2.0", "id", "method": "tools/call",
//!   "params": {"name", "arguments"?, "_meta"?: {"progressToken"}}}`, each
//!   read with rmcp's own types; any other key (`inputResponses`,
//!   `requestState`, `task`, a protocol version in `_meta`) sends it to
//!   rmcp.
//!
//! Under those conditions the handler sees what rmcp gives it over HTTP: no
//! elicitor (stateless HTTP has no channel back) and no approval input (the
//! revision is older than multi round-trip requests and there is no retry
//! state); its answer is given the older revisions' shape (no
//! `resultType`, object-only structured content) as rmcp's dispatch gives
//! it. A client that disconnects cancels the call's token and the call is
//! finished on a task of its own, as with rmcp's disconnect guard and its
//! task per handler; when the server finally drops what it still owes
//! (`serve_http`'s last step), the answer is rmcp's empty 500.
//!
//! `direct_tests.rs` sends each request of a table to the router with and
//! without this lane and requires the same answer, and does the same for a
//! call the server drops on its last shutdown step.
//!
//! Must never: answer a request rmcp would refuse, or answer one differently.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderValue, Response, StatusCode, header};
use connecta_core::activity::Actor;
use connecta_gateway::RequestCtx;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, JsonObject, JsonRpcVersion2_0, ProgressToken, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::handler::ConnectaServer;

/// What rmcp answers a stateless request that it owes when the server drops
/// it (`internal_error_response("empty response")` on its cancellation).
const DROPPED: &str =
    "Encounter an error when empty response: no response message received from handler";

/// The handler and what a request is checked against.
#[derive(Clone)]
pub(crate) struct DirectCalls {
    server: ConnectaServer,
    /// rmcp's allowed `Host` list, parsed as rmcp parses it.
    hosts: std::sync::Arc<[AllowedHost]>,
    /// The token `serve_http` cancels last; rmcp's `cancellation_token`.
    dropped: CancellationToken,
}

/// A plain `tools/call`, read with rmcp's types.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlainCall {
    #[allow(dead_code)] // Only `"2.0"` deserializes.
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[allow(dead_code)] // Only `"tools/call"` deserializes.
    method: ToolsCall,
    params: PlainParams,
}

#[derive(Deserialize)]
enum ToolsCall {
    #[serde(rename = "tools/call")]
    ToolsCall,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    /// rmcp's client sends a progress token with every request; the
    /// handler reports no progress, so it changes nothing.
    #[serde(rename = "_meta", default)]
    #[allow(dead_code)]
    meta: Option<PlainMeta>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainMeta {
    #[serde(rename = "progressToken")]
    #[allow(dead_code)]
    progress_token: ProgressToken,
}

impl DirectCalls {
    pub(crate) fn new(
        server: ConnectaServer,
        allowed_hosts: &[String],
        dropped: CancellationToken,
    ) -> DirectCalls {
        DirectCalls {
            server,
            hosts: allowed_hosts
                .iter()
                .filter_map(|h| AllowedHost::parse(h))
                .collect(),
            dropped,
        }
    }

    /// The call in `body`, when this lane may serve it (see the module doc).
    pub(crate) fn take(&self, parts: &Parts, body: &[u8]) -> Option<(PlainCall, Actor)> {
        if !self.plain_headers(parts) {
            return None;
        }
        let actor = parts.extensions.get::<Actor>()?.clone();
        let call = serde_json::from_slice(body).ok()?;
        Some((call, actor))
    }

    fn plain_headers(&self, parts: &Parts) -> bool {
        let headers = &parts.headers;
        if headers.contains_key(header::ORIGIN) {
            return false;
        }
        let mut hosts = headers.get_all(header::HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return false;
        };
        if !self.host_allowed(host) {
            return false;
        }
        let mut versions = 0;
        for (name, value) in headers {
            // Header names are lowercase in `http`.
            let name = name.as_str();
            if !name.starts_with("mcp-") {
                continue;
            }
            if name != "mcp-protocol-version" || !plain_version(value) {
                return false;
            }
            versions += 1;
        }
        versions <= 1
    }

    /// rmcp's `host_is_allowed` on rmcp's reading of `Host`; an empty list
    /// allows any host there, and none here (rmcp decides those).
    fn host_allowed(&self, host: &HeaderValue) -> bool {
        let Ok(host) = host.to_str() else {
            return false;
        };
        let Ok(authority) = http::uri::Authority::try_from(host) else {
            return false;
        };
        let name = normalize_host(authority.host());
        let port = authority.port_u16();
        self.hosts
            .iter()
            .any(|a| a.host == name && a.port.is_none_or(|p| port == Some(p)))
    }

    /// Run the call and answer it as rmcp would.
    pub(crate) async fn answer(&self, call: PlainCall, actor: Actor) -> Response<Body> {
        let cancel = CancellationToken::new();
        let ctx = RequestCtx::new(actor, cancel.clone());
        let args = call.params.arguments.unwrap_or_default();
        let server = self.server.clone();
        let name = call.params.name;
        let running = RunToEnd {
            call: Some(Box::pin(
                async move { server.respond(&name, args, ctx).await },
            )),
            cancel,
        };
        let response = tokio::select! {
            biased;
            () = self.dropped.cancelled() => {
                return text(StatusCode::INTERNAL_SERVER_ERROR, DROPPED);
            }
            r = running => r,
        };
        let message = match response {
            // What rmcp's handler dispatch answers a revision older than
            // multi round-trip requests; the handler asks only 2026-07-28
            // clients, which never come this way.
            CallToolResponse::InputRequired(_) => ServerJsonRpcMessage::error(
                ErrorData::invalid_request(
                    "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
                    None,
                ),
                Some(call.id),
            ),
            complete => {
                // The wire shape older revisions have, as rmcp's dispatch
                // leaves it for them.
                let mut result = ServerResult::from(complete);
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                ServerJsonRpcMessage::response(result, call.id)
            }
        };
        match serde_json::to_vec(&message) {
            Ok(body) => {
                let mut r = Response::new(Body::from(body));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r
            }
            Err(e) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("Encounter an error when serialize json response: {e}"),
            ),
        }
    }
}

/// A call that, dropped before it ends (the client went away, or the
/// server dropped what it owed), has its token cancelled and is finished on
/// a task of its own. rmcp runs each handler on its own task, which goes on
/// after a disconnect and sees the cancellation: an approval question, for
/// one, is then closed as cancelled instead of left open.
struct RunToEnd {
    call: Option<Pin<Box<dyn Future<Output = CallToolResponse> + Send>>>,
    cancel: CancellationToken,
}

impl Future for RunToEnd {
    type Output = CallToolResponse;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallToolResponse> {
        let Some(call) = self.call.as_mut() else {
            return Poll::Pending;
        };
        let out = std::task::ready!(call.as_mut().poll(cx));
        self.call = None;
        Poll::Ready(out)
    }
}

impl Drop for RunToEnd {
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            self.cancel.cancel();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(call);
            }
        }
    }
}

/// An `MCP-Protocol-Version` rmcp knows, older than the revision that
/// brought per-request metadata and standard headers.
fn plain_version(value: &HeaderValue) -> bool {
    let Ok(v) = value.to_str() else {
        return false;
    };
    // Two thresholds in rmcp (per-request `_meta`, standard headers), the
    // same revision today.
    v < ProtocolVersion::V_2026_07_28.as_str()
        && v < ProtocolVersion::STANDARD_HEADERS.as_str()
        && ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|k| k.as_str() == v)
}

/// One entry of the allowed `Host` list, as rmcp's
/// `parse_allowed_authority` reads it.
struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    fn parse(allowed: &str) -> Option<AllowedHost> {
        let allowed = allowed.trim();
        if allowed.is_empty() {
            return None;
        }
        Some(match http::uri::Authority::try_from(allowed) {
            Ok(a) => AllowedHost {
                host: normalize_host(a.host()),
                port: a.port_u16(),
            },
            Err(_) => AllowedHost {
                host: normalize_host(allowed),
                port: None,
            },
        })
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// rmcp's plain-text refusals carry no content type (framing's `plain`
/// adds one).
fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(message.to_owned()));
    *r.status_mut() = status;
    r
}
