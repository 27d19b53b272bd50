//! One run on a fresh QuickJS runtime and context (contract P4), and the
//! synchronous drive loop that settles it.
//!
//! This module owns the run's lifecycle: build the engine with the pool's
//! bounds, install the bridge and the shortcuts the program names, evaluate
//! the program, then
//! alternate between executing queued jobs and blocking on the parent for
//! host replies until the program's promise settles, the CPU budget runs out,
//! or the program stalls (X6). It reports exactly one `Done` frame per run.
//!
//! Must never: keep anything from one run to the next. The next run's engine
//! is created after `Done` is sent (off the critical path), with the bridge
//! already installed on a fresh run state when the last two runs named the
//! same bindings, and it has never been shown to a program. A run that
//! names other bindings gets an engine built for it instead.

use std::io::Read;
use std::rc::Rc;
use std::time::Duration;

use rquickjs::context::EvalOptions;
use rquickjs::context::intrinsic::{
    Date, Eval, Json, MapSet, Promise as PromiseIntrinsic, Proxy, RegExp, RegExpCompiler,
    TypedArrays, WeakRef,
};
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Object, Promise, Runtime, Value};

use super::bridge::{self, CpuClock, RunState};
use super::json::{self, ToJsonError};
use super::normalize;
use super::shortcuts::{self, ShortcutTable};
use super::{Io, WorkerError};
use crate::protocol::{self, FromWorker, RunOutcome, RunSpec, ToWorker, WorkerLimits};
use crate::{BindingNamespace, CodeRunFailure, FailureKind};

/// Longest failure message the worker reports (the gateway clamps further).
const MAX_MESSAGE_BYTES: usize = 8 * 1024;

/// Globals a fresh context has that the guest must not: blocking waits
/// (`Atomics.wait` is a timer in disguise) and shared memory.
const REMOVED_GLOBALS: [&str; 2] = ["Atomics", "SharedArrayBuffer"];

/// Script names as they appear in stacks.
const PROGRAM_FILE: &str = "program";

/// Owns the worker's bounds and the engine prepared for the next run.
pub struct Engine {
    limits: Rc<WorkerLimits>,
    shortcuts: Rc<ShortcutTable>,
    /// Call ids continue across runs (see the protocol docs).
    next_call_id: u64,
    /// The bindings the last run named.
    last_bindings: Option<Vec<BindingNamespace>>,
    /// Whether the last run named the same bindings as the run before it:
    /// only then is the next engine built with their bridge, so a caller
    /// that changes bindings from run to run keeps a bare engine ready.
    steady: bool,
    spare: Option<Spare>,
}

/// An engine built ahead of its run, never shown to a program.
struct Spare {
    rt: Runtime,
    context: Context,
    /// The bridge installed for these bindings, reporting to this run
    /// state; `None` before any run has named its bindings.
    bridge: Option<(Vec<BindingNamespace>, Rc<RunState>)>,
}

impl Engine {
    pub fn new(limits: WorkerLimits, shortcuts: ShortcutTable) -> Self {
        Self {
            limits: Rc::new(limits),
            shortcuts: Rc::new(shortcuts),
            next_call_id: 1,
            last_bindings: None,
            steady: false,
            spare: None,
        }
    }

    /// Builds the engine for the next run ahead of time, with the bridge
    /// for the last run's bindings installed when the two runs before named
    /// the same ones.
    pub fn prepare(&mut self) -> Result<(), WorkerError> {
        if self.spare.is_some() {
            return Ok(());
        }
        let Some(bindings) = self.last_bindings.as_ref().filter(|_| self.steady) else {
            self.spare = Some(bare_spare(&self.limits)?);
            return Ok(());
        };
        let (rt, context) = fresh_engine(&self.limits)?;
        let state = Rc::new(self.run_state());
        let installed = context.with(|ctx| -> rquickjs::Result<bool> {
            if collides(&ctx, bindings)? {
                return Ok(false);
            }
            bridge::install(&ctx, &state, bindings)?;
            Ok(true)
        });
        self.spare = Some(match installed {
            Ok(true) => Spare {
                rt,
                context,
                bridge: Some((bindings.clone(), state)),
            },
            // The run finds the collision and reports it.
            Ok(false) => Spare {
                rt,
                context,
                bridge: None,
            },
            // A bridge half installed is not handed on; the run installs
            // it again and reports what fails.
            Err(_) => {
                drop(context);
                drop(rt);
                bare_spare(&self.limits)?
            }
        });
        Ok(())
    }

