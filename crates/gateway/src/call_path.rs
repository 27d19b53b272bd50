//! The one call path. `call_tool`, `call_destructive_tool` and every call a
//! program makes resolve the address, load the catalog, apply the read-only
//! predicate, validate arguments, pass admission and the timeout, and are
//! recorded as one payload-free activity event (contract S6, V1–V4).

use std::sync::Arc;
use std::time::{Duration, Instant};

use connecta_connectors::CallOptions;
use connecta_core::activity::{ActivityEvent, CallRecord, Friction, Source};
use connecta_core::address::Address;
use connecta_core::catalog::ToolDef;
use connecta_core::error::{ErrorCode, MAX_ECHO_BYTES, ToolError, clamp_text};
use connecta_core::policy::{is_read_only, may_retry};
use connecta_core::result::ToolResult;
use serde_json::{Map, Value};

use crate::approvals::Question;
use crate::catalog_cell::Loaded;
use crate::clock::now_ms;
use crate::{ConnectorHandle, Gateway, RequestCtx};

/// Whether a call must be explicitly read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boundary {
    /// `call_tool` and programs: only read-only tools run.
    ReadOnly,
    /// `call_destructive_tool`, after approval.
    Approved,
}

pub(crate) struct CallSpec<'a> {
    pub address: &'a str,
    pub args: Option<Value>,
    /// Each attempt's bound.
    pub timeout: Duration,
    /// An end for the whole call, the catalog lookup included (a program's
    /// host call, contract L4). Without one, a lookup waits for a loading
    /// catalog as long as a load may take: a child that is still starting
    /// (an `npx` download, say) is worth waiting for on a direct call.
    pub deadline: Option<Instant>,
    pub max_retries: u32,
    pub boundary: Boundary,
    pub source: Source,
    /// Under the `ask` policy: the question to put to a human once the tool
    /// is found and its arguments are valid, before it is called.
    pub ask: Option<Ask<'a>>,
}

/// What a human approver is shown besides the tool and its arguments.
pub(crate) struct Ask<'a> {
    pub reason: Option<&'a str>,
    /// `approvers` includes the client: its own human may answer.
    pub client_may_answer: bool,
}

/// A resolved tool: its connector and the catalog it came from.
pub(crate) struct Resolved<'g> {
    pub handle: &'g ConnectorHandle,
    pub tool: Arc<ToolDef>,
    pub loaded: Arc<Loaded>,
}

/// The outcome of resolving an address that names a real connector.
pub(crate) enum Resolution<'g> {
    Found(Resolved<'g>),
    /// Failed, attributable to a connector (an activity event is due).
    Refused {
        connector: &'g str,
        tool: String,
        error: ToolError,
    },
    /// No connector owns the address (no event, contract V3).
    Unknown(ToolError),
}

/// What happened to one dispatched call, for the caller to shape and record.
pub(crate) struct Dispatched {
    pub connector: Option<String>,
    pub tool_name: String,
    pub result: Result<ToolResult, ToolError>,
    pub attempts: u32,
    pub started: Instant,
    /// Time spent loading the catalog to resolve the address.
    pub catalog_time: Duration,
    /// Time spent waiting on the connector, all attempts.
    pub connector_time: Duration,
}

