//! Drives one run on one worker from the parent side: sends the program,
//! answers host calls through the [`BindingHost`], collects logs, and ends
//! the run on `Done`, cancellation, the wall deadline, shutdown or the
//! worker's death.
//!
//! Host calls run concurrently as futures owned by this loop; when the run
//! ends for any reason they are dropped, which aborts them (contract L2).
//!
//! Must never: trust the worker. Every frame is bounded and checked: call
//! arguments over the bound are refused unparsed, calls to undeclared
//! functions are refused, results are parsed here, and anything malformed
//! is a protocol violation that retires the worker.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::process::{WorkerProcess, describe_exit};
use crate::protocol::{
    self, FromWorker, REMEMBERED_FAILURES, RunOutcome, ToWorker, WorkerLimits, result_too_large,
};
use crate::{BindingHost, CodeRunFailure, CodeRunRequest, CodeRunResult, FailureKind, HostError};

/// What happens to the worker after the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Clean end: the worker may serve another run.
    Reuse,
    /// Abnormal end: kill, reap and replace.
    Retire,
    /// The worker died before it sent a single frame for this run: retire
    /// it. The program made no host call and wrote no log, so running it
    /// again on another worker has no effect twice.
    Unheard,
}

type HostFuture = Pin<Box<dyn Future<Output = (u64, Result<Box<RawValue>, HostError>)> + Send>>;

/// Longest host error message forwarded into the guest.
const MAX_HOST_MESSAGE: usize = 8 * 1024;

/// Collects log lines up to the raw cap (the worker caps too; this does not
/// trust it to).
struct Logs {
    lines: Vec<String>,
    bytes: usize,
    limit: usize,
    full: bool,
}

impl Logs {
    fn push(&mut self, line: String) {
        if self.full {
            return;
        }
        // The worker's own marker line may exceed the cap slightly.
        if self.bytes + line.len() > self.limit + 256 {
            self.full = true;
            self.lines.push(format!(
                "[log output truncated: the sandbox keeps at most {} bytes of logs per run]",
                self.limit
            ));
            return;
        }
        self.bytes += line.len();
        self.lines.push(line);
    }
}

pub(crate) struct RunContext<'a> {
    pub(crate) limits: &'a WorkerLimits,
    pub(crate) deadline: Instant,
    pub(crate) wall_deadline_ms: u128,
    pub(crate) shutdown: &'a CancellationToken,
}

fn fail(kind: FailureKind, message: impl Into<String>, logs: Vec<String>) -> CodeRunResult {
    CodeRunResult {
        value: None,
        logs,
        error: Some(CodeRunFailure {
            kind,
            message: message.into(),
            host_error: None,
        }),
    }
}

/// The run frame, encoded once so a run whose worker died unheard can be
/// sent again; `Err` is the run's failure (it never reaches a worker).
pub(crate) fn encode_run(request: &CodeRunRequest) -> Result<Vec<u8>, CodeRunResult> {
    match protocol::encode_run(&request.program, &request.bindings) {
        Ok(f) if f.len() <= protocol::MAX_FRAME_TO_WORKER => Ok(f),
        Ok(_) => Err(fail(
            FailureKind::Exception,
            "the program is too large to run",
            Vec::new(),
        )),
        Err(e) => Err(fail(
            FailureKind::Exception,
            format!("the run could not be encoded: {e}"),
            Vec::new(),
        )),
    }
}

