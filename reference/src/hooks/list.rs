//! Hook lists and their handles: the copy-on-write, registration-ordered [`HookList`] and the snapshot a
//! stage takes of it, the one-at-a-time mount point ([`Slot`]: the approval seam, the code runtime), the
//! RAII [`HookGuard`], process-unique ids, and `next_applying`, the step every waterfall's `run` takes
//! (the next hook that applies to the call's agent, with the chain after it).
//!
//! # Snapshots
//! A stage runs the hooks registered when it starts, whatever is added or removed meanwhile: it holds the
//! list's current `Arc`. Taking it under the list's lock costs four atomic read-modify-writes (lock,
//! unlock, clone, drop). Each thread therefore remembers, per list, the version it last snapshotted and a
//! `Weak` to that table: while the list's version is unchanged, upgrading the `Weak` gives the same
//! table with two (upgrade, drop) and no lock. A `Weak` keeps no hook alive: a disposed hook is dropped
//! as soon as no stage holds a table with it.
//!
//! Spec: PIPE-001, PIPE-002 (the chains a stage runs: registration order, prepended hooks first), PIPE-011
//! (the result observers), SCOPE-022, SCOPE-024 (scoped hooks).

use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::scope::ScopeKey;

/// One registered hook with its owning scope (`None`: global).
pub struct HookEntry<T> {
    id: u64,
    scope: Option<ScopeKey>,
    pub(crate) hook: T,
}

impl<T> HookEntry<T> {
    /// Whether this hook observes calls of the agent `agent`.
    pub(crate) fn applies_to(&self, agent: Option<&ScopeKey>) -> bool {
        match (&self.scope, agent) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(tag), Some(agent)) => tag.is_self_or_ancestor_of(agent),
        }
    }
}

/// The first hook of `chain` that applies to calls of `agent`, with the chain after it (what that hook's
/// `next` runs); `None` at the end of the chain. Every waterfall's `run` steps with this.
#[inline]
pub(crate) fn next_applying<'c, T>(
    chain: &'c [HookEntry<T>],
    agent: Option<&ScopeKey>,
) -> Option<(&'c HookEntry<T>, &'c [HookEntry<T>])> {
    let mut rest = chain;
    while let Some((entry, tail)) = rest.split_first() {
        if entry.applies_to(agent) {
            return Some((entry, tail));
        }
        rest = tail;
    }
    None
}

/// A copy-on-write, registration-ordered hook list. The snapshot of an empty list (most lists, on most
/// calls) is one atomic load; of another, the table this thread last took while the list is unchanged
/// (see the module's # Snapshots), else one `Arc` clone under the lock.
pub(crate) struct HookList<T> {
    entries: Mutex<Arc<Vec<HookEntry<T>>>>,
    /// Whether `entries` is empty; written under the lock with it.
    empty: AtomicBool,
    /// Process-unique: the per-thread snapshot memory's key.
    id: u64,
    /// How many times `entries` was replaced; written under the lock, after the new table.
    version: AtomicU64,
}

/// The hooks registered at one moment: what a call runs, whatever is added or removed meanwhile.
pub(crate) struct Snapshot<T>(Option<Arc<Vec<HookEntry<T>>>>);

impl<T> std::ops::Deref for Snapshot<T> {
    type Target = [HookEntry<T>];

