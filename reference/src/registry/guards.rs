//! Guards in the registry layers: adding a monotonic or fallible guard to the global layer or an agent
//! scope's (the guard handle removes it, and an emptied scope layer with it), and the live guard pass a
//! call makes — global first, then the scope chain farthest first, each in registration order.
//!
//! # Live iteration
//! The pass re-reads the layers before each guard, as upstream iterates its live entry tables: a guard
//! registered (in a layer not yet passed, or later in the current one) by an earlier guard runs in the
//! same pass, and a disposed guard not yet reached does not. A layer's table has generations: when its
//! last guard is disposed, a guard registered afterwards starts a new generation, which a pass already
//! walking that layer does not see (upstream replaces an emptied table with a fresh one, and the
//! iterator keeps the old). The scope chain's layers are the ones that exist when the pass leaves the
//! global layer.
//!
//! Spec: PIPE-007, PIPE-023, SCOPE-014, SCOPE-016, SCOPE-021.

use std::sync::Arc;
use std::sync::atomic::Ordering;

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
        // Minted under the lock, so each table's ids grow in push order (the live pass relies on it).
        let id = {
            let mut layers = self.write();
            let id = next_id();
            let layer = match scope {
                None => &mut layers.global,
                Some(key) => layers.scoped.entry(key.clone()).or_default(),
            };
            if layer.guards.is_empty() {
                layer.guard_generation = next_id();
            }
            layer.guards.push((id, guard));
            self.guard_count.fetch_add(1, Ordering::SeqCst);
            id
        };
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
            let before = layer.guards.len();
            layer.guards.retain(|(g, _)| *g != id);
            registry.guard_count.fetch_sub(before - layer.guards.len(), Ordering::SeqCst);
            let empty = layer.is_empty();
            if let (Some(key), true) = (&scope, empty) {
                layers.scoped.remove(key);
            }
        })
    }

    /// The next guard of a live pass for a call of `agent` (see the module's # Live iteration), or `None`
    /// when the pass is over. The registry lock is released before the guard runs.
    pub(crate) fn next_guard(&self, agent: Option<&ScopeKey>, pass: &mut GuardPass) -> Option<FallibleGuardFn> {
        // No guard anywhere: nothing can run in this pass.
        if self.guard_count.load(Ordering::SeqCst) == 0 {
            return None;
        }
        // Nothing was left after the last guard, and the registry has not changed since: the pass is over
        // without taking the lock again.
        if pass.exhausted_at.take().is_some_and(|generation| self.unchanged_since(generation)) {
            return None;
        }
        let layers = self.read();
        loop {
            let layer = match pass.layer {
                0 => Some(&layers.global),
                n => {
                    let chain = pass.chain.get_or_insert_with(|| {
                        // Farthest ancestor first; only the layers that exist now.
                        let mut keys: Vec<ScopeKey> = agent
                            .map(|a| a.chain().filter(|k| layers.scoped.contains_key(*k)).cloned().collect())
                            .unwrap_or_default();
                        keys.reverse();
                        keys
                    });
                    let key = chain.get(n - 1)?;
                    layers.scoped.get(key)
                }
            };
            let Some(layer) = layer else {
                pass.enter_next_layer();
                continue;
            };
            match pass.generation {
                None => pass.generation = Some(layer.guard_generation),
                Some(generation) if generation != layer.guard_generation => {
                    pass.enter_next_layer();
                    continue;
                }
                Some(_) => {}
            }
            if let Some((id, guard)) = layer.guards.iter().find(|(id, _)| *id > pass.after) {
                pass.after = *id;
                let later_here = layer.guards.iter().any(|(id, _)| *id > pass.after);
                let later_layers = match &pass.chain {
                    // Still in the global layer: the chain's layers as they exist now.
                    None => agent.is_some_and(|a| a.chain().any(|k| layers.scoped.get(k).is_some_and(|l| !l.guards.is_empty()))),
                    Some(chain) => chain.iter().skip(pass.layer).any(|k| layers.scoped.get(k).is_some_and(|l| !l.guards.is_empty())),
                };
                if !later_here && !later_layers {
                    // Read under the lock, so it is the generation of what was just read.
                    pass.exhausted_at = Some(self.generation.load(Ordering::SeqCst));
                }
                return Some(Arc::clone(guard));
            }
            pass.enter_next_layer();
        }
    }
}

/// Where a live guard pass stands: the layer it walks (0 global, then the chain's), that layer's table
/// generation, and the id of the last guard it ran there; and, when no guard was left after that one,
/// the registry generation it was read at (unchanged, the pass is over without another read).
#[derive(Debug, Default)]
pub(crate) struct GuardPass {
    layer: usize,
    generation: Option<u64>,
    after: u64,
    chain: Option<Vec<ScopeKey>>,
    exhausted_at: Option<u64>,
}

impl GuardPass {
    fn enter_next_layer(&mut self) {
        self.layer += 1;
        self.generation = None;
        self.after = 0;
    }
}
