//! The Python code runtime ([`PythonRuntime`], language `python`): a fresh `python3 -I` process per run —
//! forked from the runtime's fork server (`zygote.rs`: a pre-started interpreter with the bootstrap imported
//! that never runs a program; a persistent environment's process is forked the same way), or spawned
//! directly when the fork server cannot serve — speaking JSON lines on fd 3 in the frame vocabulary of
//! upstream's `@deepseek-ai/dsh-code-runtime-python`
//! (`py/protocol.py`: boot, boot-ack, run, call, reply, log, done). Upstream ships only that protocol; the
//! backend behind it is ours. Failure kinds and texts are the TypeScript backend's wherever the situation
//! is the same (`worker-thread` `lib/index.js`).
//!
//! What a program sees: its text is the body of `async def __dsh_main__()` (wrapped at the AST level, so
//! top-level `await` and `return` work and line numbers are the program's own); each namespace is a global
//! (`tools`) whose bindings are attributes and items (`await tools.name(args)`, `tools["my-tool"]`); each
//! declared error class is a global `Exception` subclass (`ToolCallError(tool_name, message)`, the tool name
//! on its member-name property, `toolName`); `print` and every write to `sys.stdout` / `sys.stderr` is one
//! log entry (a single trailing newline of a `print` is not part of the entry); bytes written to fd 1 / 2
//! directly (`os.write`, child processes) are captured as stray logs after the program's own, like
//! upstream's `strayLogs`.
//!
//! Posture ([`PythonIsolation`], chosen with [`PythonRuntime::with_isolation`], read back with [`PythonRuntime::posture`]): by default every run
//! confines itself before it receives its program (`boundary.rs`, `contain.py`): a Landlock domain
//! (read-only beneath the interpreter's import paths and the system libraries, no TCP, signals and
//! abstract sockets scoped to the run), a seccomp filter (no new process, no socket, no leaving its
//! process group, no memory outside the address-space cap, no administrative calls), no capabilities,
//! `no_new_privs`, and death with its fork server, which dies with the host. A program's refused call
//! fails as the call would (`PermissionError: [Errno 1] Operation not permitted`, `[Errno 13] Permission
//! denied`). On a kernel without Landlock ABI 6 or seccomp filters the runtime refuses to be built;
//! [`PythonIsolation::Host`] is the explicit choice to run without the boundary.
//!
//! Decisions (documented for scenarios):
//! - An exception's message is the text CPython prints for it uncaught, without the bootstrap's frames and
//!   without a trailing newline: `Traceback (most recent call last):\n  File "<program>", line N, in
//!   <module>\n ...\nValueError: boom`; a syntax error has no traceback header (`  File "<program>", line
//!   1\n    ...\nSyntaxError: invalid syntax`). Match by pattern.
//! - An uncaught `MemoryError` (the `RLIMIT_AS` heap cap, `maxHeapBytes` above the interpreter's own
//!   mapping at boot) ends the run as `worker-exit` with the TypeScript backend's heap text
//!   ([`HEAP_EXIT_MESSAGE`]); a `MemoryError` the program catches is an ordinary exception.
//! - The busy budget is the child's CPU time after `boot-ack` (interpreter start-up is not charged),
//!   polled from `/proc/<pid>/stat` every 25 ms at most, with `RLIMIT_CPU` one second above it as a
//!   backstop.
//! - The wall ceiling counts from the request for a process, start-up included (upstream's starts at worker
//!   creation); the fork server's spare is ready at once and a fork takes about a millisecond, while the first run of a runtime
//!   (which starts the fork server) and a directly spawned interpreter take ~50 ms on an idle machine,
//!   several times that on a loaded one.
//! - `sys.exit()` escaping the program ends the process like a script's (`worker-exit`, `worker exited with
//!   code <n> before completing`), as `process.exit()` ends the TypeScript worker; `os._exit(n)` and fatal
//!   signals likewise (`... with signal SIGSEGV ...`). An fd-3 frame upstream's `validateChildFrame`
//!   rejects is dropped silently and the run goes on; one it keeps is served, whatever its call id
//!   (`frames.rs`, RUN-051). A line that is not JSON at all is `worker-exit` with `worker sent a malformed
//!   frame: <why>` (rc.8 does not publish the host's line parsing).
//! - The interpreter must be Python 3.10 or later; it runs with `-I` (isolated: no user site, no `PYTHON*`
//!   variables) and an empty environment.
//! - `tools.name()` without an argument rejects with "binding arguments must be lossless JSON", like the
//!   TypeScript backend (`undefined` is not JSON). `None` returned (or no `return`) means no value.
//! - Lossless JSON in Python: `None`, `bool`, `str`, `int` a double holds exactly (beyond 2^53 only when
//!   `float(n) == n`), finite `float` other than `-0.0`, `list`, `dict` with `str` keys; exact types only
//!   (no tuples or subclasses); no cycles, repeated references allowed. Dict order is kept as Python's.
//!
//! Spec: RUN-002, RUN-004, RUN-005, RUN-007, RUN-022, RUN-023, RUN-024, RUN-027, RUN-028, RUN-029, RUN-030,
//! RUN-031, RUN-032, RUN-034 (the Python backend), and the runtime's misuse checks (upstream
//! `validateBindings`); CDM-036..CDM-041 (persistent environments: `code/retention.rs`, the bootstrap's
//! `global` declaration of a program's top-level names).

