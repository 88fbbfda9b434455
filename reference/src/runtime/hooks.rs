//! The facade's hook registrations: guards (infallible and fallible), the `tools/pre-execute`,
//! `tools/execute` and `tools/post-execute` listeners, `tools/result` observers, `tools/change` observers,
//! the approval seam and the log sinks, each global or for one agent scope, appended or prepended.
//!
//! Spec: PIPE-001, PIPE-002, PIPE-010..PIPE-012, PIPE-014, PIPE-021, REG-019, REG-022.

use std::sync::Arc;

use crate::approval::ApprovalSeam;
use crate::hooks::{ChangeObserver, FallibleGuardFn, GuardFn, HookGuard, LogSink, PostExecuteListener, PreExecuteListener, ResultObserver};
use crate::pipeline::dispatch::ExecuteWrapper;
use crate::scope::ScopeKey;

use super::ToolRuntime;

impl ToolRuntime {

    /// Add a `tools/pre-execute` listener (global, or observing one agent scope and its nested scopes).
    pub fn on_pre_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PreExecuteListener>) -> HookGuard {
        self.inner.pipeline.pre_execute.add(scope, listener)
    }

    /// Add a monotonic guard (global, or applying to one agent scope).
    pub fn guard(&self, scope: Option<&ScopeKey>, guard: GuardFn) -> HookGuard {
        self.inner.pipeline.registry.add_guard(scope, guard)
    }

    /// Add a guard that may throw (global, or applying to one agent scope): an `Err` is the call's final
    /// result (PIPE-010), as when an upstream guard callback throws.
    pub fn guard_fallible(&self, scope: Option<&ScopeKey>, guard: FallibleGuardFn) -> HookGuard {
        self.inner.pipeline.registry.add_fallible_guard(scope, guard)
    }

    /// [`on_pre_execute`](Self::on_pre_execute) ahead of every listener already registered (the
    /// newest prepended listener runs first). PIPE-001, PIPE-002.
    pub fn prepend_pre_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PreExecuteListener>) -> HookGuard {
        self.inner.pipeline.pre_execute.add_first(scope, listener)
    }

    /// [`on_execute`](Self::on_execute) ahead of every wrapper already registered (the outermost wrapper).
    /// PIPE-001, PIPE-014.
    pub fn prepend_execute(&self, scope: Option<&ScopeKey>, wrapper: Arc<dyn ExecuteWrapper>) -> HookGuard {
        self.inner.pipeline.execute_wrappers.add_first(scope, wrapper)
    }

    /// [`on_post_execute`](Self::on_post_execute) ahead of every listener already registered. PIPE-001.
    pub fn prepend_post_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PostExecuteListener>) -> HookGuard {
        self.inner.pipeline.post_execute.add_first(scope, listener)
    }

    /// A `tools/result` observer ahead of every observer already registered (global with `None`, else
    /// for one agent scope and its nested scopes). PIPE-011, PIPE-012.
    pub fn prepend_result(&self, scope: Option<&ScopeKey>, observer: ResultObserver) -> HookGuard {
        self.inner.pipeline.observers.add_first(scope, observer)
    }

    /// Add a `tools/execute` around-wrapper (global, or for one agent scope and its nested scopes).
    pub fn on_execute(&self, scope: Option<&ScopeKey>, wrapper: Arc<dyn ExecuteWrapper>) -> HookGuard {
        self.inner.pipeline.execute_wrappers.add(scope, wrapper)
    }

    /// Add a `tools/post-execute` listener (global, or observing one agent scope and its nested scopes).
    pub fn on_post_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PostExecuteListener>) -> HookGuard {
        self.inner.pipeline.post_execute.add(scope, listener)
    }

    /// Mount the approval seam that services `ask` decisions (replacing any mounted one); dropping the
    /// guard unmounts it, after which `ask` degrades to deny again.
    pub fn mount_approval(&self, seam: Arc<dyn ApprovalSeam>) -> HookGuard {
        self.inner.pipeline.approval.mount(seam)
    }

    /// Observe registry changes (`tools/change`): one call per successful registration and per effective
    /// disposal (guards emit none). An observer that panics — throws, in upstream's terms — stops that
    /// notification; when it announced a registration, [`register`](Self::register) fails with the panic's
    /// message ([`RegisterErrorKind::ChangeListener`](crate::RegisterErrorKind::ChangeListener)) and the
    /// tool is not registered (REG-022).
    pub fn on_change(&self, observer: ChangeObserver) -> HookGuard {
        self.inner.pipeline.registry.changes.add(None, observer)
    }

    /// [`on_change`](Self::on_change) ahead of every observer already registered. REG-019.
    pub fn prepend_change(&self, observer: ChangeObserver) -> HookGuard {
        self.inner.pipeline.registry.changes.add_first(None, observer)
    }

    /// Observe every final result (all scopes).
    pub fn on_result(&self, observer: ResultObserver) -> HookGuard {
        self.inner.pipeline.observers.add(None, observer)
    }

    /// Receive the warnings the pipeline logs instead of failing a call (upstream's `ctx.logger.warn`):
    /// today a `tools/result` observer that panicked, as
    /// `tool "<name>" (<callId>): tools/result observer failed: <message>`. With no sink the lines are
    /// dropped. Dropping the guard removes the sink.
    pub fn on_log(&self, sink: LogSink) -> HookGuard {
        self.inner.pipeline.logs.add(None, sink)
    }

    /// Where a `tools/result` observer that finishes later (hands its work to a task) reports that
    /// work's failure, to be logged like an observer that panicked (PIPE-021).
    pub fn observer_failure_log(&self) -> crate::pipeline::result::ObserverFailureLog {
        crate::pipeline::result::ObserverFailureLog::new(self.inner.pipeline.logs.clone())
    }

    /// Observe final results of one agent scope (and its nested scopes) only.
    pub fn on_result_in(&self, scope: &ScopeKey, observer: ResultObserver) -> HookGuard {
        self.inner.pipeline.observers.add(Some(scope), observer)
    }
}
