//! The host side of a program's `connecta` namespace. Every call a program
//! makes goes through the gateway's one call path (contract S6): the same
//! catalog, read-only predicate, argument validation, admission, timeout and
//! activity as `call_tool`, with `source: "execute_code"` and no retries (Y1).
//!
//! Per run it keeps the host-call budget (L4), the typed failures it handed
//! out (so an escaped failure keeps its type, E1/E6), the emitted blocks (M*),
//! and the diagnostics aggregates (R7/R8).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use connecta_core::activity::Source;
use connecta_core::address::format_address;
use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use connecta_sandbox::{BindingHost, HostError};
use connecta_search::{Source as SearchSource, Surface, describe, parse_describe_args};
use serde_json::{Map, Value, json};

use super::diagnostics::{Diagnostics, Op};
use super::envelope::validate_block;
use crate::call_path::{Boundary, CallSpec, Dispatched};
use crate::{Gateway, RequestCtx};

/// The dispatcher behind the connector shortcuts (host plumbing, P2).
pub(crate) const NAMESPACE_DISPATCH: &str = "__callNamespace";

/// The functions of the `connecta` namespace.
pub(crate) const FUNCTIONS: &[&str] = &[
    "search",
    "describe",
    "call",
    "batch",
    "emit",
    NAMESPACE_DISPATCH,
];

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

pub(crate) struct ProgramHost {
    gateway: Arc<Gateway>,
    ctx: RequestCtx,
    limits: HostLimits,
    calls: Mutex<u32>,
    failures: Mutex<Vec<ToolError>>,
    emitted: Mutex<Emitted>,
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
            failures: Mutex::new(Vec::new()),
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

    /// The typed failure an escaped error message stands for (E6: exact
    /// message first, then containment — so a wrapped message keeps its type).
    pub(crate) fn recognize(&self, message: &str) -> Option<ToolError> {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let stripped = strip_line_suffix(message);
        failures
            .iter()
            .rev()
            .find(|f| f.message == message || f.message == stripped)
            .or_else(|| {
                failures
                    .iter()
                    .rev()
                    .find(|f| message.contains(f.message.as_str()))
            })
            .cloned()
    }

