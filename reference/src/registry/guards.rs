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
//! # Held tables
//! A pass holds the table of the layer it walks (an `Arc`; tables are copy-on-write) and runs its guards
//! unlocked. While the registry's generation is the one the table was read at, the table is still the
//! layer's, so the next guard comes from it without the lock. Each thread also remembers the global
//! layer's table with the generation it was read at (the hook lists' snapshot memory, holding a `Weak`),
//! so a pass over an unchanged registry starts without the lock too: two atomic read-modify-writes for
//! the global guards instead of four per guard.
//!
//! Spec: PIPE-007, PIPE-023, SCOPE-014, SCOPE-016, SCOPE-021.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use super::Registry;
use super::layer::GuardTable;
use crate::hooks::{FallibleGuardFn, GuardFn, HookGuard, next_id, remember, remembered};
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
            let table = Arc::make_mut(&mut layer.guards);
            if table.entries.is_empty() {
                table.generation = next_id();
            }
            table.entries.push((id, guard));
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
            let table = Arc::make_mut(&mut layer.guards);
            let before = table.entries.len();
            table.entries.retain(|(g, _)| *g != id);
            registry.guard_count.fetch_sub(before - table.entries.len(), Ordering::SeqCst);
            let empty = layer.is_empty();
            if let (Some(key), true) = (&scope, empty) {
                layers.scoped.remove(key);
            }
        })
    }

    /// The next guard of a live pass for a call of `agent` (see the module's # Live iteration), or `None`
    /// when the pass is over. The registry lock is released before the guard runs: the guard is borrowed
    /// from the table the pass holds.
    pub(crate) fn next_guard<'p>(&self, agent: Option<&ScopeKey>, pass: &'p mut GuardPass) -> Option<&'p FallibleGuardFn> {
        // No guard anywhere: nothing can run in this pass.
        if self.guard_count.load(Ordering::SeqCst) == 0 {
            return None;
        }
        // Nothing was left after the last guard, and the registry has not changed since: the pass is over
        // without taking the lock again.
        if pass.exhausted_at.take().is_some_and(|generation| self.unchanged_since(generation)) {
            return None;
        }
        if pass.layer == 0 && pass.held.is_none() && pass.generation.is_none() {
            self.recall_global(pass);
        }
        match self.next_held(agent, pass) {
            Some(Some(index)) => return pass.held.as_ref().map(|held| &held.table.entries[index].1),
            Some(None) => return None,
            None => {}
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
                None => pass.generation = Some(layer.guards.generation),
                Some(generation) if generation != layer.guards.generation => {
                    pass.enter_next_layer();
                    continue;
                }
                Some(_) => {}
            }
            let entries = &layer.guards.entries;
            if let Some(index) = entries.iter().position(|(id, _)| *id > pass.after) {
                pass.after = entries[index].0;
                let later_here = index + 1 < entries.len();
                let later_layers = match &pass.chain {
                    // Still in the global layer: the chain's layers as they exist now.
                    None => agent.is_some_and(|a| a.chain().any(|k| layers.scoped.get(k).is_some_and(|l| !l.guards.entries.is_empty()))),
                    Some(chain) => chain.iter().skip(pass.layer).any(|k| layers.scoped.get(k).is_some_and(|l| !l.guards.entries.is_empty())),
                };
                // Read under the lock, so it is the generation of what was just read.
                let at = self.generation.load(Ordering::SeqCst);
                if !later_here && !later_layers {
                    pass.exhausted_at = Some(at);
                }
                let table = Arc::clone(&layer.guards);
                if pass.layer == 0 {
                    let weak: Weak<GuardTable> = Arc::downgrade(&table);
                    remember(self.id, at, weak);
                }
                let held = pass.held.insert(Held { table, at });
                return Some(&held.table.entries[index].1);
            }
            pass.enter_next_layer();
        }
    }

    /// Start a pass on the global table this thread remembers at the registry's current generation, if
    /// any (see the module's # Held tables).
    fn recall_global(&self, pass: &mut GuardPass) {
        let at = self.generation.load(Ordering::SeqCst);
        if let Some(table) = remembered(self.id, at).and_then(|table| table.downcast::<GuardTable>().ok()) {
            pass.generation = Some(table.generation);
            pass.held = Some(Held { table, at });
        }
    }

    /// The next guard from the table the pass holds, while the registry is unchanged since it was read:
    /// `Some(Some(index))`; `Some(None)`: the pass is over; `None`: the registry must be read.
    fn next_held(&self, agent: Option<&ScopeKey>, pass: &mut GuardPass) -> Option<Option<usize>> {
        let held = pass.held.as_ref().filter(|held| self.unchanged_since(held.at))?;
        let entries = &held.table.entries;
        let index = entries.iter().position(|(id, _)| *id > pass.after);
        // Only the global layer can tell, unlocked, that no later layer has a guard: every guard the
        // registry counts is in this table, or the call has no agent.
        let no_later_layers =
            pass.layer == 0 && (agent.is_none() || self.guard_count.load(Ordering::SeqCst) == entries.len());
        match index {
            Some(index) => {
                pass.after = entries[index].0;
                if index + 1 == entries.len() && no_later_layers {
                    pass.exhausted_at = Some(held.at);
                }
                Some(Some(index))
            }
            None if no_later_layers => Some(None),
            None => None,
        }
    }
}

