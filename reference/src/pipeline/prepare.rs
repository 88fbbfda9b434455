//! The prepare stage (upstream's scheduler `prepare`): everything before dispatch, in order. A failed
//! argument snapshot or a `code` collapse decided at entry is final; a caller cancelled at entry is
//! `ABORTED_BEFORE_DISPATCH` (final); then the `tools/pre-execute` waterfall (an `ask` goes to the approval
//! seam), the guards after an allow, and the cancellation check before dispatch. A listener, approver or
//! guard failure is final; a denial and the later cancellations go on to post-execute. The signal is read
//! again before dispatch only when a callback ran since the first read (see [`super::Read`]).
//!
//! Split from dispatch so the `run_code` bridge can run the stages of its sub-calls one at a time
//! (prepare in submission order, dispatch overlapped, commit in submission order).
//!
//! Spec: PIPE-001..PIPE-010, APPR-001, CODE-006, CODE-007, APPR-008, CANC-010.

use std::sync::Arc;

use crate::approval::ApprovalSeam;
use crate::hooks::{HookList, PreExecuteListener, PreToolDecision, Slot};
use crate::registry::Registry;
use crate::result::ToolExecutionResult;

use super::entry::{Call, Collapse};
use super::{Prepared, Stage, guards, pre_execute};

/// What the stage reads besides the call: the pre-execute listeners, the approval mount point and the
/// registry (for the guards).
pub(crate) struct PolicyTables<'a> {
    pub(crate) pre_execute: &'a HookList<Arc<dyn PreExecuteListener>>,
    pub(crate) approval: &'a Slot<Arc<dyn ApprovalSeam>>,
    pub(crate) registry: &'a Registry,
}

/// Run the stage.
pub(crate) async fn run(policy: PolicyTables<'_>, call: &Call) -> Prepared {
    if call.snapshot_failed {
        return Prepared::Done(Stage::Final(ToolExecutionResult::from_failure(crate::error::ToolFailure::message(
            super::entry::LOSSY_ARGUMENTS,
        ))));
    }
    match call.collapse {
        Collapse::No => {}
        Collapse::Rejected => {
            return Prepared::Done(Stage::Final(ToolExecutionResult::from_failure(crate::error::ToolFailure::code_only(&call.exec.name))));
        }
        Collapse::PreAborted => return Prepared::Done(Stage::Final(ToolExecutionResult::aborted_before_dispatch(Vec::new()))),
    }
    if call.exec.signal.is_cancelled() {
        return Prepared::Done(Stage::Final(ToolExecutionResult::aborted_before_dispatch(Vec::new())));
    }
    // Whether any callback (listener, approver, guard) ran since the read above: if none did, that read
    // still stands for the check before dispatch (see `Read`).
    let mut callbacks_ran = false;
    let decision = match policy.pre_execute.snapshot_for(call.exec.agent.as_ref()) {
        None => PreToolDecision::Allow,
        Some(chain) => {
            callbacks_ran = true;
            match pre_execute::run(chain, &call.exec).await {
                Ok(decision) => decision,
                Err(failure) => return Prepared::Done(Stage::Final(ToolExecutionResult::from_failure(failure))),
            }
        }
    };
    let (decision, approval_cancelled) = match decision {
        PreToolDecision::Ask { reason } => match pre_execute::service_ask(policy.approval, &call.exec, reason).await {
            Ok(resolved) => resolved,
            Err(failure) => return Prepared::Done(Stage::Final(ToolExecutionResult::from_failure(failure))),
        },
        other => (other, false),
    };
    if approval_cancelled && call.exec.signal.is_cancelled() {
        return Prepared::Done(Stage::Post(ToolExecutionResult::aborted_before_dispatch(Vec::new())));
    }
    let denial = match decision {
        PreToolDecision::Allow => match guards::reason(policy.registry, &call.exec, &mut callbacks_ran) {
            Ok(reason) => reason,
            Err(failure) => return Prepared::Done(Stage::Final(ToolExecutionResult::from_failure(failure))),
        },
        PreToolDecision::Deny { reason } => Some(reason),
        // The seam resolved every ask above.
        PreToolDecision::Ask { reason } => Some(reason.unwrap_or_default()),
    };
    if let Some(reason) = denial {
        return Prepared::Done(Stage::Post(ToolExecutionResult::denial(reason)));
    }
    if callbacks_ran && call.exec.signal.is_cancelled() {
        return Prepared::Done(Stage::Post(ToolExecutionResult::aborted_before_dispatch(Vec::new())));
    }
    Prepared::Dispatch
}

