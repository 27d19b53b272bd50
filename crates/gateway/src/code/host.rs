//! The host side of a program's `connecta` namespace. Every call a program
//! makes goes through the gateway's one call path (contract S6): the same
//! catalog, read-only predicate, argument validation, admission, timeout and
//! activity as `call_tool`, with `source: "execute_code"` and no retries (Y1).
//!
//! Per run it keeps the host-call budget (L4), the emitted blocks (M*), and,
//! when asked, the diagnostics aggregates (R7/R8). A result is serialized
//! once, here: its text is what the size bound measures, what diagnostics
//! count, and what the worker receives. A failure goes to the worker as
//! typed data ([`TypedFailure`]); nothing is ever read back from its text.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use connecta_core::activity::Source;
use connecta_core::address::format_address;
use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use connecta_sandbox::{BindingHost, HostError, TypedFailure};
use connecta_search::{DescribeRequest, SearchRequest, Source as SearchSource, describe};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};

use super::diagnostics::{Diagnostics, Op};
use super::guest_call::{BatchEntry, GuestCall, decode};
use crate::call_path::{Boundary, CallSpec, Dispatched};
use crate::{Gateway, RequestCtx};

pub(crate) use super::guest_call::{FUNCTIONS, NAMESPACE_DISPATCH};

#[derive(Debug, Clone, Copy)]
pub(crate) struct HostLimits {
    pub host_calls: u32,
    pub batch_size: usize,
    pub call_deadline: Duration,
    pub payload_bytes: usize,
    pub emit_bytes: usize,
    pub emit_blocks: usize,
}

#[derive(Default)]
struct Emitted {
    blocks: Vec<Value>,
    bytes: usize,
}

type Answer = Result<Box<RawValue>, ToolError>;

pub(crate) struct ProgramHost {
    gateway: Arc<Gateway>,
    ctx: RequestCtx,
    limits: HostLimits,
    calls: Mutex<u32>,
    emitted: Mutex<Emitted>,
    /// Only for `execute_code {diagnostics: true}` (R6).
    pub(crate) diagnostics: Option<Mutex<Diagnostics>>,
}

impl ProgramHost {
    pub(crate) fn new(
        gateway: Arc<Gateway>,
        ctx: RequestCtx,
        limits: HostLimits,
        diagnostics: bool,
    ) -> Self {
        ProgramHost {
            gateway,
            ctx,
            limits,
            calls: Mutex::new(0),
            emitted: Mutex::new(Emitted::default()),
            diagnostics: diagnostics.then(|| Mutex::new(Diagnostics::default())),
        }
    }

    /// The blocks emitted so far, taken out (M2: delivered after the envelope).
    pub(crate) fn take_emitted(&self) -> (Vec<Value>, usize) {
        let mut e = self.emitted.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = e.bytes;
        (std::mem::take(&mut e.blocks), bytes)
    }

    pub(crate) fn emitted_count(&self) -> usize {
        self.emitted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .blocks
            .len()
    }

    fn note(&self, op: Op, started: Instant, answer: &Answer, split: Option<(Duration, Duration)>) {
        if let Some(diag) = &self.diagnostics {
            let bytes = answer.as_ref().map_or(0, |text| text.get().len());
            diag.lock().unwrap_or_else(|p| p.into_inner()).record(
                op,
                started.elapsed(),
                answer.is_ok(),
                bytes,
                split,
            );
        }
    }

