//! The code-runtime seam (upstream `@deepseek-ai/dsh-code-runtime`): [`CodeRuntime`] runs one
//! model-written program against host async bindings and reports logs, the completion value or a typed
//! failure ([`CodeRunError`], upstream's kinds and texts). Runtimes know nothing about tools or sessions;
//! the `run_code` tool that hosts them owns those concerns.
//!
//! Backends, each behind a cargo feature (default on): `typescript` (QuickJS through `rquickjs`, programs
//! type-stripped by `swc_ts_fast_strip`) and `python` (a fresh `python3 -I` subprocess per run).
//!
//! # What a program can reach
//!
//! Programs are written by a model: hostile input. Each backend's posture, exactly (`PythonIsolation` is
//! [`python::PythonIsolation`]; the pieces of the Python boundary are listed in its runtime's docs):
//!
//! | | TypeScript (`TypeScriptRuntime`) | Python, `PythonIsolation::Contained` (the default) | Python, `PythonIsolation::Host` (opt-in) |
//! |---|---|---|---|
//! | where a program runs | QuickJS inside the host process, on a run thread | its own process, forked from the runtime's fork server | its own process, forked likewise |
//! | host files | none: the runtime offers no file API | read-only, beneath the interpreter's import paths and the system library directories (Landlock); `/dev/null` writable; no other write anywhere | whatever the host's user may read and write |
//! | network | none: no socket API | no socket at all (seccomp), TCP refused (Landlock) | whatever the host's user may open |
//! | processes | none: no process API | none can be started (fork, clone, exec refused) | may start them; they are killed with the run's process group at settlement, unless they leave the group |
//! | other processes | unreachable | cannot signal or ptrace anything outside its own run (Landlock scoping), cannot read other processes' `/proc` | whatever the host's user may signal |
//! | memory | the heap cap covers QuickJS's heap and what a program makes the host hold (timers, pending calls, logs); abandoned runs (below) are bounded in count, each within its own cap | the address-space cap of its one process bounds everything it can start | the cap is per process: children are not bounded together |
//! | time | busy budget and wall ceiling | CPU budget, wall ceiling (start-up included, a wedged fork server replaced) | the same |
//! | after the run | nothing of it runs once its thread finishes; a run whose caller was answered by the wall backstop (ceiling + 250 ms) while in a step the engine cannot interrupt — one long built-in such as an 80 MB `repeat`, turning a huge completion into JSON — keeps its thread, CPU and memory until that step ends (abandoned); a new run starts only while fewer than `MAX_ABANDONED_RUNS` (2) are, else it waits, the wait counted against its wall ceiling | nothing: killed at settlement; the runs die with their fork server, the fork server with the host, however it dies | children that left the process group may survive |
//! | not contained | a bug in QuickJS or in the host functions is a bug in the host process (one address space); the time one built-in that neither allocates nor polls the interrupt handler takes (`Array(2 ** 32 - 1).join("")`: minutes), during which its abandoned run keeps a thread busy and, with `MAX_ABANDONED_RUNS` such runs, new runs wait and end at their wall ceiling unstarted | kernel bugs reachable through the calls it may make; reading the allowed directories; the metadata (`stat`) of any path; its share of the CPU within its budget | everything in the rows above |
//! | without kernel support | — | the runtime refuses to be built (Landlock ABI 6 and seccomp filters are required), naming what is missing | runs anyway |
//!
//! Spec: RUN-* (the code-runtime rules of `spec/rules/code-run.yaml` and `code-run-runtimes.yaml`).

use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::callback::BoxFuture;

/// One host binding: receives the program's argument (`None` = the program passed `undefined` / nothing)
/// as lossless JSON already checked by the runtime, resolves to the value handed back to the program or to
/// a failure message. A failure reaches the program as an instance of the namespace's error class.
pub type BindingFn = Arc<dyn Fn(Option<Value>) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// Upstream `CodeBindingErrorClass`: the rejection class a namespace materializes in the program
/// (`ToolCallError`), with the own property naming the failed binding (`toolName`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeBindingErrorClass {
    /// The global class name (e.g. `ToolCallError`).
    pub name: String,
    /// The own property carrying the binding's name (e.g. `toolName`).
    pub member_name_property: String,
}

/// Upstream `CodeBindingNamespace`: one global object (`tools`) whose methods are host bindings, in
/// declaration order.
#[derive(Clone)]
pub struct CodeBindingNamespace {
    /// The global the program sees (e.g. `tools`).
    pub global: String,
    /// The bindings in declaration order: `(name, binding)` pairs (`vec![..].into()`), or shared names
    /// and one dispatcher ([`CodeBindings::dispatch`]), which a host builds in constant time per run.
    pub functions: CodeBindings,
    /// The namespace's rejection class, when it declares one.
    pub error_class: Option<CodeBindingErrorClass>,
}

