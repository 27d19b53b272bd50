//! `tools/call` on a streamable HTTP session, posted from the calling task.
//!
//! rmcp's client carries a request from the caller to its service task, to
//! the transport worker, to a task per POST, and the answer back the same
//! way; that was most of the gateway's CPU outside the HTTP exchanges
//! themselves (docs/performance.md, "Where the gateway's CPU goes"). A call
//! on a session rmcp set up is posted here instead: the same pooled client,
//! the session id the downstream assigned and the negotiated protocol
//! version. The POST is `post.rs`'s, which reads the answer's status,
//! content type and limits as rmcp's client does (a test holds the two to
//! the same reading of every kind of answer); the answer's message is read
//! here, a plain tool result directly and anything else as rmcp reads it.
//! The handshake, catalog walks, the standalone event stream, replies,
//! cancellations and re-initializing an expired session stay with rmcp.
//!
//! Only sessions on a protocol version before the one with per-request
//! standard headers are served here (`ProtocolVersion::STANDARD_HEADERS`:
//! rmcp computes those from the tool's cached schema).
//!
//! What rmcp's worker does for a call is done here the same way: an answer's
//! event stream that ends or breaks is resumed by `Last-Event-ID` under the
//! transport's retry policy (and the server's `retry:`), events other than
//! `message` and data that is not a message are passed over, control POSTs
//! (replies, cancellations) give up after 5 s, and POSTs in flight are bounded
//! by `max_concurrent_requests`. (rmcp also reads an answered stream on
//! for 50 ms so its connection can be pooled; against rmcp's server the
//! connection is reused without that, `http_calls_reuse_connections`.)
//!
//! Must never: send one call twice (a call goes to rmcp instead only when
//! it was not sent: the session is not ready yet, or the downstream
//! answered HTTP 404 for it, having done nothing); use a session before
//! rmcp finished setting it up; leave a request the downstream sends
//! mid-call unanswered; answer an elicitation other than by refusing it.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, ContentBlock, JsonRpcVersion2_0, NumberOrString, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use sse_stream::{Error as SseError, Sse};

use tokio::sync::Semaphore;

use super::handler;
use super::post::{Posted, Target, is_event_too_large, unreadable, without_url};

type HttpError = StreamableHttpError<reqwest::Error>;

/// Where rmcp's session stands, as its POSTs show it.
#[derive(Clone, Debug, Default, PartialEq)]
enum SessionState {
    /// No handshake answered yet, or a new one under way.
    #[default]
    Unknown,
    /// The downstream assigned this id; rmcp has not used it yet (the
    /// `notifications/initialized` that finishes the set-up is not through).
    Assigned(Arc<str>),
    /// rmcp's POSTs on this session go through: calls may use it.
    Ready(Option<Arc<str>>),
}

/// The session rmcp's transport set up, shared with the direct route.
#[derive(Clone, Default)]
pub(crate) struct SessionId(Arc<Mutex<SessionState>>);

impl SessionId {
    fn update(&self, f: impl FnOnce(&mut SessionState)) {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// The session a call may be posted on (`Some(None)`: the downstream
    /// keeps none), or `None` while rmcp is setting one up.
    fn ready(&self) -> Option<Option<Arc<str>>> {
        match &*self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            SessionState::Ready(id) => Some(id.clone()),
            _ => None,
        }
    }
}

/// rmcp's reqwest client, following the session rmcp's own POSTs set up:
/// an `initialize` answer assigns an id (or none: a stateless downstream),
/// and the first POST rmcp gets through on it makes it ready. Its errors
/// leave the request's URL out (`post::without_url`).
#[derive(Clone)]
pub(crate) struct Recording {
    pub(crate) http: reqwest::Client,
    pub(crate) session: SessionId,
}

