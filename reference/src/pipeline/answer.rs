//! Executor answers (CDM-046): a result an installed [`ToolExecutor`](crate::ToolExecutor) returns
//! without delegating to the native pipeline — dsh-codemode's rejection of a direct call to a masked tool —
//! still reaches the `tools/result` observers, exactly once, so an audit trail built on them sees every
//! call a model made. The facade takes an [`AnswerRecord`] of the call before handing it to the executor
//! (the executor consumes the input) and publishes it with the answer when the native executor was not
//! used; a delegated call is published by the pipeline as always, so never twice.
//!
//! The record's arguments are an iterative deep copy (a 100,000-level argument is copied without
//! recursion): one copy per call routed through an executor.

use std::sync::Arc;

use crate::execution::{CallState, ExecutionToken, ToolExecution, ToolExecutionInput};
use crate::result::ToolExecutionResult;

use super::{Pipeline, result};

/// A call as the observers will see it if its executor answers it itself.
pub(crate) struct AnswerRecord(ToolExecution);

impl Pipeline {
    /// The record of `input` (a fresh token, as the pipeline would mint; the call is its own root
    /// unless the input names one).
    pub(crate) fn answer_record(&self, input: &ToolExecutionInput) -> AnswerRecord {
        AnswerRecord(ToolExecution {
            token: ExecutionToken::mint(),
            root_call_id: input.root_call_id.clone().unwrap_or_else(|| input.call_id.clone()),
            call_id: input.call_id.clone(),
            name: input.name.clone(),
            arguments: Arc::new(crate::value::deep_clone(&input.arguments)),
            signal: input.signal.clone(),
            agent: input.agent.clone(),
            parent: input.parent,
            reasons: self.abort_reasons,
            state: CallState::default(),
        })
    }

    /// Publish an executor's own answer for `record` to the `tools/result` observers.
    pub(crate) fn publish_answer(&self, record: AnswerRecord, result: &mut ToolExecutionResult) {
        // The record drops after (`ToolExecution`'s drop dismantles deep arguments without recursion).
        result::publish(&self.observers, &self.logs, &record.0, result);
    }
}