impl Gateway {
    /// Find the tool `address` names, waiting for its catalog until
    /// `deadline` if one is given.
    pub(crate) async fn resolve(&self, address: &str, deadline: Option<Instant>) -> Resolution<'_> {
        let Some(addr) = Address::parse(address) else {
            return Resolution::Unknown(ToolError::unknown_address(address));
        };
        let Some(handle) = self.connector(addr.connector) else {
            return Resolution::Unknown(ToolError::unknown_address(address));
        };
        let connector = handle.config.id.as_str();
        let loaded = match deadline {
            Some(d) => {
                handle
                    .catalog
                    .get_within(d.saturating_duration_since(Instant::now()))
                    .await
            }
            None => handle.catalog.get().await,
        };
        let loaded = match loaded {
            Ok(l) => l,
            Err(e) => {
                return Resolution::Refused {
                    connector,
                    tool: addr.tool.to_owned(),
                    error: self.scrub(e),
                };
            }
        };
        match loaded.catalog.get(addr.tool) {
            Some(tool) => Resolution::Found(Resolved {
                handle,
                tool: tool.clone(),
                loaded: loaded.clone(),
            }),
            None => Resolution::Refused {
                connector,
                tool: addr.tool.to_owned(),
                error: ToolError::unknown_tool(connector, addr.tool),
            },
        }
    }

    /// Resolve, check, and call. Never records activity: the caller does,
    /// once it knows how the result was shaped.
    pub(crate) async fn dispatch(&self, spec: CallSpec<'_>, ctx: &RequestCtx) -> Dispatched {
        let started = Instant::now();
        let resolution = self.resolve(spec.address, spec.deadline).await;
        let catalog_time = started.elapsed();
        let resolved = match resolution {
            Resolution::Found(r) => r,
            Resolution::Refused {
                connector,
                tool,
                error,
            } => {
                return Dispatched {
                    connector: Some(connector.to_owned()),
                    tool_name: tool,
                    result: Err(error),
                    attempts: 1,
                    started,
                    catalog_time,
                    connector_time: Duration::ZERO,
                };
            }
            Resolution::Unknown(error) => {
                return Dispatched {
                    connector: None,
                    tool_name: spec.address.to_owned(),
                    result: Err(error),
                    attempts: 1,
                    started,
                    catalog_time,
                    connector_time: Duration::ZERO,
                };
            }
        };
        let connector = resolved.handle.config.id.clone();
        let tool_name = resolved.tool.name.clone();
        let mut connector_time = Duration::ZERO;
        let done = |result: Result<ToolResult, ToolError>,
                    attempts: u32,
                    connector_time: Duration| Dispatched {
            connector: Some(connector.clone()),
            tool_name: tool_name.clone(),
            result,
            attempts,
            started,
            catalog_time,
            connector_time,
        };
        if spec.boundary == Boundary::ReadOnly && !is_read_only(&resolved.tool.annotations) {
            return done(
                Err(ToolError::requires_approval(
                    spec.address,
                    spec.args.as_ref(),
                )),
                1,
                connector_time,
            );
        }
        let args = match spec.args {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return done(
                    Err(ToolError::invalid_args(
                        "`args` must be a JSON object of the tool's arguments",
                    )),
                    1,
                    connector_time,
                );
            }
        };
        let args_value = Value::Object(args);
        if let Err(e) = resolved.loaded.validator(&resolved.tool).check(&args_value) {
            return done(Err(e), 1, connector_time);
        }
        if let Some(ask) = &spec.ask {
            let question = Question {
                connector: &connector,
                tool: &tool_name,
                address: spec.address,
                args: &args_value,
                reason: ask.reason,
                client_may_answer: ask.client_may_answer,
            };
            if let Err(e) = self.ask_approval(ctx, &question).await {
                return done(Err(e), 1, connector_time);
            }
        }
        let Value::Object(args) = args_value else {
            return done(
                Err(ToolError::invalid_args("`args` must be an object")),
                1,
                connector_time,
            );
        };
        let _permit = match resolved.handle.admission.admit() {
            Ok(p) => p,
            Err(e) => return done(Err(e), 1, connector_time),
        };
        let retry_allowed = may_retry(&resolved.tool.annotations);
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let timeout = match spec.deadline {
                Some(end) => spec
                    .timeout
                    .min(end.saturating_duration_since(Instant::now())),
                None => spec.timeout,
            };
            if timeout.is_zero() {
                let e = ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the call's {} ms deadline passed before {} could be called",
                        spec.timeout.as_millis(),
                        clamp_text(spec.address, 257)
                    ),
                );
                return done(Err(e), attempts, connector_time);
            }
            let options = CallOptions {
                timeout,
                cancel: ctx.cancel.child_token(),
            };
            let call_started = Instant::now();
            let result = resolved
                .handle
                .connector
                .call(&resolved.tool.name, args.clone(), options)
                .await;
            let took = call_started.elapsed();
            connector_time += took;
            let result = match result {
                Ok(r) if r.is_error => Err(self.downstream_error(&connector, &r)),
                Ok(mut r) => {
                    self.redactor.redact_result(&mut r);
                    Ok(r)
                }
                Err(e) => Err(self.scrub(e)),
            };
            resolved.handle.calls.observe(result.as_ref(), took);
            let err = match result {
                Ok(r) => return done(Ok(r), attempts, connector_time),
                Err(e) => e,
            };
            if !(err.retryable && retry_allowed && attempts <= spec.max_retries) {
                return done(Err(err), attempts, connector_time);
            }
            let wait = match err.retry_after_ms {
                // Honour a short window exactly; decline a long one (Y4).
                Some(ms) if ms > self.config.limits.max_retry_after.as_millis() as u64 => {
                    return done(Err(err), attempts, connector_time);
                }
                Some(ms) => Duration::from_millis(ms),
                None => Duration::from_millis(100 * (1 << (attempts - 1).min(4))),
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = ctx.cancel.cancelled() => {
                    return done(Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled")), attempts, connector_time);
                }
            }
        }
    }

    fn downstream_error(&self, connector: &str, result: &ToolResult) -> ToolError {
        let text = self.redactor.redact(&result.error_text()).into_owned();
        ToolError::with_cause(
            ErrorCode::ConnectorCallFailed,
            format!(
                "{connector} reported an error: {}",
                clamp_text(&text, MAX_ECHO_BYTES)
            ),
            false,
        )
        .detail("connector", connector)
    }

    /// Remove any configured secret from an error before it leaves.
    pub(crate) fn scrub(&self, mut e: ToolError) -> ToolError {
        if let std::borrow::Cow::Owned(clean) = self.redactor.redact(&e.message) {
            e.message = clean;
        }
        e
    }

    /// Record the activity event for a dispatched call (when it names a real
    /// connector).
    pub(crate) fn record(
        &self,
        ctx: &RequestCtx,
        d: &Dispatched,
        source: Source,
        friction: Option<Friction>,
    ) {
        let Some(connector) = d.connector.as_deref() else {
            return;
        };
        let error_code = d.result.as_ref().err().map(|e| e.code);
        let event = ActivityEvent::new(
            uuid::Uuid::now_v7().to_string(),
            now_ms(),
            &ctx.request_id,
            &ctx.actor,
            CallRecord {
                connector_id: connector,
                tool_name: &d.tool_name,
                source,
                duration_ms: d.started.elapsed().as_millis() as u64,
                attempts: d.attempts,
                error_code,
                friction,
            },
        );
        self.activity.record(event);
    }

    /// Record an event for a refusal that happened before dispatch (an
    /// approval rejection, say).
    pub(crate) fn record_refusal(
        &self,
        ctx: &RequestCtx,
        connector: &str,
        tool: &str,
        source: Source,
        code: ErrorCode,
        started: Instant,
    ) {
        let event = ActivityEvent::new(
            uuid::Uuid::now_v7().to_string(),
            now_ms(),
            &ctx.request_id,
            &ctx.actor,
            CallRecord {
                connector_id: connector,
                tool_name: tool,
                source,
                duration_ms: started.elapsed().as_millis() as u64,
                attempts: 1,
                error_code: Some(code),
                friction: None,
            },
        );
        self.activity.record(event);
    }
}