    /// A fresh run state, its CPU clock started now.
    fn run_state(&self) -> RunState {
        let clock = Rc::new(CpuClock::start(Duration::from_millis(
            self.limits.cpu_budget_ms,
        )));
        RunState::new(self.limits.clone(), clock, self.next_call_id)
    }

    /// The engine and run state for a run naming `bindings`, and whether
    /// the bridge is already installed: the spare when it was built for
    /// them (its clock started again now), else a bare engine.
    fn engine_for(
        &mut self,
        bindings: &[BindingNamespace],
    ) -> Result<(Runtime, Context, Rc<RunState>, bool), WorkerError> {
        let Spare {
            rt,
            context,
            bridge,
        } = match self.spare.take() {
            Some(spare) => spare,
            None => bare_spare(&self.limits)?,
        };
        match bridge {
            Some((built_for, state)) if built_for == bindings => {
                state.clock.restart();
                Ok((rt, context, state, true))
            }
            // Built for other bindings: this run gets its own engine.
            Some(_) => {
                drop(context);
                drop(rt);
                let (rt, context) = fresh_engine(&self.limits)?;
                Ok((rt, context, Rc::new(self.run_state()), false))
            }
            None => Ok((rt, context, Rc::new(self.run_state()), false)),
        }
    }

    /// Remembers the bindings a run named, and whether the run before named
    /// the same: what the next engine is built for.
    fn note_bindings(&mut self, bindings: Vec<BindingNamespace>) {
        self.steady = self.last_bindings.as_ref() == Some(&bindings);
        self.last_bindings = Some(bindings);
    }

    /// Runs one program to its `Done` frame.
    pub fn run<R: Read>(&mut self, spec: RunSpec, io: &mut Io<R>) -> Result<(), WorkerError> {
        let (rt, context, state, bridged) = self.engine_for(&spec.bindings)?;
        let clock = state.clock.clone();
        let handler_clock = clock.clone();
        rt.set_interrupt_handler(Some(Box::new(move || handler_clock.check())));

        let result = context.with(|ctx| {
            let outcome = drive(&ctx, &state, &self.shortcuts, &spec, bridged, io);
            // Persistent handles must be gone before the runtime is.
            state.forget_pending();
            outcome
        });
        self.next_call_id = state.next_call_id();
        self.note_bindings(spec.bindings);
        let cpu_micros = u64::try_from(clock.used().as_micros()).unwrap_or(u64::MAX);
        let done = match result? {
            Finished::Value(text) => protocol::encode_done_value(text.as_deref(), cpu_micros),
            Finished::Failed {
                failure,
                retire,
                escaped,
            } => protocol::encode(&FromWorker::Done {
                outcome: RunOutcome::Failed {
                    failure,
                    retire,
                    escaped,
                },
                cpu_micros,
            })?,
        };
        io.write(&state.take_outbox())?;
        io.write(&done)?;
        drop(context);
        drop(rt);
        // Off the critical path: the parent already has its answer.
        self.prepare()
    }
}

/// How the drive loop ended.
enum Finished {
    /// Serialized completion value (`None` for `undefined`).
    Value(Option<String>),
    Failed {
        failure: CodeRunFailure,
        retire: bool,
        /// The call id of the host rejection the program let escape.
        escaped: Option<u64>,
    },
}

fn failed(kind: FailureKind, message: impl Into<String>) -> Finished {
    Finished::Failed {
        failure: CodeRunFailure {
            kind,
            message: clamp(message.into()),
            host_error: None,
        },
        retire: false,
        escaped: None,
    }
}

/// A fresh engine as a spare without a bridge.
fn bare_spare(limits: &WorkerLimits) -> Result<Spare, WorkerError> {
    let (rt, context) = fresh_engine(limits)?;
    Ok(Spare {
        rt,
        context,
        bridge: None,
    })
}

