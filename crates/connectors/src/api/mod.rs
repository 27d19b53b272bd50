//! `api` connectors: tools declared by hand over a plain HTTP API, and
//! `openapi` connectors, whose operations the config loader lowered to the
//! same tool declarations (so both take this one call path).
//!
//! A call renders the arguments into a request ([`request`]), adds static
//! headers (connector, then tool), then header arguments, then the vault
//! credential **last**, sends it through the guarded fetch ([`fetch`]), maps
//! any non-2xx answer to the taxonomy ([`status`]), and turns the body into a
//! result: JSON when the content type says so (else text), the connector's
//! own credential redacted from it, the declared projection applied, and the
//! declared output schema checked.
//!
//! Arguments arrive already validated against the input schema by the
//! gateway's call path; the input schema is compiled here once at
//! construction, so a schema that does not compile stops the boot.

pub mod fetch;
mod request;
mod status;

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use connecta_core::catalog::{Schema, ToolDef};
use connecta_core::config::{ApiConfig, ApiTool, HttpMethod, Projection};
use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use connecta_core::policy::Annotations;
use connecta_core::result::{ToolResult, is_json_media_type, project_fields, text_block};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde_json::{Map, Value};

use crate::credential::{Applied, CredentialBinding, Framed};
use crate::{CallOptions, Connector, ConnectorState, ConnectorStatus};
use fetch::{FetchError, GuardedFetch, Prepared};

/// Longest request URL sent. Servers commonly refuse beyond 8 KiB; refusing
/// here says why instead of surfacing a 414 or a reset connection.
const MAX_URL_BYTES: usize = 8 * 1024;

/// What replaces the connector's own credential if a response echoes it.
const REDACTED: &str = "[redacted]";

/// Headers a tool may not set: they belong to the transport, and `Host`
/// would pick another virtual host behind the same address.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
];

pub struct ApiConnector {
    id: String,
    /// `api`, or `openapi` for tools lowered from an OpenAPI document.
    kind: &'static str,
    fetch: GuardedFetch,
    /// Static headers of the connector (values are secrets from config).
    headers: HeaderMap,
    tools: HashMap<String, Tool>,
    /// Declaration order, for `list_tools`.
    order: Vec<String>,
    credential: Option<CredentialBinding>,
    /// Largest JSON body sent (`max_request_bytes`).
    max_request_bytes: usize,
    status: Mutex<ConnectorStatus>,
}

struct Tool {
    config: ApiTool,
    headers: HeaderMap,
    output: Option<jsonschema::Validator>,
}

