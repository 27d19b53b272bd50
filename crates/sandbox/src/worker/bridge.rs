//! The guest side of the host bridge: binding namespaces, host calls,
//! typed host errors and the captured `console`.
//!
//! This module owns every global a program can see besides the engine's own
//! intrinsics. Everything is built from engine primitives before the program
//! runs, so a program that pollutes `Object.prototype`, `Function.prototype`,
//! `Promise`, `JSON` or a namespace object hurts only itself: the bridge never
//! looks anything up through the program's globals.
//!
//! Must never: hand the program a capability that does not go through
//! [`RunState::send_call`] — no timers, no modules, no I/O, no environment.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use rquickjs::function::Rest;
use rquickjs::object::Property;
use rquickjs::proxy::{ProxyHandler, ProxyProperty, ProxyReceiver, ProxyTarget};
use rquickjs::{Ctx, Exception, Function, Object, Persistent, Proxy, Value};
use serde_json::value::RawValue;

use super::json::{self, ToJsonError};
use crate::protocol::{self, FromWorker, REMEMBERED_FAILURES, WorkerLimits, result_too_large};
use crate::{BindingNamespace, HostError, TypedFailure};

/// How deep an escaped error's `cause` chain is followed to find a host
/// failure.
const MAX_CAUSE_DEPTH: usize = 8;

/// Buffered output is written out once it reaches this size.
const FLUSH_AT: usize = 64 * 1024;

/// Console methods captured, in the order they are installed.
const CONSOLE_METHODS: [&str; 5] = ["log", "info", "debug", "warn", "error"];

/// The promise capability of one outstanding host call.
struct Pending {
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

/// Measures guest CPU on the worker thread's CPU clock, so time blocked on
/// host replies is excluded (contract L5).
pub struct CpuClock {
    start: Cell<Duration>,
    budget: Duration,
    exceeded: Cell<bool>,
}

impl CpuClock {
    pub fn start(budget: Duration) -> Self {
        Self {
            start: Cell::new(thread_cpu_time()),
            budget,
            exceeded: Cell::new(false),
        }
    }

    /// Starts the budget again from now: a clock made with an engine ahead
    /// of its run counts from the run's start. Only before the run starts:
    /// it also clears `exceeded`.
    pub fn restart(&self) {
        self.start.set(thread_cpu_time());
        self.exceeded.set(false);
    }

    /// Called by the engine's interrupt handler; `true` stops the program.
    pub fn check(&self) -> bool {
        if !self.exceeded.get() && self.used() > self.budget {
            self.exceeded.set(true);
        }
        self.exceeded.get()
    }

    pub fn exceeded(&self) -> bool {
        self.exceeded.get()
    }