/// Runs one encoded program on `worker` until it settles.
pub(crate) async fn drive(
    worker: &mut WorkerProcess,
    cx: RunContext<'_>,
    frame: Vec<u8>,
    request: &CodeRunRequest,
    host: Arc<dyn BindingHost>,
) -> (CodeRunResult, Fate) {
    let declared: HashMap<&str, HashSet<&str>> = request
        .bindings
        .iter()
        .map(|ns| {
            (
                ns.global.as_str(),
                ns.functions.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    worker.send(frame);
    // Set by the first frame: until then the program made no host call and
    // wrote no log, so nothing outside the sandbox has seen it.
    let mut heard = false;

    let mut logs = Logs {
        lines: Vec::new(),
        bytes: 0,
        limit: cx.limits.max_log_bytes,
        full: false,
    };
    let mut calls: FuturesUnordered<HostFuture> = FuturesUnordered::new();
    // The typed failures sent to this run, by call id: what an escaped one
    // the worker names stands for. Only what was sent counts.
    let mut rejected: VecDeque<(u64, HostError)> = VecDeque::new();
    let deadline = tokio::time::sleep_until(cx.deadline);
    tokio::pin!(deadline);

    loop {
        tokio::select! {
            biased;
            _ = request.cancel.cancelled() => {
                worker.kill();
                return (fail(FailureKind::Abort, "the run was cancelled", logs.lines), Fate::Retire);
            }
            _ = cx.shutdown.cancelled() => {
                worker.kill();
                return (
                    fail(FailureKind::WorkerExit, "the code sandbox is shutting down", logs.lines),
                    Fate::Retire,
                );
            }
            _ = &mut deadline => {
                worker.kill();
                let msg = format!(
                    "the program exceeded its wall-clock deadline of {} ms (host waits included)",
                    cx.wall_deadline_ms
                );
                return (fail(FailureKind::Timeout, msg, logs.lines), Fate::Retire);
            }
            () = worker.outbox.write_some(), if !worker.outbox.is_empty() => {}
            frame = worker.frames.next() => {
                let body = match frame {
                    Ok(Some(body)) => body,
                    Ok(None) => {
                        let status = worker.exit_status().await;
                        let how = status.map(describe_exit).unwrap_or_else(|| "unknown status".into());
                        let msg = format!("the sandbox worker exited during the run ({how})");
                        let fate = if heard { Fate::Retire } else { Fate::Unheard };
                        return (fail(FailureKind::WorkerExit, msg, logs.lines), fate);
                    }
                    Err(e) => return violation(worker, &e.to_string(), logs.lines),
                };
                heard = true;
                let message = match protocol::decode::<FromWorker>(&body) {
                    Ok(m) => m,
                    Err(e) => return violation(worker, &e.to_string(), logs.lines),
                };
                match message {
                    FromWorker::Log { line } => logs.push(line),
                    FromWorker::Call { id, .. } if calls.len() >= cx.limits.max_inflight_calls => {
                        // The worker enforces this too; one that does not is refused here.
                        refuse(worker, id, format!(
                            "too many host calls in flight (at most {})",
                            cx.limits.max_inflight_calls
                        ));
                    }
                    FromWorker::Call { id, global, function, args } => {
                        if let Some(fut) = admit_call(worker, &cx, &declared, &host, id, global, function, args.get()) {
                            calls.push(fut);
                        }
                    }
                    FromWorker::Done { outcome, cpu_micros } => {
                        tracing::trace!(worker_pid = worker.pid, cpu_micros, "sandbox run done");
                        return finish(outcome, cx.limits, &rejected, logs.lines);
                    }
                    FromWorker::Ready { .. } => {
                        return violation(worker, "unexpected `ready`", logs.lines);
                    }
                }
            }
            Some((id, reply)) = calls.next(), if !calls.is_empty() => {
                if let Err(e) = &reply && e.typed.is_some() {
                    if rejected.len() == REMEMBERED_FAILURES {
                        rejected.pop_front();
                    }
                    rejected.push_back((id, e.clone()));
                }
                worker.send(reply_frame(id, reply, cx.limits.max_result_bytes));
            }
        }
    }
}

/// Checks one `call` frame; returns the host future, or replies at once
/// with a refusal.
#[allow(clippy::too_many_arguments)]
fn admit_call(
    worker: &mut WorkerProcess,
    cx: &RunContext<'_>,
    declared: &HashMap<&str, HashSet<&str>>,
    host: &Arc<dyn BindingHost>,
    id: u64,
    global: String,
    function: String,
    args: &str,
) -> Option<HostFuture> {
    let mut refuse = |message: String| refuse(worker, id, message);
    if args.len() > cx.limits.max_arg_bytes {
        // Refused before parsing, naming no address (L6).
        refuse(format!(
            "the host call's arguments are larger than the {}-byte bound; pass less data",
            cx.limits.max_arg_bytes
        ));
        return None;
    }
    if !declared
        .get(global.as_str())
        .is_some_and(|fns| fns.contains(function.as_str()))
    {
        refuse(format!("Unknown function {global}.{function}"));
        return None;
    }
    let args: Value = match serde_json::from_str(args) {
        Ok(v) => v,
        Err(e) => {
            refuse(format!("the host call's arguments are not valid JSON: {e}"));
            return None;
        }
    };
    let host = host.clone();
    Some(Box::pin(async move {
        let reply = host.call(&global, &function, args).await;
        (id, reply)
    }))
}

/// Rejects one call at once, untyped.
fn refuse(worker: &mut WorkerProcess, id: u64, message: String) {
    let error = HostError::untyped(message);
    if let Ok(frame) = protocol::encode(&ToWorker::Reject { id, error }) {
        worker.send(frame);
    }
}

/// The host's answer as a frame: its JSON text as it is, when within the
/// bound (L6).
fn reply_frame(id: u64, reply: Result<Box<RawValue>, HostError>, max_result: usize) -> Vec<u8> {
    let mut error = match reply {
        Ok(text) if text.get().len() <= max_result => {
            return protocol::encode_resolve(id, text.get());
        }
        Ok(_) => HostError::untyped(result_too_large(max_result)),
        Err(error) => error,
    };
    truncate(&mut error.message, MAX_HOST_MESSAGE);
    let frame = protocol::encode(&ToWorker::Reject {
        id,
        error: error.clone(),
    });
    match frame {
        // Typed fields too large to send: the message alone goes.
        Ok(f) if f.len() > max_result + protocol::FRAME_SLACK => {
            error.typed = None;
            protocol::encode(&ToWorker::Reject { id, error }).unwrap_or_default()
        }
        f => f.unwrap_or_default(),
    }
}

fn finish(
    outcome: RunOutcome,
    limits: &WorkerLimits,
    rejected: &VecDeque<(u64, HostError)>,
    logs: Vec<String>,
) -> (CodeRunResult, Fate) {
    match outcome {
        RunOutcome::Value { value: None } => (
            CodeRunResult {
                value: None,
                logs,
                error: None,
            },
            Fate::Reuse,
        ),
        RunOutcome::Value { value: Some(raw) } => {
            if raw.get().len() > limits.max_value_bytes {
                let msg = format!(
                    "the program's result is larger than the {}-byte bound; return less data",
                    limits.max_value_bytes
                );
                return (fail(FailureKind::OutputLimit, msg, logs), Fate::Reuse);
            }
            match serde_json::from_str::<Value>(raw.get()) {
                Ok(value) => (
                    CodeRunResult {
                        value: Some(value),
                        logs,
                        error: None,
                    },
                    Fate::Reuse,
                ),
                Err(e) => (
                    fail(
                        FailureKind::InvalidOutput,
                        format!("the result could not be read as JSON: {e}"),
                        logs,
                    ),
                    Fate::Reuse,
                ),
            }
        }
        RunOutcome::Failed {
            mut failure,
            retire,
            escaped,
        } => {
            truncate(&mut failure.message, MAX_HOST_MESSAGE);
            failure.host_error = escaped.and_then(|id| {
                let sent = rejected.iter().find(|(sent, _)| *sent == id);
                sent.map(|(_, e)| Box::new(e.clone()))
            });
            (
                CodeRunResult {
                    value: None,
                    logs,
                    error: Some(failure),
                },
                if retire { Fate::Retire } else { Fate::Reuse },
            )
        }
    }
}

fn violation(worker: &mut WorkerProcess, what: &str, logs: Vec<String>) -> (CodeRunResult, Fate) {
    worker.kill();
    tracing::warn!(
        worker_pid = worker.pid,
        "sandbox worker protocol violation: {what}"
    );
    (
        fail(
            FailureKind::WorkerExit,
            format!("the sandbox worker broke protocol and was stopped ({what})"),
            logs,
        ),
        Fate::Retire,
    )
}

fn truncate(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
}