impl fmt::Debug for CodeBindingNamespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeBindingNamespace")
            .field("global", &self.global)
            .field("functions", &self.functions)
            .field("error_class", &self.error_class)
            .finish()
    }
}

/// An abort signal with a reason, as a JavaScript `AbortSignal` carries one: runtimes report an abort as
/// `String(signal.reason)`. Cloning shares the signal.
#[derive(Clone, Debug, Default)]
pub struct RunSignal {
    token: CancellationToken,
    reason: Arc<Mutex<Option<String>>>,
}

/// `String(reason)` of an `AbortController.abort()` called without a reason (a `DOMException`).
pub const DEFAULT_ABORT_REASON: &str = "AbortError: This operation was aborted";

impl RunSignal {
    /// A fresh, unaborted signal.
    pub fn new() -> Self {
        Self::default()
    }

    /// Abort with `reason` (the first abort's reason wins; later calls do nothing).
    pub fn abort(&self, reason: impl Into<String>) {
        {
            let mut slot = self.reason.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_some() {
                return;
            }
            *slot = Some(reason.into());
        }
        self.token.cancel();
    }

    /// The abort's reason, `None` while the signal has not aborted.
    pub fn abort_reason(&self) -> Option<String> {
        self.reason.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the signal has aborted.
    pub fn aborted(&self) -> bool {
        self.token.is_cancelled()
    }

    /// `String(signal.reason)`: the abort's reason, or `"undefined"` while not aborted.
    pub fn reason(&self) -> String {
        let slot = self.reason.lock().unwrap_or_else(|p| p.into_inner());
        slot.clone().unwrap_or_else(|| "undefined".to_owned())
    }

    /// The token that is cancelled when the signal aborts (await `cancelled()` on it).
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

/// Upstream `CodeRunRequest`: one program, its bindings and its abort signal, and (seed 002's
/// `stateOwner`) who owns the environment it runs in.
#[derive(Clone, Debug, Default)]
pub struct CodeRunRequest {
    /// The program text as the model wrote it (the body of an async function).
    pub program: String,
    /// The binding namespaces, in order.
    pub bindings: Vec<CodeBindingNamespace>,
    /// Aborting it ends the run with an `abort` failure whose message is `String(reason)`.
    pub signal: RunSignal,
    /// The owner of the environment to run in. A runtime in
    /// [`CodeExecutionMode::PersistentInMemory`] keeps one environment per owner across runs (until
    /// [`CodeRuntime::release`]); a per-call runtime, or a request without an owner, runs fresh and ignores
    /// it.
    pub state_owner: Option<StateOwner>,
}

/// How a runtime treats program state between runs (seed 002: `executionMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodeExecutionMode {
    /// Every run starts in a fresh environment (the default, and upstream's only mode).
    #[default]
    PerCall,
    /// Runs that name the same [`StateOwner`] share one resident environment: what a program declares at
    /// its top level (variables, functions, classes, imports) and what it puts on the global object are
    /// there for the owner's next run. The environment lives until [`CodeRuntime::release`] (or the
    /// runtime is dropped), never expiring on idle time; a run that does not end with the program's own
    /// completion (a timeout, an abort, an output overflow, a worker exit) discards it, and the owner's
    /// next run starts fresh. Runs of one owner take turns; runs of different owners overlap freely.
    PersistentInMemory,
}

impl CodeExecutionMode {
    /// Seed 002's spelling: `per-call`, `persistent-in-memory`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PerCall => "per-call",
            Self::PersistentInMemory => "persistent-in-memory",
        }
    }
}

/// Who owns a persistent environment (seed 002's `stateOwner`): an opaque key the caller chooses, such as
/// an (agent, provider) pair. Equal keys share one environment.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateOwner(String);

impl StateOwner {
    /// The owner named `key`.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StateOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The abort message of a run whose persistent environment was released while it ran.
pub const ENVIRONMENT_RELEASED: &str = "environment released";

/// Upstream's failure kinds (`CodeRunError.kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodeRunErrorKind {
    /// The program threw, or could not be compiled (a type-strip or syntax error).
    Exception,
    /// The run's signal aborted (or the runtime was disposed).
    Abort,
    /// The busy-time budget or the wall-clock ceiling.
    Timeout,
    /// The combined output ledger (`maxOutputBytes`) was exceeded.
    OutputLimit,
    /// The completion value is not lossless JSON.
    InvalidOutput,
    /// The isolate died (heap cap, a crash): upstream's worker exit.
    WorkerExit,
}

