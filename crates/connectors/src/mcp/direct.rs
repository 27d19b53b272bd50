//! `tools/call` on a streamable HTTP session, posted from the calling task.
//!
//! rmcp's client carries a request from the caller to its service task, to
//! the transport worker, to a task per POST, and the answer back the same
//! way; that was most of the gateway's CPU outside the HTTP exchanges
//! themselves (docs/performance.md, "Where the gateway's CPU goes"). A call
//! on a session rmcp set up is posted here instead: the same pooled client,
//! rmcp's own request code for the POST (headers, limits, status handling,
//! event-stream parsing), the session id the downstream assigned and the
//! negotiated protocol version. The handshake, catalog walks, the
//! standalone event stream and re-initializing an expired session stay
//! with rmcp.
//!
//! Only sessions on a protocol version before the one with per-request
//! standard headers are served here (`ProtocolVersion::STANDARD_HEADERS`:
//! rmcp computes those from the tool's cached schema).
//!
//! Must never: send one call twice (a call goes to rmcp instead only when
//! the downstream answered HTTP 404 for the session, having done nothing);
//! leave a request the downstream sends mid-call unanswered; answer an
//! elicitation other than by refusing it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotification,
    CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    NumberOrString, ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;
use sse_stream::{Error as SseError, Sse};

use super::handler;

type HttpError = StreamableHttpError<reqwest::Error>;

/// The session id a downstream assigned, as rmcp's transport last used it.
#[derive(Clone, Default)]
pub(crate) struct SessionId(Arc<Mutex<Option<Arc<str>>>>);

impl SessionId {
    fn set(&self, id: &str) {
        let mut current = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_deref() != Some(id) {
            *current = Some(Arc::from(id));
        }
    }

    fn get(&self) -> Option<Arc<str>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// rmcp's reqwest client, noting the session id each POST carries or is
/// given (the `initialize` answer assigns it; a re-initialization replaces
/// it).
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
        if let Some(id) = &session_id {
            self.session.set(id);
        }
        let response = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        if let Ok(
            StreamableHttpPostResponse::Json(_, Some(id))
            | StreamableHttpPostResponse::Sse(_, Some(id)),
        ) = &response
        {
            self.session.set(id);
        }
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
    }
}

/// Times an answer's event stream is picked up again (by `Last-Event-ID`)
/// after it ends without the answer, as rmcp would.
const MAX_RESUMES: usize = 3;

/// What a session needs to take calls without rmcp's service.
pub(crate) struct Direct {
    client: Recording,
    uri: Arc<str>,
    /// The connector's headers, its credential and the negotiated
    /// `MCP-Protocol-Version`.
    headers: HashMap<HeaderName, HeaderValue>,
    limits: StreamableHttpResponseLimits,
    next_id: AtomicU64,
    refused_elicitations: Arc<AtomicU64>,
}

/// A call's answer; `None` when the downstream does not know the session
/// (HTTP 404) and did nothing: the call is then rmcp's to make, which
/// re-initializes.
type Answer = Option<Result<CallToolResponse, ServiceError>>;

impl Direct {
    /// The route for a session on `version`, if calls on it can be posted
    /// here.
    pub(crate) fn for_session(
        client: Recording,
        uri: Arc<str>,
        mut headers: HashMap<HeaderName, HeaderValue>,
        version: &ProtocolVersion,
        limits: StreamableHttpResponseLimits,
        refused_elicitations: Arc<AtomicU64>,
    ) -> Option<Direct> {
        if *version >= ProtocolVersion::STANDARD_HEADERS {
            return None;
        }
        let value = HeaderValue::from_str(version.as_str()).ok()?;
        headers.insert(HeaderName::from_static("mcp-protocol-version"), value);
        Some(Direct {
            client,
            uri,
            headers,
            limits,
            next_id: AtomicU64::new(0),
            refused_elicitations,
        })
    }

