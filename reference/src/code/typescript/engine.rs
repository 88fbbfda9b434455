//! One run in a fresh QuickJS runtime and context (upstream: one fresh worker per run), driven by a small
//! event loop on the run's own thread: the program's synchronous part and every promise job run as busy
//! time under the interrupt handler; binding futures and timers are polled between jobs, uncharged; the
//! thread parks when nothing can progress until a waker, the abort signal or the wall ceiling wakes it.
//!
//! Limits: the busy-time budget and the wall ceiling are checked by the interrupt handler (overshoot well
//! under a millisecond) and between host steps; the heap cap is a counting allocator whose failure ends
//! the run as `worker-exit` (terminal like upstream's isolate death, not a catchable error); an abort ends
//! it with `String(signal.reason)`. When the run ends every pending binding future and timer is dropped
//! before the engine is torn down, and only then is the result handed back.
//!
//! The program is compiled like upstream: `new AsyncFunction(...globals, ...errorClasses, "console",
//! "'use strict';\n" + code)` called with the namespaces, the error classes and the console shim.
//!
//! Spec: RUN-002 (async-function body), RUN-022 (exception text), RUN-023 (completion must be lossless),
//! RUN-027 (busy budget), RUN-028 (wall ceiling), RUN-031 (heap cap → worker-exit), RUN-053 (`process.exit` → worker-exit), RUN-032 (abort),
//! RUN-034 (fresh state per run). Unhandled rejections are uncaught errors, as in Node: `worker-exit`.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use rquickjs::function::Rest;
use rquickjs::{Constructor, Context, Ctx, Function, Promise, Runtime, Value as JsValue};
use serde_json::Value;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::budget::{CountingAlloc, HeapBudget, REJECTION_BYTES};
use super::host::{Entry, Handles, Host, KeyWaker, Meter, Terminal, Wakeup};
use super::ledger::Ledger;
use super::lossless::{snapshot, Intrinsics};
use super::{bindings, console, timers};
use crate::code::{CodeBindingNamespace, CodeRunErrorKind, CodeRunResult, CodeRuntimeLimits, RunSignal, ENVIRONMENT_RELEASED};
use crate::value::js_number_string;

/// The engine's own JavaScript stack limit (the run's thread is much larger).
const JS_STACK_BYTES: usize = 4 * 1024 * 1024;
/// Upstream's message when the worker's heap limit kills it.
pub(crate) const HEAP_EXIT_MESSAGE: &str = "worker error: Worker terminated due to reaching memory limit: JS heap out of memory";
/// Upstream's completion check message.
pub(crate) const COMPLETION_NOT_LOSSLESS: &str = "program completion must be lossless JSON";
/// Node's text for an unhandled rejection whose reason is not an error.
const UNHANDLED_REJECTION: &str = "This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason";

/// Promises rejected with no handler yet, in rejection order: `(identity, message, its charge)`. A
/// handler attached before the microtask queue drains removes the entry, as in Node. Each entry is
/// charged to the heap budget: a program rejecting in a loop would otherwise grow the host's list
/// without bound.
type Unhandled = Arc<std::sync::Mutex<Vec<(u64, String, super::budget::Charge)>>>;

fn identity(value: &JsValue<'_>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// What Node's worker reports for an unhandled rejection: the error's message, else its fixed text naming
/// the reason (`"str"`, `"#<Object>"`).
fn rejection_message<'js>(reason: &JsValue<'js>) -> String {
    if let Some(object) = reason.as_object() {
        if reason.is_error() {
            if let Ok(message) = object.get::<_, String>("message") {
                return message;
            }
        }
        let name = object
            .get_prototype()
            .and_then(|p| p.get::<_, rquickjs::Object<'js>>("constructor").ok())
            .and_then(|c| c.get::<_, String>("name").ok())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "Object".to_owned());
        return format!("{UNHANDLED_REJECTION} \"#<{name}>\".");
    }
    let text = if let Some(s) = reason.as_string() {
        s.to_string().unwrap_or_default()
    } else if reason.is_undefined() {
        "undefined".to_owned()
    } else if reason.is_null() {
        "null".to_owned()
    } else if let Some(b) = reason.as_bool() {
        b.to_string()
    } else if let Some(n) = reason.as_number() {
        js_number_string(n)
    } else {
        String::new()
    };
    format!("{UNHANDLED_REJECTION} \"{text}\".")
}