impl ApiConnector {
    /// Build the connector: the HTTP client, every tool's headers, and every
    /// schema compiled. Any problem is a boot error naming the tool.
    pub fn new(
        id: &str,
        config: &ApiConfig,
        credential: Option<CredentialBinding>,
    ) -> Result<ApiConnector, String> {
        let fetch = GuardedFetch::new(
            &config.base_url,
            config.allow_private_network,
            config.max_response_bytes,
        )?;
        let cred_header = credential
            .as_ref()
            .and_then(|c| c.header_name())
            .map(str::to_ascii_lowercase);
        let header_map = |pairs: &[(String, connecta_core::secret::Secret)],
                          whose: &str|
         -> Result<HeaderMap, String> {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                let n = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("{whose}: \"{name}\" is not a valid header name"))?;
                check_header_name(&n, cred_header.as_deref(), whose)?;
                let mut v = HeaderValue::from_str(value.expose()).map_err(|_| {
                    format!("{whose}: the value of header \"{name}\" cannot be sent")
                })?;
                v.set_sensitive(true);
                map.append(n, v);
            }
            Ok(map)
        };
        let headers = header_map(&config.headers, "headers")?;
        let mut tools = HashMap::new();
        let mut order = Vec::new();
        for t in &config.tools {
            let whose = format!("tool \"{}\"", t.name);
            jsonschema::validator_for(&t.input_schema).map_err(|e| {
                format!(
                    "{whose}: input_schema does not compile: {}",
                    clamp_text(&e.to_string(), 200)
                )
            })?;
            let output = t
                .output_schema
                .as_ref()
                .map(|s| {
                    jsonschema::validator_for(s).map_err(|e| {
                        format!(
                            "{whose}: output_schema does not compile: {}",
                            clamp_text(&e.to_string(), 200)
                        )
                    })
                })
                .transpose()?;
            for (_, h) in &t.header_args {
                let n = HeaderName::from_bytes(h.as_bytes())
                    .map_err(|_| format!("{whose}: \"{h}\" is not a valid header name"))?;
                check_header_name(&n, cred_header.as_deref(), &whose)?;
            }
            let tool_headers = header_map(&t.headers, &whose)?;
            order.push(t.name.clone());
            tools.insert(
                t.name.clone(),
                Tool {
                    config: t.clone(),
                    headers: tool_headers,
                    output,
                },
            );
        }
        Ok(ApiConnector {
            id: id.to_owned(),
            kind: if config.spec.is_some() {
                "openapi"
            } else {
                "api"
            },
            fetch,
            headers,
            tools,
            order,
            credential,
            max_request_bytes: config.max_request_bytes,
            status: Mutex::new(ConnectorStatus {
                state: ConnectorState::Ready,
                last_error: None,
                restarts: 0,
                pid: None,
            }),
        })
    }

    fn set_state(&self, state: ConnectorState, last_error: Option<String>) {
        let mut s = self.status.lock().unwrap_or_else(|p| p.into_inner());
        s.state = state;
        if last_error.is_some() || state == ConnectorState::Ready {
            s.last_error = last_error;
        }
    }

    async fn call_inner(
        &self,
        tool: &Tool,
        args: Map<String, Value>,
    ) -> Result<ToolResult, ToolError> {
        let id = &self.id;
        let rendered = request::render(&tool.config, &args)?;
        let mut headers = self.headers.clone();
        for (k, v) in &tool.headers {
            headers.insert(k.clone(), v.clone());
        }
        for (k, v) in rendered.headers {
            headers.insert(k, v);
        }
        let mut query = rendered.query;
        let mut body = None;
        if let Some(b) = &rendered.body {
            headers.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            let bytes = serde_json::to_vec(b)
                .map_err(|_| ToolError::invalid_args("the request body could not be serialized"))?;
            if bytes.len() > self.max_request_bytes {
                return Err(ToolError::invalid_args(format!(
                    "{id}: the request body is {} bytes, over the connector's max_request_bytes ({}); send less",
                    bytes.len(),
                    self.max_request_bytes
                ))
                .detail("limitBytes", self.max_request_bytes as u64));
            }
            body = Some(bytes);
        }
        headers
            .entry(http::header::ACCEPT)
            .or_insert(HeaderValue::from_static("application/json, text/*;q=0.5"));
        // The credential goes on last and takes nothing over: anything already
        // in its place is a configuration error, refused loudly.
        let mut secrets = Vec::new();
        if let Some(binding) = &self.credential {
            let Applied { framed, secrets: s } = binding.apply(id).await?;
            secrets = s;
            match framed {
                Framed::Header(name, value) => {
                    if headers.contains_key(&name) {
                        return Err(shadowing(id, name.as_str()));
                    }
                    headers.insert(name, value);
                }
                Framed::Query(name, value) => {
                    if query.iter().any(|(k, _)| *k == name) {
                        return Err(shadowing(id, &name));
                    }
                    query.push((name, value.expose().to_owned()));
                }
            }
        }
        let url = self
            .fetch
            .url(&rendered.path, &query)
            .map_err(|e| status::from_fetch(id, &e))?;
        if url.as_str().len() > MAX_URL_BYTES {
            return Err(ToolError::invalid_args(format!(
                "{id}: the request URL would be {} bytes, over {MAX_URL_BYTES}; send shorter path and query arguments",
                url.as_str().len()
            )));
        }
        let prepared = Prepared {
            method: method(tool.config.method),
            url,
            headers,
            body,
        };
        let fetched = match self.fetch.send(prepared).await {
            Ok(f) => f,
            Err(e) => {
                if matches!(e, FetchError::Connect(_) | FetchError::Other(_)) {
                    self.set_state(ConnectorState::Down, Some(short(&e)));
                }
                return Err(status::from_fetch(id, &e));
            }
        };
        self.set_state(ConnectorState::Ready, None);
        let body = redact(fetched.body, &secrets);
        if !fetched.status.is_success() {
            let excerpt = String::from_utf8_lossy(&body[..body.len().min(1024)]).into_owned();
            return Err(status::from_status(
                id,
                self.credential.as_ref().map(|c| &c.slot),
                fetched.status,
                &fetched.headers,
                &excerpt,
            ));
        }
        let value = parse_body(id, &fetched.headers, body)?;
        let value = project(id, value, tool.config.project.as_ref())?;
        if let Some(v) = &tool.output
            && let Some(first) = v.iter_errors(&value).next()
        {
            let path = first.instance_path().to_string();
            return Err(ToolError::with_cause(
                ErrorCode::ConnectorCallFailed,
                format!(
                    "{id}: the response does not match the tool's output_schema (at {} the `{}` keyword fails)",
                    if path.is_empty() { "/" } else { &path },
                    first.kind().keyword()
                ),
                false,
            ));
        }
        Ok(to_result(value))
    }
}