    pub fn used(&self) -> Duration {
        thread_cpu_time().saturating_sub(self.start.get())
    }
}

fn thread_cpu_time() -> Duration {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// Everything one run shares between the drive loop and the bridge closures.
pub struct RunState {
    pub limits: Rc<WorkerLimits>,
    pub clock: Rc<CpuClock>,
    /// Frames waiting to be written; flushed before the worker blocks.
    outbox: RefCell<Vec<u8>>,
    pending: RefCell<HashMap<u64, Pending>>,
    /// The `Error`s typed host rejections became, newest last, with their
    /// call ids: how an escaped failure is told by identity (contract E6).
    rejections: RefCell<VecDeque<(u64, Persistent<Object<'static>>)>>,
    /// Call ids are unique for the worker's lifetime (see the protocol docs).
    next_id: Cell<u64>,
    log_bytes: Cell<usize>,
    logs_full: Cell<bool>,
}

impl RunState {
    pub fn new(limits: Rc<WorkerLimits>, clock: Rc<CpuClock>, first_call_id: u64) -> Self {
        Self {
            limits,
            clock,
            outbox: RefCell::new(Vec::new()),
            pending: RefCell::new(HashMap::new()),
            rejections: RefCell::new(VecDeque::new()),
            next_id: Cell::new(first_call_id),
            log_bytes: Cell::new(0),
            logs_full: Cell::new(false),
        }
    }

    pub fn next_call_id(&self) -> u64 {
        self.next_id.get()
    }

    pub fn outstanding_calls(&self) -> usize {
        self.pending.borrow().len()
    }

    /// Takes the frames buffered so far.
    pub fn take_outbox(&self) -> Vec<u8> {
        std::mem::take(&mut *self.outbox.borrow_mut())
    }

    /// Buffers a frame; past [`FLUSH_AT`] bytes the buffer is written out
    /// at once, so a program that logs or calls in a tight loop cannot grow
    /// the worker's memory. A failed write means the parent is gone; the
    /// next read sees end-of-file and the worker exits.
    fn queue(&self, frame: Vec<u8>) {
        let mut outbox = self.outbox.borrow_mut();
        outbox.extend_from_slice(&frame);
        if outbox.len() >= FLUSH_AT {
            let _ = super::write_stdout(&outbox);
            outbox.clear();
        }
    }

    /// Drops every outstanding promise capability. Must run before the
    /// engine is torn down: persistent handles may not outlive the runtime.
    pub fn forget_pending(&self) {
        self.pending.borrow_mut().clear();
        self.rejections.borrow_mut().clear();
    }

    /// The call id of the host rejection `thrown` is, or reaches through
    /// its `cause` chain: object identity, never the text of a message.
    pub fn escaped<'js>(&self, ctx: &Ctx<'js>, thrown: &Value<'js>) -> Option<u64> {
        let rejections = self.rejections.borrow();
        let mut current = thrown.clone();
        for _ in 0..MAX_CAUSE_DEPTH {
            let obj = current.as_object()?.clone();
            for (id, error) in rejections.iter().rev() {
                if error.clone().restore(ctx).ok().as_ref() == Some(&obj) {
                    return Some(*id);
                }
            }
            current = match obj.get::<_, Value<'js>>("cause") {
                Ok(cause) => cause,
                Err(_) => {
                    let _ = ctx.catch();
                    return None;
                }
            };
        }
        None
    }

    fn push_log(&self, mut line: String) {
        if self.logs_full.get() {
            return;
        }
        let limit = self.limits.max_log_bytes;
        let used = self.log_bytes.get();
        let room = limit.saturating_sub(used);
        let overflow = line.len() > room;
        if overflow {
            let mut cut = room;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        self.log_bytes.set(used + line.len());
        if !line.is_empty() || !overflow {
            self.queue_log(line);
        }
        if overflow {
            self.logs_full.set(true);
            self.queue_log(format!(
                "[log output truncated: the sandbox keeps at most {limit} bytes of logs per run]"
            ));
        }
    }

    fn queue_log(&self, line: String) {
        if let Ok(frame) = protocol::encode(&FromWorker::Log { line }) {
            self.queue(frame);
        }
    }

    fn send_call(&self, global: &str, function: &str, args: &str, pending: Pending) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.pending.borrow_mut().insert(id, pending);
        self.queue(protocol::encode_call(id, global, function, args));
        id
    }

    /// Settles one host call from the parent's reply. Replies to ids this run
    /// is not waiting for (a reply that raced with an earlier `Done`) are ignored.
    pub fn settle<'js>(
        &self,
        ctx: &Ctx<'js>,
        id: u64,
        reply: Result<Box<RawValue>, HostError>,
    ) -> rquickjs::Result<()> {
        let Some(pending) = self.pending.borrow_mut().remove(&id) else {
            return Ok(());
        };
        let resolve = pending.resolve.restore(ctx)?;
        let reject = pending.reject.restore(ctx)?;
        match reply {
            Ok(raw) if raw.get().len() > self.limits.max_result_bytes => {
                let err = plain_error(ctx, &result_too_large(self.limits.max_result_bytes))?;
                reject.call::<_, ()>((err,))
            }
            Ok(raw) => match ctx.json_parse(raw.get()) {
                Ok(value) => resolve.call::<_, ()>((value,)),
                Err(rquickjs::Error::Exception) => {
                    let thrown = ctx.catch();
                    reject.call::<_, ()>((thrown,))
                }
                Err(e) => Err(e),
            },
            Err(host) => {
                let err = host_error(ctx, &host)?;
                if host.typed.is_some() {
                    let mut rejections = self.rejections.borrow_mut();
                    if rejections.len() == REMEMBERED_FAILURES {
                        rejections.pop_front();
                    }
                    rejections.push_back((id, Persistent::save(ctx, err.clone())));
                }
                reject.call::<_, ()>((err,))
            }
        }
    }
}