impl StreamableHttpClient for Recording {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let initialize = matches!(
            &message,
            ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_))
        );
        if initialize {
            self.session.update(|s| *s = SessionState::Unknown);
        }
        let response = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id.clone(),
                auth_header,
                custom_headers,
                limits,
            )
            .await
            .map_err(without_url);
        self.session.update(|state| match (&response, session_id) {
            (
                Ok(
                    StreamableHttpPostResponse::Json(_, assigned)
                    | StreamableHttpPostResponse::Sse(_, assigned),
                ),
                None,
            ) if initialize => {
                *state = match assigned {
                    Some(id) => SessionState::Assigned(Arc::from(id.as_str())),
                    None => SessionState::Ready(None),
                }
            }
            (Ok(_), Some(used)) if !initialize => {
                if matches!(state, SessionState::Assigned(id) if *id == used) {
                    *state = SessionState::Ready(Some(used));
                }
            }
            _ => {}
        });
        response
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(without_url)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<futures::stream::BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map_err(without_url)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<futures::stream::BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(without_url)
    }
}

/// How long a reply or a cancellation may take to post (rmcp's
/// `control_request_timeout`).
const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);

/// What a session needs to take calls without rmcp's service.
pub(crate) struct Direct {
    client: Recording,
    /// Where calls are posted, and how their answers are bounded.
    target: Target,
    /// The URL as rmcp's client takes it, for replies, cancellations and
    /// resumed streams (the headers are the target's, see `rmcp_headers`).
    uri: Arc<str>,
    /// The transport's policy for picking an event stream up again.
    retry: Arc<dyn SseRetryPolicy>,
    /// POSTs in flight on this session, as rmcp bounds its own.
    posts: Semaphore,
    next_id: AtomicU64,
    refused_elicitations: Arc<AtomicU64>,
}

/// A call's answer; `None` when the call was not sent: the session is not
/// ready yet, or the downstream does not know it (HTTP 404) and did
/// nothing. The call is then rmcp's to make (which re-initializes).
type Answer = Option<Result<CallToolResponse, ServiceError>>;

impl Direct {
    /// The route for a session rmcp's transport set up with `config`, on
    /// protocol `version`, if calls on it can be posted here.
    pub(crate) fn for_session(
        client: Recording,
        config: &StreamableHttpClientTransportConfig,
        version: &ProtocolVersion,
        refused_elicitations: Arc<AtomicU64>,
    ) -> Option<Direct> {
        if *version >= ProtocolVersion::STANDARD_HEADERS {
            return None;
        }
        let mut headers: http::HeaderMap = config
            .custom_headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let value = HeaderValue::from_str(version.as_str()).ok()?;
        headers.insert(HeaderName::from_static("mcp-protocol-version"), value);
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = config.max_sse_event_size;
        limits.max_json_response_size = config.max_json_response_size;
        let target = Target {
            url: reqwest::Url::parse(&config.uri).ok()?,
            headers,
            limits,
        };
        Some(Direct {
            client,
            target,
            uri: config.uri.clone(),
            retry: config.retry_config.clone(),
            posts: Semaphore::new(config.max_concurrent_requests.max(1)),
            next_id: AtomicU64::new(0),
            refused_elicitations,
        })
    }

