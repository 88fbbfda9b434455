//! REPL retention on the plugin side (seed 002 § 保留执行环境): each `code_run` passes the code runtime a
//! state owner — one per (agent scope, plugin instance) — and, in the same action that first passes it,
//! attaches the owner's release to the agent scope, so an owner passed without its release cannot exist.
//! The table dedupes: one owner and one release per agent however many calls it makes. The plugin's
//! teardown releases every remaining environment and cancels the agent-scope releases (nothing is left for
//! them). Whether state is actually kept is the runtime's mode: a `per-call` runtime ignores the owner.
//! A call with no agent has no owner, and runs fresh.
//!
//! Spec: CDM-036, CDM-037, CDM-038.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use dsh_tools::code::{CodeRuntime, StateOwner};
use dsh_tools::{HookGuard, ScopeKey, ToolRuntime};

/// Distinguishes plugin instances (the seed's provider) in owner keys.
static INSTANCES: AtomicU64 = AtomicU64::new(1);

/// The owners this plugin instance has passed, by agent scope.
pub(crate) struct Retention {
    instance: u64,
    next: AtomicU64,
    code_runtime: Arc<dyn CodeRuntime>,
    owners: Mutex<HashMap<ScopeKey, (StateOwner, HookGuard)>>,
}

impl Retention {
    pub(crate) fn new(code_runtime: Arc<dyn CodeRuntime>) -> Arc<Self> {
        Arc::new(Self {
            instance: INSTANCES.fetch_add(1, Ordering::Relaxed),
            next: AtomicU64::new(1),
            code_runtime,
            owners: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ScopeKey, (StateOwner, HookGuard)>> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state owner of `agent`'s calls, attaching its release to the agent scope the first time.
    pub(crate) fn owner(self: &Arc<Self>, runtime: &ToolRuntime, agent: Option<&ScopeKey>) -> Option<StateOwner> {
        let agent = agent?;
        let mut owners = self.lock();
        if let Some((owner, _)) = owners.get(agent) {
            return Some(owner.clone());
        }
        let owner = StateOwner::new(format!("dsh-codemode#{}/{}#{}", self.instance, agent.name(), self.next.fetch_add(1, Ordering::Relaxed)));
        let (released, this, key) = (owner.clone(), Arc::downgrade(self), agent.clone());
        let release = runtime.on_scope_dispose(agent, move || release_for(&this, &key, &released));
        owners.insert(agent.clone(), (owner.clone(), release));
        Some(owner)
    }

    /// Teardown: release every environment still held, and cancel the agent-scope releases.
    pub(crate) fn release_all(&self) {
        let owners: Vec<(StateOwner, HookGuard)> = self.lock().drain().map(|(_, entry)| entry).collect();
        for (owner, release) in owners {
            self.code_runtime.release(&owner);
            release.dispose();
        }
    }
}

/// The agent scope went away: release its environment (once: the entry leaves the table here).
fn release_for(retention: &Weak<Retention>, agent: &ScopeKey, owner: &StateOwner) {
    let Some(retention) = retention.upgrade() else { return };
    let entry = retention.lock().remove(agent);
    if let Some((_, guard)) = entry {
        retention.code_runtime.release(owner);
        guard.forget();
    }
}
