//! The code-runtime seam (`CodeRuntime`) and its JavaScript implementation.
//!
//! The seam follows the code-runtime design we adopted: a request carries the
//! program, the binding namespaces and a cancellation signal; the result
//! carries `value?`, `logs`, and `error? {kind, message}`. A failed program is
//! a field on the result, never an `Err` of `run`.
//!
//! Architecture invariant: nothing in this crate opens a socket or a file on
//! behalf of a program. The worker process that runs programs has no network,
//! files, environment, timers or imports; everything a program can do arrives
//! through a [`BindingHost`].
//!
//! Code map:
//! - this file: the seam types;
//! - [`pool`]: [`QuickJsPool`], the `CodeRuntime` on pre-started worker
//!   processes, with admission ([`QuickJsPool::acquire`]) separate from
//!   running ([`Lease::run`]);
//! - [`protocol`]: the frames between the pool and a worker;
//! - `worker`: the worker process ([`worker_main`]): engine, bridge, JSON
//!   conversion, program normalization, hardening;
//! - `sys`: the only `unsafe` code (pre-exec setup, closing inherited fds).
// `deny`, not `forbid`: `sys` is the one module allowed to opt back in.
#![deny(unsafe_code)]

pub mod pool;
pub mod protocol;
mod sys;
mod worker;

pub use pool::{AdmissionError, Lease, PoolError, PoolOptions, PoolStats, QuickJsPool, SpawnError};
pub use worker::worker_main;

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

/// One global object of async functions exposed to the program.
///
/// Function names are hostile input: `__proto__` and `constructor` are
/// ordinary own names, never prototype members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BindingNamespace {
    /// The global identifier the program sees (`[A-Za-z_][A-Za-z0-9_]*`).
    pub global: String,
    /// The callable members, by the exact name the program calls.
    pub functions: Vec<String>,
}

/// Lazy namespace globals, the same for every run of a pool (the gateway's
/// connector shortcuts, contract A2).
///
/// Each alias is a global namespace: reading property `p` of it gives a
/// function whose call `(args)` is the host call
/// `<global>.<function>(target, p, args ?? {})`. The table is sent to each
/// worker once; a run defines only the aliases its program's text spells,
/// so a run costs the same beside one alias or ten thousand.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortcuts {
    /// The binding namespace (its global) whose function receives the calls.
    pub global: String,
    /// The function of that namespace receiving `(target, property, args)`.
    pub function: String,
    /// `(alias, target)` pairs: the global the program reads and the target
    /// its calls name. Aliases are JavaScript identifiers, each once.
    pub aliases: Vec<(String, String)>,
}

/// One run: the program and everything the runtime acts on. Bounds are the
/// runtime's validated configuration, never request knobs.
#[derive(Debug, Clone)]
pub struct CodeRunRequest {
    /// The program source (for JavaScript: an async arrow function expression).
    pub program: String,
    /// Host functions exposed to the program, one global per namespace.
    pub bindings: Vec<BindingNamespace>,
    /// Fires when the caller goes away: the run stops and resolves `abort`.
    pub cancel: CancellationToken,
}

/// A rejected host call, as the program will see it: an `Error` with this
/// message, and, when the failure is typed, its fields as own properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostError {
    /// The message of the `Error` the program catches.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<TypedFailure>,
}

impl HostError {
    /// A failure with a message only (a bound of the bridge, say).
    pub fn untyped(message: impl Into<String>) -> HostError {
        HostError {
            message: message.into(),
            typed: None,
        }
    }
}

/// A typed failure as data (the host's error taxonomy): the worker defines
/// `code`, `retryable` and `details`, and `retryAfterMs` and `nextAction`
/// when set, on the program-visible `Error`. Nothing is read back from
/// message text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypedFailure {
    pub code: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    #[serde(default)]
    pub details: serde_json::Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_action: Option<Value>,
}

/// The host side of the bindings: the gateway implements this.
#[async_trait]
pub trait BindingHost: Send + Sync {
    /// One call of `global.function(...)` by the program. `args` is always
    /// a JSON array of the call's arguments, in order (`undefined` → `null`),
    /// already checked against the argument bound. The answer is the
    /// result's JSON text, serialized once by the host and sent to the
    /// worker as it is. Dropping the returned future means the run ended:
    /// the call must stop (contract L2).
    async fn call(
        &self,
        global: &str,
        function: &str,
        args: Value,
    ) -> Result<Box<RawValue>, HostError>;
}

/// Why a run failed. The kinds are orthogonal: a budget expiry is not an
/// exception, an abort is not a timeout, and a substrate death is neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The program threw, or failed to parse.
    Exception,
    /// A budget expired (wall deadline, guest CPU, stall); the message says which.
    Timeout,
    /// The request's cancellation fired.
    Abort,
    /// The worker died without settling (crash, out of memory, killed).
    WorkerExit,
    /// The completion value could not cross as JSON.
    InvalidOutput,
    /// Logs or the value exceeded the runtime's output cap.
    OutputLimit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeRunFailure {
    pub kind: FailureKind,
    pub message: String,
    /// For `exception`: the typed failure of a host call, when the program
    /// let that very error escape (uncaught, rethrown, or as the `cause` of
    /// its own error). Set by the pool from the failures it handed out, by
    /// object identity inside the worker, never from what the program wrote:
    /// a program cannot forge one (contract E6).
    #[serde(skip)]
    pub host_error: Option<Box<HostError>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CodeRunResult {
    /// The program's resolved value, when it ran to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Captured `console.log/warn/error` lines, in call order.
    pub logs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CodeRunFailure>,
}

/// A code runtime. Runs never share state.
#[async_trait]
pub trait CodeRuntime: Send + Sync {
    /// The language programs are written in (`"javascript"`).
    fn language(&self) -> &'static str;
    /// The execution substrate, a diagnostic label (`"process"`), not a
    /// security claim.
    fn isolation(&self) -> &'static str;
    async fn run(&self, request: CodeRunRequest, host: Arc<dyn BindingHost>) -> CodeRunResult;
}
