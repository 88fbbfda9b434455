//! The TypeScript code runtime (upstream `@deepseek-ai/dsh-code-runtime-worker-thread`'s
//! `WorkerThreadCodeRuntime`): [`TypeScriptRuntime`] type-strips each program with `swc_ts_fast_strip`
//! (the stripper Node's `stripTypeScriptTypes` wraps) and runs it in a fresh QuickJS runtime and context
//! (`rquickjs`) on a run thread of its own, with host bindings, a console shim, the busy/wall/heap/output limits and
//! the abort signal.
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
//! Spec: RUN-003 (strip before running), RUN-033 (language `typescript`), RUN-034 (fresh state per run);
//! the other RUN rules per file.

mod bindings;
mod console;
mod engine;
mod host;
mod ledger;
mod lossless;
mod pool;
mod strip;
mod timers;

#[cfg(test)]
mod tests;

// Contributors — files: `strip.rs` (wrap, strip, slice), `engine.rs` (runtime per run, event loop,
// limits), `host.rs` (meter, wakeups, pending host work), `bindings.rs` (namespaces and the rejection
// class), `lossless.rs` (the lossless-JSON boundary), `console.rs` + `prelude.js` (console shim,
// `util.inspect` subset), `timers.rs`, `ledger.rs` (the output ledger), `pool.rs` (the run threads).
// Measured choice and fidelity notes: `../shared/research/runtime-choice.md` (outside the crate).

use tokio_util::sync::CancellationToken;

use crate::code::{
    CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeLimits, CodeRuntimeMisuse,
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

/// The TypeScript [`CodeRuntime`]: language `typescript`, one fresh QuickJS runtime per run.
#[derive(Clone, Debug)]
pub struct TypeScriptRuntime {
    limits: CodeRuntimeLimits,
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
        Ok(Self { limits })
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

/// Strip and execute on a run thread (`pool.rs`: large stack, the caller's tokio runtime entered so binding
/// futures and timers use it).
fn run_on_thread(request: CodeRunRequest, limits: CodeRuntimeLimits, dropped: CancellationToken) -> CodeRunResult {
    let code = match strip::strip_program(&request.program) {
        Ok(code) => code,
        Err(message) => return ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Exception, message),
    };
    engine::execute(engine::RunSpec { code, namespaces: request.bindings, signal: request.signal, limits, dropped })
}

impl CodeRuntime for TypeScriptRuntime {
    fn language(&self) -> &str {
        "typescript"
    }

    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        let limits = self.limits;
        Box::pin(async move {
            Self::validate(&request)?;
            if request.signal.aborted() {
                let reason = request.signal.reason();
                return Ok(ledger::Ledger::new(limits.max_output_bytes).failure(CodeRunErrorKind::Abort, reason));
            }
            let dropped = CancellationToken::new();
            let guard = DropGuard(dropped.clone());
            let (tx, rx) = tokio::sync::oneshot::channel();
            let handle = tokio::runtime::Handle::try_current().ok();
            let spawned = pool::submit(Box::new(move || {
                let _entered = handle.as_ref().map(tokio::runtime::Handle::enter);
                let result = if handle.is_some() {
                    run_on_thread(request, limits, dropped)
                } else {
                    // No caller runtime (a plain executor): timers need a driven one, so the run brings its own.
                    match tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_time().build() {
                        Ok(rt) => {
                            let inner = rt.enter();
                            let result = run_on_thread(request, limits, dropped);
                            drop(inner);
                            result
                        }
                        Err(error) => ledger::Ledger::new(limits.max_output_bytes)
                            .failure(CodeRunErrorKind::WorkerExit, format!("worker error: {error}")),
                    }
                };
                let _ = tx.send(result);
            }));
            if let Err(error) = spawned {
                return Ok(ledger::Ledger::new(limits.max_output_bytes)
                    .failure(CodeRunErrorKind::WorkerExit, format!("worker error: {error}")));
            }
            let result = rx.await.unwrap_or_else(|_| {
                ledger::Ledger::new(limits.max_output_bytes)
                    .failure(CodeRunErrorKind::WorkerExit, "worker exited with code 1 before completing".to_owned())
            });
            drop(guard);
            Ok(result)
        })
    }
}
