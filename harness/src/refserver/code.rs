//! Code Mode in the reference server: `setup.runtime` mounts the real backend of `dsh_tools::code`
//! (`typescript`: `TypeScriptRuntime`, `python`: `PythonRuntime`) with `setup.runtimeLimits` mapped onto
//! `CodeRuntimeLimits` (`maxHeapMb` in MiB) (an absent field keeps the runtime's default), and the `run_code` dispatch log is
//! reported as protocol events, in the shape agreed with the Node adapter:
//! `{ type: "code-dispatch-start", agent, rootCallId, parentCallId, subCallId, name, arguments }` and
//! `{ type: "code-dispatch", agent, rootCallId, parentCallId, subCallId, name, arguments, isError, content }`
//! (`agent`: the agent's name; upstream appends these entries to the agent's session, so transport calls
//! without an agent log nothing). Under `setup.sessionLog` every session entry the runtime appends (those
//! records, and any entry code on the runtime appends) is also a `{ type: "session-append", agent,
//! entryType, data }` event.
//!
//! [`RUNTIMES`] lists the backends compiled in and wired here; `capabilities.rs` advertises it. Python
//! runtimes share one fork server per process (`python`).
//!
//! Spec: RUN-015, RUN-018, RUN-027..RUN-029, RUN-031, RUN-032, RUN-058.

use std::sync::{Arc, OnceLock};

use dsh_conformance::fixture::{Language, RuntimeLimits};
use dsh_tools::code::python::PythonRuntime;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::code::{CodeDispatchEvent, CodeDispatchStart, CodeExecutionMode, CodeRuntime, CodeRuntimeLimits};
use dsh_tools::{HookGuard, SessionEntry, ToolRuntime};
use serde_json::Value;

use super::deep;
use super::rpc::{Failure, SETUP_REJECTED};
use super::shared::Shared;

/// The runtimes `setup.runtime` can mount (advertised as `capabilities.runtimes`).
pub const RUNTIMES: &[&str] = &["typescript", "python"];

/// `setup.runtimeLimits` over the runtime defaults.
pub fn limits(setup: Option<&RuntimeLimits>) -> CodeRuntimeLimits {
    let mut limits = CodeRuntimeLimits::default();
    let Some(setup) = setup else { return limits };
    if let Some(ms) = setup.compute_ms.as_ref().and_then(serde_json::Number::as_f64) {
        limits.compute_ms = ms;
    }
    if let Some(ms) = setup.max_wall_ms.as_ref().and_then(serde_json::Number::as_f64) {
        limits.max_wall_ms = ms;
    }
    if let Some(bytes) = setup.max_output_bytes.as_ref() {
        // A fractional or negative byte count saturates to the nearest representable ledger size.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = bytes.as_u64().unwrap_or_else(|| bytes.as_f64().map_or(0, |f| f.max(0.0) as u64));
        limits.max_output_bytes = n;
    }
    if let Some(mb) = setup.max_heap_mb.as_ref().and_then(serde_json::Number::as_f64) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let bytes = (mb.max(0.0) * 1024.0 * 1024.0) as u64;
        limits.max_heap_bytes = bytes;
    }
    limits
}

/// The backend for `language`, built with `limits` (a rejected configuration rejects the setup).
fn backend(language: Language, limits: CodeRuntimeLimits) -> Result<Arc<dyn CodeRuntime>, Failure> {
    backend_in(language, limits, CodeExecutionMode::PerCall)
}

/// The backend for `language` in `mode` (`setup.codemode.executionMode`: dsh-codemode's own runtime).
pub fn backend_in(language: Language, limits: CodeRuntimeLimits, mode: CodeExecutionMode) -> Result<Arc<dyn CodeRuntime>, Failure> {
    let built: Result<Arc<dyn CodeRuntime>, _> = match language {
        Language::Typescript => TypeScriptRuntime::new(limits).map(|r| Arc::new(r.with_execution_mode(mode)) as Arc<dyn CodeRuntime>),
        Language::Python => python(limits).map(|r| Arc::new(r.with_execution_mode(mode)) as Arc<dyn CodeRuntime>),
    };
    built.map_err(|e| rejected(language, &e.message))
}

/// A Python runtime with `limits` sharing the process's one fork server (`PythonRuntime::with_limits`), so
/// a session does not start an interpreter and import the bootstrap again (~100 ms of CPU each); runs are
/// fresh processes either way. Without a usable interpreter, `PythonRuntime::new`'s own rejection.
fn python(limits: CodeRuntimeLimits) -> Result<PythonRuntime, dsh_tools::code::CodeRuntimeMisuse> {
    static BASE: OnceLock<Option<PythonRuntime>> = OnceLock::new();
    match BASE.get_or_init(|| PythonRuntime::new(CodeRuntimeLimits::default()).ok()) {
        Some(base) => base.with_limits(limits),
        None => PythonRuntime::new(limits),
    }
}

/// Mount the runtime `setup.runtime` names, if any; the guard keeps it mounted.
pub fn mount(
    runtime: &ToolRuntime,
    language: Option<Language>,
    setup_limits: Option<&RuntimeLimits>,
) -> Result<Option<HookGuard>, Failure> {
    let Some(language) = language else { return Ok(None) };
    let backend = backend(language, limits(setup_limits))?;
    Ok(Some(runtime.mount_code_runtime(backend)))
}

/// A setup the backend rejected (its construction failed).
fn rejected(language: Language, message: &str) -> Failure {
    Failure::new(SETUP_REJECTED, format!("setup: the {} runtime was rejected: {message}", language.as_str()))
}

/// Report the dispatch log of every transport call as session events.
pub fn observe_dispatch_log(runtime: &ToolRuntime, shared: Arc<Shared>) -> HookGuard {
    runtime.on_code_dispatch(Arc::new(move |event| shared.emit(event_json(event))))
}

/// Under `setup.sessionLog`, report every session entry the runtime appends as a `session-append` event
/// (RUN-058).
pub fn observe_session_log(runtime: &ToolRuntime, shared: Arc<Shared>) -> HookGuard {
    runtime.on_session_append(Arc::new(move |entry: &SessionEntry| {
        shared.emit(deep::object([
            ("type", "session-append".into()),
            ("agent", entry.agent.name().into()),
            ("entryType", entry.entry_type.clone().into()),
            ("data", deep::clone(&entry.data)),
        ]));
    }))
}

/// The protocol event of one dispatch-log record.
pub fn event_json(event: &CodeDispatchEvent) -> Value {
    match event {
        CodeDispatchEvent::Start(call) => call_json("code-dispatch-start", call),
        CodeDispatchEvent::Settled(done) => {
            let mut event = call_json("code-dispatch", &done.call);
            if let Value::Object(map) = &mut event {
                map.insert("isError".into(), done.is_error.into());
                map.insert("content".into(), deep::clone(&done.content));
            }
            event
        }
    }
}

/// The fields both dispatch-log events carry, under event type `kind`.
fn call_json(kind: &str, call: &CodeDispatchStart) -> Value {
    deep::object([
        ("type", kind.into()),
        ("agent", call.agent.name().into()),
        ("rootCallId", call.root_call_id.clone().into()),
        ("parentCallId", call.parent_call_id.clone().into()),
        ("subCallId", call.sub_call_id.clone().into()),
        ("name", call.name.clone().into()),
        ("arguments", deep::clone(&call.arguments)),
    ])
}