    fn deref(&self) -> &[HookEntry<T>] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<T: Clone + Send + Sync + 'static> HookList<T> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            entries: Mutex::new(Arc::new(Vec::new())),
            empty: AtomicBool::new(true),
            id: next_id(),
            version: AtomicU64::new(0),
        })
    }

    pub(crate) fn snapshot(&self) -> Snapshot<T> {
        if self.empty.load(Ordering::Acquire) {
            return Snapshot(None);
        }
        let version = self.version.load(Ordering::Acquire);
        if let Some(table) = remembered(self.id, version).and_then(|table| table.downcast().ok()) {
            return Snapshot(Some(table));
        }
        let (table, version) = {
            let guard = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            (Arc::clone(&guard), self.version.load(Ordering::Relaxed))
        };
        let weak: Weak<Vec<HookEntry<T>>> = Arc::downgrade(&table);
        remember(self.id, version, weak);
        Snapshot(Some(table))
    }

    /// The snapshot, when one of its hooks applies to calls of `agent`; `None`: none would run, so the
    /// stage takes its default path without building a chain.
    pub(crate) fn snapshot_for(&self, agent: Option<&ScopeKey>) -> Option<Snapshot<T>> {
        let chain = self.snapshot();
        chain.iter().any(|e| e.applies_to(agent)).then_some(chain)
    }

    pub(crate) fn add(self: &Arc<Self>, scope: Option<&ScopeKey>, hook: T) -> HookGuard {
        self.insert(scope, hook, false)
    }

    /// Register ahead of every hook already in the list (cordis `{ prepend: true }`): the newest prepended
    /// hook runs first.
    pub(crate) fn add_first(self: &Arc<Self>, scope: Option<&ScopeKey>, hook: T) -> HookGuard {
        self.insert(scope, hook, true)
    }

    fn insert(self: &Arc<Self>, scope: Option<&ScopeKey>, hook: T, first: bool) -> HookGuard {
        let id = next_id();
        let entry = HookEntry { id, scope: scope.cloned(), hook };
        self.mutate(|list| if first { list.insert(0, entry) } else { list.push(entry) });
        let weak: Weak<Self> = Arc::downgrade(self);
        HookGuard::new(move || {
            if let Some(list) = weak.upgrade() {
                list.mutate(|entries| entries.retain(|e| e.id != id));
            }
        })
    }

    /// Remove every hook registered for exactly `scope`.
    pub(crate) fn remove_scope(&self, scope: &ScopeKey) {
        self.mutate(|entries| entries.retain(|e| e.scope.as_ref() != Some(scope)));
    }

    /// Call every hook (all scopes), in registration order.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&T)) {
        for entry in self.snapshot().iter() {
            f(&entry.hook);
        }
    }

    fn mutate(&self, f: impl FnOnce(&mut Vec<HookEntry<T>>)) {
        let mut guard = match self.entries.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut next: Vec<HookEntry<T>> = guard
            .iter()
            .map(|e| HookEntry { id: e.id, scope: e.scope.clone(), hook: e.hook.clone() })
            .collect();
        f(&mut next);
        self.empty.store(next.is_empty(), Ordering::Release);
        *guard = Arc::new(next);
        // After the table: a reader that sees this version finds this table (or a later one) under the lock.
        self.version.store(self.version.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

/// How many lists a thread remembers a table of (a list whose slot another list took is read under its
/// lock until it takes the slot back).
const REMEMBERED: usize = 8;

/// The table a thread last took of one list, at that list's `version`.
struct Remembered {
    list: u64,
    version: u64,
    table: Weak<dyn Any + Send + Sync>,
}

thread_local! {
    /// This thread's remembered tables, one slot per `list id % REMEMBERED`.
    static TABLES: RefCell<[Option<Remembered>; REMEMBERED]> = const { RefCell::new([const { None }; REMEMBERED]) };
}

/// The table this thread remembers of list `list` at `version`, while some stage or the list still holds it.
/// Any copy-on-write table keyed by a process-unique id may use this memory (the registry's global guard
/// table does, keyed by the registry's id and generation).
pub(crate) fn remembered(list: u64, version: u64) -> Option<Arc<dyn Any + Send + Sync>> {
    TABLES
        .try_with(|tables| {
            let tables = tables.try_borrow().ok()?;
            let slot = tables[(list % REMEMBERED as u64) as usize].as_ref()?;
            (slot.list == list && slot.version == version).then(|| slot.table.upgrade()).flatten()
        })
        .ok()
        .flatten()
}

/// Remember `table`, list `list`'s table at `version`, for this thread's next snapshot of it.
pub(crate) fn remember(list: u64, version: u64, table: Weak<dyn Any + Send + Sync>) {
    let _ = TABLES.try_with(|tables| {
        if let Ok(mut tables) = tables.try_borrow_mut() {
            tables[(list % REMEMBERED as u64) as usize] = Some(Remembered { list, version, table });
        }
    });
}

/// One mounted value at a time (the approval seam, the code runtime): mounting replaces what is there;
/// the returned guard unmounts only what it mounted (a later mount survives an earlier guard's drop).
pub(crate) struct Slot<T> {
    current: Mutex<Option<(u64, T)>>,
}

impl<T: Clone + Send + 'static> Slot<T> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self { current: Mutex::new(None) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(u64, T)>> {
        self.current.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What is mounted right now.
    pub(crate) fn get(&self) -> Option<T> {
        self.lock().as_ref().map(|(_, value)| value.clone())
    }

    /// Mount `value`, replacing any mounted one.
    pub(crate) fn mount(self: &Arc<Self>, value: T) -> HookGuard {
        let id = next_id();
        let replaced = self.lock().replace((id, value));
        drop(replaced);
        let weak = Arc::downgrade(self);
        HookGuard::new(move || {
            let Some(slot) = weak.upgrade() else { return };
            let mut current = slot.lock();
            if current.as_ref().is_some_and(|(mounted, _)| *mounted == id) {
                let unmounted = current.take();
                drop(current);
                drop(unmounted);
            }
        })
    }
}

/// A process-unique id for registrations and hooks.
pub(crate) fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Unregisters its hook when dropped or [`dispose`](HookGuard::dispose)d.
#[must_use = "dropping the guard unregisters the hook immediately"]
pub struct HookGuard {
    dispose: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl HookGuard {
    pub(crate) fn new(dispose: impl FnOnce() + Send + Sync + 'static) -> Self {
        Self { dispose: Some(Box::new(dispose)) }
    }

    /// Unregister now.
    pub fn dispose(mut self) {
        if let Some(f) = self.dispose.take() {
            f();
        }
    }

    /// Keep the hook registered for the rest of the runtime's life.
    pub fn forget(mut self) {
        self.dispose = None;
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        if let Some(f) = self.dispose.take() {
            f();
        }
    }
}

impl std::fmt::Debug for HookGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookGuard").field("active", &self.dispose.is_some()).finish()
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(list: &HookList<Arc<u32>>) -> Vec<u32> {
        list.snapshot().iter().map(|e| *e.hook).collect()
    }

    /// A snapshot taken after a registration or a disposal sees it, on the thread that remembered the
    /// table before and on another one; lists sharing a memory slot keep their own tables.
    #[test]
    fn a_remembered_table_never_hides_a_change() {
        let lists: Vec<Arc<HookList<Arc<u32>>>> = (0..REMEMBERED + 1).map(|_| HookList::new()).collect();
        let guards: Vec<HookGuard> = lists.iter().zip(0u32..).map(|(l, n)| l.add(None, Arc::new(n))).collect();
        for (list, n) in lists.iter().zip(0u32..) {
            assert_eq!(hooks(list), [n]);
            assert_eq!(hooks(list), [n], "a remembered table is the list's");
        }
        // Each change happens while a stage still holds the table before it (so that table is alive).
        let first = &lists[0];
        let held = first.snapshot();
        let second = first.add(None, Arc::new(7));
        assert_eq!(hooks(first), [0, 7]);
        let elsewhere = Arc::clone(first);
        let third = std::thread::spawn(move || {
            let held = elsewhere.snapshot();
            assert_eq!(hooks(&elsewhere), [0, 7]);
            (elsewhere.add_first(None, Arc::new(9)), hooks(&elsewhere), held.len())
        })
        .join();
        let Ok((third, seen_there, held_there)) = third else { panic!("the other thread panicked") };
        assert_eq!((seen_there, held_there), (vec![9, 0, 7], 2));
        assert_eq!(hooks(first), [9, 0, 7]);
        let held_too = first.snapshot();
        drop(second);
        assert_eq!(hooks(first), [9, 0]);
        drop((third, guards));
        assert!(hooks(first).is_empty());
        assert_eq!((held.len(), held_too.len()), (1, 3), "a held snapshot keeps its table");
    }

    /// Remembering a table keeps no hook alive: once disposed and out of every snapshot, it is dropped.
    #[test]
    fn a_remembered_table_keeps_no_disposed_hook_alive() {
        let list = HookList::<Arc<u32>>::new();
        let hook = Arc::new(1);
        let guard = list.add(None, Arc::clone(&hook));
        let held = list.snapshot();
        assert_eq!(hooks(&list), [1]);
        drop(guard);
        assert_eq!(Arc::strong_count(&hook), 2, "the held snapshot still runs it");
        drop(held);
        assert_eq!(Arc::strong_count(&hook), 1);
    }

    #[test]
    fn a_slot_guard_unmounts_only_its_own_value() {
        let slot = Slot::<&'static str>::new();
        let first = slot.mount("first");
        assert_eq!(slot.get(), Some("first"));
        let second = slot.mount("second");
        drop(first);
        assert_eq!(slot.get(), Some("second"));
        drop(second);
        assert_eq!(slot.get(), None);
    }
}
