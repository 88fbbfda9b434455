//! REPL retention on the plugin side (seed 002 § 保留执行环境): each `code_run` passes the code runtime a
//! state owner — one per (agent scope, plugin instance) — and, in the same action that first passes it,
//! attaches the owner's release to the agent scope, so an owner passed without its release cannot exist.
//! The table dedupes: one owner and one release per agent however many calls it makes. The plugin's
//! teardown releases every remaining environment and cancels the agent-scope releases (nothing is left for
//! them). Whether state is actually kept is the runtime's mode: a `per-call` runtime ignores the owner.
//! A call with no agent has no owner, and runs fresh; so does a call whose agent scope was already
//! disposed (it arrived late): no owner is minted that nothing would release (CDM-050).
//!
//! # Teardown
//! The teardown closes the table in the same critical section that empties it, so no owner is minted
//! after it: a run whose body gets here after the unload began (it resolved `code_run` before the tools
//! were unregistered) is refused. A run holds its owner through a [`Lease`]; when the owner was released
//! while the lease was held — by the teardown or by the agent's disposal — the lease releases it once more
//! as the run settles, so an environment the run started after the release does not outlive it (a
//! release of an owner with no environment does nothing).
//!
//! Spec: CDM-036, CDM-037, CDM-038, CDM-044, CDM-050.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use dsh_tools::code::{CodeRuntime, StateOwner};
use dsh_tools::{HookGuard, ScopeKey, ToolFailure, ToolRuntime};

/// Distinguishes plugin instances (the seed's provider) in owner keys.
static INSTANCES: AtomicU64 = AtomicU64::new(1);

/// The failure of a `code_run` whose body starts after the plugin's teardown began (CDM-044).
pub(crate) const UNLOADING: &str = "dsh-codemode: the plugin is unloading; this code_run keeps no state";

#[derive(Default)]
struct Table {
    owners: HashMap<ScopeKey, (StateOwner, HookGuard)>,
    /// Set by the teardown: no owner is minted after it.
    closed: bool,
}

/// The owners this plugin instance has passed, by agent scope.
pub(crate) struct Retention {
    instance: u64,
    next: AtomicU64,
    code_runtime: Arc<dyn CodeRuntime>,
    table: Mutex<Table>,
}

/// A run's hold on its agent's state owner, from before the run starts until it has settled.
pub(crate) struct Lease {
    retention: Arc<Retention>,
    agent: ScopeKey,
    owner: StateOwner,
}

impl Lease {
    /// The owner to pass to the code runtime.
    pub(crate) fn owner(&self) -> StateOwner {
        self.owner.clone()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let table = self.retention.lock();
        let current = table.owners.get(&self.agent).is_some_and(|(owner, _)| owner == &self.owner);
        drop(table);
        if !current {
            // Released while this run held it: whatever the run started after the release goes now.
            self.retention.code_runtime.release(&self.owner);
        }
    }
}

impl Retention {
    pub(crate) fn new(code_runtime: Arc<dyn CodeRuntime>) -> Arc<Self> {
        Arc::new(Self {
            instance: INSTANCES.fetch_add(1, Ordering::Relaxed),
            next: AtomicU64::new(1),
            code_runtime,
            table: Mutex::new(Table::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lease on `agent`'s state owner, attaching the owner's release to the agent scope the first
    /// time; `Ok(None)` without an agent or when the agent scope was already disposed (CDM-050); refused
    /// once the teardown has begun (CDM-044).
    pub(crate) fn owner(self: &Arc<Self>, runtime: &ToolRuntime, agent: Option<&ScopeKey>) -> Result<Option<Lease>, ToolFailure> {
        let Some(agent) = agent else { return Ok(None) };
        let mut table = self.lock();
        if table.closed {
            return Err(ToolFailure::message(UNLOADING));
        }
        let lease = |owner: &StateOwner| Lease { retention: Arc::clone(self), agent: agent.clone(), owner: owner.clone() };
        if let Some((owner, _)) = table.owners.get(agent) {
            return Ok(Some(lease(owner)));
        }
        let owner = StateOwner::new(format!("dsh-codemode#{}/{}#{}", self.instance, agent.name(), self.next.fetch_add(1, Ordering::Relaxed)));
        let (released, this, key) = (owner.clone(), Arc::downgrade(self), agent.clone());
        // Attached only while the scope lives (one step against its disposal): a late call runs fresh.
        let Ok(release) = runtime.try_on_scope_dispose(agent, move || release_for(&this, &key, &released)) else {
            return Ok(None);
        };
        table.owners.insert(agent.clone(), (owner.clone(), release));
        Ok(Some(lease(&owner)))
    }

    /// Teardown: close the table, release every environment still held, and cancel the agent-scope
    /// releases.
    pub(crate) fn release_all(&self) {
        let owners: Vec<(StateOwner, HookGuard)> = {
            let mut table = self.lock();
            table.closed = true;
            table.owners.drain().map(|(_, entry)| entry).collect()
        };
        for (owner, release) in owners {
            self.code_runtime.release(&owner);
            release.dispose();
        }
    }
}

/// The agent scope went away: release its environment (once: the entry leaves the table here).
fn release_for(retention: &Weak<Retention>, agent: &ScopeKey, owner: &StateOwner) {
    let Some(retention) = retention.upgrade() else { return };
    let entry = retention.lock().owners.remove(agent);
    if let Some((_, guard)) = entry {
        retention.code_runtime.release(owner);
        guard.forget();
    }
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