/// Whether a binding's global would replace one of the engine's own.
fn collides(ctx: &Ctx<'_>, bindings: &[BindingNamespace]) -> rquickjs::Result<bool> {
    let globals = ctx.globals();
    for ns in bindings {
        if globals.contains_key(ns.global.as_str())? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn fresh_engine(limits: &WorkerLimits) -> Result<(Runtime, Context), WorkerError> {
    let rt = Runtime::new()?;
    rt.set_memory_limit(limits.heap_bytes);
    rt.set_max_stack_size(limits.stack_bytes);
    // Unhandled rejections are the program's business; never print them
    // (stdout is the protocol).
    rt.set_host_promise_rejection_tracker(Some(Box::new(|_, _, _, _| {})));
    // No module loader is installed, so `import` cannot resolve anything.
    let context = Context::custom::<(
        Date,
        Eval,
        RegExpCompiler,
        RegExp,
        Json,
        Proxy,
        MapSet,
        TypedArrays,
        PromiseIntrinsic,
        WeakRef,
    )>(&rt)?;
    context.with(|ctx| -> rquickjs::Result<()> {
        let globals = ctx.globals();
        for name in REMOVED_GLOBALS {
            globals.remove(name)?;
        }
        Ok(())
    })?;
    Ok((rt, context))
}

fn eval_options(file: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.backtrace_barrier = true;
    options.filename = Some(file.to_owned());
    options
}

fn drive<'js, R: Read>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    table: &Rc<ShortcutTable>,
    spec: &RunSpec,
    bridged: bool,
    io: &mut Io<R>,
) -> Result<Finished, WorkerError> {
    if !bridged {
        for ns in &spec.bindings {
            if ctx.globals().contains_key(ns.global.as_str())? {
                return Ok(failed(
                    FailureKind::Exception,
                    format!(
                        "binding global `{}` collides with a built-in global",
                        ns.global
                    ),
                ));
            }
        }
        bridge::install(ctx, state, &spec.bindings)?;
    }
    let _oom_shape = oom_error_shape(ctx)?;
    if let Err(e) = shortcuts::install(ctx, state, table, &spec.program) {
        return setup_failed(ctx, state, e);
    }

    let main = match start_program(ctx, &spec.program) {
        Ok(main) => main,
        Err(Start::Thrown(thrown)) => return Ok(failure_from(ctx, state, thrown)),
        Err(Start::Engine(e)) => return Err(e.into()),
    };

    loop {
        while ctx.execute_pending_job() {
            if state.clock.exceeded() {
                break;
            }
        }
        if state.clock.exceeded() {
            return Ok(cpu_exceeded(state));
        }
        // A run ends once its promise has settled and none of its host
        // calls is in flight: a call the program did not await (an `emit`,
        // say) reaches the host and is answered before the run's `Done`.
        if state.outstanding_calls() == 0 {
            match main.state() {
                PromiseState::Resolved => {
                    let value: Value<'js> = main
                        .result()
                        .unwrap_or_else(|| Ok(Value::new_undefined(ctx.clone())))?;
                    return Ok(completion(ctx, state, value));
                }
                PromiseState::Rejected => {
                    let reason = match main.result::<Value<'js>>() {
                        Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                        Some(Ok(v)) => v,
                        Some(Err(e)) => return Err(e.into()),
                        None => Value::new_undefined(ctx.clone()),
                    };
                    return Ok(failure_from(ctx, state, reason));
                }
                // Pending, no job queued, nothing in flight: nothing can
                // ever settle it (X6). Fail now rather than at the deadline.
                PromiseState::Pending => {
                    return Ok(failed(
                        FailureKind::Timeout,
                        "the program is awaiting a promise that can never settle \
                         (no host call is in flight and no job is queued)",
                    ));
                }
            }
        }
        io.write(&state.take_outbox())?;
        let settled = match io.read()? {
            None => return Err(WorkerError::ParentGone),
            Some(ToWorker::Resolve { id, value }) => state.settle(ctx, id, Ok(value)),
            Some(ToWorker::Reject { id, error }) => state.settle(ctx, id, Err(error)),
            Some(_) => return Err(WorkerError::Protocol("expected a host reply during a run")),
        };
        // Settling can only throw when the heap is exhausted.
        if let Err(e) = settled {
            let thrown = caught(ctx, e)?;
            return Ok(failure_from(ctx, state, thrown));
        }
    }
}

/// A throw while installing the shortcuts (host code, before the program)
/// is the run's failure, never the worker's end.
fn setup_failed<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    e: rquickjs::Error,
) -> Result<Finished, WorkerError> {
    let thrown = caught(ctx, e)?;
    Ok(match failure_from(ctx, state, thrown) {
        Finished::Failed {
            mut failure,
            retire,
            ..
        } => {
            failure.message = clamp(format!(
                "the connector shortcuts could not be installed: {}",
                failure.message
            ));
            Finished::Failed {
                failure,
                retire,
                escaped: None,
            }
        }
        Finished::Value(_) => failed(
            FailureKind::Exception,
            "the connector shortcuts could not be installed",
        ),
    })
}