impl CodeRunErrorKind {
    /// Upstream's spelling: `exception`, `abort`, `timeout`, `output-limit`, `invalid-output`,
    /// `worker-exit`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Exception => "exception",
            Self::Abort => "abort",
            Self::Timeout => "timeout",
            Self::OutputLimit => "output-limit",
            Self::InvalidOutput => "invalid-output",
            Self::WorkerExit => "worker-exit",
        }
    }
}

impl fmt::Display for CodeRunErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed run: its kind and upstream's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRunError {
    /// The failure kind.
    pub kind: CodeRunErrorKind,
    /// The message (an exception's stack text, a budget message, `String(reason)` for an abort, ...).
    pub message: String,
}

/// Upstream `CodeRunResult`: the captured logs, then either the completion value (absent when the program
/// returned `undefined` / `None`) or a failure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodeRunResult {
    /// One entry per console call / `print`, in order.
    pub logs: Vec<String>,
    /// The completion value, when the program returned one.
    pub value: Option<Value>,
    /// The failure, when the run failed.
    pub error: Option<CodeRunError>,
}

/// Contract misuse, which upstream's `run()` rejects with instead of resolving (a disposed runtime, an
/// invalid binding namespace), with upstream's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRuntimeMisuse {
    /// Upstream's message.
    pub message: String,
}

impl fmt::Display for CodeRuntimeMisuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CodeRuntimeMisuse {}

/// Budgets of one run (upstream `WorkerThreadCodeRuntime.Config`, shared by both backends).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodeRuntimeLimits {
    /// Busy (CPU-bound) time budget in milliseconds: `compute budget exhausted (<n>ms busy)`.
    pub compute_ms: f64,
    /// Wall-clock ceiling in milliseconds: `wall-clock ceiling reached (<n>ms)`.
    pub max_wall_ms: f64,
    /// The combined output ledger in bytes (logs and the completion value as JSON).
    pub max_output_bytes: u64,
    /// Heap cap in bytes (a hit ends the run as `worker-exit`). The TypeScript runtime counts against it
    /// what a program makes the host hold besides the engine's own heap (pending timers and binding calls,
    /// captured logs): `typescript/budget.rs`.
    pub max_heap_bytes: u64,
    /// The most text a transport hands the model for one run, in bytes (`None`: no cap, upstream's
    /// behaviour). Applied where that text is produced — a failed run's `code run failed (...)` message
    /// and the rendered `{ logs, result? }` — not to the run's result itself: past the cap the text keeps
    /// its first `cap` bytes (on a character boundary) and ends with [`render::cut_marker`]'s
    /// `…[dsh: <total> bytes, <cut> cut]`.
    pub max_model_text_bytes: Option<u64>,
}

impl CodeRuntimeLimits {
    /// The same limits with a busy-time budget of `budget`.
    pub fn with_compute(mut self, budget: std::time::Duration) -> Self {
        self.compute_ms = budget.as_secs_f64() * 1000.0;
        self
    }

    /// The same limits with a wall-clock ceiling of `ceiling`.
    pub fn with_max_wall(mut self, ceiling: std::time::Duration) -> Self {
        self.max_wall_ms = ceiling.as_secs_f64() * 1000.0;
        self
    }

    /// The same limits with an output ledger of `bytes`.
    pub fn with_max_output_bytes(mut self, bytes: u64) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// The same limits with a heap cap of `bytes`.
    pub fn with_max_heap_bytes(mut self, bytes: u64) -> Self {
        self.max_heap_bytes = bytes;
        self
    }

    /// The same limits with the text handed to the model capped at `bytes` (see
    /// [`max_model_text_bytes`](Self::max_model_text_bytes)).
    pub fn with_max_model_text(mut self, bytes: u64) -> Self {
        self.max_model_text_bytes = Some(bytes);
        self
    }
}

impl Default for CodeRuntimeLimits {
    fn default() -> Self {
        Self {
            compute_ms: 60_000.0,
            max_wall_ms: 600_000.0,
            max_output_bytes: 64 * 1024 * 1024,
            max_heap_bytes: 512 * 1024 * 1024,
            max_model_text_bytes: None,
        }
    }
}