/// Waker key of the abort and drop watchers (entry keys start at 1).
const SIGNAL_KEY: u64 = super::host::SIGNAL_KEY_RESERVED;

/// Everything one run needs.
pub(crate) struct RunSpec {
    pub(crate) code: String,
    pub(crate) namespaces: Vec<Arc<CodeBindingNamespace>>,
    pub(crate) signal: RunSignal,
    pub(crate) limits: CodeRuntimeLimits,
    pub(crate) dropped: CancellationToken,
    /// The owner's release token, for a persistent run.
    pub(crate) released: Option<CancellationToken>,
    /// When the caller asked for the run: the wall ceiling counts from here (a run that waited to be
    /// admitted, `pool.rs`, has that much less of it).
    pub(crate) requested: std::time::Instant,
}

/// How the program's part of a run ended.
enum Outcome {
    Completed(Option<Value>),
    InvalidOutput,
    Threw(String),
    Ended(Terminal),
    /// The engine itself failed (could not start, an uncaught error in a timer callback): upstream's
    /// worker `error` event.
    WorkerError(String),
}

/// A QuickJS runtime and context: made for one run (per-call), or kept across the runs of one owner
/// (persistent, `repl.rs`). The heap cap covers the engine's whole life.
pub(crate) struct Engine {
    // Field order is drop order: the context before its runtime.
    context: Context,
    runtime: Runtime,
    budget: Arc<HeapBudget>,
    persistent: bool,
}

impl Engine {
    /// A fresh engine under `limits`' heap cap; `Err` carries the engine's own message.
    pub(crate) fn new(limits: &CodeRuntimeLimits, persistent: bool) -> Result<Self, String> {
        let budget = HeapBudget::new(usize::try_from(limits.max_heap_bytes).unwrap_or(usize::MAX));
        let runtime = Runtime::new_with_alloc(CountingAlloc::new(Arc::clone(&budget))).map_err(|e| e.to_string())?;
        runtime.set_max_stack_size(JS_STACK_BYTES);
        let context = Context::full(&runtime).map_err(|e| e.to_string())?;
        Ok(Self { context, runtime, budget, persistent })
    }

    /// Run one program to its result. Blocking: call on the run's own thread. The flag says whether a
    /// persistent engine may take the owner's next run: only after the program completed on its own.
    pub(crate) fn run(&self, spec: &RunSpec) -> (CodeRunResult, bool) {
        let limits = spec.limits;
        let meter = Arc::new(Meter::new(
            limits.compute_ms,
            limits.max_wall_ms,
            Arc::clone(&self.budget),
            spec.signal.clone(),
            spec.dropped.clone(),
            spec.released.clone(),
            spec.requested,
        ));
        let handler_meter = meter.clone();
        self.runtime.set_interrupt_handler(Some(Box::new(move || handler_meter.should_stop())));
        let unhandled: Unhandled = Arc::default();
        let tracked = unhandled.clone();
        let budget = Arc::clone(&self.budget);
        self.runtime.set_host_promise_rejection_tracker(Some(Box::new(move |_ctx, promise, reason, handled| {
            let key = identity(&promise);
            // The message is read before locking: reading it may run program code that rejects again.
            let message = (!handled).then(|| rejection_message(&reason));
            let mut list = tracked.lock().unwrap_or_else(|p| p.into_inner());
            match message {
                None => list.retain(|(k, _, _)| *k != key),
                // Refused: the run is over as the heap cap, and the entry is not kept.
                Some(message) => {
                    if let Some(charge) = budget.charge(message.len() + REJECTION_BYTES) {
                        list.push((key, message, charge));
                    }
                }
            }
        })));
        let (ledger, outcome, kept) = self.context.with(|ctx| run_in(&ctx, spec, &meter, &unhandled, self.persistent));
        self.runtime.set_interrupt_handler(None);
        self.runtime.set_host_promise_rejection_tracker(None);
        let reusable = kept && !self.budget.oom.load(Ordering::Relaxed) && !spec.signal.aborted();
        // A limit can be crossed after the program settled but before the host saw it; upstream's host
        // decides on whichever event it handles first, which here is the settled program.
        (finish(ledger, outcome, &spec.signal, &limits, meter.exit_code()), reusable)
    }
}