fn check_header_name(n: &HeaderName, credential: Option<&str>, whose: &str) -> Result<(), String> {
    if credential == Some(n.as_str()) {
        return Err(format!(
            "{whose}: header \"{n}\" is the credential's header; a tool cannot set or shadow it"
        ));
    }
    if RESERVED_HEADERS.contains(&n.as_str()) {
        return Err(format!("{whose}: header \"{n}\" cannot be set by a tool"));
    }
    Ok(())
}

fn shadowing(connector: &str, name: &str) -> ToolError {
    tracing::error!(
        connector,
        header = name,
        "a request header would shadow the credential; refused"
    );
    ToolError::with_cause(
        ErrorCode::ConnectorCallFailed,
        format!(
            "{connector}: \"{name}\" is already set by the tool and would shadow the credential; refused (fix the connector's configuration)"
        ),
        false,
    )
}

fn short(e: &FetchError) -> String {
    clamp_text(&e.to_string(), 200).into_owned()
}

fn method(m: HttpMethod) -> Method {
    match m {
        HttpMethod::Get => Method::GET,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Delete => Method::DELETE,
    }
}

/// Replace every occurrence of the connector's own credential (values and
/// encoded token) in a response body: an API that echoes request headers
/// must not hand the credential to the agent.
fn redact(body: Vec<u8>, secrets: &[String]) -> Vec<u8> {
    let mut body = body;
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        let needle = s.as_bytes();
        if !body.windows(needle.len()).any(|w| w == needle) {
            continue;
        }
        let mut out = Vec::with_capacity(body.len());
        let mut i = 0;
        while i < body.len() {
            if body[i..].starts_with(needle) {
                out.extend_from_slice(REDACTED.as_bytes());
                i += needle.len();
            } else {
                out.push(body[i]);
                i += 1;
            }
        }
        body = out;
    }
    body
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_json_media_type)
}

fn parse_body(id: &str, headers: &HeaderMap, body: Vec<u8>) -> Result<Value, ToolError> {
    if body.is_empty() {
        return Ok(Value::Null);
    }
    if is_json(headers) {
        return serde_json::from_slice(&body).map_err(|_| {
            ToolError::with_cause(
                ErrorCode::ConnectorCallFailed,
                format!("{id}: the response says it is JSON but does not parse"),
                false,
            )
        });
    }
    String::from_utf8(body).map(Value::String).map_err(|_| {
        ToolError::with_cause(
            ErrorCode::ConnectorCallFailed,
            format!("{id}: the response is neither JSON nor UTF-8 text"),
            false,
        )
    })
}

fn project(id: &str, value: Value, projection: Option<&Projection>) -> Result<Value, ToolError> {
    match projection {
        None => Ok(value),
        Some(Projection::Pointer(p)) => value.pointer(p).cloned().ok_or_else(|| {
            ToolError::with_cause(
                ErrorCode::ConnectorCallFailed,
                format!("{id}: the response has nothing at the projection {p}"),
                false,
            )
        }),
        Some(Projection::Fields(fields)) => project_fields(&value, fields)
            .map(|p| p.value)
            .map_err(|e| {
                ToolError::with_cause(
                    ErrorCode::ResultProcessingFailed,
                    format!("{id}: {e}"),
                    false,
                )
            }),
    }
}