    /// Spend one unit of the host-call budget, or refuse (L4: it does not
    /// refill, so retrying is pointless).
    fn spend(&self) -> Result<(), ToolError> {
        let mut used = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if *used >= self.limits.host_calls {
            return Err(ToolError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "this program has used its budget of {} tool calls; return what you have, or reduce the calls (connecta.batch counts each entry)",
                    self.limits.host_calls
                ),
            )
            .detail("budget", "host_calls"));
        }
        *used += 1;
        Ok(())
    }

    /// When a host call that starts now must be answered (L4: the
    /// per-call deadline covers finding the tool as well as calling it).
    fn deadline(&self) -> Instant {
        Instant::now() + self.limits.call_deadline
    }

    /// One call through the gateway's call path, recorded as activity,
    /// answered by `end`, its value serialized once.
    async fn dispatch_one(
        &self,
        address: String,
        args: Option<Value>,
        end: Instant,
    ) -> (Answer, Option<Dispatched>) {
        if let Err(e) = self.spend() {
            // A budget refusal on a real connector is still an event (V1).
            if let Some(addr) = connecta_core::Address::parse(&address)
                && let Some(h) = self.gateway.connector(addr.connector)
            {
                self.gateway.record_refusal(
                    &self.ctx,
                    &h.config.id,
                    addr.tool,
                    Source::ExecuteCode,
                    e.code,
                    Instant::now(),
                );
            }
            return (Err(e), None);
        }
        // The call runs as its own task: if the run ends while it is in
        // flight, the host future is dropped, but the call still finishes —
        // promptly, because its cancellation token is the run's — and is
        // recorded (L2, V1).
        let gateway = self.gateway.clone();
        let ctx = self.ctx.clone();
        let limit = self.limits.payload_bytes;
        let deadline = self.limits.call_deadline;
        let task = tokio::spawn(async move {
            let spec = CallSpec {
                address: &address,
                args,
                timeout: deadline,
                deadline: Some(end),
                max_retries: 0,
                boundary: Boundary::ReadOnly,
                source: Source::ExecuteCode,
                ask: None,
            };
            let mut d = gateway.dispatch(spec, &ctx).await;
            // The result is moved into the program's value (an empty one is
            // left behind); the record below reads only whether the call
            // failed, and how.
            let out = match &mut d.result {
                Ok(r) => match to_raw_value(&std::mem::take(r).into_value()) {
                    Ok(text) if text.get().len() <= limit => Ok(text),
                    Ok(text) => {
                        // L6: names the address the program called.
                        let e = ToolError::with_cause(
                            ErrorCode::ResultProcessingFailed,
                            format!(
                                "the result of {} is {} bytes, over the {limit}-byte limit for one call inside a program; ask for less (filters, limits, fields)",
                                clamp_text(&address, 257),
                                text.get().len(),
                            ),
                            false,
                        );
                        d.result = Err(e.clone());
                        Err(e)
                    }
                    Err(e) => Err(unserializable(e)),
                },
                Err(e) => Err(e.clone()),
            };
            gateway.record(&ctx, &d, Source::ExecuteCode, None);
            (out, d)
        });
        match task.await {
            Ok((out, d)) => (out, Some(d)),
            Err(_) => (
                Err(ToolError::new(
                    ErrorCode::Cancelled,
                    "the call was cancelled",
                )),
                None,
            ),
        }
    }

    async fn call(&self, address: String, args: Option<Value>) -> Answer {
        let started = Instant::now();
        let (answer, d) = self.dispatch_one(address, args, self.deadline()).await;
        let split = d.as_ref().map(|d| (d.catalog_time, d.connector_time));
        self.note(Op::Call, started, &answer, split);
        answer
    }

    async fn shortcut(&self, connector: &str, alias: &str, args: Option<Value>) -> Answer {
        let started = Instant::now();
        let end = self.deadline();
        let Some(handle) = self.gateway.connector(connector) else {
            return Err(ToolError::unknown_address(&format_address(
                connector, alias,
            )));
        };
        let wait = end.saturating_duration_since(Instant::now());
        let resolved = match handle.catalog.get_within(wait).await {
            Ok(loaded) => {
                let matches = loaded.by_alias(alias);
                match matches.len() {
                    1 => Ok(matches[0].name.clone()),
                    0 => Err(ToolError::unknown_tool(connector, alias)),
                    _ => {
                        let names: Vec<&str> = matches.iter().map(|t| t.name.as_str()).collect();
                        let first = format_address(connector, names[0]);
                        Err(ToolError::new(
                            ErrorCode::AmbiguousToolAlias,
                            format!(
                                "{connector}.{alias} could mean {}; call one by its canonical address with connecta.call(\"{first}\", args)",
                                names.join(" or ")
                            ),
                        )
                        .detail("connector", connector)
                        .detail("tools", names))
                    }
                }
            }
            Err(e) => Err(self.gateway.scrub(e)),
        };
        match resolved {
            Ok(name) => {
                let address = format_address(connector, &name);
                let (answer, d) = self.dispatch_one(address, args, end).await;
                let split = d.as_ref().map(|d| (d.catalog_time, d.connector_time));
                self.note(Op::Call, started, &answer, split);
                answer
            }
            Err(e) => {
                // A refusal on a real connector is an event, recorded with
                // the name the program used (V2).
                self.gateway.record_refusal(
                    &self.ctx,
                    connector,
                    alias,
                    Source::ExecuteCode,
                    e.code,
                    started,
                );
                let answer = Err(e);
                self.note(Op::Call, started, &answer, None);
                answer
            }
        }
    }

    async fn batch(&self, entries: Vec<BatchEntry>) -> Answer {
        let started = Instant::now();
        let children = entries.len();
        // The entries run side by side, each within the one deadline.
        let end = self.deadline();
        let calls = entries.into_iter().map(|entry| async move {
            match entry {
                Ok((address, args)) => {
                    let (answer, d) = self.dispatch_one(address.clone(), args, end).await;
                    (address, answer, d)
                }
                Err(e) => (String::new(), Err(e), None),
            }
        });
        let outcomes = futures::future::join_all(calls).await;
        let (mut catalog, mut connector) = (Duration::ZERO, Duration::ZERO);
        for d in outcomes.iter().filter_map(|(_, _, d)| d.as_ref()) {
            catalog += d.catalog_time;
            connector += d.connector_time;
        }
        let failures = outcomes.iter().filter(|(_, a, _)| a.is_err()).count();
        let shaped: Vec<Outcome<'_>> = outcomes
            .iter()
            .map(|(address, answer, _)| match answer {
                Ok(data) => Outcome {
                    address,
                    ok: true,
                    data: Some(data),
                    error: None,
                    error_details: None,
                },
                Err(e) => Outcome {
                    address,
                    ok: false,
                    data: None,
                    error: Some(&e.message),
                    error_details: Some(typed(e)),
                },
            })
            .collect();
        let mut answer = to_raw_value(&shaped).map_err(unserializable);
        // A batch is one host call: its results together are held to the
        // bound of one (L6), as each of them is.
        let limit = self.limits.payload_bytes;
        if let Ok(text) = &answer
            && text.get().len() > limit
        {
            answer = Err(ToolError::with_cause(
                ErrorCode::ResultProcessingFailed,
                format!(
                    "the batch's results are {} bytes together, over the {limit}-byte limit for one host call inside a program; batch fewer calls or ask each for less",
                    text.get().len()
                ),
                false,
            ));
        }
        if let Some(diag) = &self.diagnostics {
            let bytes = answer.as_ref().map_or(0, |t| t.get().len());
            diag.lock().unwrap_or_else(|p| p.into_inner()).record_batch(
                started.elapsed(),
                children,
                failures,
                bytes,
                catalog,
                connector,
            );
        }
        answer
    }

    async fn search(&self, req: &SearchRequest) -> Answer {
        let started = Instant::now();
        let answer = self
            .gateway
            .search_request(req, Some(self.limits.call_deadline))
            .await
            .and_then(|page| to_raw_value(&page).map_err(unserializable));
        self.note(
            Op::Search,
            started,
            &answer,
            Some((started.elapsed(), Duration::ZERO)),
        );
        answer
    }

    async fn describe(&self, req: &DescribeRequest) -> Answer {
        let started = Instant::now();
        let answer = self
            .describe_value(req)
            .await
            .and_then(|v| to_raw_value(&v).map_err(unserializable));
        self.note(
            Op::Describe,
            started,
            &answer,
            Some((started.elapsed(), Duration::ZERO)),
        );
        answer
    }

    async fn describe_value(&self, req: &DescribeRequest) -> Result<Value, ToolError> {
        // Load only the catalogs the addresses name (S4).
        let mut wanted: Vec<&str> = req
            .addresses
            .iter()
            .filter_map(|a| connecta_core::Address::parse(a).map(|x| x.connector))
            .filter(|c| self.gateway.connector(c).is_some())
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let handles: Vec<_> = wanted
            .iter()
            .filter_map(|c| self.gateway.connector(c))
            .collect();
        let wait = self.limits.call_deadline;
        let loads =
            futures::future::join_all(handles.iter().map(|h| h.catalog.get_within(wait))).await;
        let loads: Vec<_> = loads
            .into_iter()
            .map(|l| l.map_err(|e| self.gateway.scrub(e)))
            .collect();
        let indexes: Vec<_> = loads
            .iter()
            .map(|l| l.as_ref().map(|x| x.index()))
            .collect();
        let sources: Vec<SearchSource<'_>> = handles
            .iter()
            .zip(&indexes)
            .map(|(h, ix)| match ix {
                Ok(index) => SearchSource::with_guide(index, h.config.guide.as_ref()),
                Err(e) => SearchSource::failed(&h.config.id, e),
            })
            .collect();
        describe(req, &sources)
    }

    /// Accepts one validated block within the budgets (M5: refused at the
    /// call, nothing partially accepted; M7: no host-call budget spent).
    fn emit(&self, block: Value) -> Answer {
        let size = serde_json::to_string(&block).map_or(0, |s| s.len());
        let mut e = self.emitted.lock().unwrap_or_else(|p| p.into_inner());
        let refuse = |budget: &str, message: String| {
            Err(ToolError::new(ErrorCode::BudgetExceeded, message).detail("budget", budget))
        };
        if e.blocks.len() >= self.limits.emit_blocks {
            return refuse(
                "emit_blocks",
                format!(
                    "connecta.emit: the block budget ({} blocks) is used up; nothing more can be emitted",
                    self.limits.emit_blocks
                ),
            );
        }
        if e.bytes + size > self.limits.emit_bytes {
            return refuse(
                "emit_bytes",
                format!(
                    "connecta.emit: this {size}-byte block exceeds the emit byte budget ({} bytes, {} left)",
                    self.limits.emit_bytes,
                    self.limits.emit_bytes - e.bytes
                ),
            );
        }
        e.bytes += size;
        e.blocks.push(block);
        let answer = format!("{{\"accepted\":true,\"emitted\":{}}}", e.blocks.len());
        RawValue::from_string(answer).map_err(unserializable)
    }
}

