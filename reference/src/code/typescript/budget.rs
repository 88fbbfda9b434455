//! The run's heap budget, engine and host together. QuickJS runs in the host process, so what a program
//! makes the host hold outside the engine's heap is host memory the engine's allocator never sees: a
//! pending timer (its tokio sleep, its slot in the pending table, its argument list), a pending binding
//! call (the argument copied out of the engine — which the binding keeps, and `run_code`'s bridge copies
//! once more for its dispatch log —, the binding's future, the settle functions), a captured log entry's
//! bookkeeping, an unhandled rejection's recorded message. [`HeapBudget`] is one byte count shared by the
//! engine's counting allocator ([`CountingAlloc`]) and the host: each such thing is charged an honest size
//! ([`Charge`], released when it is dropped: the call settles, the timer fires or is cleared, the run
//! ends), and when the engine's heap plus the host's charges would pass `max_heap_bytes`, the charge is
//! refused and the run ends exactly as the engine's own heap exhaustion ends it: `worker-exit` with
//! upstream's heap-limit text (RUN-031), so no program that fits changes its outcome.
//!
//! Chosen over count bounds (at most N timers, N pending calls): a count bound is either too small for an
//! honest program or too large for one whose entries are big (a timer with 10,000 arguments, a call with a
//! 1 MiB argument), while a byte budget bounds host memory by the cap the embedder already sets. The text
//! of captured logs is not charged here: the output ledger (`maxOutputBytes`) is its own bound, and only a
//! log entry's overhead beyond its ledger bytes is charged (an empty `console.log("")` costs the ledger 3
//! bytes and the host a `String` plus an allocation).
//!
//! Spec: RUN-031 (heap cap → worker-exit).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rquickjs::allocator::{Allocator, RustAllocator};
use serde_json::Value;

/// Allocation room after the heap cap is hit, so the engine can unwind the interrupted program.
const OOM_SLACK_BYTES: usize = 4 * 1024 * 1024;

/// Fixed host cost of one pending timer: its pending-table slot (`Entry`, a B-tree node's share), the
/// boxed tokio sleep (whose timer-wheel entry it holds), its waker keys (the wakeup queue holds at most a
/// few per pending entry: `Host::insert` drops the keys of removed ones).
pub(crate) const TIMER_BYTES: usize = 384;
/// Host cost of one extra argument a timer keeps for its callback (an engine handle).
pub(crate) const TIMER_ARG_BYTES: usize = std::mem::size_of::<rquickjs::Value<'static>>();
/// Fixed host cost of one pending binding call: its slot, the binding's boxed future (a transport's holds
/// channels, names and the call's context), the member name, the settle functions' handles.
pub(crate) const CALL_BYTES: usize = 1024;
/// How many copies of a binding call's argument the host may hold while it is pending: the binding's own,
/// and the one `run_code`'s bridge keeps for its dispatch log.
pub(crate) const CALL_ARGUMENT_COPIES: usize = 2;
/// Host cost of one captured log entry beyond its ledger bytes: the `String` in the logs, its recorded
/// size, and the allocator's per-allocation overhead.
pub(crate) const LOG_ENTRY_BYTES: usize = std::mem::size_of::<String>() + std::mem::size_of::<u64>() + 16;
/// Host cost of one recorded unhandled rejection beyond its message's bytes.
pub(crate) const REJECTION_BYTES: usize = 64;

/// One engine's heap budget: the engine allocator's bytes and the host's charges against one cap. The
/// engine's count is kept by its allocator on the engine's thread; atomics let the host and the interrupt
/// handler read it.
#[derive(Debug)]
pub(crate) struct HeapBudget {
    limit: usize,
    engine: AtomicUsize,
    host: AtomicUsize,
    /// Set once an allocation or a charge was refused: the run ends as the heap cap.
    pub(crate) oom: Arc<AtomicBool>,
}

impl HeapBudget {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self { limit, engine: AtomicUsize::new(0), host: AtomicUsize::new(0), oom: Arc::new(AtomicBool::new(false)) })
    }

    /// Whether the engine may allocate `size` more bytes (after a refusal, within the unwinding slack).
    fn admit_engine(&self, size: usize) -> bool {
        let cap = if self.oom.load(Ordering::Relaxed) { self.limit.saturating_add(OOM_SLACK_BYTES) } else { self.limit };
        let used = self.engine.load(Ordering::Relaxed).saturating_add(self.host.load(Ordering::Relaxed));
        if used.saturating_add(size) > cap {
            self.oom.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Charge the host `bytes`, or refuse (and end the run as the heap cap) when the engine's heap plus the
    /// host's charges would pass the cap. Nothing is charged once the run hit the cap.
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        if self.oom.load(Ordering::Relaxed) {
            return None;
        }
        let host = self.host.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes);
        if self.engine.load(Ordering::Relaxed).saturating_add(host) > self.limit {
            self.host.fetch_sub(bytes, Ordering::Relaxed);
            self.oom.store(true, Ordering::Relaxed);
            return None;
        }
        Some(Charge { budget: Arc::clone(self), bytes })
    }

    /// Bytes the host holds charged now.
    #[cfg(test)]
    pub(crate) fn host_bytes(&self) -> usize {
        self.host.load(Ordering::Relaxed)
    }
}