/// A plain `Error(message)` built from the engine's intrinsic, whatever the
/// program did to the global `Error`.
pub fn plain_error<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Result<Value<'js>> {
    Ok(Exception::from_message(ctx.clone(), message)?.into_value())
}

/// A rejected host call as the program sees it: an `Error` whose own
/// `code`, `retryable`, `details`, `retryAfterMs` and `nextAction` are the
/// typed failure's, as the host sent them.
pub fn host_error<'js>(ctx: &Ctx<'js>, error: &HostError) -> rquickjs::Result<Object<'js>> {
    let obj = Exception::from_message(ctx.clone(), &error.message)?.into_object();
    let Some(typed) = &error.typed else {
        return Ok(obj);
    };
    // Parsed by the engine from the host's own JSON (the intrinsic parser,
    // whatever the program did to `JSON`).
    let Ok(text) = serde_json::to_string(typed) else {
        return Ok(obj);
    };
    let fields = ctx.json_parse(text)?;
    if let Some(fields) = fields.as_object() {
        for field in fields.props::<String, Value<'js>>() {
            let (key, value) = field?;
            // Defined, not assigned: a setter the program planted on
            // `Object.prototype` never sees these.
            obj.prop(
                key.as_str(),
                Property::from(value).writable().configurable().enumerable(),
            )?;
        }
    }
    Ok(obj)
}

/// Installs `console` and one namespace per binding on a fresh context.
pub fn install<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    bindings: &[BindingNamespace],
) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let freeze: Function<'js> = globals.get::<_, Object<'js>>("Object")?.get("freeze")?;

    let console = Object::new(ctx.clone())?;
    for method in CONSOLE_METHODS {
        let st = state.clone();
        let f = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            console_write(&ctx, &st, args.0)
        })?
        .with_name(method)?;
        console.set(method, f)?;
    }
    globals.set("console", console)?;

    for ns in bindings {
        let target = Object::new_proto(ctx.clone(), None)?;
        for name in &ns.functions {
            let f = host_function(ctx, state, &ns.global, name)?;
            target.prop(name.as_str(), Property::from(f).enumerable())?;
        }
        freeze.call::<_, ()>((target.clone(),))?;
        // A null-prototype handler: a program cannot add traps through
        // `Object.prototype.set` and friends.
        let handler = ProxyHandler::from_object(Object::new_proto(ctx.clone(), None)?)?;
        let global = ns.global.clone();
        handler.set_getter(
            move |target: ProxyTarget<'js>, key: ProxyProperty<'js>, _r: ProxyReceiver<'js>| {
                namespace_get(&global, target, key)
            },
        )?;
        let proxy = Proxy::new(ctx.clone(), target, handler)?;
        globals.prop(ns.global.as_str(), Property::from(proxy).enumerable())?;
    }
    Ok(())
}

/// `ns.<any>`: the declared function, or a function whose call fails with
/// `Unknown function ns.<name>` (contract E6, X8). Symbols read as `undefined`.
fn namespace_get<'js>(
    global: &str,
    target: ProxyTarget<'js>,
    key: ProxyProperty<'js>,
) -> rquickjs::Result<Value<'js>> {
    if key.is_symbol() {
        return Ok(Value::new_undefined(target.0.ctx().clone()));
    }
    let name = key.to_string()?;
    // The target has a null prototype: only declared (own) names are found.
    let declared: Value<'js> = target.0.get(name.as_str())?;
    if declared.is_function() {
        return Ok(declared);
    }
    let ctx = target.0.ctx().clone();
    let message = format!("Unknown function {global}.{name}");
    let f = Function::new(ctx.clone(), move |ctx: Ctx<'js>| rejected(&ctx, &message))?;
    Ok(f.into_value())
}

