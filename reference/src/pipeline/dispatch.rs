//! Dispatch: re-resolve the visible tool, mark the body invoked, validate DSL arguments, run the body to
//! completion with the caller's signal (never dropped early), then build the success through [`output`].
//! Deferred contexts are prepended to whatever the dispatch produced.
//!
//! Seam: `tools/execute` around-wrappers will wrap [`run_body`]; none are implemented yet.
//!
//! Spec: PIPE (dispatch, quiescent cancellation), UNK (unknown tool at dispatch), ARG (INVALID_ARGS).
//!
//! [`output`]: super::output

use std::sync::Arc;

use crate::error::ToolFailure;
use crate::execution::ToolRunContext;
use crate::result::ToolExecutionResult;
use crate::runtime::Inner;
use crate::schema::validate::validate_json_schema_value;

use super::entry::Call;
use super::{Contained, contain, output};

/// Dispatch one prepared call.
pub(crate) async fn run(inner: &Inner, call: &mut Call) -> ToolExecutionResult {
    let mut result = run_body(inner, call).await;
    let deferred = match call.deferred.lock() {
        Ok(mut list) => std::mem::take(&mut *list),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    if !deferred.is_empty() {
        let contexts = result.additional_contexts_mut();
        let tail = std::mem::replace(contexts, deferred);
        contexts.extend(tail);
    }
    result
}

async fn run_body(inner: &Inner, call: &mut Call) -> ToolExecutionResult {
    let exec = Arc::clone(&call.exec);
    // Native mode has no wrapper signal: the fused signal is the caller's.
    let signal = exec.signal.clone();
    if signal.is_cancelled() {
        return ToolExecutionResult::aborted_before_dispatch(Vec::new());
    }
    let Some(tool) = inner.registry.resolve(&exec.name, exec.agent.as_ref()) else {
        return ToolExecutionResult::from_failure(ToolFailure::unknown_tool(&exec.name));
    };
    call.body_invoked = true;
    if tool.validates_args {
        let violations = validate_json_schema_value(&tool.schema.parameters, &exec.arguments, "");
        if !violations.is_empty() {
            return ToolExecutionResult::from_failure(ToolFailure::invalid_args(&violations));
        }
    }
    let ctx = ToolRunContext {
        signal: signal.clone(),
        token: exec.token,
        call_id: exec.call_id.clone(),
        name: exec.name.clone(),
        agent: exec.agent.clone(),
        parent: exec.parent,
        deferred: Arc::clone(&call.deferred),
    };
    let body = Arc::clone(&tool.def.execute);
    let returned = match contain(|| body(Arc::clone(&exec.arguments), ctx)) {
        Ok(future) => match Contained(future).await {
            Ok(returned) => returned,
            Err(panic) => Err(ToolFailure::message(panic)),
        },
        Err(panic) => Err(ToolFailure::message(panic)),
    };
    let result = match returned {
        Ok(value) => match output::success(&exec, &tool, value) {
            Ok(result) => result,
            Err(failure) => return ToolExecutionResult::from_failure(failure),
        },
        Err(failure) => return ToolExecutionResult::from_failure(failure),
    };
    if signal.is_cancelled() {
        if let ToolExecutionResult::Success { value, .. } = result {
            crate::value::dismantle(value);
        }
        return ToolExecutionResult::aborted(Vec::new());
    }
    result
}
