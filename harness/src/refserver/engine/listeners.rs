//! Listener fixtures on the reference runtime (`spec/README.md` § Listener fixtures): `setup.hooks` and
//! `hooks/add` register each kind through its agent's scope, the plain context, or a fixture plugin's
//! plain context (PIPE-024: disposing the plugin disposes the listener), and hold its guard.

use dsh_conformance::listener::{
    ChangeListener, DispatchLogListener, ExecuteListener, GuardListener, Hooks, ListenerCommon, PostExecuteListener,
    PreExecuteListener, ResultListener,
};
use dsh_tools::{HookGuard, ScopeKey};

use super::super::fixtures::hooks;
use super::super::rpc::{Failure, INVALID_STATE};
use super::{Engine, Guard, Held};

impl Engine {
    pub(super) fn add_setup_hooks(&self, hooks: &Hooks) -> Result<(), Failure> {
        for l in hooks.pre_execute.iter().flatten() {
            self.add_pre_execute(l, None)?;
        }
        for l in hooks.guards.iter().flatten() {
            self.add_guard(l, None)?;
        }
        for l in hooks.execute.iter().flatten() {
            self.add_execute(l, None)?;
        }
        for l in hooks.post_execute.iter().flatten() {
            self.add_post_execute(l, None)?;
        }
        for l in hooks.results.iter().flatten() {
            self.add_results(l, None)?;
        }
        for l in hooks.changes.iter().flatten() {
            self.add_changes(l, None)?;
        }
        for l in hooks.dispatch_log.iter().flatten() {
            self.add_dispatch_log(l, None)?;
        }
        Ok(())
    }

    /// Keeps a listener's guard under `alias`, else under the listener's id, with the agent or fixture
    /// plugin it was registered through (dropping that agent or disposing that plugin disposes it).
    fn hold_hook(&self, l: ListenerCommon<'_>, alias: Option<&str>, guard: HookGuard) {
        let held = Held {
            seq: 0,
            agent: l.agent.map(str::to_owned),
            plugin: l.plugin.map(str::to_owned),
            _guard: Guard::Hook(guard),
        };
        self.hold(alias.unwrap_or(l.id).to_owned(), held);
    }

    /// The scope a listener registers through: its agent's, or the plain context — its own, or a fixture
    /// plugin's (PIPE-024), which must not be disposed yet (a disposed fiber does not restart).
    fn listener_scope(&self, l: ListenerCommon<'_>) -> Result<Option<ScopeKey>, Failure> {
        if let Some(plugin) = l.plugin {
            if l.agent.is_some() {
                return Err(Failure::params(format!("listener {:?}: `plugin` and `agent` exclude each other", l.id)));
            }
            self.plugin_alive(plugin)?;
        }
        self.registering_scope(l.agent)
    }

    /// Fails when the setup names no such fixture plugin, or it was disposed already.
    pub(super) fn plugin_alive(&self, plugin: &str) -> Result<(), Failure> {
        let state = self.state();
        if !state.plugins.contains(plugin) {
            return Err(Failure::unknown("plugin", plugin));
        }
        if state.disposed_plugins.contains(plugin) {
            return Err(Failure::new(INVALID_STATE, format!("plugin {plugin:?} is disposed")));
        }
        Ok(())
    }

    pub(super) fn add_pre_execute(&self, l: &PreExecuteListener, alias: Option<&str>) -> Result<(), Failure> {
        let listener = hooks::pre_execute(l, &self.shared)?;
        let scope = self.listener_scope(l.common())?;
        let guard = if l.common().prepend {
            self.runtime.prepend_pre_execute(scope.as_ref(), listener)
        } else {
            self.runtime.on_pre_execute(scope.as_ref(), listener)
        };
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }

    pub(super) fn add_guard(&self, l: &GuardListener, alias: Option<&str>) -> Result<(), Failure> {
        let guard_fn = hooks::guard(l, &self.shared)?;
        let scope = self.listener_scope(l.common())?;
        let guard = self.runtime.guard_fallible(scope.as_ref(), guard_fn);
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }

    pub(super) fn add_execute(&self, l: &ExecuteListener, alias: Option<&str>) -> Result<(), Failure> {
        let wrapper = hooks::execute(l, &self.shared)?;
        let scope = self.listener_scope(l.common())?;
        let guard = if l.common().prepend {
            self.runtime.prepend_execute(scope.as_ref(), wrapper)
        } else {
            self.runtime.on_execute(scope.as_ref(), wrapper)
        };
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }

    pub(super) fn add_post_execute(&self, l: &PostExecuteListener, alias: Option<&str>) -> Result<(), Failure> {
        let listener = hooks::post_execute(l, &self.shared)?;
        let scope = self.listener_scope(l.common())?;
        let guard = if l.common().prepend {
            self.runtime.prepend_post_execute(scope.as_ref(), listener)
        } else {
            self.runtime.on_post_execute(scope.as_ref(), listener)
        };
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }

    /// A `tools/change` observer. `dsh-tools` notifies change observers of every registry change (there
    /// is no scoped variant): one registered through an agent is dropped with the agent.
    pub(super) fn add_changes(&self, l: &ChangeListener, alias: Option<&str>) -> Result<(), Failure> {
        let observer = hooks::changes(l, &self.shared)?;
        self.listener_scope(l.common())?;
        let guard =
            if l.common().prepend { self.runtime.prepend_change(observer) } else { self.runtime.on_change(observer) };
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }

    /// A `tools/code-dispatch-log` listener (RUN-046..RUN-049).
    pub(super) fn add_dispatch_log(&self, l: &DispatchLogListener, alias: Option<&str>) -> Result<(), Failure> {
        let listener = super::super::fixtures::dispatch_log::dispatch_log(l, &self.shared)?;
        let scope = self.listener_scope(l.common())?;
        let guard = if l.common().prepend {
            self.runtime.prepend_code_dispatch_log(scope.as_ref(), listener)
        } else {
            self.runtime.on_code_dispatch_log(scope.as_ref(), listener)
        };
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }

    pub(super) fn add_results(&self, l: &ResultListener, alias: Option<&str>) -> Result<(), Failure> {
        let observer = hooks::results(l, &self.shared, self.runtime.observer_failure_log())?;
        let scope = self.listener_scope(l.common())?;
        let guard = match (&scope, l.common().prepend) {
            (_, true) => self.runtime.prepend_result(scope.as_ref(), observer),
            (None, false) => self.runtime.on_result(observer),
            (Some(key), false) => self.runtime.on_result_in(key, observer),
        };
        self.hold_hook(l.common(), alias, guard);
        Ok(())
    }
}