/// Run one program in a fresh engine (per-call). Blocking: call on the run's own thread.
pub(crate) fn execute(spec: &RunSpec) -> CodeRunResult {
    match Engine::new(&spec.limits, false) {
        Ok(engine) => engine.run(spec).0,
        Err(message) => finish(Ledger::new(spec.limits.max_output_bytes), Outcome::WorkerError(message), &spec.signal, &spec.limits, 0),
    }
}

/// The failure message of a run that reached its wall-clock ceiling.
pub(crate) fn wall_message(limits: &CodeRuntimeLimits) -> String {
    format!("wall-clock ceiling reached ({}ms)", js_number_string(limits.max_wall_ms))
}

/// `exit_code`: what `process.exit` was called with, for an [`Terminal::Exit`] ending.
fn finish(ledger: Ledger, outcome: Outcome, signal: &RunSignal, limits: &CodeRuntimeLimits, exit_code: i32) -> CodeRunResult {
    // The caller's abort wins over what the program did once it happened: the program learns of it only
    // through bindings rejected because the run is over (`... result discarded`), and upstream's host
    // settles on the abort event before it reads the worker's next message. Until the runtime returns,
    // only the caller aborts this signal (the bridge aborts it for settlement afterwards).
    if signal.aborted() && matches!(outcome, Outcome::Completed(_) | Outcome::Threw(_) | Outcome::InvalidOutput) {
        if let Outcome::Completed(Some(value)) = outcome {
            crate::value::dismantle(value);
        }
        return ledger.failure(CodeRunErrorKind::Abort, signal.reason());
    }
    match outcome {
        Outcome::Completed(value) => ledger.success(value),
        Outcome::InvalidOutput => ledger.worker_failure(CodeRunErrorKind::InvalidOutput, COMPLETION_NOT_LOSSLESS.to_owned()),
        Outcome::Threw(message) => ledger.worker_failure(CodeRunErrorKind::Exception, message),
        Outcome::WorkerError(message) => ledger.failure(CodeRunErrorKind::WorkerExit, format!("worker error: {message}")),
        Outcome::Ended(terminal) => match terminal {
            Terminal::Busy => ledger.failure(
                CodeRunErrorKind::Timeout,
                format!("compute budget exhausted ({}ms busy)", js_number_string(limits.compute_ms)),
            ),
            Terminal::Wall => ledger.failure(CodeRunErrorKind::Timeout, wall_message(limits)),
            Terminal::Abort => ledger.failure(CodeRunErrorKind::Abort, signal.reason()),
            Terminal::OutputLimit => ledger.limit(),
            Terminal::HeapCap => ledger.failure(CodeRunErrorKind::WorkerExit, HEAP_EXIT_MESSAGE.to_owned()),
            Terminal::Dropped | Terminal::Retired => ledger.failure(CodeRunErrorKind::Abort, "run dropped".to_owned()),
            Terminal::Released => ledger.failure(CodeRunErrorKind::Abort, ENVIRONMENT_RELEASED.to_owned()),
            Terminal::Exit => ledger.failure(
                CodeRunErrorKind::WorkerExit,
                format!("worker exited with code {exit_code} before completing"),
            ),
        },
    }
}

fn run_in<'js>(ctx: &Ctx<'js>, spec: &RunSpec, meter: &Arc<Meter>, unhandled: &Unhandled, persistent: bool) -> (Ledger, Outcome, bool) {
    let wakeup = Arc::new(Wakeup::new());
    let host = Rc::new(Host::new(meter.clone(), wakeup, Ledger::new(spec.limits.max_output_bytes)));
    // A panic in host code (a binding's constructor, say) must still reach `clear` below: engine values left
    // in the host at teardown would abort the process.
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| drive(ctx, &host, spec, unhandled, persistent)))
        .unwrap_or_else(|_| Outcome::WorkerError("the runtime's host code panicked".to_owned()));
    let kept = persistent && keep(ctx, &host, &outcome);
    // Nothing the program started survives the run: pending calls and timers are dropped here, before
    // the engine goes away and before the result is handed back. A persistent run's host is retired
    // first, so a binding or timer of this run that a later run calls starts nothing.
    meter.terminate(Terminal::Retired);
    host.clear();
    let _ = ctx.catch();
    let ledger = host.ledger.replace(Ledger::new(0));
    (ledger, outcome, kept)
}

