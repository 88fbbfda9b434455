//! The facade's scope lifecycle: disposing an agent scope (its tools, hooks, masks, executor and prompt
//! sections), effects attached to a scope's disposal, and scopes this runtime opened.
//!
//! Spec: SCOPE-016, CDM-005, CDM-050.

use std::sync::Arc;

use crate::hooks::HookGuard;
use crate::scope::ScopeKey;

use super::ToolRuntime;

impl ToolRuntime {

    /// Dispose everything registered for `scope` — its tools, guards and hooks — as disposing an agent's
    /// context does upstream. Outstanding handles for them become no-ops.
    pub fn dispose_scope(&self, scope: &ScopeKey) {
        self.inner.pipeline.pre_execute.remove_scope(scope);
        self.inner.pipeline.execute_wrappers.remove_scope(scope);
        self.inner.pipeline.post_execute.remove_scope(scope);
        self.inner.pipeline.observers.remove_scope(scope);
        self.inner.dispatch_log.listeners.remove_scope(scope);
        self.inner.pipeline.registry.dispose_scope(scope);
        self.inner.executors.remove_scope(scope);
        if let Some(link) = self.inner.prompt.get() {
            link.dispose_scope(scope);
        }
        self.inner.scope_effects.run(scope);
    }

    /// Run `effect` once when `scope` is disposed ([`dispose_scope`](Self::dispose_scope)), after its tools,
    /// hooks and executor are gone — upstream's effect on an agent context. Dropping the guard first
    /// cancels it. A plugin attaches per-agent cleanup here (dsh-codemode releases the agent's persistent
    /// code environment); the effect outlives the plugin unless the plugin drops the guard. On a scope
    /// already disposed the effect runs at once (nothing else ever would); see
    /// [`try_on_scope_dispose`](Self::try_on_scope_dispose) to tell the two apart.
    pub fn on_scope_dispose(&self, scope: &ScopeKey, effect: impl FnOnce() + Send + 'static) -> HookGuard {
        self.try_on_scope_dispose(scope, effect).unwrap_or_else(|effect| {
            effect();
            HookGuard::new(|| {})
        })
    }

    /// [`on_scope_dispose`](Self::on_scope_dispose), but `Err(effect)` (not run, not attached) when `scope`
    /// was already disposed: a call that arrives after its agent went away can then decline to create what
    /// the effect would release (dsh-codemode runs such a call without a kept environment, CDM-050). The
    /// check and the attachment are one step against [`dispose_scope`](Self::dispose_scope).
    pub fn try_on_scope_dispose<F: FnOnce() + Send + 'static>(&self, scope: &ScopeKey, effect: F) -> Result<HookGuard, Box<dyn FnOnce() + Send>> {
        let id = self.inner.scope_effects.add(scope, Box::new(effect))?;
        let effects = Arc::downgrade(&self.inner.scope_effects);
        Ok(HookGuard::new(move || {
            if let Some(effects) = effects.upgrade() {
                effects.cancel(id);
            }
        }))
    }

    /// A fresh agent scope (nested in `parent` when given) that this runtime knows
    /// ([`knows_scope`](Self::knows_scope)); otherwise the same as [`ScopeKey::new`] / [`ScopeKey::child`].
    /// Open a scope here when a plugin needs to check it was handed a real one (dsh-codemode refuses a
    /// preset scope its runtime does not know, CDM-050).
    pub fn open_scope(&self, name: impl Into<String>, parent: Option<&ScopeKey>) -> ScopeKey {
        ScopeKey::opened(name, parent, self.inner.id)
    }

    /// Whether `scope`, or a scope enclosing it, was opened by this runtime ([`open_scope`](Self::open_scope)).
    pub fn knows_scope(&self, scope: &ScopeKey) -> bool {
        scope.chain().any(|k| k.origin() == self.inner.id)
    }
}