enum Start<'js> {
    Thrown(Value<'js>),
    Engine(rquickjs::Error),
}

/// Evaluates the program (P1) and returns the promise of its result.
fn start_program<'js>(ctx: &Ctx<'js>, program: &str) -> Result<Promise<'js>, Start<'js>> {
    let candidates = normalize::candidates(program);
    let value = match eval_program(ctx, &candidates.expression)? {
        Ok(v) => v,
        Err(expr_err) if is_syntax_error(&expr_err) => match eval_program(ctx, &candidates.body)? {
            Ok(v) => v,
            Err(body_err) => {
                return Err(Start::Thrown(if candidates.looks_like_expression {
                    expr_err
                } else {
                    body_err
                }));
            }
        },
        Err(thrown) => return Err(Start::Thrown(thrown)),
    };
    let value = match value.as_function() {
        Some(f) => match f.call::<_, Value<'js>>(()) {
            Ok(v) => v,
            Err(e) => return Err(Start::Thrown(caught(ctx, e).map_err(Start::Engine)?)),
        },
        None => value,
    };
    // An async function's own promise is driven as it is: resolving another
    // promise with it would look up `then`, which the program may have
    // replaced by now.
    let value = match value.try_into_promise() {
        Ok(promise) => return Ok(promise),
        Err(value) => value,
    };
    let (promise, resolve, _reject) = ctx.promise().map_err(Start::Engine)?;
    // Other values resolve like `await` would (thenables are followed).
    resolve.call::<_, ()>((value,)).map_err(Start::Engine)?;
    Ok(promise)
}

fn eval_program<'js>(
    ctx: &Ctx<'js>,
    source: &str,
) -> Result<Result<Value<'js>, Value<'js>>, Start<'js>> {
    match ctx.eval_with_options::<Value<'js>, _>(source, eval_options(PROGRAM_FILE)) {
        Ok(v) => Ok(Ok(v)),
        Err(e) => Ok(Err(caught(ctx, e).map_err(Start::Engine)?)),
    }
}

/// The pending exception for an `Error::Exception`, or the engine error.
fn caught<'js>(ctx: &Ctx<'js>, e: rquickjs::Error) -> Result<Value<'js>, rquickjs::Error> {
    match e {
        rquickjs::Error::Exception => Ok(ctx.catch()),
        other => Err(other),
    }
}

fn is_syntax_error(v: &Value<'_>) -> bool {
    v.as_object()
        .and_then(|o| o.get::<_, Value>("name").ok())
        .and_then(|n| n.as_string().and_then(|s| s.to_string().ok()))
        .is_some_and(|n| n == "SyntaxError")
}

fn cpu_exceeded(state: &RunState) -> Finished {
    failed(
        FailureKind::Timeout,
        format!(
            "the program used more than its {} ms guest CPU budget",
            state.limits.cpu_budget_ms
        ),
    )
}

/// The resolved value, converted to JSON text (P3, X9).
fn completion<'js>(ctx: &Ctx<'js>, state: &RunState, value: Value<'js>) -> Finished {
    match json::to_json(ctx, value, state.limits.max_value_bytes) {
        Ok(text) => Finished::Value(text),
        Err(ToJsonError::TooLarge { limit }) => failed(
            FailureKind::OutputLimit,
            format!("the program's result is larger than the {limit}-byte bound; return less data"),
        ),
        Err(ToJsonError::Thrown(e)) => {
            if state.clock.exceeded() {
                return cpu_exceeded(state);
            }
            match caught(ctx, e) {
                Ok(thrown) => failure_from(ctx, state, thrown),
                Err(e) => failed(FailureKind::Exception, e.to_string()),
            }
        }
        Err(other) => failed(
            FailureKind::InvalidOutput,
            other
                .describe("result")
                .unwrap_or_else(|| "the result cannot cross as JSON".into()),
        ),
    }
}

