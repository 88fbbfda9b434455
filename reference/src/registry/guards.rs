//! Guards in the registry layers: adding a monotonic or fallible guard to the global layer or an agent
//! scope's (the guard handle removes it, and an emptied scope layer with it), and the live guard list a
//! call must pass — global first, then the scope chain farthest first, each in registration order.
//!
//! Spec: PIPE-007, SCOPE-014, SCOPE-016, SCOPE-021.

use std::sync::Arc;

use super::Registry;
use crate::hooks::{FallibleGuardFn, GuardFn, HookGuard, next_id};
use crate::scope::ScopeKey;

impl Registry {
    /// Add a guard to a layer.
    pub(crate) fn add_guard(self: &Arc<Self>, scope: Option<&ScopeKey>, guard: GuardFn) -> HookGuard {
        self.add_fallible_guard(scope, Arc::new(move |exec| Ok(guard(exec))))
    }

    /// Add a guard that may throw to a layer.
    pub(crate) fn add_fallible_guard(self: &Arc<Self>, scope: Option<&ScopeKey>, guard: FallibleGuardFn) -> HookGuard {
        let id = next_id();
        {
            let mut layers = self.write();
            let layer = match scope {
                None => &mut layers.global,
                Some(key) => layers.scoped.entry(key.clone()).or_default(),
            };
            layer.guards.push((id, guard));
        }
        let weak = Arc::downgrade(self);
        let scope = scope.cloned();
        HookGuard::new(move || {
            let Some(registry) = weak.upgrade() else { return };
            let mut layers = registry.write();
            let layer = match &scope {
                None => Some(&mut layers.global),
                Some(key) => layers.scoped.get_mut(key),
            };
            let Some(layer) = layer else { return };
            layer.guards.retain(|(g, _)| *g != id);
            let empty = layer.is_empty();
            if let (Some(key), true) = (&scope, empty) {
                layers.scoped.remove(key);
            }
        })
    }

    /// The live guards a call of `agent` must pass: global first, then the scope chain farthest first.
    pub(crate) fn guards_for(&self, agent: Option<&ScopeKey>) -> Vec<FallibleGuardFn> {
        let layers = self.read();
        let mut out: Vec<FallibleGuardFn> = layers.global.guards.iter().map(|(_, g)| Arc::clone(g)).collect();
        if let Some(agent) = agent {
            let chain: Vec<&ScopeKey> = agent.chain().collect();
            for key in chain.into_iter().rev() {
                if let Some(layer) = layers.scoped.get(key) {
                    out.extend(layer.guards.iter().map(|(_, g)| Arc::clone(g)));
                }
            }
        }
        out
    }
}