/// A code runtime backend (upstream `ctx.codeRuntime`). Program, budget, abort and substrate failures
/// resolve in [`CodeRunResult`]; only contract misuse is an `Err`. A run's futures never outlive it:
/// when `run` resolves, nothing the program started is still alive.
pub trait CodeRuntime: Send + Sync + 'static {
    /// The program language (`typescript`, `python`); selects the SDK renderer and the `run_code` flavor.
    fn language(&self) -> &str;

    /// The execution substrate, as a lowercase identifier (upstream's `isolation` descriptor: informational,
    /// for deployments and diagnostics; the posture table above says what each of ours contains). Ours:
    /// `in-process` (TypeScript), `contained-process` and `process` (Python, by [`python::PythonIsolation`]).
    /// A runtime that does not say is `unspecified`.
    fn isolation(&self) -> &str {
        "unspecified"
    }

    /// Run one program.
    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>>;

    /// How this runtime treats state between runs; [`CodeExecutionMode::PerCall`] unless it says otherwise.
    fn execution_mode(&self) -> CodeExecutionMode {
        CodeExecutionMode::PerCall
    }

    /// Release the persistent environment of `owner`: a run still in it ends as an `abort` with
    /// [`ENVIRONMENT_RELEASED`], and the environment (its process, its engine) is gone before this returns
    /// or, for a run in flight, as soon as that run has settled. Returns whether there was one; releasing
    /// an owner twice, or one that never ran, does nothing. A per-call runtime has nothing to release.
    fn release(&self, owner: &StateOwner) -> bool {
        let _ = owner;
        false
    }

    /// The owners whose persistent environments are alive now (busy or idle), sorted.
    fn retained(&self) -> Vec<StateOwner> {
        Vec::new()
    }

    /// The limits every run of this runtime gets, when it has such limits: transports read
    /// [`CodeRuntimeLimits::max_model_text_bytes`] from them. Both built-in backends answer; the default
    /// is `None` (no model-text cap), so a runtime of another kind overrides this to have its cap honoured.
    fn run_limits(&self) -> Option<CodeRuntimeLimits> {
        None
    }
}

/// The model-text cap of `runtime` (`None`: none, or a runtime that does not say).
pub(crate) fn model_text_cap(runtime: &dyn CodeRuntime) -> Option<u64> {
    runtime.run_limits().and_then(|limits| limits.max_model_text_bytes)
}

impl fmt::Debug for dyn CodeRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeRuntime").field("language", &self.language()).finish_non_exhaustive()
    }
}

pub mod flavor;
mod namespace;
pub mod render;
pub(crate) mod bridge;
mod dispatch_log;
mod pool;
pub(crate) mod retention;
pub(crate) mod transport;

pub use bridge::{CODE_RUN_FAILED_NAME, SETTLED_REASON};
pub use namespace::{BindingNames, CodeBindings, DispatchFn};
pub(crate) use dispatch_log::DispatchLogHooks;
pub use dispatch_log::{
    CodeDispatch, CodeDispatchEvent, CodeDispatchLog, CodeDispatchLogListener, CodeDispatchObserver, CodeDispatchStart,
    DispatchLogNext, DispatchLogOutcome, code_dispatch_log_fn,
};

pub mod ledger;
pub mod names;

#[cfg(feature = "typescript")]
pub mod typescript;

#[cfg(feature = "python")]
pub mod python;

#[cfg(all(test, feature = "typescript", feature = "python"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Both built-in backends answer their limits through the trait, so the transports find the model's
    /// text cap whichever is mounted; a runtime of another kind answers `None`.
    #[test]
    fn transports_find_the_model_text_cap_of_either_backend() {
        let limits = CodeRuntimeLimits::default().with_max_model_text(4096).with_max_output_bytes(1 << 20).with_max_heap_bytes(64 << 20);
        assert_eq!(limits.max_output_bytes, 1 << 20);
        assert_eq!(limits.max_heap_bytes, 64 << 20);
        assert_eq!(CodeRuntimeLimits::default().max_model_text_bytes, None);
        let typescript: Arc<dyn CodeRuntime> = Arc::new(typescript::TypeScriptRuntime::new(limits).unwrap());
        assert_eq!(model_text_cap(typescript.as_ref()), Some(4096));
        assert_eq!(typescript.run_limits(), Some(limits));
        let python: Arc<dyn CodeRuntime> = Arc::new(python::PythonRuntime::new(limits).unwrap());
        assert_eq!(model_text_cap(python.as_ref()), Some(4096));
        let uncapped: Arc<dyn CodeRuntime> = Arc::new(python::PythonRuntime::new(CodeRuntimeLimits::default()).unwrap());
        assert_eq!(model_text_cap(uncapped.as_ref()), None);

        struct Other;
        impl CodeRuntime for Other {
            fn language(&self) -> &str {
                "other"
            }
            fn run(&self, _: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
                Box::pin(async { Ok(CodeRunResult::default()) })
            }
        }
        assert_eq!(Other.run_limits(), None);
    }
}
