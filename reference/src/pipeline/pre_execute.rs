//! The `tools/pre-execute` waterfall: the listener chain is snapshotted when the stage starts and runs in
//! registration order (scoped listeners only for their agent); the end of the chain allows. `ask` with no
//! approval seam degrades to a denial with upstream's reason; with one mounted (read when the `ask`
//! arrives) the outcome maps to allow or to one of upstream's four denial reasons.
//!
//! Spec: PIPE-002..PIPE-004, PIPE-010, APPR-001..APPR-007.

use std::sync::Arc;

use crate::approval::{ApprovalOutcome, ApprovalRequest, ApprovalSeam};
use crate::error::ToolFailure;
use crate::execution::ToolExecution;
use crate::callback::Contained;
use crate::hooks::{Next, PreExecuteListener, PreToolDecision, Slot, Snapshot};

/// Run `chain` (the listeners' snapshot when one applies to the call, `HookList::snapshot_for`); a
/// panicking listener counts as a thrown failure.
pub(crate) async fn run(
    chain: Snapshot<Arc<dyn PreExecuteListener>>,
    exec: &ToolExecution,
) -> Result<PreToolDecision, ToolFailure> {
    let next = Next { chain: &chain, exec };
    match Contained(next.run()).await {
        Ok(outcome) => outcome,
        Err(panic) => Err(ToolFailure::message(panic)),
    }
}

/// Service an `ask` through the approval seam mounted in `approval` (read now), or degrade it to a denial.
/// Returns the resolved decision and whether the approval itself was cancelled.
pub(crate) async fn service_ask(
    approval: &Slot<Arc<dyn ApprovalSeam>>,
    exec: &ToolExecution,
    reason: Option<String>,
) -> Result<(PreToolDecision, bool), ToolFailure> {
    let deny = |reason: String| PreToolDecision::Deny { reason };
    let Some(seam) = approval.get() else {
        let reason = reason.unwrap_or_else(|| format!("tool \"{}\" requires approval (not yet supported)", exec.name));
        return Ok((deny(reason), false));
    };
    let Some(agent) = exec.agent.as_ref() else {
        return Ok((
            deny(format!("tool \"{}\" requires approval, but the call has no agent to route it through", exec.name)),
            false,
        ));
    };
    let request = ApprovalRequest {
        agent,
        tool_name: &exec.name,
        call_id: &exec.call_id,
        reason: reason.as_deref(),
        signal: &exec.signal,
    };
    let outcome = match Contained(seam.request(request)).await {
        Ok(outcome) => outcome?,
        Err(panic) => return Err(ToolFailure::message(panic)),
    };
    let name = &exec.name;
    Ok(match outcome {
        ApprovalOutcome::AllowedOnce => (PreToolDecision::Allow, false),
        ApprovalOutcome::Rejected => (deny(format!("the user rejected tool \"{name}\"")), false),
        ApprovalOutcome::Cancelled => (deny(format!("approval for tool \"{name}\" was cancelled")), true),
        ApprovalOutcome::Unavailable => (
            deny(format!("tool \"{name}\" requires approval, but no approval channel is available")),
            false,
        ),
    })
}