/// After a persistent run whose program settled on its own: copy its top-level declarations onto the
/// global object (`repl.rs`). Whether the engine may be kept.
fn keep<'js>(ctx: &Ctx<'js>, host: &Host<'js>, outcome: &Outcome) -> bool {
    if !matches!(outcome, Outcome::Completed(_) | Outcome::Threw(_) | Outcome::InvalidOutput) || host.meter.terminal().is_some() {
        return false;
    }
    let keep = host.repl.borrow().as_ref().and_then(|slot| slot.get::<_, Function<'js>>("keep").ok());
    let Some(keep) = keep else { return false };
    let kept = host.meter.busy(|| keep.call::<_, ()>(()));
    if kept.is_err() {
        let _ = ctx.catch();
    }
    kept.is_ok() && host.meter.terminal().is_none()
}

/// Either the program's promise or how the run ended while starting it.
enum Started<'js> {
    Running(Promise<'js>),
    Done(Outcome),
}

fn start<'js>(ctx: &Ctx<'js>, host: &Rc<Host<'js>>, spec: &RunSpec, persistent: bool) -> Started<'js> {
    let setup = (|| -> rquickjs::Result<(Constructor<'js>, Vec<JsValue<'js>>, Vec<JsValue<'js>>)> {
        let intrinsics = Intrinsics::capture(ctx)?;
        // A persistent run keeps its top-level declarations (`repl.rs`): the keep statement shares the
        // strict-mode line, so the program's line numbers stay its own.
        let keep = if persistent { super::repl::keep_statement(&super::repl::top_level_names(&spec.code)) } else { String::new() };
        let body = format!("'use strict';{}{keep}\n{}", if keep.is_empty() { "" } else { " " }, spec.code);
        let prelude = console::load(ctx, host, &body)?;
        *host.handles.borrow_mut() =
            Some(Handles { intrinsics, error: prelude.error.clone(), describe: prelude.describe.clone() });
        timers::install(ctx, host)?;
        let (mut names, mut values) = bindings::install(ctx, host, &prelude.make_error_class, &spec.namespaces)?;
        names.push("console".to_owned());
        values.push(prelude.console);
        if persistent {
            // Globals, not parameters: a function kept from an earlier run finds this run's `tools`,
            // error classes and console when it is called.
            let globals = ctx.globals();
            for (name, value) in names.drain(..).zip(values.drain(..)) {
                globals.set(name, value)?;
            }
            let slot = rquickjs::Object::new(ctx.clone())?;
            let define: Function<'js> = ctx.eval("Object.defineProperty")?;
            slot.set("define", define)?;
            slot.set("global", globals)?;
            *host.repl.borrow_mut() = Some(slot.clone());
            names.push(super::repl::SLOT.to_owned());
            values.push(slot.into_value());
        }
        let async_function: Constructor<'js> = ctx.eval("(async function () {}).constructor")?;
        let mut parameters = Vec::with_capacity(names.len() + 1);
        for name in names {
            parameters.push(rquickjs::String::from_str(ctx.clone(), &name)?.into_value());
        }
        parameters.push(rquickjs::String::from_str(ctx.clone(), &body)?.into_value());
        Ok((async_function, parameters, values))
    })();
    let (async_function, parameters, values) = match setup {
        Ok(parts) => parts,
        Err(error) => return Started::Done(ended_or(host, || Outcome::WorkerError(engine_error(ctx, &error)))),
    };
    // Compile (a syntax error the stripper let through is the program's exception), then call.
    let body: Function<'js> = match async_function.construct((Rest(parameters),)) {
        Ok(body) => body,
        Err(_) => return Started::Done(ended_or(host, || threw(ctx, host))),
    };
    match body.call::<_, JsValue<'js>>((Rest(values),)) {
        Ok(value) => match value.into_promise() {
            Some(promise) => Started::Running(promise),
            None => Started::Done(Outcome::WorkerError("program did not return a promise".to_owned())),
        },
        Err(_) => Started::Done(ended_or(host, || threw(ctx, host))),
    }
}