    /// The connector's headers, its credential and the protocol version,
    /// as rmcp's client takes them (only its rarer calls here need them).
    fn rmcp_headers(&self) -> HashMap<HeaderName, HeaderValue> {
        let headers = self.target.headers.iter();
        headers.map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Posts `tools/call` and reads its answer. Dropping the future before
    /// the answer (a timeout, a cancelled caller) tells the downstream, as
    /// rmcp does.
    pub(crate) async fn call(self: &Arc<Self>, params: CallToolRequestParams) -> Answer {
        let session = self.client.session.ready()?;
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        // rmcp numbers its own requests on the session; these never meet them.
        let id = NumberOrString::String(Arc::from(format!("connecta-{n}")));
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // Serialized before the first await, and the message a temporary,
        // so that it takes no room in the call's future (a named local
        // would, borrowed, until the end of its scope).
        let body = match serde_json::to_vec(&ClientJsonRpcMessage::request(request, id.clone())) {
            Ok(body) => body,
            Err(e) => return Some(Err(transport_error(StreamableHttpError::Deserialize(e)))),
        };
        let mut pending = Pending {
            direct: self.clone(),
            session: session.clone(),
            id: Some(id.clone()),
        };
        let outcome = self.exchange(body, &id, session).await;
        // Answered, refused or lost with its connection: nothing to cancel.
        pending.id = None;
        outcome
    }

    async fn exchange(&self, body: Vec<u8>, id: &RequestId, session: Option<Arc<str>>) -> Answer {
        let posted = {
            let Ok(_slot) = self.posts.acquire().await else {
                return None;
            };
            let http = &self.client.http;
            self.target.post(http, body, session.as_deref()).await
        };
        let stream = match posted {
            Ok(Posted::Json(body)) => {
                let answer = match read_message(&body, id) {
                    Ok(Read::Answer(r)) => Some(Ok(CallToolResponse::Complete(r))),
                    Ok(Read::Other(message)) => {
                        Box::pin(self.answer_of(*message, id, &session)).await
                    }
                    Err(e) => return Some(Err(transport_error(unreadable(&e, &body)))),
                };
                return Some(answer.unwrap_or(Err(ServiceError::UnexpectedResponse)));
            }
            Ok(Posted::Error(message)) => {
                let answer = Box::pin(self.answer_of(*message, id, &session)).await;
                return Some(answer.unwrap_or(Err(ServiceError::UnexpectedResponse)));
            }
            Ok(Posted::Stream(stream)) => stream,
            Ok(Posted::Accepted) => return Some(Err(ServiceError::UnexpectedResponse)),
            Err(StreamableHttpError::SessionExpired) => return None,
            Err(e) => return Some(Err(transport_error(e))),
        };
        Some(self.read_stream(stream, id, &session).await)
    }

    /// Reads an answer's event stream until the answer, picking it up
    /// again by `Last-Event-ID` when it ends or breaks (as rmcp's
    /// `SseAutoReconnectStream` does for a request's stream: only once the
    /// server gave an event id).
    async fn read_stream(
        &self,
        mut stream: BoxStream<'static, Result<Sse, SseError>>,
        id: &RequestId,
        session: &Option<Arc<str>>,
    ) -> Result<CallToolResponse, ServiceError> {
        let mut last_event_id: Option<String> = None;
        let mut server_retry: Option<Duration> = None;
        // Events since the stream was last (re)opened: a break before any
        // (the same event failing again, such as one over the size limit)
        // is not picked up again.
        let mut fresh = 0usize;
        loop {
            let broke = match stream.next().await {
                Some(Ok(event)) => {
                    fresh += 1;
                    if let Some(ms) = event.retry {
                        server_retry = Some(Duration::from_millis(ms));
                    }
                    if event.id.is_some() {
                        last_event_id = event.id.clone();
                    }
                    if !matches!(event.event.as_deref(), None | Some("") | Some("message")) {
                        continue;
                    }
                    let Some(data) = event.data else { continue };
                    let message = match read_message(data.as_bytes(), id) {
                        Ok(Read::Answer(r)) => return Ok(CallToolResponse::Complete(r)),
                        Ok(Read::Other(message)) => *message,
                        Err(_) => {
                            tracing::debug!(
                                "an event that is not a JSON-RPC message was passed over"
                            );
                            continue;
                        }
                    };
                    if let Some(answer) = Box::pin(self.answer_of(message, id, session)).await {
                        return answer;
                    }
                    continue;
                }
                // An event over the limit would be met again (rmcp stops too).
                Some(Err(e)) if is_event_too_large(&e) => {
                    return Err(transport_error(StreamableHttpError::Sse(e)));
                }
                Some(Err(e)) => Some(e),
                None => None,
            };
            let Some(last) = last_event_id.clone() else {
                return Err(transport_error(match broke {
                    Some(e) => StreamableHttpError::Sse(e),
                    None => StreamableHttpError::UnexpectedEndOfStream,
                }));
            };
            // A clean end waits for the server's `retry:` (or the policy's
            // first interval); a break reconnects at once.
            let wait = match broke {
                Some(e) if fresh == 0 => {
                    return Err(transport_error(StreamableHttpError::Sse(e)));
                }
                Some(_) => Some(Duration::ZERO),
                None => server_retry.take().or_else(|| self.retry.retry(0)),
            };
            let Some(wait) = wait else {
                return Err(transport_error(StreamableHttpError::UnexpectedEndOfStream));
            };
            stream = self.resume(&last, session, wait, server_retry).await?;
            fresh = 0;
        }
    }

    /// Opens the stream again after `last`, retrying under the policy.
    async fn resume(
        &self,
        last: &str,
        session: &Option<Arc<str>>,
        mut wait: Duration,
        server_retry: Option<Duration>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, ServiceError> {
        let mut attempts = 0;
        loop {
            tokio::time::sleep(wait).await;
            let reopened = self
                .client
                .get_stream_with_max_sse_event_size(
                    self.uri.clone(),
                    session.clone(),
                    Some(last.to_owned()),
                    None,
                    self.rmcp_headers(),
                    self.target.limits.max_sse_event_size,
                )
                .await;
            let e = match reopened {
                Ok(stream) => return Ok(stream),
                Err(
                    e @ (StreamableHttpError::ServerDoesNotSupportSse
                    | StreamableHttpError::AuthRequired(_)
                    | StreamableHttpError::InsufficientScope(_)),
                ) => return Err(transport_error(e)),
                Err(e) => e,
            };
            attempts += 1;
            let Some(next) = self.retry.retry(attempts) else {
                return Err(transport_error(e));
            };
            wait = server_retry.map_or(next, |s| s.max(next));
        }
    }

    /// The call's answer if `message` is it; a request from the downstream
    /// is answered on the way, a notification passed over.
    async fn answer_of(
        &self,
        message: ServerJsonRpcMessage,
        id: &RequestId,
        session: &Option<Arc<str>>,
    ) -> Option<Result<CallToolResponse, ServiceError>> {
        match message {
            ServerJsonRpcMessage::Response(r) if r.id == *id => Some(call_response(r.result)),
            ServerJsonRpcMessage::Error(e) if e.id.as_ref() == Some(id) => {
                Some(Err(ServiceError::McpError(e.error)))
            }
            ServerJsonRpcMessage::Request(request) => {
                let reply = match handler::answer(request.request, &self.refused_elicitations) {
                    Ok(result) => ClientJsonRpcMessage::response(result, request.id),
                    Err(error) => ClientJsonRpcMessage::error(error, Some(request.id)),
                };
                // A reply the downstream cannot take leaves it to end the
                // call as it sees fit; the call's own answer still decides.
                self.control(reply, session.clone()).await;
                None
            }
            _ => None,
        }
    }

    /// Posts a reply or a notification, giving up after
    /// [`CONTROL_TIMEOUT`].
    async fn control(&self, message: ClientJsonRpcMessage, session: Option<Arc<str>>) {
        let post = self.client.post_message(
            self.uri.clone(),
            message,
            session,
            None,
            self.rmcp_headers(),
        );
        match tokio::time::timeout(CONTROL_TIMEOUT, post).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "the downstream did not take a message"),
            Err(_) => tracing::debug!("the downstream did not take a message in time"),
        }
    }
}

