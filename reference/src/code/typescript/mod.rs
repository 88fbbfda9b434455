//! The TypeScript code runtime (upstream `@deepseek-ai/dsh-code-runtime-worker-thread`'s
//! `WorkerThreadCodeRuntime`): [`TypeScriptRuntime`] type-strips each program with `swc_ts_fast_strip`
//! (the stripper Node's `stripTypeScriptTypes` wraps) and runs it in a fresh QuickJS runtime and context
//! (`rquickjs`) on a run thread of its own, with host bindings, a console shim, the busy/wall/heap/output limits and
//! the abort signal. It runs in the host process: the heap cap covers the engine's heap and what a program
//! makes the host hold (timers, pending binding calls, log bookkeeping), and the caller is answered by the
//! wall ceiling plus 250 ms whatever the run thread is doing (`code/mod.rs`, "What a program can reach").
//! A run so answered while in a step the engine cannot interrupt is abandoned: its thread finishes that
//! step, holding what the run held, after the caller moved on; [`abandoned_runs`] counts them, and a new
//! run waits (within its wall ceiling) while [`MAX_ABANDONED_RUNS`] are (`pool.rs`).
//!
//! Globals the program sees: the ECMAScript built-ins of QuickJS (quickjs-ng), the binding namespaces and
//! their error classes, `console` (`log`, `info`, `warn`, `error`, `debug`), `setTimeout`, `clearTimeout`,
//! `setInterval`, `clearInterval` (tokio timers; handles are numbers), `queueMicrotask` (the engine's), and
//! a `process` stub (`process.stdout.write` / `process.stderr.write` captured as log entries, an empty
//! `process.env`). Not provided (Node globals upstream's worker has): the rest of `process`, `Buffer`,
//! `fetch`, `structuredClone`, `setImmediate`, `require`.
//!
//! Known fidelity gaps against upstream (V8 in a Node worker): exception texts carry QuickJS stack frames
//! (the `Name: message` first line matches; frames and columns differ, and no host paths appear); syntax
//! errors the stripper lets through carry QuickJS's wording; strings with lone surrogates cannot cross the
//! JSON boundary (rejected as not lossless); engine error messages are QuickJS's (`cannot read property
//! 'x' of null` where V8 says `Cannot read properties of null (reading 'x')`), except that an uncaught
//! `not a function` names its dotted callee as V8 does; `process` is a stub (`stdout`/`stderr` writes and
//! an empty `env`, no `getBuiltinModule`). Like upstream's worker, an unhandled rejection (or an error
//! thrown by a timer callback) while the program runs ends the run as `worker-exit` with Node's text.
//!
//! Spec: RUN-003 (strip before running), RUN-033 (language `typescript`), RUN-034 (fresh state per run),
//! RUN-056 (config bounds checked when the runtime is built),
//! CDM-036..CDM-041 (persistent environments, `repl.rs` and `code/retention.rs`);
//! the other RUN rules per file.

mod bindings;
mod budget;
mod console;
mod engine;
mod host;
mod lazy;
mod ledger;
mod lossless;
mod pool;
mod repl;
mod strip;
mod timers;

pub use pool::{abandoned_runs, MAX_ABANDONED_RUNS};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod persistent_tests;

// Contributors — files: `strip.rs` (wrap, strip, slice), `engine.rs` (runtime per run, event loop,
// limits), `host.rs` (meter, wakeups, pending host work), `bindings.rs` (namespaces and the rejection
// class), `lazy.rs` (large namespaces as a proxy, functions made on first use), `lossless.rs` (the lossless-JSON boundary), `console.rs` + `prelude.js` (console shim,
// `util.inspect` subset), `timers.rs`, `ledger.rs` (the output ledger), `pool.rs` (the run threads),
// `budget.rs` (one heap budget for the engine's allocator and what the host holds for the program).
// Measured choice and fidelity notes: `../shared/research/runtime-choice.md` (outside the crate).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::code::retention::Retained;
use crate::code::{
    CodeExecutionMode, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeLimits, CodeRuntimeMisuse,
    StateOwner, ENVIRONMENT_RELEASED,
};
use crate::callback::BoxFuture;
use crate::value::js_number_string;