/// One `connecta.batch` outcome (S7), serialized around each entry's text.
#[derive(Serialize)]
struct Outcome<'a> {
    address: &'a str,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(rename = "errorDetails", skip_serializing_if = "Option::is_none")]
    error_details: Option<TypedFailure>,
}

fn unserializable(e: serde_json::Error) -> ToolError {
    ToolError::with_cause(
        ErrorCode::ResultProcessingFailed,
        format!("the result could not be serialized: {e}"),
        false,
    )
}

/// The typed fields of a failure as data (E1, E2): what a program finds on
/// a caught `Error` and in a batch entry's `errorDetails`.
pub(crate) fn typed(e: &ToolError) -> TypedFailure {
    TypedFailure {
        code: e.code.as_str().to_owned(),
        retryable: e.retryable,
        retry_after_ms: e.retry_after_ms,
        details: e.details.clone(),
        next_action: e
            .next_action
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok()),
    }
}

/// A failure handed to the program, typed.
fn host_error(e: ToolError) -> HostError {
    HostError {
        typed: Some(typed(&e)),
        message: e.message,
    }
}

/// The failure a program let escape, as the host handed it out (E1, E6).
pub(crate) fn escaped(h: HostError) -> ToolError {
    let Some(t) = h.typed else {
        return ToolError::new(ErrorCode::ExecutionFailed, h.message);
    };
    let code = ErrorCode::parse(&t.code).unwrap_or(ErrorCode::ExecutionFailed);
    let mut e = ToolError::with_cause(code, h.message, t.retryable);
    e.retry_after_ms = t.retry_after_ms;
    e.next_action = t.next_action.and_then(|a| serde_json::from_value(a).ok());
    e.details = t.details;
    e
}

