//! Finish: materialize the result as lossless JSON (content, meta and contexts; a lossy one — holding
//! `-0` — becomes the failure [`LOSSY_RESULT`]), apply the content finalizer captured at entry (it may
//! replace only content; its failure becomes the result, unfinalized), materialize again (a lossy
//! finalizer output becomes the same failure, not finalized a second time), then notify `tools/result`
//! observers — resolved now, registration order, scoped observers only for their agent — exactly once
//! with the final result, and return it. Observer panics are contained and logged to the log sinks as
//! `tool "<name>" (<callId>): tools/result observer failed: <message>`.
//!
//! The same publication serves a result an installed executor answered itself ([`publish`]).
//!
//! Spec: PIPE-011, PIPE-012, PIPE-021, UNK-009, FIN-001..FIN-005, FIN-008, FIN-009, CDM-046.

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
                let (name, call_id) = (&exec.name, &exec.call_id);
                log(logs, &format!("tool \"{name}\" ({call_id}): tools/result observer failed: {message}"));
            }
        }
    }
}

/// Hands one warning to every log sink (a sink that panics is skipped: logging never fails a call).
pub(crate) fn log(logs: &HookList<LogSink>, line: &str) {
    for entry in logs.snapshot().iter() {
        let _ = contain(|| (entry.hook)(line));
    }
}