/// The terminal reason when the run has ended, else `otherwise()`.
fn ended_or<'js>(host: &Host<'js>, otherwise: impl FnOnce() -> Outcome) -> Outcome {
    match host.meter.terminal() {
        Some(terminal) => Outcome::Ended(terminal),
        None => otherwise(),
    }
}

fn engine_error<'js>(ctx: &Ctx<'js>, error: &rquickjs::Error) -> String {
    if error.is_exception() {
        let thrown = ctx.catch();
        if let Some(message) = thrown.as_object().and_then(|o| o.get::<_, String>("message").ok()) {
            return message;
        }
    }
    error.to_string()
}

/// The pending exception rendered as upstream renders a thrown program value.
fn threw<'js>(ctx: &Ctx<'js>, host: &Host<'js>) -> Outcome {
    let thrown = ctx.catch();
    describe(ctx, host, thrown)
}

fn describe<'js>(ctx: &Ctx<'js>, host: &Host<'js>, thrown: JsValue<'js>) -> Outcome {
    let describe = host.handles.borrow().as_ref().map(|h| h.describe.clone());
    let Some(describe) = describe else {
        return Outcome::Threw("program threw an unrenderable value".to_owned());
    };
    let text = host.meter.busy(|| describe.call::<_, String>((thrown,)));
    match text {
        Ok(text) => Outcome::Threw(text),
        Err(_) => {
            let _ = ctx.catch();
            ended_or(host, || Outcome::Threw("program threw an unrenderable value".to_owned()))
        }
    }
}

fn drive<'js>(ctx: &Ctx<'js>, host: &Rc<Host<'js>>, spec: &RunSpec, unhandled: &Unhandled, persistent: bool) -> Outcome {
    let meter = host.meter.clone();
    let promise = match meter.busy(|| start(ctx, host, spec, persistent)) {
        Started::Running(promise) => promise,
        Started::Done(outcome) => return outcome,
    };
    let signal_waker = Waker::from(Arc::new(KeyWaker { key: SIGNAL_KEY, wakeup: host.wakeup.clone() }));
    let mut aborted: Pin<Box<WaitForCancellationFutureOwned>> = Box::pin(spec.signal.token().clone().cancelled_owned());
    let mut dropped: Pin<Box<WaitForCancellationFutureOwned>> = Box::pin(spec.dropped.clone().cancelled_owned());
    let mut released: Option<Pin<Box<WaitForCancellationFutureOwned>>> =
        spec.released.as_ref().map(|token| Box::pin(token.clone().cancelled_owned()));
    loop {
        // Promise jobs (the program's continuations), as busy time.
        meter.busy(|| {
            while ctx.execute_pending_job() {
                if meter.terminal().is_some() {
                    break;
                }
            }
        });
        if let Some(terminal) = meter.terminal() {
            return Outcome::Ended(terminal);
        }
        match promise.state() {
            rquickjs::promise::PromiseState::Pending => {}
            rquickjs::promise::PromiseState::Resolved => return completed(ctx, host, &promise),
            rquickjs::promise::PromiseState::Rejected => {
                let _ = promise.result::<JsValue<'js>>();
                let reason = ctx.catch();
                return describe(ctx, host, reason);
            }
        }
        // The microtask queue is drained and the program still runs: a rejection nobody handled is
        // uncaught, which kills upstream's worker.
        let first_unhandled = unhandled.lock().unwrap_or_else(|p| p.into_inner()).first().map(|(_, m, _)| m.clone());
        if let Some(message) = first_unhandled {
            return Outcome::WorkerError(message);
        }
        // Watch the abort signal and the caller's drop so either wakes a parked loop.
        let mut watch = TaskContext::from_waker(&signal_waker);
        let _ = aborted.as_mut().poll(&mut watch);
        let _ = dropped.as_mut().poll(&mut watch);
        if let Some(released) = released.as_mut() {
            let _ = released.as_mut().poll(&mut watch);
        }
        if meter.should_stop() {
            return Outcome::Ended(meter.terminal().unwrap_or(Terminal::Abort));
        }
        let keys = host.wakeup.take();
        if keys.is_empty() {
            host.wakeup.park(meter.wall_left());
            continue;
        }
        for key in keys {
            if key == SIGNAL_KEY {
                continue;
            }
            if let Some(outcome) = poll_entry(ctx, host, key) {
                return outcome;
            }
            if meter.terminal().is_some() {
                break;
            }
        }
    }
}

