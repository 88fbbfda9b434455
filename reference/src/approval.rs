//! The approval seam: how an `ask` pre-execute decision is serviced when a deployment mounts an approver.
//! Without one, `ask` degrades to a denial.
//!
//! Spec: PIPE-004, APPR-001..APPR-006, APPR-009.

use tokio_util::sync::CancellationToken;

use crate::callback::BoxFuture;
use crate::error::ToolFailure;
use crate::scope::ScopeKey;

/// One approval request.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    /// The calling agent (calls without an agent never reach the seam).
    pub agent: &'a ScopeKey,
    /// The tool name.
    pub tool_name: &'a str,
    /// The model's call id.
    pub call_id: &'a str,
    /// The `ask` reason, if any.
    pub reason: Option<&'a str>,
    /// The caller's signal.
    pub signal: &'a CancellationToken,
}

/// The approver's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// Proceed (guards still run).
    AllowedOnce,
    /// A human said no: `the user rejected tool "<name>"`.
    Rejected,
    /// The request was cancelled: `approval for tool "<name>" was cancelled`; with a cancelled caller the
    /// call becomes `ABORTED_BEFORE_DISPATCH`.
    Cancelled,
    /// No channel: `tool "<name>" requires approval, but no approval channel is available`.
    Unavailable,
}

/// A mounted approver.
pub trait ApprovalSeam: Send + Sync {
    /// Ask; a failure becomes the call's final result.
    fn request<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Result<ApprovalOutcome, ToolFailure>>;
}