#[async_trait]
impl BindingHost for ProgramHost {
    async fn call(
        &self,
        global: &str,
        function: &str,
        args: Value,
    ) -> Result<Box<RawValue>, HostError> {
        if global != "connecta" {
            return Err(HostError::untyped(format!(
                "Unknown function {}.{}",
                clamp_text(global, 64),
                clamp_text(function, 64)
            )));
        }
        let args = match args {
            Value::Array(a) => a,
            Value::Null => Vec::new(),
            other => vec![other],
        };
        let answer = match decode(function, args, self.limits.batch_size) {
            Ok(GuestCall::Call { address, args }) => self.call(address, args).await,
            Ok(GuestCall::Shortcut {
                connector,
                alias,
                args,
            }) => self.shortcut(&connector, &alias, args).await,
            Ok(GuestCall::Batch(entries)) => self.batch(entries).await,
            Ok(GuestCall::Search(req)) => self.search(&req).await,
            Ok(GuestCall::Describe(req)) => self.describe(&req).await,
            Ok(GuestCall::Emit(block)) => self.emit(block),
            Err(e) => Err(e),
        };
        answer.map_err(host_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connecta_core::error::NextAction;

    #[test]
    fn e2_a_failure_round_trips_through_its_data_whole() {
        let e = ToolError::with_cause(ErrorCode::RateLimited, "slow down", true)
            .retry_after(1500)
            .detail("connector", "ci")
            .next(NextAction::new(
                "search_tools",
                serde_json::json!({"query": "x"}),
            ));
        assert_eq!(escaped(host_error(e.clone())), e);
        let bare = ToolError::new(ErrorCode::InvalidArgs, "no");
        let data = typed(&bare);
        assert_eq!(data.details, serde_json::Map::new());
        assert_eq!(data.next_action, None);
        assert_eq!(escaped(host_error(bare.clone())), bare);
    }
}