/// Poll one pending entry; settle its promise or fire its timer when ready.
fn poll_entry<'js>(ctx: &Ctx<'js>, host: &Rc<Host<'js>>, key: u64) -> Option<Outcome> {
    let entry = host.pending.borrow_mut().remove(&key)?;
    let waker = Waker::from(Arc::new(KeyWaker { key, wakeup: host.wakeup.clone() }));
    let mut task = TaskContext::from_waker(&waker);
    match entry {
        Entry::Call { mut future, resolve, reject, member, class, charge } => {
            let polled = std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut task)));
            let outcome = match polled {
                Ok(Poll::Pending) => {
                    host.pending.borrow_mut().insert(key, Entry::Call { future, resolve, reject, member, class, charge });
                    return None;
                }
                Ok(Poll::Ready(outcome)) => outcome,
                Err(_) => Err("binding panicked".to_owned()),
            };
            drop(future);
            drop(charge);
            let settled = host.meter.busy(|| bindings::settle(ctx, host, outcome, resolve, reject, &member, class.as_ref()));
            if settled.is_err() {
                let _ = ctx.catch();
            }
            None
        }
        Entry::Timer { mut sleep, callback, args, repeat, charge } => {
            if sleep.as_mut().poll(&mut task).is_pending() {
                host.pending.borrow_mut().insert(key, Entry::Timer { sleep, callback, args, repeat, charge });
                return None;
            }
            if let Some(period) = repeat {
                // Re-armed before the callback runs, so `clearInterval` inside it cancels the next tick. The
                // interval keeps its charge; a fired timeout's is released here.
                let next = Box::pin(tokio::time::sleep(period));
                let entry = Entry::Timer { sleep: next, callback: callback.clone(), args: args.clone(), repeat, charge };
                host.pending.borrow_mut().insert(key, entry);
                host.wakeup.push(key);
            } else {
                drop(charge);
            }
            let fired = host.meter.busy(|| callback.call::<_, JsValue<'js>>((Rest(args),)));
            match fired {
                Ok(_) => None,
                // An exception escaping a timer callback is uncaught: upstream's worker dies of it.
                Err(_) => Some(ended_or(host, || {
                    let thrown = ctx.catch();
                    let message = thrown
                        .as_object()
                        .and_then(|o| o.get::<_, String>("message").ok())
                        .or_else(|| thrown.as_string().and_then(|s| s.to_string().ok()))
                        .unwrap_or_else(|| "Unhandled error".to_owned());
                    Outcome::WorkerError(message)
                })),
            }
        }
    }
}

fn completed<'js>(ctx: &Ctx<'js>, host: &Host<'js>, promise: &Promise<'js>) -> Outcome {
    let value = match promise.result::<JsValue<'js>>() {
        Some(Ok(value)) => value,
        _ => {
            let _ = ctx.catch();
            return Outcome::InvalidOutput;
        }
    };
    if value.is_undefined() {
        return Outcome::Completed(None);
    }
    let intrinsics = host.handles.borrow().as_ref().map(|h| h.intrinsics.clone());
    let Some(intrinsics) = intrinsics else { return Outcome::InvalidOutput };
    let snapshot = host.meter.busy(|| snapshot(ctx, value, &intrinsics, &|| host.meter.should_stop()));
    if snapshot.is_none() {
        let _ = ctx.catch();
    }
    if let Some(terminal) = host.meter.terminal() {
        if let Some(value) = snapshot {
            crate::value::dismantle(value);
        }
        return Outcome::Ended(terminal);
    }
    match snapshot {
        Some(value) => Outcome::Completed(Some(value)),
        None => Outcome::InvalidOutput,
    }
}