/// Upstream `MIN_OUTPUT_BYTES`: an empty logs array plus an empty JSON failure message.
const MIN_OUTPUT_BYTES: u64 = 4;
/// Upstream `MAX_TIMER_DELAY_MS` (Node clamps a longer `setTimeout` delay to 1 ms).
const MAX_TIMER_DELAY_MS: f64 = 2_147_483_647.0;

const PREFIX: &str = "dsh-code-runtime-worker-thread: ";

fn misuse(message: String) -> CodeRuntimeMisuse {
    CodeRuntimeMisuse { message: format!("{PREFIX}{message}") }
}

/// The TypeScript [`CodeRuntime`]: language `typescript`, one fresh QuickJS runtime per run — or, in
/// [`CodeExecutionMode::PersistentInMemory`] ([`with_execution_mode`](Self::with_execution_mode)), one
/// resident runtime per [`StateOwner`] whose globals and top-level declarations carry over between that
/// owner's runs. Clones share their persistent environments; dropping the last clone releases them.
#[derive(Clone)]
pub struct TypeScriptRuntime {
    limits: CodeRuntimeLimits,
    mode: CodeExecutionMode,
    retained: Arc<Environments>,
}

/// The resident engines, released when the last clone of the runtime goes.
#[derive(Default)]
struct Environments(Retained<engine::Engine>);

impl Drop for Environments {
    fn drop(&mut self) {
        self.0.release_all();
    }
}

impl std::fmt::Debug for TypeScriptRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypeScriptRuntime").field("limits", &self.limits).field("mode", &self.mode).finish_non_exhaustive()
    }
}

impl TypeScriptRuntime {
    /// A runtime with these limits, validated as upstream validates its config: every limit a positive
    /// finite number, `max_output_bytes` at least 4, `max_wall_ms` at most 2^31-1. Upstream's names appear in
    /// the messages (`maxHeapBytes` stands for upstream's `maxOldGenerationSizeMb`).
    pub fn new(limits: CodeRuntimeLimits) -> Result<Self, CodeRuntimeMisuse> {
        #[allow(clippy::cast_precision_loss)]
        let fields = [
            ("computeMs", limits.compute_ms),
            ("maxWallMs", limits.max_wall_ms),
            ("maxOutputBytes", limits.max_output_bytes as f64),
            ("maxHeapBytes", limits.max_heap_bytes as f64),
        ];
        for (key, value) in fields {
            if !(value.is_finite() && value > 0.0) {
                return Err(misuse(format!("config.{key} must be a positive number, got {}", js_number_string(value))));
            }
        }
        if limits.max_output_bytes < MIN_OUTPUT_BYTES || limits.max_output_bytes > 9_007_199_254_740_991 {
            return Err(misuse(format!(
                "config.maxOutputBytes must be a safe integer of at least {MIN_OUTPUT_BYTES}, got {}",
                limits.max_output_bytes
            )));
        }
        if limits.max_wall_ms > MAX_TIMER_DELAY_MS {
            return Err(misuse(format!(
                "config.maxWallMs must be at most {} (Node clamps a longer setTimeout delay to 1ms), got {}",
                js_number_string(MAX_TIMER_DELAY_MS),
                js_number_string(limits.max_wall_ms)
            )));
        }
        Ok(Self { limits, mode: CodeExecutionMode::PerCall, retained: Arc::default() })
    }

    /// The same runtime in `mode`. In [`CodeExecutionMode::PersistentInMemory`] a request naming a
    /// [`StateOwner`] runs in that owner's resident engine: what the program declares at its top level
    /// (`let`, `const`, `var`, `function`, `class`) — as live bindings, a `const` constant (CDM-049) — and
    /// what it sets on `globalThis` is there for the owner's next run, in which the namespaces, their error classes and `console` are globals rather
    /// than parameters (so a kept function finds the current ones). The heap cap covers the engine's whole
    /// life. A binding or timer function a later run calls through a value kept from an earlier run
    /// belongs to that earlier run: it starts nothing, and fails at once (the binding call rejects, the
    /// timer function throws an `Error`; CDM-048).
    #[must_use]
    pub fn with_execution_mode(mut self, mode: CodeExecutionMode) -> Self {
        self.mode = mode;
        self
    }

