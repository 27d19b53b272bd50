//! Code mode: `execute_code` runs an agent's JavaScript program in the
//! QuickJS worker pool, next to the tools, and returns only its answer.
//!
//! The order of work is the contract's: admission first (L7, before any
//! catalog work), then the bindings and the host, then the run, then the
//! answer (the result envelope with its one truncation, or the failure —
//! typed when it is an escaped tool failure, E1).

mod diagnostics;
mod envelope;
mod guest_call;
mod host;
mod shortcuts;

pub use envelope::truncate_result;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use connecta_core::config::CodeConfig;
use connecta_core::error::{ErrorCode, ToolError};
use connecta_sandbox::{
    AdmissionError, BindingNamespace, CodeRunRequest, FailureKind, PoolOptions, QuickJsPool,
    Shortcuts,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::meta::{MetaOutput, parse_args};
use crate::metrics::ProgramOutcome;
use crate::{Gateway, RequestCtx};

pub(crate) use host::FUNCTIONS;

/// How to start sandbox workers: the gateway binary in its worker mode.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// The running code mode of a gateway.
pub(crate) struct CodeMode {
    pub pool: QuickJsPool,
    pub config: CodeConfig,
    /// The shortcut globals, or why this deployment cannot run programs (A4).
    aliases: Result<Vec<(String, String)>, String>,
}

impl CodeMode {
    pub(crate) async fn start(
        config: &CodeConfig,
        worker: &WorkerCommand,
        connector_ids: &[&str],
    ) -> Result<CodeMode, String> {
        let mut o = PoolOptions::new(&worker.program, worker.args.iter().cloned());
        o.workers = config.workers;
        o.max_concurrent = config.max_concurrent;
        o.max_queued = config.max_queued;
        o.queue_timeout = config.queue_timeout;
        o.runs_per_worker = config.runs_per_worker;
        o.wall_deadline = config.deadline;
        o.cpu_budget = config.cpu;
        o.heap_bytes = config.heap_bytes;
        o.stack_bytes = config.stack_bytes;
        o.max_arg_bytes = config.host_payload_bytes;
        // The gateway checks results first so the message can name the
        // address (L6); the worker's own bound sits just above it.
        o.max_result_bytes = config.host_payload_bytes + 64 * 1024;
        let aliases = shortcuts::aliases(connector_ids);
        match &aliases {
            Ok(a) => {
                o.shortcuts = Shortcuts {
                    global: "connecta".into(),
                    function: host::NAMESPACE_DISPATCH.into(),
                    aliases: a.clone(),
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
        let pool = QuickJsPool::start(o).await.map_err(|e| e.to_string())?;
        Ok(CodeMode {
            pool,
            config: config.clone(),
            aliases,
        })
    }

    pub(crate) fn shortcut_names(&self) -> Vec<&str> {
        match &self.aliases {
            Ok(a) => a.iter().map(|(alias, _)| alias.as_str()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    code: String,
    #[serde(default)]
    diagnostics: Option<bool>,
}

impl Gateway {
    pub(crate) async fn execute_code(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let started = Instant::now();
        let mut outcome = ProgramOutcome::Refused;
        let out = self.run_program(args, ctx, &mut outcome).await;
        self.metrics.program(outcome, started.elapsed());
        out
    }

    /// `execute_code` itself; `outcome` says how it ended, for the metrics.
    async fn run_program(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
        outcome: &mut ProgramOutcome,
    ) -> Result<MetaOutput, ToolError> {
        let a: Args = parse_args("execute_code", args)?;
        let Some(code) = &self.code else {
            *outcome = ProgramOutcome::Closed;
            return Err(ToolError::new(
                ErrorCode::ExecutorClosed,
                "code mode is not running in this gateway",
            ));
        };
        if let Err(e) = &code.aliases {
            return Err(ToolError::new(ErrorCode::ExecutionFailed, e.clone()));
        }
        let Some(me) = self.me.upgrade() else {
            *outcome = ProgramOutcome::Closed;
            return Err(ToolError::new(
                ErrorCode::ExecutorClosed,
                "the gateway is shutting down",
            ));
        };
        // L7: admission before any catalog or provider work.
        let started = Instant::now();
        let lease = match code.pool.acquire(&ctx.cancel).await {
            Ok(l) => l,
            Err(AdmissionError::Overloaded { retry_after_ms }) => {
                *outcome = ProgramOutcome::Overloaded;
                return Err(ToolError::new(
                    ErrorCode::ExecutorOverloaded,
                    format!("every sandbox is busy; retry after {retry_after_ms} ms"),
                )
                .retry_after(retry_after_ms));
            }
            Err(AdmissionError::Cancelled) => {
                *outcome = ProgramOutcome::Cancelled;
                return Err(ToolError::new(
                    ErrorCode::ExecutorCancelled,
                    "the request was cancelled while waiting for a sandbox",
                ));
            }
            Err(AdmissionError::Closed) => {
                *outcome = ProgramOutcome::Closed;
                return Err(ToolError::new(
                    ErrorCode::ExecutorClosed,
                    "the gateway is shutting down",
                ));
            }
        };
        let admission = started.elapsed();
        let setup_started = Instant::now();
        let limits = host::HostLimits {
            host_calls: code.config.host_calls,
            batch_size: code.config.batch_size,
            call_deadline: code.config.call_deadline,
            payload_bytes: code.config.host_payload_bytes,
            emit_bytes: code.config.emit_bytes,
            emit_blocks: code.config.emit_blocks,
        };
        let run_ctx = RequestCtx {
            request_id: ctx.request_id.clone(),
            actor: ctx.actor.clone(),
            cancel: ctx.cancel.child_token(),
            // Programs never call anything that needs approval.
            elicitor: None,
            approval_input: None,
            input_request: Arc::default(),
        };
        let host = Arc::new(host::ProgramHost::new(
            me,
            run_ctx.clone(),
            limits,
            a.diagnostics.unwrap_or(false),
        ));
        let request = CodeRunRequest {
            program: a.code,
            bindings: vec![BindingNamespace {
                global: "connecta".into(),
                functions: FUNCTIONS.iter().map(|f| (*f).to_owned()).collect(),
            }],
            cancel: run_ctx.cancel.clone(),
        };
        let setup = setup_started.elapsed();
        let exec_started = Instant::now();
        let result = lease.run(request, host.clone()).await;
        // L2: nothing request-bound outlives the run.
        run_ctx.cancel.cancel();
        let executor = exec_started.elapsed();
        let logs = envelope::cap_logs(&result.logs, code.config.log_chars);
        let diagnostics = host.diagnostics.as_ref().map(|d| {
            let (blocks, bytes) = (host.emitted_count(), 0);
            d.lock().unwrap_or_else(|p| p.into_inner()).to_value(
                admission,
                setup,
                executor,
                (blocks, bytes),
            )
        });
        *outcome = match &result.error {
            None => ProgramOutcome::Ok,
            Some(failure) => ProgramOutcome::Failed(failure.kind),
        };
        match result.error {
            None => {
                let value = result.value.unwrap_or(Value::Null);
                let (value, _truncated) =
                    envelope::truncate_result(value, code.config.result_chars);
                let (blocks, bytes) = host.take_emitted();
                let diagnostics = diagnostics.map(|mut d| {
                    if !blocks.is_empty() {
                        d["emitted"] = json!({"blocks": blocks.len(), "bytes": bytes});
                    }
                    d
                });
                let envelope = envelope::success(value, logs, blocks.len(), diagnostics);
                if blocks.is_empty() {
                    Ok(MetaOutput::value(envelope))
                } else {
                    Ok(MetaOutput::Rich {
                        value: envelope,
                        blocks,
                    })
                }
            }
            Some(failure) => {
                let discarded = host.emitted_count();
                let mut err = match failure.kind {
                    // An escaped host failure keeps its type (E1, E6).
                    FailureKind::Exception => match failure.host_error {
                        Some(h) => host::escaped(*h),
                        None => ToolError::new(ErrorCode::ExecutionFailed, failure.message)
                            .detail("kind", "exception"),
                    },
                    FailureKind::Abort => ToolError::new(
                        ErrorCode::ExecutorCancelled,
                        "the program was stopped because the request was cancelled",
                    ),
                    kind => ToolError::new(ErrorCode::ExecutionFailed, failure.message.clone())
                        .detail("kind", serde_json::to_value(kind).unwrap_or(Value::Null)),
                };
                if let Some(l) = logs {
                    err = err.detail("logs", l);
                }
                if discarded > 0 {
                    err = err.detail("emittedDiscarded", discarded);
                }
                if let Some(d) = diagnostics {
                    err = err.detail("diagnostics", d);
                }
                Err(err)
            }
        }
    }
}