/// Host bytes charged to a [`HeapBudget`], released when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<HeapBudget>,
    bytes: usize,
}

impl Charge {
    /// Add `other`'s bytes to this charge (one release for both).
    pub(crate) fn absorb(&mut self, other: Charge) {
        self.bytes += other.bytes;
        std::mem::forget(other);
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.host.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// An honest estimate of the host memory a JSON value holds: each node's `Value`, each string's and
/// key's bytes, each object entry's map slot. Iterative (values may be deep).
pub(crate) fn value_bytes(value: &Value) -> usize {
    const NODE: usize = std::mem::size_of::<Value>();
    // An object entry: the key `String`, the value, the map's hash-index slot.
    const ENTRY: usize = std::mem::size_of::<String>() + NODE + 16;
    let mut total = NODE;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) => total += s.len(),
            Value::Array(items) => {
                total += items.len() * NODE;
                stack.extend(items.iter());
            }
            Value::Object(map) => {
                for (key, item) in map {
                    total += ENTRY + key.len();
                    stack.push(item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    total
}

/// A counting allocator over Rust's: allocations that would take the engine's heap plus the host's
/// charges past the cap fail and raise the OOM flag, which the interrupt handler turns into the run's
/// terminal `worker-exit`.
pub(crate) struct CountingAlloc {
    used: usize,
    budget: Arc<HeapBudget>,
}

impl CountingAlloc {
    pub(crate) fn new(budget: Arc<HeapBudget>) -> Self {
        Self { used: 0, budget }
    }

    fn publish(&self) {
        self.budget.engine.store(self.used, Ordering::Relaxed);
    }
}

// SAFETY: every method delegates to `RustAllocator`, which upholds the trait's contract (null or a
// usize-aligned region of at least the requested size; `usable_size` reports the region's size); this
// wrapper only refuses some requests by returning null and keeps a byte count from `usable_size`.
#[allow(unsafe_code)]
unsafe impl Allocator for CountingAlloc {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.budget.admit_engine(size) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.alloc(size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just returned by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
            self.publish();
        }
        ptr
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        if !self.budget.admit_engine(count.saturating_mul(size)) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.calloc(count, size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just returned by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
            self.publish();
        }
        ptr
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: the caller guarantees `ptr` came from this allocator, i.e. from `RustAllocator`.
        unsafe {
            self.used = self.used.saturating_sub(RustAllocator::usable_size(ptr));
            RustAllocator.dealloc(ptr);
        }
        self.publish();
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees a non-null `ptr` came from this allocator.
        let old = if ptr.is_null() { 0 } else { unsafe { RustAllocator::usable_size(ptr) } };
        if new_size > old && !self.budget.admit_engine(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as above; `RustAllocator.realloc` accepts its own pointers.
        let new = unsafe { RustAllocator.realloc(ptr, new_size) };
        if !new.is_null() {
            // SAFETY: `new` was just returned by `RustAllocator`.
            self.used = self.used.saturating_sub(old) + unsafe { RustAllocator::usable_size(new) };
            self.publish();
        }
        new
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller guarantees `ptr` came from this allocator.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn charges_share_the_cap_with_the_engine_and_release_on_drop() {
        let budget = HeapBudget::new(1000);
        budget.engine.store(600, Ordering::Relaxed);
        let first = budget.charge(300).unwrap();
        assert_eq!(budget.host_bytes(), 300);
        assert!(!budget.admit_engine(200), "the engine's allocation counts the host's charges");
        assert!(budget.oom.load(Ordering::Relaxed));
        // After the cap was hit nothing more is charged, even what would fit.
        assert!(budget.charge(1).is_none());
        drop(first);
        assert_eq!(budget.host_bytes(), 0);

        let budget = HeapBudget::new(1000);
        let mut a = budget.charge(400).unwrap();
        a.absorb(budget.charge(400).unwrap());
        assert!(budget.charge(300).is_none(), "refused past the cap");
        assert_eq!(budget.host_bytes(), 800, "a refused charge leaves nothing behind");
        drop(a);
        assert_eq!(budget.host_bytes(), 0);
    }

    #[test]
    fn values_are_sized_by_what_they_hold() {
        let node = std::mem::size_of::<Value>();
        assert_eq!(value_bytes(&Value::Null), node);
        assert_eq!(value_bytes(&serde_json::json!("x".repeat(1000))), node + 1000);
        // A wide array costs a node per element, however short its JSON text.
        let wide = Value::Array(vec![serde_json::json!(0); 1000]);
        assert_eq!(value_bytes(&wide), node + 1000 * node);
        assert!(value_bytes(&serde_json::json!({"key": [1, 2]})) > 3 * node + 3);
    }
}
