//! Monotonic guards, read live as the stage runs (a guard an earlier guard registered runs in the same
//! pass; see the registry's live iteration): global guards, then the agent scope chain's (farthest
//! first), each in registration order; the first reason wins. A guard that throws (a fallible guard's
//! `Err`, or a panic) ends the stage with that failure, final.
//!
//! Spec: PIPE-005..PIPE-008, PIPE-010, PIPE-023, SCOPE-014.

use crate::error::ToolFailure;
use crate::execution::ToolExecution;
use crate::registry::{GuardPass, Registry};

use crate::callback::contain;

/// The first denial reason among the guards `registry` holds for the call's agent, if any; `ran` is set
/// when a guard ran.
pub(crate) fn reason(registry: &Registry, exec: &ToolExecution, ran: &mut bool) -> Result<Option<String>, ToolFailure> {
    let mut pass = GuardPass::default();
    while let Some(guard) = registry.next_guard(exec.agent.as_ref(), &mut pass) {
        *ran = true;
        match contain(|| guard(exec)) {
            Ok(Ok(Some(reason))) => return Ok(Some(reason)),
            Ok(Ok(None)) => {}
            Ok(Err(failure)) => return Err(failure),
            Err(panic) => return Err(ToolFailure::message(panic)),
        }
    }
    Ok(None)
}
