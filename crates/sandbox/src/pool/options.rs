//! The pool's configuration: how workers are started and every bound a run
//! is held to. Validated once at [`crate::QuickJsPool::start`].
//!
//! Must never: take a bound from a request or a program (contract L8).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::Shortcuts;
use crate::protocol::WorkerLimits;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

/// Configuration of a [`crate::QuickJsPool`]. Build with [`PoolOptions::new`]
/// (which sets the defaults below) and adjust fields.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// The worker executable: the gateway passes `std::env::current_exe()`.
    pub worker_program: PathBuf,
    /// Its arguments: the gateway passes `["__sandbox-worker"]`.
    pub worker_args: Vec<OsString>,
    /// Workers kept warm, started by `start` and refilled after replacement. Default 2.
    pub workers: usize,
    /// Runs at once; extra workers start on demand up to this. Default 4.
    pub max_concurrent: usize,
    /// Runs waiting for admission; beyond this, overload is immediate. Default 32.
    pub max_queued: usize,
    /// Longest wait in the admission queue before overload. Default 5 s.
    pub queue_timeout: Duration,
    /// The `retry_after_ms` hint returned with overload. Default 1 s.
    pub overload_retry_after: Duration,
    /// A worker is replaced after this many runs. Default 1,000.
    pub runs_per_worker: u32,
    /// Wall-clock deadline of one run, host waits included (L3). Default 30 s.
    pub wall_deadline: Duration,
    /// Guest CPU per run, host waits excluded (L5). Default 250 ms.
    pub cpu_budget: Duration,
    /// Guest heap. Default 64 MiB.
    pub heap_bytes: usize,
    /// Guest stack. Default 1 MiB.
    pub stack_bytes: usize,
    /// Serialized arguments of one host call (L6). Default 256 KiB.
    pub max_arg_bytes: usize,
    /// Serialized result of one host call (L6). Default 256 KiB.
    pub max_result_bytes: usize,
    /// Host calls one run may have in flight at once; more are refused
    /// (that call rejects). Default 256. The per-run call budget is the gateway's.
    pub max_inflight_calls: usize,
    /// Raw cap on one run's logs; a marker line follows. Default 64 KiB.
    /// (The gateway applies the contract's 4,000-character cap.)
    pub max_log_bytes: usize,
    /// Serialized completion value; over it the run fails `output-limit`. Default 8 MiB.
    pub max_value_bytes: usize,
    /// Address-space headroom above the heap for the engine and binary
    /// (`RLIMIT_AS` = size at hardening + heap + this). Default 256 MiB.
    pub address_space_margin_bytes: usize,
    /// Apply no-new-privs, rlimits and seccomp in workers. Default true;
    /// turning it off is for diagnosing hardening itself.
    pub harden: bool,
    /// How long a starting worker may take to report ready. Default 10 s.
    pub startup_timeout: Duration,
    /// The lazy namespace globals every run gets. Default none.
    pub shortcuts: Shortcuts,
}

impl PoolOptions {
    /// Defaults for everything but the worker command.
    pub fn new<P, A, S>(worker_program: P, worker_args: A) -> Self
    where
        P: Into<PathBuf>,
        A: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            worker_program: worker_program.into(),
            worker_args: worker_args.into_iter().map(Into::into).collect(),
            workers: 2,
            max_concurrent: 4,
            max_queued: 32,
            queue_timeout: Duration::from_secs(5),
            overload_retry_after: Duration::from_secs(1),
            runs_per_worker: 1_000,
            wall_deadline: Duration::from_secs(30),
            cpu_budget: Duration::from_millis(250),
            heap_bytes: 64 * MIB,
            stack_bytes: MIB,
            max_arg_bytes: 256 * KIB,
            max_result_bytes: 256 * KIB,
            max_inflight_calls: 256,
            max_log_bytes: 64 * KIB,
            max_value_bytes: 8 * MIB,
            address_space_margin_bytes: 256 * MIB,
            harden: true,
            startup_timeout: Duration::from_secs(10),
            shortcuts: Shortcuts::default(),
        }
    }

    /// The bounds a worker enforces, as sent in its `Init` frame.
    pub fn limits(&self) -> WorkerLimits {
        WorkerLimits {
            heap_bytes: self.heap_bytes,
            stack_bytes: self.stack_bytes,
            cpu_budget_ms: u64::try_from(self.cpu_budget.as_millis()).unwrap_or(u64::MAX),
            max_arg_bytes: self.max_arg_bytes,
            max_result_bytes: self.max_result_bytes,
            max_inflight_calls: self.max_inflight_calls,
            max_log_bytes: self.max_log_bytes,
            max_value_bytes: self.max_value_bytes,
            address_space_margin_bytes: self.address_space_margin_bytes,
        }
    }

    /// Checks the options are usable; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("max_concurrent", self.max_concurrent),
            ("runs_per_worker", self.runs_per_worker as usize),
            ("heap_bytes", self.heap_bytes),
            ("stack_bytes", self.stack_bytes),
            ("max_arg_bytes", self.max_arg_bytes),
            ("max_result_bytes", self.max_result_bytes),
            ("max_value_bytes", self.max_value_bytes),
            ("max_inflight_calls", self.max_inflight_calls),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(format!("`{name}` must be greater than zero"));
            }
        }
        if self.workers > self.max_concurrent {
            return Err(format!(
                "`workers` ({}) must not exceed `max_concurrent` ({})",
                self.workers, self.max_concurrent
            ));
        }
        if self.cpu_budget.is_zero() || self.wall_deadline.is_zero() {
            return Err("`cpu_budget` and `wall_deadline` must be greater than zero".into());
        }
        validate_shortcuts(&self.shortcuts)?;
        let frame_cap = crate::protocol::MAX_FRAME_TO_WORKER - crate::protocol::FRAME_SLACK;
        if self.max_result_bytes > frame_cap {
            return Err(format!("`max_result_bytes` must not exceed {frame_cap}"));
        }
        Ok(())
    }
}

/// Aliases must be identifiers a program can write, each once, and need a
/// namespace function to call.
fn validate_shortcuts(s: &Shortcuts) -> Result<(), String> {
    if s.aliases.is_empty() {
        return Ok(());
    }
    if !is_identifier(&s.global) || s.function.is_empty() {
        return Err(
            "`shortcuts` need the binding global and function that receive their calls".into(),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for (alias, _) in &s.aliases {
        if !is_identifier(alias) {
            return Err(format!(
                "shortcut alias `{alias}` is not a JavaScript identifier"
            ));
        }
        if !seen.insert(alias.as_str()) {
            return Err(format!("shortcut alias `{alias}` is given twice"));
        }
    }
    Ok(())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}