/// The table a pass walks, and the registry generation it was read at.
struct Held {
    table: Arc<GuardTable>,
    at: u64,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("guards", &self.table.entries.len()).field("at", &self.at).finish()
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
    /// The table of the layer being walked (see the module's # Held tables).
    held: Option<Held>,
}

impl GuardPass {
    fn enter_next_layer(&mut self) {
        self.layer += 1;
        self.generation = None;
        self.after = 0;
        self.held = None;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use crate::definition::{OutputDeclaration, Parameters, ToolDefinition};
    use crate::execution::ToolExecutionInput;
    use crate::hooks::HookGuard;
    use crate::runtime::{ToolRuntime, ToolsConfig};
    use crate::scope::ScopeKey;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        match tokio::runtime::Builder::new_current_thread().build() {
            Ok(rt) => rt.block_on(f),
            Err(e) => panic!("runtime: {e}"),
        }
    }

    fn echo() -> ToolDefinition {
        ToolDefinition::new(
            "echo",
            "d",
            Parameters::Raw(json!({"type": "object"})),
            OutputDeclaration { schema: json!({"type": "string"}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(|_, _| Box::pin(async { Ok(json!("ok")) })),
        )
    }

    type Log = Arc<Mutex<Vec<String>>>;
    type Handles = Arc<Mutex<Vec<(String, HookGuard)>>>;

    /// Register global guard `name`: it logs itself with the call id and, on the call `when`, runs `then`.
    fn guard(rt: &ToolRuntime, log: &Log, handles: &Handles, name: &str, when: &str, then: Arc<dyn Fn() + Send + Sync>) {
        let (log, label, when) = (Arc::clone(log), name.to_owned(), when.to_owned());
        let handle = rt.guard(
            None,
            Arc::new(move |exec| {
                if let Ok(mut log) = log.lock() {
                    log.push(format!("{label}@{}", exec.call_id));
                }
                if exec.call_id == when {
                    then();
                }
                None
            }),
        );
        if let Ok(mut handles) = handles.lock() {
            handles.push((name.to_owned(), handle));
        }
    }

    fn dispose(handles: &Handles, name: &str) {
        let taken = handles.lock().ok().and_then(|mut h| h.iter().position(|(n, _)| n == name).map(|i| h.remove(i)));
        drop(taken);
    }

    fn run(rt: &ToolRuntime, calls: &[&str], agent: Option<&ScopeKey>) {
        block_on(async {
            for id in calls {
                let mut input = ToolExecutionInput::new(*id, "echo", json!({}));
                input.agent = agent.cloned();
                assert!(!rt.execute(input).await.is_error());
            }
        });
    }

    fn taken(log: &Log) -> Vec<String> {
        log.lock().map(|mut l| std::mem::take(&mut *l)).unwrap_or_default()
    }

    /// Passes that start on the global table this thread remembers keep the live rules: a guard an
    /// earlier guard registers runs in the same pass, a guard it disposes does not, and a guard that
    /// replaces the last one of its generation waits for the next pass.
    #[test]
    fn a_remembered_global_table_keeps_the_live_pass_rules() {
        let rt = ToolRuntime::new(ToolsConfig::default());
        let _echo = rt.register(echo(), None);
        let (log, handles): (Log, Handles) = Default::default();
        // c2 (a pass on the remembered table): a registers c, and disposes b before it runs.
        let (rt2, log2, handles2) = (rt.clone(), Arc::clone(&log), Arc::clone(&handles));
        let then: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            guard(&rt2, &log2, &handles2, "c", "", Arc::new(|| {}));
            dispose(&handles2, "b");
        });
        guard(&rt, &log, &handles, "a", "c2", then);
        guard(&rt, &log, &handles, "b", "", Arc::new(|| {}));
        run(&rt, &["c1", "c2", "c3"], None);
        assert_eq!(taken(&log), ["a@c1", "b@c1", "a@c2", "c@c2", "a@c3", "c@c3"]);

        // c5, on the remembered table: e, the only guard, disposes itself and registers d, which belongs to a
        // new generation and waits for c6.
        dispose(&handles, "a");
        let (rt2, log2, handles2) = (rt.clone(), Arc::clone(&log), Arc::clone(&handles));
        dispose(&handles, "c");
        let then: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            dispose(&handles2, "e");
            guard(&rt2, &log2, &handles2, "d", "", Arc::new(|| {}));
        });
        guard(&rt, &log, &handles, "e", "c5", then);
        run(&rt, &["c4", "c5", "c6"], None);
        assert_eq!(taken(&log), ["e@c4", "e@c5", "d@c6"]);
    }

    /// A pass for an agent on a remembered global table still walks the agent's layers.
    #[test]
    fn a_remembered_global_table_leaves_the_agent_layers_to_the_pass() {
        let rt = ToolRuntime::new(ToolsConfig::default());
        let _echo = rt.register(echo(), None);
        let (log, handles): (Log, Handles) = Default::default();
        guard(&rt, &log, &handles, "g", "", Arc::new(|| {}));
        let agent = ScopeKey::new("agent");
        let scoped_log = Arc::clone(&log);
        let _scoped = rt.guard(
            Some(&agent),
            Arc::new(move |exec| {
                if let Ok(mut log) = scoped_log.lock() {
                    log.push(format!("s@{}", exec.call_id));
                }
                None
            }),
        );
        run(&rt, &["c1", "c2"], None);
        run(&rt, &["c3", "c4"], Some(&agent));
        assert_eq!(taken(&log), ["g@c1", "g@c2", "g@c3", "s@c3", "g@c4", "s@c4"]);
    }
}
