//! The `run_code` dispatch log: its public records (upstream's `tool/code-dispatch-start` and
//! `tool/code-dispatch` session entries) — one [`CodeDispatchEvent::Start`] when a program's sub-call
//! starts, one [`CodeDispatchEvent::Settled`] when it committed, reported by the bridge's pool to
//! [`crate::ToolRuntime::on_code_dispatch`] observers for transport calls that have an agent — and the
//! `tools/code-dispatch-log` waterfall ([`CodeDispatchLogListener`], registered with
//! [`crate::ToolRuntime::on_code_dispatch_log`]) that may replace the content of the settle record only:
//! the durable log copy (e.g. a spill policy's preview plus locator for an oversized result). The program
//! already received the value and the sub-call's `tools/result` is unchanged. Agent-scoped listeners see
//! only that agent's dispatches (and those of its nested scopes). A listener's returned value is logged
//! as it is, unvalidated, as rc.8 does (its type says content blocks; it logs a `42` as `42`). A listener
//! that fails (an `Err`, or a panic) is contained: the original settled content is logged and the warning
//! `tools: code-dispatch-log listener failed for <name>: <message>; logging the original settled content`
//! goes to the log sinks ([`crate::ToolRuntime::on_log`]).
//!
//! Each record is also a session entry (`tool/code-dispatch-start` / `tool/code-dispatch` with the logged
//! data) reported to the runtime's session-append observers (`hooks/session.rs`, RUN-058).
//!
//! Spec: RUN-015, RUN-046..RUN-049, RUN-058.

use std::sync::Arc;

use serde_json::Value;

use crate::callback::{BoxFuture, Contained};
use crate::error::ToolFailure;
use crate::hooks::{HookEntry, HookList, LogSink, SessionEntry, SessionLog, next_applying};
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
    /// What the `tools/code-dispatch-log` waterfall returned: with no listener (or a failing one) the
    /// final result's content as an array of blocks; otherwise whatever the listeners returned, unvalidated.
    pub content: Value,
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

/// One settled sub-dispatch about to be logged, as the `tools/code-dispatch-log` waterfall sees it
/// (upstream `CodeDispatchLog`): the outer call's identity and the sub-call's ([`CodeDispatchStart`]),
/// whether it failed, and its complete model-facing content (what its `tools/result` carried).
#[derive(Clone, Debug)]
pub struct CodeDispatchLog {
    /// The sub-call: agent, root and parent (outer `run_code`) call ids, sub-call id, tool, arguments.
    pub call: CodeDispatchStart,
    /// Whether the sub-call settled as an error.
    pub is_error: bool,
    /// The final result's content blocks.
    pub content: Vec<Value>,
}

/// What a dispatch-log listener produces: the value to log as `content` (any JSON value: it is not
/// validated), or a failure, which is contained (the original content is logged, with a warning).
pub type DispatchLogOutcome = Result<Value, ToolFailure>;

/// One link of the `tools/code-dispatch-log` waterfall. Call `next.run()` for what the rest of the chain
/// logs (ending in the settled content unchanged), or return replacement content without calling it.
pub trait CodeDispatchLogListener: Send + Sync {
    /// Shape the logged copy of one settled sub-dispatch.
    fn call<'a>(&'a self, dispatch: &'a CodeDispatchLog, next: DispatchLogNext<'a>) -> BoxFuture<'a, DispatchLogOutcome>;
}

struct FnDispatchLogListener<F>(F);

impl<F> CodeDispatchLogListener for FnDispatchLogListener<F>
where
    F: for<'a> Fn(&'a CodeDispatchLog, DispatchLogNext<'a>) -> BoxFuture<'a, DispatchLogOutcome> + Send + Sync,
{
    fn call<'a>(&'a self, dispatch: &'a CodeDispatchLog, next: DispatchLogNext<'a>) -> BoxFuture<'a, DispatchLogOutcome> {
        (self.0)(dispatch, next)
    }
}

/// A dispatch-log listener from a closure.
pub fn code_dispatch_log_fn<F>(f: F) -> Arc<dyn CodeDispatchLogListener>
where
    F: for<'a> Fn(&'a CodeDispatchLog, DispatchLogNext<'a>) -> BoxFuture<'a, DispatchLogOutcome> + Send + Sync + 'static,
{
    Arc::new(FnDispatchLogListener(f))
}