    /// The limits every run gets.
    pub fn limits(&self) -> CodeRuntimeLimits {
        self.limits
    }

    /// Upstream `validateBindings` (shared by every backend: `code/names.rs`).
    fn validate(request: &CodeRunRequest) -> Result<(), CodeRuntimeMisuse> {
        crate::code::names::check_bindings(request).map_err(misuse)
    }
}

/// Cancels the run when the caller drops `run`'s future before it resolves.
struct DropGuard(CancellationToken);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Strip and execute (on a run thread): in a fresh engine, or in the owner's resident one.
fn run_on_thread(
    request: CodeRunRequest,
    limits: CodeRuntimeLimits,
    dropped: CancellationToken,
    resident: Option<Resident>,
    requested: std::time::Instant,
) -> (CodeRunResult, Option<engine::Engine>) {
    let code = match strip::strip_program(&request.program) {
        Ok(code) => code,
        Err(message) => {
            // Nothing ran: a resident engine stays as it was.
            let kept = resident.and_then(|r| r.engine);
            return (ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Exception, message), kept);
        }
    };
    let released = resident.as_ref().map(|r| r.released.clone());
    let namespaces = request.bindings.into_iter().map(Arc::new).collect();
    let spec = engine::RunSpec { code, namespaces, signal: request.signal, limits, dropped, released, requested };
    let Some(resident) = resident else { return (engine::execute(&spec), None) };
    let engine = match resident.engine {
        Some(engine) => engine,
        None => match engine::Engine::new(&limits, true) {
            Ok(engine) => engine,
            Err(message) => {
                return (
                    ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::WorkerExit, format!("worker error: {message}")),
                    None,
                );
            }
        },
    };
    let (result, reusable) = engine.run(&spec);
    (result, reusable.then_some(engine))
}

/// A persistent run's environment: the owner's engine (`None`: start one) and its release token.
struct Resident {
    engine: Option<engine::Engine>,
    released: CancellationToken,
}

impl CodeRuntime for TypeScriptRuntime {
    fn language(&self) -> &str {
        "typescript"
    }

    fn isolation(&self) -> &str {
        "in-process"
    }

    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        let limits = self.limits;
        let owner = request.state_owner.clone().filter(|_| self.mode == CodeExecutionMode::PersistentInMemory);
        let retained = Arc::clone(&self.retained);
        Box::pin(async move {
            Self::validate(&request)?;
            if request.signal.aborted() {
                let reason = request.signal.reason();
                return Ok(ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Abort, reason));
            }
            let Some(owner) = owner else { return Ok(submit(request, limits, None).await.0) };
            // The owner's turn (runs of one owner take turns); an abort or a release while waiting ends it.
            let turn = tokio::select! {
                turn = retained.0.turn(&owner) => turn,
                () = request.signal.token().cancelled() => {
                    return Ok(ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Abort, request.signal.reason()));
                }
            };
            let Some(mut turn) = turn else {
                return Ok(ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Abort, ENVIRONMENT_RELEASED.to_owned()));
            };
            let resident = Resident { engine: turn.take(), released: turn.released().clone() };
            let (result, engine) = submit(request, limits, Some(resident)).await;
            turn.finish(engine);
            Ok(result)
        })
    }

    fn execution_mode(&self) -> CodeExecutionMode {
        self.mode
    }

    fn release(&self, owner: &StateOwner) -> bool {
        self.retained.0.release(owner)
    }

    fn retained(&self) -> Vec<StateOwner> {
        self.retained.0.live()
    }

    fn run_limits(&self) -> Option<CodeRuntimeLimits> {
        Some(self.limits)
    }
}