/// A call posted and not yet answered: dropped, it tells the downstream.
struct Pending {
    direct: Arc<Direct>,
    /// The session the call went out on (a cancellation for it means
    /// nothing on another).
    session: Option<Arc<str>>,
    id: Option<RequestId>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let direct = self.direct.clone();
        let session = self.session.take();
        runtime.spawn(async move {
            let cancelled = ClientNotification::CancelledNotification(CancelledNotification::new(
                CancelledNotificationParam::new(
                    Some(id),
                    Some("the caller stopped waiting".into()),
                ),
            ));
            direct
                .control(ClientJsonRpcMessage::notification(cancelled), session)
                .await;
        });
    }
}

/// A message from the downstream, as far as one call needs it read.
enum Read {
    /// The call's answer: a tool result.
    Answer(CallToolResult),
    /// Anything else, read whole as rmcp reads it.
    Other(Box<ServerJsonRpcMessage>),
}

/// A response to a call whose result is a plain tool result, read in one
/// strict pass: objects only, each key once, no key but `jsonrpc`, `id` and
/// `result`, and in the result none but `content`, `structuredContent` and
/// `isError`. rmcp's untagged `ServerResult` reads such a result as a
/// `CallToolResult` too (no result type it tries first can have only
/// these keys; the tests hold the two readings equal), and anything this
/// pass refuses is read as rmcp reads it. One pass over the whole text
/// keeps the parser's nesting limit where it is for rmcp's reading.
struct Plain {
    id: RequestId,
    result: CallToolResult,
}

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PlainVisitor)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum MessageKey {
    Jsonrpc,
    Id,
    Result,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum ResultKey {
    Content,
    StructuredContent,
    IsError,
    #[serde(other)]
    Other,
}

fn not_plain<E: de::Error>() -> E {
    E::custom("not a plain tool result")
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Plain;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC response")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
        let (mut version, mut id, mut result) = (None, None, None);
        while let Some(key) = map.next_key::<MessageKey>()? {
            match key {
                MessageKey::Jsonrpc if version.is_none() => {
                    version = Some(map.next_value::<JsonRpcVersion2_0>()?);
                }
                MessageKey::Id if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                MessageKey::Result if result.is_none() => {
                    result = Some(map.next_value::<PlainResult>()?.0);
                }
                _ => return Err(not_plain()),
            }
        }
        match (version, id, result) {
            (Some(_), Some(id), Some(result)) => Ok(Plain { id, result }),
            _ => Err(not_plain()),
        }
    }
}

