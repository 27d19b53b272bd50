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
use crate::clock::now_ms;
use crate::validate::ArgValidator;
use crate::{ConnectorHandle, Gateway, RequestCtx};

/// A JSON object's map; arguments are checked to be an object before this.
fn into_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

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

/// The connector an address names, found once at the meta-tool edge and
/// carried down the call path: the handle and the tool name the address gives.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    pub handle: &'a ConnectorHandle,
    pub tool: &'a str,
}

/// A tool found in its connector's catalog, with its compiled validator.
pub(crate) struct Resolved<'a> {
    pub handle: &'a ConnectorHandle,
    pub tool: Arc<ToolDef>,
    pub validator: Arc<ArgValidator>,
}

/// What happened to one dispatched call, for the caller to shape and record.
pub(crate) struct Dispatched {
    pub connector: Option<String>,
    pub tool_name: String,
    /// A program's host call takes the result out for the program's value
    /// and leaves an empty one; the error, if any, stays.
    pub result: Result<ToolResult, ToolError>,
    pub attempts: u32,
    pub started: Instant,
    /// Time spent loading the catalog to resolve the address.
    pub catalog_time: Duration,
    /// Time spent waiting on the connector, all attempts.
    pub connector_time: Duration,
}

impl Gateway {
    /// The connector `address` names, if any (no event is due for an
    /// address no connector owns, contract V3).
    pub(crate) fn target<'a>(&'a self, address: &'a str) -> Option<Target<'a>> {
        let addr = Address::parse(address)?;
        let handle = self.connector(addr.connector)?;
        Some(Target {
            handle,
            tool: addr.tool,
        })
    }

    /// Find the target's tool, waiting for its catalog until `deadline` if
    /// one is given. A failure is attributable to the connector.
    pub(crate) async fn resolve<'a>(
        &self,
        target: Target<'a>,
        deadline: Option<Instant>,
    ) -> Result<Resolved<'a>, ToolError> {
        let catalog = &target.handle.catalog;
        let loaded = match deadline {
            Some(d) => {
                catalog
                    .get_within(d.saturating_duration_since(Instant::now()))
                    .await
            }
            None => catalog.get().await,
        }
        .map_err(|e| self.scrub(e))?;
        let Some(tool) = loaded.catalog.get(target.tool) else {
            return Err(ToolError::unknown_tool(
                &target.handle.config.id,
                target.tool,
            ));
        };
        Ok(Resolved {
            handle: target.handle,
            validator: loaded.validator(tool),
            tool: tool.clone(),
        })
    }

    /// Resolve, check, and call. Never records activity: the caller does,
    /// once it knows how the result was shaped.
    pub(crate) async fn dispatch(&self, spec: CallSpec<'_>, ctx: &RequestCtx) -> Dispatched {
        self.dispatch_to(self.target(spec.address), spec, ctx).await
    }

    /// [`Gateway::dispatch`] to a target found already.
    pub(crate) async fn dispatch_to(
        &self,
        target: Option<Target<'_>>,
        spec: CallSpec<'_>,
        ctx: &RequestCtx,
    ) -> Dispatched {
        let started = Instant::now();
        let mut d = Dispatched {
            connector: target.map(|t| t.handle.config.id.clone()),
            tool_name: target.map_or(spec.address, |t| t.tool).to_owned(),
            result: Ok(ToolResult::default()),
            attempts: 1,
            started,
            catalog_time: Duration::ZERO,
            connector_time: Duration::ZERO,
        };
        let Some(target) = target else {
            d.result = Err(ToolError::unknown_address(spec.address));
            return d;
        };
        let resolved = self.resolve(target, spec.deadline).await;
        d.catalog_time = started.elapsed();
        let result = match resolved {
            Ok(r) => self.call_resolved(&r, spec, ctx, &mut d).await,
            Err(e) => Err(e),
        };
        d.result = result;
        d
    }

    /// The read-only predicate, validation, the approval question, admission,
    /// then the connector, with retries; `d` counts attempts and time.
    async fn call_resolved(
        &self,
        r: &Resolved<'_>,
        spec: CallSpec<'_>,
        ctx: &RequestCtx,
        d: &mut Dispatched,
    ) -> Result<ToolResult, ToolError> {
        if spec.boundary == Boundary::ReadOnly && !is_read_only(&r.tool.annotations) {
            return Err(ToolError::requires_approval(
                spec.address,
                spec.args.as_ref(),
            ));
        }
        // The arguments stay the tree the request was parsed into, from
        // validation to the downstream request.
        let mut args = match spec.args {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(a @ Value::Object(_)) => a,
            Some(_) => {
                return Err(ToolError::invalid_args(
                    "`args` must be a JSON object of the tool's arguments",
                ));
            }
        };
        r.validator.check(&args)?;
        if let Some(ask) = &spec.ask {
            let question = Question {
                connector: &r.handle.config.id,
                tool: &r.tool.name,
                address: spec.address,
                args: &args,
                reason: ask.reason,
                client_may_answer: ask.client_may_answer,
            };
            self.ask_approval(ctx, &question).await?;
        }
        let _permit = r.handle.admission.admit()?;
        let retry_allowed = may_retry(&r.tool.annotations);
        loop {
            let timeout = match spec.deadline {
                Some(end) => spec
                    .timeout
                    .min(end.saturating_duration_since(Instant::now())),
                None => spec.timeout,
            };
            if timeout.is_zero() {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the call's {} ms deadline passed before {} could be called",
                        spec.timeout.as_millis(),
                        clamp_text(spec.address, 257)
                    ),
                ));
            }
            let options = CallOptions {
                timeout,
                cancel: ctx.cancel.child_token(),
            };
            let another = retry_allowed && d.attempts <= spec.max_retries;
            // Copied only when another attempt may need them.
            let attempt_args = if another {
                args.clone()
            } else {
                std::mem::take(&mut args)
            };
            let call_started = Instant::now();
            let result = r
                .handle
                .connector
                .call(&r.tool.name, into_object(attempt_args), options)
                .await;
            let took = call_started.elapsed();
            d.connector_time += took;
            let result = match result {
                Ok(res) if res.is_error => Err(self.downstream_error(&r.handle.config.id, &res)),
                Ok(mut res) => {
                    self.redactor.redact_result(&mut res);
                    Ok(res)
                }
                Err(e) => Err(self.scrub(e)),
            };
            r.handle.calls.observe(result.as_ref(), took);
            let err = match result {
                Ok(res) => return Ok(res),
                Err(e) => e,
            };
            if !(err.retryable && another) {
                return Err(err);
            }
            let wait = match err.retry_after_ms {
                // Honour a short window exactly; decline a long one (Y4).
                Some(ms) if ms > self.config.limits.max_retry_after.as_millis() as u64 => {
                    return Err(err);
                }
                Some(ms) => Duration::from_millis(ms),
                None => Duration::from_millis(100 * (1 << (d.attempts - 1).min(4))),
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = ctx.cancel.cancelled() => {
                    return Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled"));
                }
            }
            d.attempts += 1;
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