/// Classifies an uncaught throw: budget expiry, heap exhaustion, or the
/// program's own exception (with any typed fields as untrusted `thrown`).
fn failure_from<'js>(ctx: &Ctx<'js>, state: &RunState, thrown: Value<'js>) -> Finished {
    if state.clock.exceeded() {
        return cpu_exceeded(state);
    }
    let (name, message) = match thrown.as_object() {
        Some(obj) => (
            string_prop(ctx, obj, "name"),
            string_prop(ctx, obj, "message"),
        ),
        None => (None, None),
    };
    // When even its out-of-memory error (or that error's message) cannot
    // be allocated, the engine throws `null` (or the error without it).
    let oom = match (name.as_deref(), message.as_deref()) {
        (Some("InternalError"), Some("out of memory")) => true,
        (Some("InternalError"), None | Some("")) => heap_ran_out(ctx, state),
        _ => thrown.is_null() && heap_ran_out(ctx, state),
    };
    if oom {
        return Finished::Failed {
            failure: CodeRunFailure {
                kind: FailureKind::WorkerExit,
                message: format!(
                    "the program exhausted its {} MiB heap (out of memory)",
                    state.limits.heap_bytes / (1024 * 1024)
                ),
                host_error: None,
            },
            retire: true,
            escaped: None,
        };
    }
    let Some(obj) = thrown.as_object() else {
        return failed(FailureKind::Exception, render_primitive(ctx, &thrown));
    };
    let mut text = match (&name, &message) {
        (Some(n), Some(m)) if n != "Error" && !n.is_empty() => format!("{n}: {m}"),
        (_, Some(m)) => m.clone(),
        (Some(n), None) => n.clone(),
        (None, None) => match json::to_json(ctx, thrown.clone(), MAX_MESSAGE_BYTES) {
            Ok(Some(s)) => format!("Uncaught {s}"),
            _ => {
                let _ = ctx.catch();
                "Uncaught exception".to_owned()
            }
        },
    };
    if let Some(line) = program_line(ctx, obj) {
        text.push_str(&format!(" (line {line})"));
    }
    Finished::Failed {
        failure: CodeRunFailure {
            kind: FailureKind::Exception,
            message: clamp(text),
            host_error: None,
        },
        retire: false,
        escaped: state.escaped(ctx, &thrown),
    }
}

/// Keeps the engine's first shape for an `InternalError` alive during the
/// run, so that when the heap runs out the engine's error object needs no
/// new shape and allocating it always passes the collector first (see
/// [`heap_ran_out`]).
fn oom_error_shape<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Option<Object<'js>>> {
    let _ = rquickjs::Exception::throw_internal(ctx, "");
    let proto = ctx.catch().as_object().and_then(Object::get_prototype);
    proto
        .map(|p| Object::new_proto(ctx.clone(), Some(&p)))
        .transpose()
}

/// Whether this run's heap reached its limit. The collector's threshold is
/// never below the heap it last found alive plus a half, and the engine
/// collects before allocating an object above it: so when even its
/// out-of-memory error could not be allocated, the threshold is at least
/// the limit. A program whose live heap passed two thirds of the limit and
/// then threw `null` itself reads as out of memory too.
fn heap_ran_out(ctx: &Ctx<'_>, state: &RunState) -> bool {
    crate::sys::gc_threshold(ctx) >= state.limits.heap_bytes
}

fn string_prop<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str) -> Option<String> {
    match obj.get::<_, Value<'js>>(key) {
        Ok(v) => v.as_string().and_then(|s| s.to_string().ok()),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
}

/// The program line of the innermost stack frame, if it is in the program.
fn program_line<'js>(ctx: &Ctx<'js>, obj: &Object<'js>) -> Option<u32> {
    let stack = string_prop(ctx, obj, "stack")?;
    let marker = format!("{PROGRAM_FILE}:");
    let at = stack.find(&marker)? + marker.len();
    let digits: String = stack[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn render_primitive<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    if let Some(s) = v.as_string() {
        return s.to_string().unwrap_or_else(|_| "Uncaught string".into());
    }
    match json::to_json(ctx, v.clone(), MAX_MESSAGE_BYTES) {
        Ok(Some(s)) => format!("Uncaught {s}"),
        _ => {
            let _ = ctx.catch();
            format!("Uncaught {}", v.type_name())
        }
    }
}