/// The rest of a dispatch-log chain; consumed by [`DispatchLogNext::run`].
pub struct DispatchLogNext<'a> {
    chain: &'a [HookEntry<Arc<dyn CodeDispatchLogListener>>],
    dispatch: &'a CodeDispatchLog,
}

impl<'a> DispatchLogNext<'a> {
    /// Run the next listener that sees this agent's dispatches, or resolve to the settled content
    /// (as an array of blocks) at the end of the chain.
    pub fn run(self) -> BoxFuture<'a, DispatchLogOutcome> {
        if let Some((entry, tail)) = next_applying(self.chain, Some(&self.dispatch.call.agent)) {
            return entry.hook.call(self.dispatch, DispatchLogNext { chain: tail, ..self });
        }
        let content = Value::Array(self.dispatch.content.iter().map(crate::value::deep_clone).collect());
        Box::pin(std::future::ready(Ok(content)))
    }
}

/// The dispatch log's hook tables, shared by the facade (registration) and every run's pool (use).
#[derive(Clone)]
pub(crate) struct DispatchLogHooks {
    /// Observers of the records.
    pub(crate) observers: Arc<HookList<CodeDispatchObserver>>,
    /// The `tools/code-dispatch-log` waterfall.
    pub(crate) listeners: Arc<HookList<Arc<dyn CodeDispatchLogListener>>>,
    /// The runtime's session log, each record's entry goes to (RUN-058).
    pub(crate) session: SessionLog,
}

impl DispatchLogHooks {
    pub(crate) fn new() -> Self {
        Self { observers: HookList::new(), listeners: HookList::new(), session: SessionLog::new() }
    }

    /// Report one record to every observer (an observer that panics is skipped), then append it to the
    /// agent's session log.
    pub(crate) fn emit(&self, event: &CodeDispatchEvent) {
        for entry in self.observers.snapshot().iter() {
            let _ = crate::callback::contain(|| (entry.hook)(event));
        }
        self.session.append(&session_entry(event));
    }

    /// Run the waterfall over `dispatch`, then report its settle record. Contained: a failing listener
    /// logs a warning to `logs` and the original content is recorded.
    pub(crate) async fn log_settled(self, dispatch: CodeDispatchLog, logs: Arc<HookList<LogSink>>) {
        let chain = self.listeners.snapshot();
        let shaped = Contained(DispatchLogNext { chain: &chain, dispatch: &dispatch }.run()).await;
        let content = match shaped {
            Ok(Ok(content)) => content,
            Ok(Err(failure)) => fallback(&dispatch, &failure.message, &logs),
            Err(panic) => fallback(&dispatch, &panic, &logs),
        };
        let CodeDispatchLog { call, is_error, content: settled } = dispatch;
        self.emit(&CodeDispatchEvent::Settled(CodeDispatch { call, is_error, content }));
        for block in settled {
            crate::value::dismantle(block);
        }
    }
}

/// The session entry of one record: upstream's `tool/code-dispatch-start` / `tool/code-dispatch` data, keys
/// in upstream's order.
fn session_entry(event: &CodeDispatchEvent) -> SessionEntry {
    let (call, entry_type) = match event {
        CodeDispatchEvent::Start(call) => (call, "tool/code-dispatch-start"),
        CodeDispatchEvent::Settled(done) => (&done.call, "tool/code-dispatch"),
    };
    let mut data = serde_json::Map::new();
    data.insert("rootCallId".into(), call.root_call_id.clone().into());
    data.insert("parentCallId".into(), call.parent_call_id.clone().into());
    data.insert("subCallId".into(), call.sub_call_id.clone().into());
    data.insert("name".into(), call.name.clone().into());
    data.insert("arguments".into(), crate::value::deep_clone(&call.arguments));
    if let CodeDispatchEvent::Settled(done) = event {
        data.insert("isError".into(), done.is_error.into());
        data.insert("content".into(), crate::value::deep_clone(&done.content));
    }
    SessionEntry { agent: call.agent.clone(), entry_type: entry_type.to_owned(), data: Value::Object(data) }
}

/// The original content, after warning that a listener failed with `message`.
fn fallback(dispatch: &CodeDispatchLog, message: &str, logs: &HookList<LogSink>) -> Value {
    let line = format!(
        "tools: code-dispatch-log listener failed for {}: {message}; logging the original settled content",
        dispatch.call.name
    );
    for entry in logs.snapshot().iter() {
        let _ = crate::callback::contain(|| (entry.hook)(&line));
    }
    Value::Array(dispatch.content.iter().map(crate::value::deep_clone).collect())
}