    fn remember(&self, e: &ToolError) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e.clone());
    }

    fn note(&self, op: Op, started: Instant, ok: bool, bytes: usize, d: Option<&Dispatched>) {
        if let Some(diag) = &self.diagnostics {
            diag.lock().unwrap_or_else(|p| p.into_inner()).record(
                op,
                started.elapsed(),
                ok,
                bytes,
                d.map(|d| (d.catalog_time, d.connector_time)),
            );
        }
    }

    fn typed(&self, e: ToolError) -> HostError {
        self.remember(&e);
        HostError {
            message: e.message.clone(),
            typed: Some(error_details(&e)),
        }
    }

    /// Spend one unit of the host-call budget, or refuse (L4: the failure is
    /// `connector_call_failed` naming the budget; it does not refill).
    fn spend(&self) -> Result<(), ToolError> {
        let mut used = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if *used >= self.limits.host_calls {
            return Err(ToolError::with_cause(
                ErrorCode::ConnectorCallFailed,
                format!(
                    "this program has used its budget of {} tool calls; return what you have, or reduce the calls (connecta.batch counts each entry)",
                    self.limits.host_calls
                ),
                false,
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
    /// answered by `end`.
    async fn dispatch_one(
        &self,
        address: &str,
        args: Option<Value>,
        end: Instant,
    ) -> (Result<Value, ToolError>, Option<Dispatched>) {
        if let Err(e) = self.spend() {
            // A budget refusal on a real connector is still an event (V1).
            if let Some(addr) = connecta_core::Address::parse(address)
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
        let address = address.to_owned();
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
            let out = match &d.result {
                Ok(r) => {
                    let value = r.unwrap_value();
                    let size = serde_json::to_string(&value).map_or(0, |s| s.len());
                    if size > limit {
                        // L6: names the address the program called.
                        let e = ToolError::with_cause(
                            ErrorCode::ResultProcessingFailed,
                            format!(
                                "the result of {} is {size} bytes, over the {limit}-byte limit for one call inside a program; ask for less (filters, limits, fields)",
                                clamp_text(&address, 257),
                            ),
                            false,
                        );
                        d.result = Err(e.clone());
                        Err(e)
                    } else {
                        Ok(value)
                    }
                }
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

    async fn call(&self, args: &[Value]) -> Result<Value, HostError> {
        let started = Instant::now();
        let Some(address) = args.first().and_then(Value::as_str) else {
            return Err(self.typed(ToolError::invalid_args(
                "connecta.call(address, args): address must be a string like \"connector.tool\"",
            )));
        };
        let (r, d) = self
            .dispatch_one(address, args.get(1).cloned(), self.deadline())
            .await;
        let bytes = r
            .as_ref()
            .map_or(0, |v| serde_json::to_string(v).map_or(0, |s| s.len()));
        self.note(Op::Call, started, r.is_ok(), bytes, d.as_ref());
        r.map_err(|e| self.typed(e))
    }

    async fn call_namespace(&self, args: &[Value]) -> Result<Value, HostError> {
        let started = Instant::now();
        let end = self.deadline();
        let connector = args.first().and_then(Value::as_str).unwrap_or("");
        let alias = args.get(1).and_then(Value::as_str).unwrap_or("");
        let Some(handle) = self.gateway.connector(connector) else {
            return Err(self.typed(ToolError::unknown_address(&format_address(
                connector, alias,
            ))));
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
                let (r, d) = self.dispatch_one(&address, args.get(2).cloned(), end).await;
                let bytes = r
                    .as_ref()
                    .map_or(0, |v| serde_json::to_string(v).map_or(0, |s| s.len()));
                self.note(Op::Call, started, r.is_ok(), bytes, d.as_ref());
                r.map_err(|e| self.typed(e))
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
                self.note(Op::Call, started, false, 0, None);
                Err(self.typed(e))
            }
        }
    }

    async fn batch(&self, args: &[Value]) -> Result<Value, HostError> {
        let started = Instant::now();
        let Some(items) = args.first().and_then(Value::as_array) else {
            return Err(self.typed(ToolError::invalid_args(
                "connecta.batch takes an array of {address, args}",
            )));
        };
        if items.is_empty() || items.len() > self.limits.batch_size {
            return Err(self.typed(ToolError::invalid_args(format!(
                "connecta.batch takes 1 to {} calls (got {}); split the work or reduce it",
                self.limits.batch_size,
                items.len()
            ))));
        }
        // The entries run side by side, each within the one deadline.
        let end = self.deadline();
        let calls = items.iter().map(|item| async move {
            let address = item.get("address").and_then(Value::as_str);
            let Some(address) = address else {
                let e = ToolError::with_cause(
                    ErrorCode::BatchCallFailed,
                    "a batch entry needs an address string",
                    false,
                );
                return (String::new(), Err(e), None);
            };
            let (r, d) = self
                .dispatch_one(address, item.get("args").cloned(), end)
                .await;
            (address.to_owned(), r, d)
        });
        let outcomes = futures::future::join_all(calls).await;
        let mut out = Vec::with_capacity(outcomes.len());
        let mut bytes = 0;
        let mut catalog = Duration::ZERO;
        let mut connector = Duration::ZERO;
        let mut failures = 0;
        for (address, r, d) in outcomes {
            if let Some(d) = &d {
                catalog += d.catalog_time;
                connector += d.connector_time;
            }
            match r {
                Ok(data) => {
                    bytes += serde_json::to_string(&data).map_or(0, |s| s.len());
                    out.push(json!({"address": address, "ok": true, "data": data}));
                }
                Err(e) => {
                    failures += 1;
                    self.remember(&e);
                    out.push(json!({
                        "address": address,
                        "ok": false,
                        "error": e.message,
                        "errorDetails": error_details(&e),
                    }));
                }
            }
        }
        if let Some(diag) = &self.diagnostics {
            diag.lock().unwrap_or_else(|p| p.into_inner()).record_batch(
                started.elapsed(),
                items.len(),
                failures,
                bytes,
                catalog,
                connector,
            );
        }
        // A batch is one host call: its results together are held to the
        // bound of one (L6), as each of them is.
        let limit = self.limits.payload_bytes;
        if bytes > limit {
            return Err(self.typed(ToolError::with_cause(
                ErrorCode::ResultProcessingFailed,
                format!(
                    "the batch's results are {bytes} bytes together, over the {limit}-byte limit for one host call inside a program; batch fewer calls or ask each for less"
                ),
                false,
            )));
        }
        Ok(Value::Array(out))
    }

    async fn search(&self, args: &[Value]) -> Result<Value, HostError> {
        let started = Instant::now();
        let arg = args.first().cloned().unwrap_or(Value::Null);
        let r = self
            .gateway
            .search_value(&arg, Surface::CodeMode, Some(self.limits.call_deadline))
            .await;
        let bytes = r
            .as_ref()
            .map_or(0, |v| serde_json::to_string(v).map_or(0, |s| s.len()));
        let catalog = started.elapsed();
        if let Some(diag) = &self.diagnostics {
            diag.lock().unwrap_or_else(|p| p.into_inner()).record(
                Op::Search,
                started.elapsed(),
                r.is_ok(),
                bytes,
                Some((catalog, Duration::ZERO)),
            );
        }
        r.map_err(|e| self.typed(e))
    }

    async fn describe(&self, args: &[Value]) -> Result<Value, HostError> {
        let started = Instant::now();
        let arg = args.first().cloned().unwrap_or(Value::Null);
        let r = self.describe_value(&arg).await;
        let bytes = r
            .as_ref()
            .map_or(0, |v| serde_json::to_string(v).map_or(0, |s| s.len()));
        if let Some(diag) = &self.diagnostics {
            diag.lock().unwrap_or_else(|p| p.into_inner()).record(
                Op::Describe,
                started.elapsed(),
                r.is_ok(),
                bytes,
                Some((started.elapsed(), Duration::ZERO)),
            );
        }
        r.map_err(|e| self.typed(e))
    }

    async fn describe_value(&self, arg: &Value) -> Result<Value, ToolError> {
        let req = parse_describe_args(arg)?;
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
        describe(&req, &sources)
    }

    fn emit(&self, args: &[Value]) -> Result<Value, HostError> {
        let untyped = |message: String| HostError {
            message,
            typed: None,
        };
        let block = args.first().cloned().unwrap_or(Value::Null);
        if args.len() > 1 {
            return Err(untyped("connecta.emit takes exactly one block".into()));
        }
        validate_block(&block).map_err(untyped)?;
        let size = serde_json::to_string(&block).map_or(0, |s| s.len());
        let mut e = self.emitted.lock().unwrap_or_else(|p| p.into_inner());
        if e.blocks.len() >= self.limits.emit_blocks {
            return Err(untyped(format!(
                "connecta.emit: the block budget ({} blocks) is used up; nothing more can be emitted",
                self.limits.emit_blocks
            )));
        }
        if e.bytes + size > self.limits.emit_bytes {
            return Err(untyped(format!(
                "connecta.emit: this {size}-byte block exceeds the emit byte budget ({} bytes, {} left)",
                self.limits.emit_bytes,
                self.limits.emit_bytes - e.bytes
            )));
        }
        e.bytes += size;
        e.blocks.push(block);
        Ok(json!({"accepted": true, "emitted": e.blocks.len()}))
    }
}

/// The typed fields a program sees on an error (`errorDetails`, E1).
pub(crate) fn error_details(e: &ToolError) -> Value {
    let mut m = Map::new();
    m.insert("code".into(), json!(e.code));
    m.insert("retryable".into(), json!(e.retryable));
    if let Some(ms) = e.retry_after_ms {
        m.insert("retryAfterMs".into(), json!(ms));
    }
    if let Some(a) = &e.next_action {
        m.insert(
            "nextAction".into(),
            serde_json::to_value(a).unwrap_or(Value::Null),
        );
    }
    if !e.details.is_empty() {
        m.insert("details".into(), Value::Object(e.details.clone()));
    }
    Value::Object(m)
}

/// The sandbox appends ` (line N)` to a program's own throws.
fn strip_line_suffix(message: &str) -> &str {
    if let Some(i) = message.rfind(" (line ")
        && message.ends_with(')')
        && message[i + 7..message.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        return &message[..i];
    }
    message
}

#[async_trait]
impl BindingHost for ProgramHost {
    async fn call(&self, global: &str, function: &str, args: Value) -> Result<Value, HostError> {
        if global != "connecta" {
            return Err(HostError {
                message: format!(
                    "Unknown function {}.{}",
                    clamp_text(global, 64),
                    clamp_text(function, 64)
                ),
                typed: None,
            });
        }
        let args = match args {
            Value::Array(a) => a,
            Value::Null => Vec::new(),
            other => vec![other],
        };
        match function {
            "call" => self.call(&args).await,
            NAMESPACE_DISPATCH => self.call_namespace(&args).await,
            "batch" => self.batch(&args).await,
            "search" => self.search(&args).await,
            "describe" => self.describe(&args).await,
            "emit" => self.emit(&args),
            other => Err(HostError {
                message: format!("Unknown function connecta.{}", clamp_text(other, 64)),
                typed: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_suffixes_are_stripped_only_when_they_are_line_numbers() {
        assert_eq!(strip_line_suffix("boom (line 3)"), "boom");
        assert_eq!(strip_line_suffix("boom (line x)"), "boom (line x)");
        assert_eq!(strip_line_suffix("boom"), "boom");
    }
}
