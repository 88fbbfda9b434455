//! Finish: materialize the result as lossless JSON (content, meta and contexts; a lossy one — holding
//! `-0` — becomes the failure [`LOSSY_RESULT`]), apply the content finalizer captured at entry (it may
//! replace only content; its failure becomes the result, unfinalized), materialize again (a lossy
//! finalizer output becomes the same failure, not finalized a second time), then notify `tools/result`
//! observers — resolved now, registration order, scoped observers only for their agent — exactly once
//! with the final result, and return it. Observer panics are contained and logged to the log sinks as
//! `tool "<name>" (<callId>): tools/result observer failed: <message>`.
//!
//! The same publication serves a result an installed executor answered itself ([`publish`]).
//! An observer that finishes later (it hands work to a task, as an upstream observer returns a promise)
//! reports that work's failure through an [`ObserverFailureLog`], which logs the same line.
//!
//! Spec: PIPE-011, PIPE-012, PIPE-021, UNK-009, FIN-001..FIN-005, FIN-008, FIN-009, CDM-046.

use std::sync::Arc;

use crate::callback::contain;
use crate::error::ToolFailure;
use crate::execution::{AbortReasons, ToolExecution};
use crate::hooks::{HookList, LogSink, ResultObserver};
use crate::result::ToolExecutionResult;

use super::entry::Call;

/// The failure of a final result that is not lossless JSON (upstream's `materializeFinalResult`).
pub(crate) const LOSSY_RESULT: &str = "tool result must be losslessly JSON-serializable";

/// Replace the result with [`LOSSY_RESULT`] when its presentation (content, meta, contexts) is not
/// lossless.
fn materialize(result: &mut ToolExecutionResult) {
    let (content, meta, contexts) = match &*result {
        ToolExecutionResult::Success { content, meta, additional_contexts, .. }
        | ToolExecutionResult::Failure { content, meta, additional_contexts, .. } => (content, meta, additional_contexts),
    };
    let lossless = content.iter().chain(meta).chain(contexts).all(crate::value::is_lossless);
    if lossless {
        return;
    }
    replace(result, ToolExecutionResult::from_failure(ToolFailure::message(LOSSY_RESULT)));
}

/// Put `with` in place of `result`; a replaced success's value is dismantled without recursion.
fn replace(result: &mut ToolExecutionResult, with: ToolExecutionResult) {
    if let ToolExecutionResult::Success { value, .. } = std::mem::replace(result, with) {
        crate::value::dismantle(value);
    }
}

/// Finalize `result`'s content in place, forget the call's attached abort reason, and publish to a snapshot
/// of `observers`.
pub(crate) fn finish(
    observers: &HookList<ResultObserver>,
    logs: &HookList<LogSink>,
    abort_reasons: &AbortReasons,
    call: &Call,
    result: &mut ToolExecutionResult,
) {
    materialize(result);
    if let Some(finalize) = &call.finalizer {
        match contain(|| finalize(&call.exec, result)) {
            Ok(Ok(Some(content))) => {
                *result.content_mut() = content;
                materialize(result);
            }
            Ok(Ok(None)) => {}
            Ok(Err(failure)) => replace(result, ToolExecutionResult::from_failure(failure)),
            Err(panic) => replace(result, ToolExecutionResult::from_failure(ToolFailure::message(panic))),
        }
    }
    abort_reasons.forget(call.exec.token);
    notify(observers, logs, &call.exec, result);
}

/// Publish a result the pipeline did not produce — an executor's own answer (CDM-046) — as [`finish`]
/// publishes its own: materialized, then the observers; no content finalizer, as a collapsed call's
/// rejection has none.
pub(crate) fn publish(observers: &HookList<ResultObserver>, logs: &HookList<LogSink>, exec: &ToolExecution, result: &mut ToolExecutionResult) {
    materialize(result);
    notify(observers, logs, exec, result);
}

/// Hand `result` to a snapshot of `observers`: resolved now, registration order, scoped ones only for
/// their agent; a panicking observer is logged and skipped.
fn notify(observers: &HookList<ResultObserver>, logs: &HookList<LogSink>, exec: &ToolExecution, result: &ToolExecutionResult) {
    for entry in observers.snapshot().iter() {
        if entry.applies_to(exec.agent.as_ref()) {
            if let Err(message) = contain(|| (entry.hook)(exec, result)) {
                log(logs, &failure_line(&exec.name, &exec.call_id, &message));
            }
        }
    }
}

/// The warning for a failed `tools/result` observer of call `call_id` of tool `name` (upstream's
/// `reportFailure`).
fn failure_line(name: &str, call_id: &str, message: &str) -> String {
    format!("tool \"{name}\" ({call_id}): tools/result observer failed: {message}")
}

/// Where a `tools/result` observer that finishes later reports its failure (PIPE-021).
///
/// A [`ResultObserver`] returns before the pipeline goes on; one that hands the rest of its work to a
/// task (upstream: an observer returning a promise that rejects later) reports that work's failure
/// here, and the runtime logs it to its log sinks exactly as it logs an observer that panicked:
/// `tool "<name>" (<callId>): tools/result observer failed: <message>`. Obtained from
/// [`ToolRuntime::observer_failure_log`](crate::ToolRuntime::observer_failure_log); cheap to clone,
/// and it holds the sinks, not the runtime.
#[derive(Clone)]
pub struct ObserverFailureLog {
    logs: Arc<HookList<LogSink>>,
}

impl ObserverFailureLog {
    pub(crate) fn new(logs: Arc<HookList<LogSink>>) -> Self {
        Self { logs }
    }

    /// Log that an observer of the result of call `call_id` (tool `name`, the execution's `name` and
    /// `call_id`) failed later with `message`, to the sinks registered now.
    pub fn report(&self, name: &str, call_id: &str, message: &str) {
        log(&self.logs, &failure_line(name, call_id, message));
    }
}

/// Hands one warning to every log sink (a sink that panics is skipped: logging never fails a call).
pub(crate) fn log(logs: &HookList<LogSink>, line: &str) {
    for entry in logs.snapshot().iter() {
        let _ = contain(|| (entry.hook)(line));
    }
}
