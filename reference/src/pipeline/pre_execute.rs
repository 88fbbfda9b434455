//! The `tools/pre-execute` waterfall: the listener chain is snapshotted when the stage starts and runs in
//! registration order (scoped listeners only for their agent); the end of the chain allows. `ask` with no
//! approval seam degrades to a denial with upstream's reason.
//!
//! Spec: PIPE (pre-execute decisions, ask degrade).

use crate::error::ToolFailure;
use crate::execution::ToolExecution;
use crate::hooks::{Next, PreToolDecision};
use crate::runtime::Inner;

use super::Contained;

/// Run the chain; a panicking listener counts as a thrown failure.
pub(crate) async fn run(inner: &Inner, exec: &ToolExecution) -> Result<PreToolDecision, ToolFailure> {
    let chain = inner.pre_execute.snapshot();
    let next = Next { chain: &chain, exec };
    match Contained(Box::pin(next.run())).await {
        Ok(outcome) => outcome,
        Err(panic) => Err(ToolFailure::message(panic)),
    }
}

/// The denial reason an unserviced `ask` becomes.
pub(crate) fn degrade_ask(exec: &ToolExecution, reason: Option<String>) -> String {
    reason.unwrap_or_else(|| format!("tool \"{}\" requires approval (not yet supported)", exec.name))
}