// Contributors — files: `boundary.rs` (the contained posture: Landlock ruleset, seccomp programs, the
// kernel checks that fail closed), `contain.py` (the child side of it, prepended to the bootstrap),
// `frames.rs` (the frame vocabulary, hostile-frame validation), `json.rs` (the
// iterative raw-token JSON reader and writer), `process.rs` (spawn, fd 3, process group, CPU time),
// `zygote.rs` (the fork server and its control socket), `worker.rs` (a run's child as the host holds it:
// bounded start, the counted outbox, stray pipes), `run.rs` (one run driven to settlement: budgets,
// abort, bindings, logs), the shared `code/ledger.rs` (the combined output ledger), `bootstrap.py` (the
// child side, and the fork server's loop).

mod boundary;
mod frames;
mod json;
mod process;
mod run;
mod worker;
mod zygote;

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::retention::Retained;
use super::{
    CodeBindingErrorClass, CodeBindings, CodeExecutionMode, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    CodeRuntimeLimits, CodeRuntimeMisuse, StateOwner, ENVIRONMENT_RELEASED,
};
use crate::callback::BoxFuture;

pub use boundary::PythonIsolation;
pub use super::ledger::{OutputLedger, json_string_bytes_up_to, json_value_bytes_up_to, truncate_json_string_bytes};

/// The `worker-exit` message of a run that exhausted the heap cap (an uncaught `MemoryError`): the
/// TypeScript backend's `worker error: <Node's ERR_WORKER_OUT_OF_MEMORY text>` with Python's heap named.
pub const HEAP_EXIT_MESSAGE: &str = "worker error: Worker terminated due to reaching memory limit: Python heap out of memory";

/// The prefix of every misuse message.
const PREFIX: &str = "dsh-code-runtime-python";

/// Smallest ledger that can represent an empty logs array plus an empty failure message (upstream
/// `MIN_OUTPUT_BYTES`).
const MIN_OUTPUT_BYTES: u64 = 4;

/// The Python backend of [`CodeRuntime`]: a fresh process per run — or, in
/// [`CodeExecutionMode::PersistentInMemory`] ([`with_execution_mode`](Self::with_execution_mode)), one
/// resident process per [`StateOwner`]. Cheap to clone; clones share the disposal state and the
/// persistent environments, and dropping the last clone releases them.
#[derive(Clone, Debug)]
pub struct PythonRuntime {
    inner: Arc<Inner>,
    mode: CodeExecutionMode,
}

struct Inner {
    /// Shared with the runtimes [`PythonRuntime::with_limits`] derived from this one's.
    zygote: Arc<zygote::Zygote>,
    limits: CodeRuntimeLimits,
    disposed: CancellationToken,
    retained: Retained<worker::Worker>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner").field("interpreter", &self.zygote.interpreter()).field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.retained.release_all();
    }
}

impl PythonRuntime {
    /// A runtime using `python3` from `PATH`, resolved once to the real interpreter's absolute path
    /// (`sys.executable`, so a pyenv shim is not run per start), in the default posture,
    /// [`PythonIsolation::Contained`]. Rejects invalid limits, a missing interpreter, and a kernel that
    /// cannot give the boundary (the error names what is missing).
    pub fn new(limits: CodeRuntimeLimits) -> Result<Self, CodeRuntimeMisuse> {
        Self::with_interpreter("python3", limits)
    }

