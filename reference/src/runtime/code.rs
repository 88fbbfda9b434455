//! The facade's Code Mode services: the mounted code runtime, the `run_code` dispatch log and its
//! `tools/code-dispatch-log` waterfall, the session-append hook, and the reason attached to a caller's
//! abort.
//!
//! Spec: RUN-015, RUN-046..RUN-049, RUN-058, RUN-032.

use std::sync::Arc;

use crate::code::{CodeDispatchLogListener, CodeDispatchObserver, CodeRuntime};
use crate::execution::ExecutionToken;
use crate::hooks::{HookGuard, SessionAppendObserver, SessionEntry};
use crate::scope::ScopeKey;

use super::ToolRuntime;

impl ToolRuntime {

    /// Mount the code runtime (`ctx.codeRuntime`) that Code Mode assembly and `run_code` read at use
    /// time, replacing any mounted one; dropping the guard unmounts it.
    pub fn mount_code_runtime(&self, runtime: Arc<dyn CodeRuntime>) -> HookGuard {
        self.inner.code_runtime.mount(runtime)
    }

    /// The code runtime mounted right now, if any.
    pub fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.inner.code_runtime.get()
    }

    /// Observe the `run_code` dispatch log (upstream's `tool/code-dispatch-start` and
    /// `tool/code-dispatch` session entries): one record when a program's sub-call starts, one when it
    /// committed, for transport calls that have an agent scope. Dropping the guard stops observing.
    pub fn on_code_dispatch(&self, observer: CodeDispatchObserver) -> HookGuard {
        self.inner.dispatch_log.observers.add(None, observer)
    }

    /// Add a `tools/code-dispatch-log` listener (global, or seeing only the dispatches of one agent scope
    /// and its nested scopes): a waterfall over the durable log copy of each settled `run_code`
    /// sub-dispatch, before its [`CodeDispatchEvent::Settled`](crate::code::CodeDispatchEvent) record is
    /// reported. The listener may return replacement content (say a spill preview plus a locator for an
    /// oversized result); `next.run()` keeps it. Only the logged copy changes: the program already has the
    /// value and the sub-call's `tools/result` is untouched. Whatever it returns is logged unvalidated;
    /// a failing listener is contained (the original content is logged, with a warning to
    /// [`on_log`](Self::on_log) sinks). Dropping the guard removes it. RUN-046..RUN-049.
    pub fn on_code_dispatch_log(&self, scope: Option<&ScopeKey>, listener: Arc<dyn CodeDispatchLogListener>) -> HookGuard {
        self.inner.dispatch_log.listeners.add(scope, listener)
    }

    /// Observe every entry this runtime appends to an agent's session log (upstream
    /// `exec.agent.session.append`): the `run_code` dispatch log's records, and whatever code built on the
    /// runtime appends with [`append_session_entry`](Self::append_session_entry). Dropping the guard
    /// removes it. RUN-058.
    pub fn on_session_append(&self, observer: SessionAppendObserver) -> HookGuard {
        self.inner.dispatch_log.session.observe(observer)
    }

    /// Append one entry to `agent`'s session log: every [`on_session_append`](Self::on_session_append)
    /// observer sees it (the reference keeps no session itself; the host's observer is the log). RUN-058.
    pub fn append_session_entry(&self, agent: &ScopeKey, entry_type: &str, data: serde_json::Value) {
        let entry = SessionEntry { agent: agent.clone(), entry_type: entry_type.to_owned(), data };
        self.inner.dispatch_log.session.append(&entry);
    }

    /// [`on_code_dispatch_log`](Self::on_code_dispatch_log) ahead of every listener already registered.
    pub fn prepend_code_dispatch_log(&self, scope: Option<&ScopeKey>, listener: Arc<dyn CodeDispatchLogListener>) -> HookGuard {
        self.inner.dispatch_log.listeners.add_first(scope, listener)
    }

    /// Attach the reason of a caller's cancellation to the execution `token` (upstream
    /// `AbortController.abort(reason)`; `CancellationToken` carries none): set it, then cancel the
    /// signal. A `run_code` execution relays it to its run, which fails with `code run failed (abort):
    /// <reason>`; without one the reason is [`crate::code::DEFAULT_ABORT_REASON`]. Forgotten when the
    /// execution publishes its result.
    pub fn set_abort_reason(&self, token: ExecutionToken, reason: impl Into<String>) {
        self.inner.pipeline.abort_reasons.set(token, reason.into());
    }
}