/// Objects as structured content, anything else wrapped as `{value}`; the
/// text block is the same structured content as compact JSON.
fn to_result(value: Value) -> ToolResult {
    let structured = match value {
        Value::Object(_) => value,
        other => {
            let mut m = Map::with_capacity(1);
            m.insert("value".into(), other);
            Value::Object(m)
        }
    };
    let text = serde_json::to_string(&structured).unwrap_or_default();
    ToolResult {
        content: vec![text_block(text)],
        structured_content: Some(structured),
        is_error: false,
    }
}

fn tool_def(t: &ApiTool) -> ToolDef {
    ToolDef {
        name: t.name.clone(),
        title: t.title.clone(),
        description: Some(t.description.clone()),
        input_schema: Schema::new(&t.input_schema),
        output_schema: t.output_schema.as_ref().map(Schema::new),
        annotations: Annotations {
            title: t.title.clone(),
            // Classification comes from config only (read_only is required).
            read_only_hint: Some(t.read_only),
            destructive_hint: Some(!t.read_only),
            idempotent_hint: t.idempotent,
            open_world_hint: Some(true),
        },
    }
}

#[async_trait]
impl Connector for ApiConnector {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> &'static str {
        self.kind
    }

    async fn start(&self) {}

    async fn list_tools(&self, _timeout: std::time::Duration) -> Result<Vec<ToolDef>, ToolError> {
        Ok(self
            .order
            .iter()
            .filter_map(|n| self.tools.get(n))
            .map(|t| tool_def(&t.config))
            .collect())
    }

    async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        options: CallOptions,
    ) -> Result<ToolResult, ToolError> {
        let Some(t) = self.tools.get(tool) else {
            return Err(ToolError::unknown_tool(&self.id, tool));
        };
        tokio::select! {
            r = tokio::time::timeout(options.timeout, self.call_inner(t, args)) => match r {
                Ok(r) => r,
                Err(_) => Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("{} did not answer within {} ms", self.id, options.timeout.as_millis()),
                )),
            },
            () = options.cancel.cancelled() => Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled")),
        }
    }

    fn status(&self) -> ConnectorStatus {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn shutdown(&self) {
        self.set_state(ConnectorState::Stopped, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn responses_echoing_the_credential_are_redacted() {
        let body = br#"{"auth":"Bearer tok-SECRET-1","x":"tok-SECRET-1tok-SECRET-1"}"#.to_vec();
        let out = redact(body, &["tok-SECRET-1".into()]);
        let s = String::from_utf8(out).expect("utf8");
        assert!(!s.contains("SECRET"), "{s}");
        assert_eq!(
            s,
            r#"{"auth":"Bearer [redacted]","x":"[redacted][redacted]"}"#
        );
    }

    #[test]
    fn projections_by_pointer_and_fields() {
        let v = json!({"data": {"items": [{"id": 1, "n": "a"}, {"id": 2, "n": "b"}]}});
        assert_eq!(
            project(
                "c",
                v.clone(),
                Some(&Projection::Pointer("/data/items/1/n".into()))
            )
            .expect("pointer"),
            json!("b")
        );
        assert!(project("c", v.clone(), Some(&Projection::Pointer("/nope".into()))).is_err());
        assert_eq!(
            project(
                "c",
                v,
                Some(&Projection::Fields(vec!["data.items[].id".into()]))
            )
            .expect("fields"),
            json!({"data": {"items": [{"id": 1}, {"id": 2}]}})
        );
    }

    #[test]
    fn results_carry_structured_content_and_the_same_compact_text() {
        let r = to_result(json!([1, 2]));
        assert_eq!(r.structured_content, Some(json!({"value": [1, 2]})));
        assert_eq!(r.content[0]["text"], "{\"value\":[1,2]}");
        let r = to_result(json!({"a": 1}));
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
    }
}