/// A tool result of only a tool result's own keys, read as rmcp's
/// `CallToolResult` reads them.
struct PlainResult(CallToolResult);

impl<'de> Deserialize<'de> for PlainResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PlainResultVisitor)
    }
}

struct PlainResultVisitor;

impl<'de> Visitor<'de> for PlainResultVisitor {
    type Value = PlainResult;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool result")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PlainResult, A::Error> {
        let (mut content, mut structured, mut is_error) = (None, None, None);
        while let Some(key) = map.next_key::<ResultKey>()? {
            match key {
                ResultKey::Content if content.is_none() => {
                    content = Some(map.next_value::<Option<Vec<ContentBlock>>>()?);
                }
                // Present, even as `null`, is kept (rmcp does).
                ResultKey::StructuredContent if structured.is_none() => {
                    structured = Some(map.next_value::<Value>()?);
                }
                ResultKey::IsError if is_error.is_none() => {
                    is_error = Some(map.next_value::<Option<bool>>()?);
                }
                _ => return Err(not_plain()),
            }
        }
        let (content, is_error) = (content.flatten(), is_error.flatten());
        // rmcp's rule: at least one of the three, `null` aside.
        if content.is_none() && structured.is_none() && is_error.is_none() {
            return Err(not_plain());
        }
        let mut r = CallToolResult::success(content.unwrap_or_default());
        r.result_type = None;
        r.structured_content = structured;
        r.is_error = is_error;
        Ok(PlainResult(r))
    }
}

/// Reads `text`: the answer to call `id` when it is a plain tool result,
/// else the whole message as rmcp reads it.
fn read_message(text: &[u8], id: &RequestId) -> Result<Read, serde_json::Error> {
    if let Ok(plain) = serde_json::from_slice::<Plain>(text)
        && plain.id == *id
    {
        return Ok(Read::Answer(plain.result));
    }
    serde_json::from_slice::<ServerJsonRpcMessage>(text).map(|m| Read::Other(Box::new(m)))
}