fn rejected<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Result<Value<'js>> {
    let (promise, _resolve, reject) = ctx.promise()?;
    reject.call::<_, ()>((plain_error(ctx, message)?,))?;
    Ok(promise.into_value())
}

/// A declared host function: serializes its arguments (bounded), sends a
/// `call` frame and returns the promise the parent's reply settles.
fn host_function<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    global: &str,
    name: &str,
) -> rquickjs::Result<Function<'js>> {
    let st = state.clone();
    let global = global.to_owned();
    let fname = name.to_owned();
    Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
        call_host(&ctx, &st, &global, &fname, args.0)
    })?
    .with_name(name)
}

/// One host call of `global.function(...args)`: the promise its reply
/// settles, or one already rejected when the call cannot be sent.
pub fn call_host<'js>(
    ctx: &Ctx<'js>,
    st: &RunState,
    global: &str,
    function: &str,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<Value<'js>> {
    let (promise, resolve, reject) = ctx.promise()?;
    if st.outstanding_calls() >= st.limits.max_inflight_calls {
        let refusal = HostError {
            message: format!(
                "too many host calls in flight (at most {}); await some before starting more",
                st.limits.max_inflight_calls
            ),
            typed: Some(TypedFailure {
                code: "budget_exceeded".into(),
                retryable: false,
                retry_after_ms: None,
                details: [("budget".to_owned(), "calls_in_flight".into())]
                    .into_iter()
                    .collect(),
                next_action: None,
            }),
        };
        reject.call::<_, ()>((host_error(ctx, &refusal)?,))?;
        return Ok(promise.into_value());
    }
    match json::args_to_json(ctx, args, st.limits.max_arg_bytes) {
        Ok(text) => {
            let pending = Pending {
                resolve: Persistent::save(ctx, resolve),
                reject: Persistent::save(ctx, reject),
            };
            st.send_call(global, function, &text, pending);
        }
        Err(ToJsonError::Thrown(e)) => {
            if st.clock.exceeded() {
                return Err(e);
            }
            let thrown = ctx.catch();
            reject.call::<_, ()>((thrown,))?;
        }
        Err(ToJsonError::TooLarge { limit }) => {
            // Refused before anything crosses; names no address (L6).
            let msg = format!(
                "the host call's arguments are larger than the {limit}-byte bound; pass less data"
            );
            reject.call::<_, ()>((plain_error(ctx, &msg)?,))?;
        }
        Err(other) => {
            let detail = other.describe("arguments").unwrap_or_default();
            let msg = format!("the host call's arguments cannot cross the bridge: {detail}");
            reject.call::<_, ()>((plain_error(ctx, &msg)?,))?;
        }
    }
    Ok(promise.into_value())
}

/// `console.*`: strings as they are, other values JSON-rendered (contract X4).
fn console_write<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<()> {
    if state.logs_full.get() {
        return Ok(());
    }
    let room = state
        .limits
        .max_log_bytes
        .saturating_sub(state.log_bytes.get());
    let mut line = String::new();
    for (i, v) in args.into_iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        render(ctx, state, v, &mut line)?;
        if line.len() > room {
            break;
        }
    }
    state.push_log(line);
    Ok(())
}

fn render<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    v: Value<'js>,
    out: &mut String,
) -> rquickjs::Result<()> {
    if let Some(s) = v.as_string() {
        out.push_str(&s.to_string().unwrap_or_else(|_| "[invalid string]".into()));
        return Ok(());
    }
    if v.is_undefined() {
        out.push_str("undefined");
        return Ok(());
    }
    let type_name = v.type_name();
    let rendered = if v.is_function() || v.is_symbol() || v.is_big_int() {
        None
    } else {
        match ctx.json_stringify(v) {
            Ok(Some(s)) => s.to_string().ok(),
            Ok(None) => None,
            Err(rquickjs::Error::Exception) => {
                let thrown = ctx.catch();
                if state.clock.exceeded() {
                    return Err(ctx.throw(thrown));
                }
                None
            }
            Err(e) => return Err(e),
        }
    };
    match rendered {
        Some(s) => out.push_str(&s),
        None => {
            out.push('[');
            out.push_str(type_name);
            out.push(']');
        }
    }
    Ok(())
}