/// How long past its wall ceiling (counted from the request) a run's caller waits for the run thread.
const WALL_BACKSTOP: Duration = Duration::from_millis(250);

/// Run on a run thread (`pool.rs`: large stack, the caller's tokio runtime entered so binding futures and
/// timers use it); the resident engine comes back when it may be kept. The run starts once fewer than
/// [`MAX_ABANDONED_RUNS`] runs are abandoned (`pool.rs`); the wait counts against its wall ceiling.
async fn submit(request: CodeRunRequest, limits: CodeRuntimeLimits, resident: Option<Resident>) -> (CodeRunResult, Option<engine::Engine>) {
    let requested = std::time::Instant::now();
    let dropped = CancellationToken::new();
    let guard = DropGuard(dropped.clone());
    let handle = tokio::runtime::Handle::try_current().ok();
    let has_runtime = handle.is_some();
    let exited = || {
        (
            ledger::Ledger::new(limits.max_output_bytes)
                .failure(CodeRunErrorKind::WorkerExit, "worker exited with code 1 before completing".to_owned()),
            None,
        )
    };
    let admitted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = Arc::clone(&admitted);
    let work = async move {
        pool::admission().await;
        started.store(true, std::sync::atomic::Ordering::Release);
        let (caller, thread) = pool::tether();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let spawned = pool::submit(Box::new(move || {
            // Dropped last: the job is done once what it held is gone (an unread answer included).
            let _thread = thread;
            let _entered = handle.as_ref().map(tokio::runtime::Handle::enter);
            let outcome = if handle.is_some() {
                run_on_thread(request, limits, dropped, resident, requested)
            } else {
                // No caller runtime (a plain executor): timers need a driven one, so the run brings its own.
                match tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_time().build() {
                    Ok(rt) => {
                        let inner = rt.enter();
                        let outcome = run_on_thread(request, limits, dropped, resident, requested);
                        drop(inner);
                        outcome
                    }
                    Err(error) => (
                        ledger::Ledger::new(limits.max_output_bytes)
                            .failure(CodeRunErrorKind::WorkerExit, format!("worker error: {error}")),
                        None,
                    ),
                }
            };
            let _ = tx.send(outcome);
        }));
        if let Err(error) = spawned {
            caller.answered();
            return (ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::WorkerExit, format!("worker error: {error}")), None);
        }
        let answer = rx.await;
        caller.answered();
        answer.unwrap_or_else(|_| exited())
    };
    // The backstop: the engine checks the wall ceiling while the program runs, but a step it cannot
    // interrupt (one long built-in, turning an 80 MB completion into JSON) can outlast it. The caller gets
    // its answer at the ceiling plus WALL_BACKSTOP whatever the run thread is doing; dropping `work` leaves
    // the run abandoned (`pool.rs`, counted until its thread finishes) and dropping `guard` tells that
    // thread to stop at its next check; what it held is freed when it does. Only under a runtime (the one
    // the run's timers use); the captured logs of such a run are not shown. `tokio::time::sleep` panics on
    // a runtime without its time driver: no backstop there.
    let backstop = Duration::try_from_secs_f64(limits.max_wall_ms / 1000.0)
        .ok()
        .filter(|_| has_runtime)
        .and_then(|wall| std::panic::catch_unwind(|| Box::pin(tokio::time::sleep(wall + WALL_BACKSTOP))).ok());
    let outcome = match backstop {
        Some(backstop) => tokio::select! {
            answer = work => answer,
            () = backstop => {
                let mut message = engine::wall_message(&limits);
                if !admitted.load(std::sync::atomic::Ordering::Acquire) {
                    // Said, not hidden: the program never ran (fail closed, `pool.rs`).
                    message.push_str(&format!(
                        " before the run started: {} earlier runs abandoned at their wall ceilings still hold their threads",
                        pool::MAX_ABANDONED_RUNS
                    ));
                }
                (ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Timeout, message), None)
            }
        },
        None => work.await,
    };
    drop(guard);
    outcome
}
