//! The table of persistent environments both backends share (seed 002, `persistent-in-memory`): one slot
//! per [`StateOwner`], holding the owner's environment while it is idle. A run takes its owner's turn (runs
//! of one owner take turns, in arrival order; other owners are not held up), takes the environment out or
//! starts a fresh one, and hands it back when the program completed on its own — otherwise it is dropped,
//! and with it the engine or the process group. Releasing an owner removes its slot, fires the slot's
//! release token (a run in it ends as an abort) and drops an idle environment at once; a busy one is
//! dropped by its run as it settles. Nothing here expires on time.
//!
//! Spec: CDM-036, CDM-038, CDM-039, CDM-040, CDM-041.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::StateOwner;

/// One owner's slot.
pub(crate) struct Slot<E> {
    /// The idle environment (`None` while a run holds it, or before the first run).
    env: Arc<tokio::sync::Mutex<Option<E>>>,
    /// Fired when the owner is released.
    pub(crate) released: CancellationToken,
}

/// The owners' slots.
pub(crate) struct Retained<E> {
    slots: Mutex<BTreeMap<StateOwner, Arc<Slot<E>>>>,
}

impl<E> Default for Retained<E> {
    fn default() -> Self {
        Self { slots: Mutex::new(BTreeMap::new()) }
    }
}

/// A run's hold on its owner's environment: the environment it found (if any) and the turn.
pub(crate) struct Turn<E> {
    slot: Arc<Slot<E>>,
    guard: tokio::sync::OwnedMutexGuard<Option<E>>,
}

impl<E> Turn<E> {
    /// The idle environment, taken out (`None`: start a fresh one).
    pub(crate) fn take(&mut self) -> Option<E> {
        self.guard.take()
    }

    /// The release token of this owner.
    pub(crate) fn released(&self) -> &CancellationToken {
        &self.slot.released
    }

    /// End the turn, keeping `env` for the owner's next run unless the owner was released meanwhile (then
    /// it is dropped here).
    pub(crate) fn finish(mut self, env: Option<E>) {
        if self.slot.released.is_cancelled() {
            drop(env);
        } else {
            *self.guard = env;
        }
    }
}

impl<E: Send + 'static> Retained<E> {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<StateOwner, Arc<Slot<E>>>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait for `owner`'s turn. `None` when the owner was released while this run waited.
    pub(crate) async fn turn(&self, owner: &StateOwner) -> Option<Turn<E>> {
        let slot = {
            let mut slots = self.lock();
            Arc::clone(slots.entry(owner.clone()).or_insert_with(|| {
                Arc::new(Slot { env: Arc::new(tokio::sync::Mutex::new(None)), released: CancellationToken::new() })
            }))
        };
        let released = slot.released.clone();
        let guard = tokio::select! {
            biased;
            () = released.cancelled() => return None,
            guard = Arc::clone(&slot.env).lock_owned() => guard,
        };
        if slot.released.is_cancelled() {
            return None;
        }
        Some(Turn { slot, guard })
    }

    /// Release `owner`: see the module doc. Whether it had a slot.
    pub(crate) fn release(&self, owner: &StateOwner) -> bool {
        let Some(slot) = self.lock().remove(owner) else { return false };
        slot.released.cancel();
        if let Ok(mut idle) = slot.env.try_lock() {
            drop(idle.take());
        }
        true
    }

    /// Release every owner (the runtime is going away).
    pub(crate) fn release_all(&self) {
        let owners: Vec<StateOwner> = self.lock().keys().cloned().collect();
        for owner in owners {
            self.release(&owner);
        }
    }

    /// The owners with a live environment: idle in its slot, or held by a run.
    pub(crate) fn live(&self) -> Vec<StateOwner> {
        self.lock()
            .iter()
            .filter(|(_, slot)| slot.env.try_lock().map_or(true, |idle| idle.is_some()))
            .map(|(owner, _)| owner.clone())
            .collect()
    }
}