    /// A runtime using `interpreter` (a name searched on `PATH`, or a path), resolved like [`Self::new`],
    /// contained like it.
    pub fn with_interpreter(interpreter: impl AsRef<OsStr>, limits: CodeRuntimeLimits) -> Result<Self, CodeRuntimeMisuse> {
        Self::with_isolation(interpreter, limits, PythonIsolation::Contained)
    }

    /// A runtime using `interpreter` in the posture `isolation`. [`PythonIsolation::Contained`] fails
    /// closed: on a kernel without Landlock ABI 6 or seccomp filters this returns an error naming what is
    /// missing instead of a runtime that runs programs unguarded; [`PythonIsolation::Host`] is the
    /// explicit choice to run them without a boundary.
    pub fn with_isolation(
        interpreter: impl AsRef<OsStr>,
        limits: CodeRuntimeLimits,
        isolation: PythonIsolation,
    ) -> Result<Self, CodeRuntimeMisuse> {
        validate_limits(&limits)?;
        let interpreter = process::resolve_interpreter(interpreter.as_ref()).map_err(|e| misuse(format!("cannot resolve the interpreter: {e}")))?;
        let boundary = match isolation {
            PythonIsolation::Contained => {
                let mut readable = interpreter.import_paths.clone();
                readable.push(interpreter.path.clone());
                Some(boundary::Boundary::build(&readable).map_err(misuse)?)
            }
            PythonIsolation::Host => None,
        };
        let zygote = Arc::new(zygote::Zygote::new(interpreter, boundary, run::LAUNCHER, run::BOOTSTRAP));
        Ok(Self::sharing(zygote, limits))
    }

    /// A runtime with other `limits` that shares this one's interpreter and fork server, in per-call mode.
    /// Everything else is its own: its disposal, its persistent environments, its budgets. Use it where
    /// many short-lived runtimes are built (one per agent, session or test), so each does not pay the
    /// fork server's start-up (the interpreter and the bootstrap's imports, ~100 ms of CPU) again; the fork
    /// server lives until the last runtime sharing it is dropped. Runs stay fresh processes either way:
    /// the fork server never runs a program. Rejects invalid limits as [`Self::new`] does.
    pub fn with_limits(&self, limits: CodeRuntimeLimits) -> Result<Self, CodeRuntimeMisuse> {
        validate_limits(&limits)?;
        Ok(Self::sharing(Arc::clone(&self.inner.zygote), limits))
    }

    fn sharing(zygote: Arc<zygote::Zygote>, limits: CodeRuntimeLimits) -> Self {
        let inner = Inner { zygote, limits, disposed: CancellationToken::new(), retained: Retained::default() };
        Self { inner: Arc::new(inner), mode: CodeExecutionMode::PerCall }
    }

    /// The same runtime in `mode`. In [`CodeExecutionMode::PersistentInMemory`] a request naming a
    /// [`StateOwner`] runs in that owner's resident process, whose one globals dict every run of the owner
    /// shares: the names a program binds at its top level (assignments, `def`, `class`, `import`) are
    /// declared `global`, so they are there for the next run. Each run gets its own budgets and output
    /// ledger; the heap cap covers the process's whole life; tasks a program leaves running are cancelled
    /// when it completes; threads (and, in the host posture, child processes) it started live until the
    /// environment is released.
    #[must_use]
    pub fn with_execution_mode(mut self, mode: CodeExecutionMode) -> Self {
        self.mode = mode;
        self
    }

    /// The resolved interpreter.
    pub fn interpreter(&self) -> &Path {
        self.inner.zygote.interpreter()
    }

    /// What a contained run may read, beneath each path (the interpreter's import paths and the system's
    /// library directories); empty in [`PythonIsolation::Host`], where a run reads what the host's user can.
    pub fn readable_paths(&self) -> &[std::path::PathBuf] {
        self.inner.zygote.readable()
    }

    /// The posture runs start in (shared by the runtimes [`Self::with_limits`] derives).
    pub fn posture(&self) -> PythonIsolation {
        if self.inner.zygote.contained() { PythonIsolation::Contained } else { PythonIsolation::Host }
    }

    /// The budgets of every run.
    pub fn limits(&self) -> CodeRuntimeLimits {
        self.inner.limits
    }

    /// Dispose: every in-flight run ends as `abort` with `runtime disposed` (its process group killed),
    /// every persistent environment is released, and later runs are misuse (`run() after disposal`), like
    /// upstream's teardown.
    pub fn dispose(&self) {
        self.inner.disposed.cancel();
        self.inner.retained.release_all();
    }
}