fn clamp(mut s: String) -> String {
    if s.len() > MAX_MESSAGE_BYTES {
        let mut cut = MAX_MESSAGE_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Shortcuts;
    use crate::pool::PoolOptions;

    fn engine(cpu_budget_ms: u64) -> Engine {
        let mut limits = PoolOptions::new("unused", Vec::<String>::new()).limits();
        limits.cpu_budget_ms = cpu_budget_ms;
        Engine::new(limits, ShortcutTable::new(Shortcuts::default()))
    }

    fn namespace(global: &str) -> Vec<BindingNamespace> {
        vec![BindingNamespace {
            global: global.into(),
            functions: vec!["echo".into()],
        }]
    }

    /// As after runs that named `bindings`, the last two alike or not.
    fn after_runs(engine: &mut Engine, bindings: Vec<BindingNamespace>, steady: bool) {
        engine.spare = None;
        engine.last_bindings = Some(bindings);
        engine.steady = steady;
        engine.prepare().expect("prepare");
    }

    /// What `typeof <global>` is in the spare engine's context.
    fn type_in_spare(engine: &Engine, global: &str) -> String {
        let spare = engine.spare.as_ref().expect("a spare engine");
        spare.context.with(|ctx| {
            ctx.eval::<String, _>(format!("typeof {global}"))
                .expect("typeof evaluates")
        })
    }

    #[test]
    fn the_next_engine_comes_with_the_last_runs_bridge_installed() {
        let mut engine = engine(10_000);
        engine.prepare().expect("prepare");
        let spare = engine.spare.as_ref().expect("a spare engine");
        assert!(spare.bridge.is_none(), "no run has named bindings yet");
        assert_eq!(type_in_spare(&engine, "connecta"), "undefined");

        engine.next_call_id = 42;
        after_runs(&mut engine, namespace("connecta"), true);
        let spare = engine.spare.as_ref().expect("a spare engine");
        let (bindings, state) = spare
            .bridge
            .as_ref()
            .expect("the bridge is installed ahead");
        assert_eq!(bindings, &namespace("connecta"));
        assert_eq!(state.next_call_id(), 42, "call ids continue");
        assert_eq!(type_in_spare(&engine, "connecta"), "object");
        assert_eq!(type_in_spare(&engine, "console"), "object");
    }

    #[test]
    fn bindings_that_change_from_run_to_run_keep_a_bare_engine_ready() {
        let mut engine = engine(10_000);
        after_runs(&mut engine, namespace("connecta"), false);
        assert!(engine.spare.as_ref().expect("spare").bridge.is_none());
        assert_eq!(type_in_spare(&engine, "connecta"), "undefined");
        let (.., bridged) = engine.engine_for(&namespace("connecta")).expect("engine");
        assert!(!bridged, "a run on the bare engine installs its bridge");
        // Steady bindings get their bridge ahead; a run naming others gets
        // an engine of its own, without it.
        after_runs(&mut engine, namespace("connecta"), true);
        assert!(engine.spare.as_ref().expect("spare").bridge.is_some());
        let (_, context, _, bridged) = engine.engine_for(&namespace("tools")).expect("engine");
        assert!(!bridged);
        let connecta = context.with(|ctx| ctx.eval::<String, _>("typeof connecta"));
        assert_eq!(connecta.expect("typeof"), "undefined");
    }

    #[test]
    fn only_bindings_two_runs_named_alike_are_prepared() {
        let mut engine = engine(10_000);
        let mut after = |bindings: &str| {
            engine.note_bindings(namespace(bindings));
            engine.spare = None;
            engine.prepare().expect("prepare");
            engine.spare.as_ref().expect("spare").bridge.is_some()
        };
        assert!(!after("connecta"), "one run says nothing yet");
        assert!(after("connecta"));
        assert!(after("connecta"));
        assert!(!after("tools"), "a change keeps a bare engine ready");
        assert!(!after("connecta"));
        assert!(!after("tools"));
        assert!(after("tools"));
    }

    #[test]
    fn bindings_that_collide_with_a_builtin_are_left_for_the_run_to_report() {
        let mut engine = engine(10_000);
        after_runs(&mut engine, namespace("JSON"), true);
        let spare = engine.spare.as_ref().expect("a spare engine");
        assert!(spare.bridge.is_none());
        assert_eq!(type_in_spare(&engine, "console"), "undefined");
    }

    #[test]
    fn a_run_on_an_engine_made_ahead_has_its_whole_cpu_budget() {
        let mut engine = engine(5);
        after_runs(&mut engine, namespace("connecta"), true);
        // The worker's thread works on after the engine was made.
        let spin = std::time::Instant::now();
        let made = engine.spare.as_ref().and_then(|s| s.bridge.as_ref());
        let clock = made.expect("the bridge is installed ahead").1.clock.clone();
        while clock.used() <= Duration::from_millis(10) {
            assert!(spin.elapsed() < Duration::from_secs(10), "the clock moves");
        }
        assert!(clock.check(), "over its budget before the run");
        let (.., state, bridged) = engine.engine_for(&namespace("connecta")).expect("engine");
        assert!(bridged);
        assert!(!state.clock.exceeded());
        assert!(state.clock.used() < Duration::from_millis(5));
    }
}