    /// Posts `tools/call` and reads its answer. Dropping the future before
    /// the answer (a timeout, a cancelled caller) tells the downstream, as
    /// rmcp does.
    pub(crate) async fn call(self: &Arc<Self>, params: CallToolRequestParams) -> Answer {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        // rmcp numbers its own requests on the session; these never meet them.
        let id = NumberOrString::String(Arc::from(format!("connecta-{n}")));
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut pending = Pending {
            direct: self.clone(),
            id: Some(id.clone()),
        };
        let outcome = self
            .exchange(ClientJsonRpcMessage::request(request, id.clone()), &id)
            .await;
        // Answered, refused or lost with its connection: nothing to cancel.
        pending.id = None;
        outcome
    }

    async fn exchange(&self, message: ClientJsonRpcMessage, id: &RequestId) -> Answer {
        let session = self.client.session.get();
        let posted = self
            .client
            .post_message_with_response_limits(
                self.uri.clone(),
                message,
                session.clone(),
                None,
                self.headers.clone(),
                self.limits,
            )
            .await;
        let mut stream = match posted {
            Ok(StreamableHttpPostResponse::Json(message, _)) => {
                return match self.answer_of(message, id, &session).await {
                    Some(answer) => Some(answer),
                    None => Some(Err(ServiceError::UnexpectedResponse)),
                };
            }
            Ok(StreamableHttpPostResponse::Sse(stream, _)) => stream,
            Ok(_) => return Some(Err(ServiceError::UnexpectedResponse)),
            Err(StreamableHttpError::SessionExpired) => return None,
            Err(e) => return Some(Err(transport_error(e))),
        };
        let mut last_event_id = None;
        let mut resumes = 0;
        loop {
            match stream.next().await {
                Some(Ok(event)) => {
                    if event.id.is_some() {
                        last_event_id = event.id.clone();
                    }
                    let Some(data) = event.data.filter(|d| !d.is_empty()) else {
                        continue;
                    };
                    let message = match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                        Ok(m) => m,
                        Err(e) => {
                            return Some(Err(transport_error(StreamableHttpError::Deserialize(e))));
                        }
                    };
                    if let Some(answer) = self.answer_of(message, id, &session).await {
                        return Some(answer);
                    }
                }
                Some(Err(e)) => {
                    return Some(Err(transport_error(StreamableHttpError::Sse(e))));
                }
                None => {
                    let Some(last) = last_event_id.clone().filter(|_| resumes < MAX_RESUMES) else {
                        return Some(Err(transport_error(
                            StreamableHttpError::UnexpectedEndOfStream,
                        )));
                    };
                    resumes += 1;
                    match self
                        .client
                        .get_stream(
                            self.uri.clone(),
                            session.clone(),
                            Some(last),
                            None,
                            self.headers.clone(),
                        )
                        .await
                    {
                        Ok(next) => stream = next,
                        Err(e) => return Some(Err(transport_error(e))),
                    }
                }
            }
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
                if let Err(e) = self
                    .client
                    .post_message(
                        self.uri.clone(),
                        reply,
                        session.clone(),
                        None,
                        self.headers.clone(),
                    )
                    .await
                {
                    tracing::debug!(error = %e, "a reply to the downstream's request was not taken");
                }
                None
            }
            _ => None,
        }
    }
}

/// A call posted and not yet answered: dropped, it tells the downstream.
struct Pending {
    direct: Arc<Direct>,
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
        runtime.spawn(async move {
            let cancelled = ClientNotification::CancelledNotification(CancelledNotification::new(
                CancelledNotificationParam::new(
                    Some(id),
                    Some("the caller stopped waiting".into()),
                ),
            ));
            let _ = direct
                .client
                .post_message(
                    direct.uri.clone(),
                    ClientJsonRpcMessage::notification(cancelled),
                    direct.client.session.get(),
                    None,
                    direct.headers.clone(),
                )
                .await;
        });
    }
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
}