impl CodeRuntime for PythonRuntime {
    fn language(&self) -> &str {
        "python"
    }

    fn run_limits(&self) -> Option<CodeRuntimeLimits> {
        Some(self.limits())
    }

    fn isolation(&self) -> &str {
        if self.inner.zygote.contained() { "contained-process" } else { "process" }
    }

    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        let inner = Arc::clone(&self.inner);
        let owner = request.state_owner.clone().filter(|_| self.mode == CodeExecutionMode::PersistentInMemory);
        Box::pin(async move {
            if inner.disposed.is_cancelled() {
                return Err(misuse("run() after disposal".to_owned()));
            }
            let namespaces = validate_bindings(&request)?;
            let Some(owner) = owner else {
                return Ok(run::run(&inner.zygote, inner.limits, &inner.disposed, request, namespaces, None).await.0);
            };
            let ledger = || super::ledger::OutputLedger::new(inner.limits.max_output_bytes);
            // The owner's turn (runs of one owner take turns); an abort or a release while waiting ends it.
            let turn = tokio::select! {
                turn = inner.retained.turn(&owner) => turn,
                () = request.signal.token().cancelled() => {
                    return Ok(ledger().failure(Vec::new(), CodeRunErrorKind::Abort, request.signal.reason()));
                }
            };
            let Some(mut turn) = turn else {
                return Ok(ledger().failure(Vec::new(), CodeRunErrorKind::Abort, ENVIRONMENT_RELEASED.to_owned()));
            };
            let resident = worker::Resident { worker: turn.take(), released: turn.released().clone() };
            let (result, worker) = run::run(&inner.zygote, inner.limits, &inner.disposed, request, namespaces, Some(resident)).await;
            turn.finish(worker);
            Ok(result)
        })
    }

    fn execution_mode(&self) -> CodeExecutionMode {
        self.mode
    }

    fn release(&self, owner: &StateOwner) -> bool {
        self.inner.retained.release(owner)
    }

    fn retained(&self) -> Vec<StateOwner> {
        self.inner.retained.live()
    }
}

fn misuse(message: String) -> CodeRuntimeMisuse {
    CodeRuntimeMisuse { message: format!("{PREFIX}: {message}") }
}

/// Upstream's config checks: every budget a positive number; the ledger a safe integer of at least 4.
fn validate_limits(limits: &CodeRuntimeLimits) -> Result<(), CodeRuntimeMisuse> {
    let number = |v: f64| crate::value::js_number_string(v);
    for (key, value) in [("computeMs", limits.compute_ms), ("maxWallMs", limits.max_wall_ms)] {
        if !(value.is_finite() && value > 0.0) {
            return Err(misuse(format!("config.{key} must be a positive number, got {}", number(value))));
        }
    }
    for (key, value) in [("maxOutputBytes", limits.max_output_bytes), ("maxHeapBytes", limits.max_heap_bytes)] {
        if value == 0 {
            return Err(misuse(format!("config.{key} must be a positive number, got 0")));
        }
    }
    if limits.max_output_bytes < MIN_OUTPUT_BYTES || limits.max_output_bytes > (1 << 53) - 1 {
        return Err(misuse(format!(
            "config.maxOutputBytes must be a safe integer of at least {MIN_OUTPUT_BYTES}, got {}",
            limits.max_output_bytes
        )));
    }
    Ok(())
}

/// One validated namespace: its global, its bindings (the boot frame declares the names in
/// first-declaration order; a call reaches a name's last declaration, as in a JavaScript record), its
/// error class.
pub(super) struct Namespace {
    global: String,
    bindings: CodeBindings,
    error_class: Option<CodeBindingErrorClass>,
}

/// Upstream `validateBindings`: usable, unreserved, distinct globals and error classes; usable member
/// names. Violations are contract misuse.
fn validate_bindings(request: &CodeRunRequest) -> Result<Vec<Namespace>, CodeRuntimeMisuse> {
    super::names::check_bindings(request).map_err(misuse)?;
    let mut namespaces: Vec<Namespace> = Vec::with_capacity(request.bindings.len());
    for ns in &request.bindings {
        namespaces.push(Namespace { global: ns.global.clone(), bindings: ns.functions.clone(), error_class: ns.error_class.clone() });
    }
    Ok(namespaces)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod persistent_tests;
#[cfg(test)]
mod zygote_tests;
#[cfg(test)]
mod table_tests;
