//! The `run_code` dispatch log's public records (upstream's `tool/code-dispatch-start` and
//! `tool/code-dispatch` session entries): one [`CodeDispatchEvent::Start`] when a program's sub-call
//! starts, one [`CodeDispatchEvent::Settled`] when it committed, reported by the bridge's pool to
//! [`crate::ToolRuntime::on_code_dispatch`] observers for transport calls that have an agent.
//!
//! Spec: RUN-015.

use std::sync::Arc;

use serde_json::Value;

use crate::scope::ScopeKey;

/// `tool/code-dispatch-start`: a sub-call of a `run_code` program was started (appended to the calling
/// agent's session upstream; only for a transport call with an agent).
#[derive(Clone, Debug)]
pub struct CodeDispatchStart {
    /// The agent the transport call ran for.
    pub agent: ScopeKey,
    /// The root call id of the transport call's tree.
    pub root_call_id: String,
    /// The transport call's id.
    pub parent_call_id: String,
    /// The sub-call's id, `<parentCallId>:code:<n>`.
    pub sub_call_id: String,
    /// The tool the program called.
    pub name: String,
    /// The arguments as dispatched (a detached snapshot).
    pub arguments: Value,
}

/// `tool/code-dispatch`: a sub-call of a `run_code` program was committed: the record its start reported,
/// and its outcome.
#[derive(Clone, Debug)]
pub struct CodeDispatch {
    /// The sub-call as [`CodeDispatchStart`] reported it (agent, ids, tool, arguments).
    pub call: CodeDispatchStart,
    /// Whether the sub-call's final result is a failure.
    pub is_error: bool,
    /// The final result's content (upstream's `tools/code-dispatch-log` waterfall has no listeners here).
    pub content: Vec<Value>,
}

/// One dispatch-log record, in the order the bridge produces them.
#[derive(Clone, Debug)]
pub enum CodeDispatchEvent {
    /// A sub-call started.
    Start(CodeDispatchStart),
    /// A sub-call committed.
    Settled(CodeDispatch),
}

/// An observer of dispatch-log records (see [`crate::ToolRuntime::on_code_dispatch`]).
pub type CodeDispatchObserver = Arc<dyn Fn(&CodeDispatchEvent) + Send + Sync>;
