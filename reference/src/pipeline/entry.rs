//! Call entry: the lossless argument snapshot (JavaScript property order; a lossy value, i.e. one holding
//! `-0`, fails the call before every phase — even before the pre-abort check), the registry-minted token,
//! the content finalizer captured from the definition visible at entry, and the `code` executor collapse
//! decided here (upstream `createExecution`): a collapsed call never reaches policy. Its finalizer is
//! dropped unless the caller had already cancelled, as upstream's `finalizerFor` does.
//!
//! Spec: ARG-001, ARG-002, ARG-003, ARG-017, PIPE-019, UNK-011, CODE-006, CODE-007, CODE-014, FIN-004.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;


use crate::definition::FinalizeContentFn;
use crate::execution::{AbortReasons, CallState, ExecutionToken, ToolExecution, ToolExecutionInput};
use crate::registry::{EntryView, RegisteredTool, Registry};
use crate::value::js_snapshot;

/// Per-call registry state kept outside the immutable execution view.
pub(crate) struct Call {
    pub(crate) exec: Arc<ToolExecution>,
    pub(crate) finalizer: Option<FinalizeContentFn>,
    pub(crate) body_invoked: AtomicBool,
    /// The arguments were not lossless JSON; the snapshot failed and the call fails before every phase.
    pub(crate) snapshot_failed: bool,
    /// The `code` collapse outcome decided at entry.
    pub(crate) collapse: Collapse,
    /// The definition visible at entry, and the registry generation it was read at: the body stage reuses
    /// it while the registry is unchanged instead of resolving the name again.
    pub(crate) visible: Option<Arc<RegisteredTool>>,
    pub(crate) generation: u64,
}

/// The `code` executor collapse as decided at entry (CODE-006, CODE-007).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Collapse {
    /// Not collapsed: the ordinary pipeline.
    No,
    /// Collapsed: the final result is the code-only `UNKNOWN_TOOL`; no finalizer.
    Rejected,
    /// Collapsed with the caller already cancelled: `ABORTED_BEFORE_DISPATCH`, finalizer applied.
    PreAborted,
}

/// The failure of a lossy argument snapshot.
pub(crate) const LOSSY_ARGUMENTS: &str = "tool execution arguments must be losslessly JSON-serializable";

/// Materialize the execution, reading the visible definition and the effective mode from `registry`. The
/// input's `root_call_id` is the root of a nested call's tree (the `run_code` bridge passes its own root);
/// absent, the call is its own root. `reasons` are the runtime's attached abort reasons, which the execution
/// reads its caller's reason from.
pub(crate) fn create(registry: &Registry, reasons: AbortReasons, input: ToolExecutionInput) -> Call {
    let ToolExecutionInput { call_id, name, mut arguments, signal, agent, parent, root_call_id } = input;
    let EntryView { tool: visible, collapsed, generation } = registry.entry_view(&name, agent.as_ref(), parent.is_some());
    // One read of the caller's signal decides both the outcome and the finalizer, as upstream's does (only
    // a collapsed call reads it here: reading a token takes its lock).
    let collapse = match collapsed {
        false => Collapse::No,
        true if signal.is_cancelled() => Collapse::PreAborted,
        true => Collapse::Rejected,
    };
    let finalizer = match collapse {
        Collapse::Rejected => None,
        Collapse::No | Collapse::PreAborted => visible.as_ref().and_then(|t| t.def.finalize_content.clone()),
    };
    let snapshot_failed = !js_snapshot(&mut arguments);
    if snapshot_failed {
        // Upstream's execution then has no arguments at all; `null` stands for that here.
        crate::value::dismantle(std::mem::take(&mut arguments));
    }
    let exec = Arc::new(ToolExecution {
        token: ExecutionToken::mint(),
        root_call_id: root_call_id.unwrap_or_else(|| call_id.clone()),
        call_id,
        name,
        arguments: Arc::new(arguments),
        signal,
        agent,
        parent,
        reasons,
        state: CallState::default(),
    });
    Call { exec, finalizer, body_invoked: AtomicBool::new(false), snapshot_failed, collapse, visible, generation }
}