/// rmcp's reading of a `tools/call` result (`Peer::call_tool_once`): an
/// empty result, a task acknowledgement or one carrying only `_meta` is a
/// call that returned no content (the gateway keeps no `_meta`).
fn call_response(result: ServerResult) -> Result<CallToolResponse, ServiceError> {
    match result {
        ServerResult::CallToolResult(r) => Ok(CallToolResponse::Complete(r)),
        ServerResult::InputRequiredResult(r) => Ok(CallToolResponse::InputRequired(r)),
        ServerResult::CreateTaskResult(r) => Ok(CallToolResponse::Task(r)),
        ServerResult::EmptyResult(_) | ServerResult::TaskAckResult(_) => {
            Ok(CallToolResponse::Complete(Default::default()))
        }
        ServerResult::CustomResult(custom)
            if custom
                .0
                .as_object()
                .is_some_and(|o| o.len() == 1 && o.get("_meta").is_some_and(Value::is_object)) =>
        {
            Ok(CallToolResponse::Complete(Default::default()))
        }
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

fn transport_error(e: HttpError) -> ServiceError {
    ServiceError::TransportSend(DynamicTransportError::from_parts(
        "streamable-http",
        std::any::TypeId::of::<HttpError>(),
        Box::new(e),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `tools/call` answer as a downstream sends it on the wire.
    fn result(body: Value) -> ServerResult {
        let message: ServerJsonRpcMessage =
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": "connecta-0", "result": body}))
                .expect("a response");
        message.into_response().expect("a response").0
    }

    #[test]
    fn a_call_result_is_read_as_rmcp_reads_it() {
        let full = call_response(result(json!({
            "content": [{"type": "text", "text": "hi"}],
            "isError": true
        })));
        let Ok(CallToolResponse::Complete(r)) = full else {
            panic!("{full:?}")
        };
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.is_error, Some(true));
        // An empty result, or one with only `_meta`, is a call that
        // returned no content.
        for body in [json!({}), json!({"_meta": {"k": 1}})] {
            let r = call_response(result(body.clone()));
            assert!(
                matches!(&r, Ok(CallToolResponse::Complete(c)) if c.content.is_empty()),
                "{body}: {r:?}"
            );
        }
        // Anything else is not an answer to `tools/call`.
        let other = call_response(result(json!({"tools": []})));
        assert!(
            matches!(other, Err(ServiceError::UnexpectedResponse)),
            "{other:?}"
        );
    }

    /// rmcp's reading of a whole message, for comparison.
    fn rmcp_reads(text: &[u8], id: &RequestId) -> String {
        match serde_json::from_slice::<ServerJsonRpcMessage>(text) {
            Ok(ServerJsonRpcMessage::Response(r)) if r.id == *id => {
                format!("answer {:?}", call_response(r.result))
            }
            Ok(other) => format!("other {other:?}"),
            Err(_) => "refused".to_owned(),
        }
    }

    fn reads(text: &[u8], id: &RequestId) -> (bool, String) {
        match read_message(text, id) {
            Ok(Read::Answer(r)) => (
                true,
                format!(
                    "answer {:?}",
                    Ok::<_, ServiceError>(CallToolResponse::Complete(r))
                ),
            ),
            Ok(Read::Other(m)) => match *m {
                ServerJsonRpcMessage::Response(r) if r.id == *id => {
                    (false, format!("answer {:?}", call_response(r.result)))
                }
                other => (false, format!("other {other:?}")),
            },
            Err(_) => (false, "refused".to_owned()),
        }
    }

    /// `{` nested `depth` times around `1`, as a structured content.
    fn nested(depth: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":"connecta-7","result":{{"structuredContent":{}1{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn a_message_is_read_as_rmcp_reads_it_and_a_plain_tool_result_without_it() {
        let id = NumberOrString::String(Arc::from("connecta-7"));
        let response = |result: Value| {
            json!({"jsonrpc": "2.0", "id": "connecta-7", "result": result}).to_string()
        };
        let text = json!({"type": "text", "text": "a \"quoted\" line\n"});
        // Read directly: every tool result made of a tool result's own keys.
        let direct = [
            response(json!({"content": [text]})),
            response(json!({"content": [text], "isError": true})),
            response(json!({"content": [], "structuredContent": {"n": 1}})),
            response(json!({"structuredContent": null})),
            response(json!({"isError": false})),
            response(json!({"structuredContent": [1], "isError": true})),
            response(json!({"content": [text], "structuredContent": "s", "isError": false})),
            response(json!({"content": null, "isError": true})),
            response(
                json!({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]}),
            ),
            r#"{"res\u0075lt":{"content":[]},"id":"connecta-7","jsonrpc":"2.0"}"#.to_owned(),
            nested(100),
        ];
        for body in &direct {
            let (fast, ours) = reads(body.as_bytes(), &id);
            assert!(fast, "{body} was not read directly");
            assert_eq!(ours, rmcp_reads(body.as_bytes(), &id), "{body}");
        }
        // Read by rmcp: anything else, the same as rmcp reads it.
        let whole: Vec<Vec<u8>> = [
            response(json!({})),
            response(json!({"_meta": {"k": 1}})),
            response(json!({"content": [text], "_meta": {"k": 1}})),
            response(json!({"resultType": "complete", "content": [],
                "_meta": {"io.modelcontextprotocol/subscriptionId": 1}})),
            response(json!({"resultType": "complete", "content": [text]})),
            response(json!({"tools": []})),
            response(json!({"content": [text], "action": "accept"})),
            response(json!({"content": [text], "extra": 1})),
            response(json!({"resultType": "input_required", "inputRequests": {}})),
            response(json!({"content": "not a list"})),
            response(json!({"content": null, "isError": null})),
            response(json!([{"type": "text", "text": "t"}])),
            json!({"jsonrpc": "2.0", "id": "connecta-8", "result": {"content": []}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}}).to_string(),
            json!({"jsonrpc": "2.0", "id": "connecta-7", "error": {"code": -32602, "message": "no"}})
                .to_string(),
            json!({"jsonrpc": "2.0", "id": "connecta-7", "result": {"content": []}, "method": null})
                .to_string(),
            json!({"jsonrpc": "2.0", "id": "connecta-7", "result": {"content": []}, "error": null})
                .to_string(),
            json!({"jsonrpc": "2.0", "id": "connecta-7", "result": {"content": []}, "x": 1})
                .to_string(),
            json!(["2.0", "connecta-7", {"content": []}]).to_string(),
            r#"{"jsonrpc":"2.0","id":"connecta-7","result":{"content":[]},"x":"\ud800"}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":"connecta-7","result":{"content":[]},"result":{"content":[]}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":"connecta-7","result":{"isError":true,"isError":false}}"#
                .to_owned(),
            nested(200),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string(),
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1}})
            .to_string(),
            json!({"jsonrpc": "1.0", "id": "connecta-7", "result": {"content": []}}).to_string(),
            json!({"id": "connecta-7", "result": {"content": []}}).to_string(),
            "not json".to_owned(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .chain([
            // Bytes that are not UTF-8, in a string the result does not use.
            br#"{"jsonrpc":"2.0","id":"connecta-7","result":{"content":[]},"x":""#
                .iter()
                .chain(b"\xff\"}")
                .copied()
                .collect(),
            br#"{"jsonrpc":"2.0","id":"connecta-7","result":{"content":[{"type":"text","text":""#
                .iter()
                .chain(b"\xff\"}]}}")
                .copied()
                .collect(),
        ])
        .collect();
        for body in &whole {
            let (fast, ours) = reads(body, &id);
            let shown = String::from_utf8_lossy(body);
            assert!(!fast, "{shown} was read directly");
            assert_eq!(ours, rmcp_reads(body, &id), "{shown}");
        }
        // Around the parser's nesting limit the two readings agree, and
        // the deepest message either reads is read the same.
        let mut deepest = 0;
        for depth in 110..=130 {
            let body = nested(depth);
            let (_, ours) = reads(body.as_bytes(), &id);
            let theirs = rmcp_reads(body.as_bytes(), &id);
            assert_eq!(ours, theirs, "nested {depth} deep");
            if theirs.starts_with("answer Ok") {
                deepest = depth;
            }
        }
        assert!(
            (110..130).contains(&deepest),
            "the limit is not in 110..130"
        );
    }

    /// A downstream whose answer to the call is an event stream: a
    /// notification with an event id, then an event over the limit. A GET
    /// that picks the stream up again would get the call's answer.
    async fn over_the_limit(listener: tokio::net::TcpListener, gets: Arc<AtomicU64>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            let head = loop {
                let n = socket.read(&mut buf).await.expect("a request");
                request.extend_from_slice(&buf[..n]);
                if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    break String::from_utf8_lossy(&request[..end]).to_lowercase();
                }
            };
            let events = if head.starts_with("get") {
                gets.fetch_add(1, Ordering::SeqCst);
                let answer = json!({"jsonrpc": "2.0", "id": "connecta-0",
                    "result": {"content": [{"type": "text", "text": "late"}]}});
                format!("id: 2\ndata: {answer}\n\n")
            } else {
                let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "x"}});
                format!("id: 1\ndata: {note}\n\ndata: {}\n\n", "y".repeat(300))
            };
            let out = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
                events.len()
            );
            // The first event arrives on its own, before the large one.
            let split = out.find("\n\n").expect("an event") + 2;
            socket
                .write_all(&out.as_bytes()[..split])
                .await
                .expect("an answer");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            socket
                .write_all(&out.as_bytes()[split..])
                .await
                .expect("an answer");
        }
    }

    /// A call on a ready session of `recording`'s, which must fail.
    async fn failed_call(
        recording: Recording,
        config: &StreamableHttpClientTransportConfig,
    ) -> ServiceError {
        let direct = Direct::for_session(
            recording,
            config,
            &ProtocolVersion::V_2025_06_18,
            Arc::default(),
        )
        .map(Arc::new)
        .expect("a direct route");
        let answer = direct
            .call(CallToolRequestParams::new("echo"))
            .await
            .expect("the call was sent");
        match answer {
            Err(e) => e,
            Ok(answer) => panic!("answered: {answer:?}"),
        }
    }

    #[tokio::test]
    async fn an_answer_with_an_event_over_the_limit_fails_without_picking_the_stream_up_again() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let gets = Arc::new(AtomicU64::new(0));
        tokio::spawn(over_the_limit(listener, gets.clone()));
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"));
        config.max_sse_event_size = 256;
        let recording = Recording {
            http: reqwest::Client::new(),
            session: SessionId::default(),
        };
        recording
            .session
            .update(|s| *s = SessionState::Ready(Some(Arc::from("s-1"))));
        let e = failed_call(recording, &config).await;
        assert!(e.to_string().contains("maximum size"), "{e}");
        assert_eq!(
            gets.load(Ordering::SeqCst),
            0,
            "the stream was picked up again"
        );
    }

    /// Every request to a downstream over HTTP, when it cannot be sent, is
    /// an error without the URL (whose query may carry a key): each of
    /// `Recording`'s methods (rmcp's handshake, its posts, event streams,
    /// session deletion, and the direct route's resumed streams and
    /// control posts, which go through them) and the direct call's POST.
    #[tokio::test]
    async fn requests_that_cannot_be_sent_are_errors_without_the_url() {
        const KEY: &str = "k3y-in-the-query";
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
            listener.local_addr().expect("an address").port()
        };
        let uri: Arc<str> = Arc::from(format!("http://127.0.0.1:{port}/mcp?key={KEY}"));
        let client = Recording {
            http: reqwest::Client::new(),
            session: SessionId::default(),
        };
        let message = || {
            ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(
                CancelledNotification::new(CancelledNotificationParam::new(None, None)),
            ))
        };
        let session = || Some(Arc::from("s-1"));
        let errors = [
            client
                .post_message(uri.clone(), message(), None, None, HashMap::new())
                .await
                .err()
                .map(|e| e.to_string()),
            client
                .delete_session(uri.clone(), Arc::from("s-1"), None, HashMap::new())
                .await
                .err()
                .map(|e| e.to_string()),
            client
                .get_stream(uri.clone(), session(), None, None, HashMap::new())
                .await
                .err()
                .map(|e| e.to_string()),
            client
                .get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session(),
                    None,
                    None,
                    HashMap::new(),
                    1024,
                )
                .await
                .err()
                .map(|e| e.to_string()),
        ];
        for (n, error) in errors.iter().enumerate() {
            let error = error
                .as_deref()
                .unwrap_or_else(|| panic!("request {n} was sent"));
            assert!(error.contains("error sending request"), "{n}: {error}");
            assert!(!error.contains(KEY), "{n}: {error}");
        }
        client.session.update(|s| *s = SessionState::Ready(None));
        let config = StreamableHttpClientTransportConfig::with_uri(uri.to_string());
        let e = failed_call(client, &config).await;
        let (error, _) = super::super::errors::from_service_error("demo", &e);
        assert!(
            error.message.contains("demo is unreachable"),
            "{}",
            error.message
        );
        assert!(!error.message.contains(KEY), "{}", error.message);
    }
}
