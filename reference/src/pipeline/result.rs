//! Finish: apply the content finalizer captured at entry (it may replace only content; its failure becomes
//! the result, unfinalized), then notify `tools/result` observers — resolved now, registration order,
//! scoped observers only for their agent — exactly once with the final result, and return it. Observer
//! panics are contained.
//!
//! Spec: PIPE-011, PIPE-012, UNK-009, FIN-001..FIN-005, FIN-008.

use crate::callback::contain;
use crate::error::ToolFailure;
use crate::execution::AbortReasons;
use crate::hooks::{HookList, ResultObserver};
use crate::result::ToolExecutionResult;

use super::entry::Call;

/// Finalize content, forget the call's attached abort reason, and publish to a snapshot of `observers`.
pub(crate) fn finish(
    observers: &HookList<ResultObserver>,
    abort_reasons: &AbortReasons,
    call: &Call,
    mut result: ToolExecutionResult,
) -> ToolExecutionResult {
    if let Some(finalize) = &call.finalizer {
        match contain(|| finalize(&call.exec, &result)) {
            Ok(Ok(Some(content))) => *result.content_mut() = content,
            Ok(Ok(None)) => {}
            Ok(Err(failure)) => result = ToolExecutionResult::from_failure(failure),
            Err(panic) => result = ToolExecutionResult::from_failure(ToolFailure::message(panic)),
        }
    }
    abort_reasons.forget(call.exec.token);
    for entry in observers.snapshot().iter() {
        if entry.applies_to(call.exec.agent.as_ref()) {
            let _ = contain(|| (entry.hook)(&call.exec, &result));
        }
    }
    result
}
