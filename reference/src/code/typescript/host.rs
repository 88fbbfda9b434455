//! The per-run host state shared by the engine loop and the native functions the program can call: the
//! busy-time meter and the run's single terminal reason, the wakeup channel the loop parks on, the table of
//! pending host work (binding calls and timers), and every engine handle the host keeps (cleared before the
//! engine is torn down, so no Rust-held reference can keep a JavaScript object alive past the run: native
//! closures capture only the host, never an engine value).
//!
//! Spec: RUN-027 (busy-time budget; binding work is not busy time), RUN-028 (wall ceiling), RUN-031 (heap
//! cap), RUN-032 (abort), RUN-029 (output-limit ends the run).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Wake;
use std::thread::Thread;
use std::time::{Duration, Instant};

use rquickjs::{Constructor, Function, Value as JsValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::budget::{Charge, HeapBudget};
use super::ledger::Ledger;
use super::lossless::Intrinsics;
use crate::code::RunSignal;
use crate::callback::BoxFuture;

/// Why a run ended before its program settled. The first reason set wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Terminal {
    Busy = 1,
    Wall = 2,
    Abort = 3,
    OutputLimit = 4,
    HeapCap = 5,
    /// The caller dropped the run's future: nothing observes the outcome.
    Dropped = 6,
    /// The program called `process.exit(code)` ([`Meter::exit_code`]).
    Exit = 7,
    /// The persistent environment the run is in was released (CDM-040).
    Released = 8,
    /// A persistent run is over: its host takes no new work (a binding or timer of this run called from
    /// a later one starts nothing).
    Retired = 9,
}

impl Terminal {
    fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            1 => Self::Busy,
            2 => Self::Wall,
            3 => Self::Abort,
            4 => Self::OutputLimit,
            5 => Self::HeapCap,
            6 => Self::Dropped,
            7 => Self::Exit,
            8 => Self::Released,
            9 => Self::Retired,
            _ => return None,
        })
    }
}

const NO_SEGMENT: u64 = u64::MAX;

/// The wakeup key reserved for the loop's own watchers (the abort signal, the caller's drop); entry keys
/// start at 1.
pub(crate) const SIGNAL_KEY_RESERVED: u64 = 0;

/// Queued keys beyond twice the pending entries that make [`Host::insert`] drop the stale ones.
const COMPACT_SLACK: usize = 1024;

/// Busy time, the wall ceiling and the terminal reason; read by the interrupt handler while the engine runs.
pub(crate) struct Meter {
    start: Instant,
    budget_ns: u64,
    wall: Duration,
    busy_ns: AtomicU64,
    segment_start_ns: AtomicU64,
    terminal: AtomicU8,
    exit_code: AtomicI32,
    pub(crate) oom: Arc<AtomicBool>,
    /// The engine's heap budget, which the host's pending work is charged to (`budget.rs`).
    pub(crate) budget: Arc<HeapBudget>,
    signal: RunSignal,
    dropped: CancellationToken,
    released: Option<CancellationToken>,
}

fn ms_to_duration(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX)
}

impl Meter {
    pub(crate) fn new(
        compute_ms: f64,
        wall_ms: f64,
        budget: Arc<HeapBudget>,
        signal: RunSignal,
        dropped: CancellationToken,
        released: Option<CancellationToken>,
        start: Instant,
    ) -> Self {
        let compute = ms_to_duration(compute_ms);
        Self {
            start,
            budget_ns: u64::try_from(compute.as_nanos()).unwrap_or(u64::MAX),
            wall: ms_to_duration(wall_ms),
            busy_ns: AtomicU64::new(0),
            segment_start_ns: AtomicU64::new(NO_SEGMENT),
            terminal: AtomicU8::new(0),
            exit_code: AtomicI32::new(0),
            oom: Arc::clone(&budget.oom),
            budget,
            signal,
            dropped,
            released,
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Start charging busy time (the engine is about to run JavaScript). Nested calls are no-ops.
    pub(crate) fn enter(&self) -> bool {
        if self.segment_start_ns.load(Ordering::Relaxed) != NO_SEGMENT {
            return false;
        }
        self.segment_start_ns.store(self.now_ns(), Ordering::Relaxed);
        true
    }

    /// Stop charging busy time.
    pub(crate) fn leave(&self, entered: bool) {
        if !entered {
            return;
        }
        let start = self.segment_start_ns.swap(NO_SEGMENT, Ordering::Relaxed);
        if start != NO_SEGMENT {
            self.busy_ns.fetch_add(self.now_ns().saturating_sub(start), Ordering::Relaxed);
        }
    }

    /// Run `f` as busy (engine) time.
    pub(crate) fn busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let entered = self.enter();
        let r = f();
        self.leave(entered);
        r
    }

    /// Busy time so far, the current segment included.
    pub(crate) fn busy_time(&self) -> Duration {
        let mut ns = self.busy_ns.load(Ordering::Relaxed);
        let start = self.segment_start_ns.load(Ordering::Relaxed);
        if start != NO_SEGMENT {
            ns = ns.saturating_add(self.now_ns().saturating_sub(start));
        }
        Duration::from_nanos(ns)
    }

    /// Record why the run ends (the first reason wins).
    pub(crate) fn terminate(&self, reason: Terminal) {
        let _ = self.terminal.compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The program called `process.exit(code)`: the run ends as if its worker exited (unless an earlier
    /// reason already ended it).
    pub(crate) fn exit(&self, code: i32) {
        if self.terminal.load(Ordering::Acquire) == 0 {
            self.exit_code.store(code, Ordering::Release);
        }
        self.terminate(Terminal::Exit);
    }

    /// The code `process.exit` was called with (meaningful once the terminal reason is [`Terminal::Exit`]).
    pub(crate) fn exit_code(&self) -> i32 {
        self.exit_code.load(Ordering::Acquire)
    }

    /// The terminal reason, if any; a failed allocation counts even if the program caught the engine's
    /// out-of-memory error (upstream's isolate dies outright).
    pub(crate) fn terminal(&self) -> Option<Terminal> {
        if self.oom.load(Ordering::Relaxed) {
            self.terminate(Terminal::HeapCap);
        }
        Terminal::from_u8(self.terminal.load(Ordering::Acquire))
    }

    /// The time left before the wall ceiling.
    pub(crate) fn wall_left(&self) -> Duration {
        self.wall.saturating_sub(self.start.elapsed())
    }

    /// Check every limit; `true` = stop the engine now. This is the interrupt handler's body and the loop's
    /// check between host steps.
    pub(crate) fn should_stop(&self) -> bool {
        if self.terminal().is_some() {
            return true;
        }
        if self.oom.load(Ordering::Relaxed) {
            self.terminate(Terminal::HeapCap);
        } else if self.signal.aborted() {
            self.terminate(Terminal::Abort);
        } else if self.dropped.is_cancelled() {
            self.terminate(Terminal::Dropped);
        } else if self.released.as_ref().is_some_and(CancellationToken::is_cancelled) {
            self.terminate(Terminal::Released);
        } else if self.start.elapsed() >= self.wall {
            self.terminate(Terminal::Wall);
        } else if u64::try_from(self.busy_time().as_nanos()).unwrap_or(u64::MAX) > self.budget_ns {
            self.terminate(Terminal::Busy);
        }
        self.terminal().is_some()
    }
}

/// How long a parking loop spins before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// The loop's wakeup channel: wakers push the key of the entry that can make progress and unpark the
/// engine thread.
pub(crate) struct Wakeup {
    thread: Thread,
    ready: Mutex<Vec<u64>>,
    notified: AtomicBool,
}

impl Wakeup {
    pub(crate) fn new() -> Self {
        Self { thread: std::thread::current(), ready: Mutex::new(Vec::new()), notified: AtomicBool::new(false) }
    }

    /// Queue `key` and wake the loop; how many keys are queued now.
    pub(crate) fn push(&self, key: u64) -> usize {
        let queued = {
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            ready.push(key);
            ready.len()
        };
        self.notified.store(true, Ordering::Release);
        self.thread.unpark();
        queued
    }

    /// Drop the queued keys `keep` refuses (entries gone since they were queued), in order.
    pub(crate) fn compact(&self, keep: impl Fn(u64) -> bool) {
        let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
        ready.retain(|&key| key == SIGNAL_KEY_RESERVED || keep(key));
    }

    /// Take the keys woken so far.
    pub(crate) fn take(&self) -> Vec<u64> {
        self.notified.store(false, Ordering::Release);
        std::mem::take(&mut *self.ready.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Park until woken or `timeout` passes. A binding's reply usually arrives within microseconds (the
    /// sub-call runs on the caller's thread), and an unpark costs a context switch on each side, so the
    /// loop first spins briefly (bounded by [`SPIN`], yielding the core between checks).
    pub(crate) fn park(&self, timeout: Duration) {
        let started = std::time::Instant::now();
        while started.elapsed() < SPIN.min(timeout) {
            if self.notified.load(Ordering::Acquire) {
                return;
            }
            std::hint::spin_loop();
        }
        if !self.notified.load(Ordering::Acquire) {
            std::thread::park_timeout(timeout.saturating_sub(started.elapsed()));
        }
    }
}

/// The waker of one pending entry.
pub(crate) struct KeyWaker {
    pub(crate) key: u64,
    pub(crate) wakeup: Arc<Wakeup>,
}

impl Wake for KeyWaker {
    fn wake(self: Arc<Self>) {
        let _ = self.wakeup.push(self.key);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let _ = self.wakeup.push(self.key);
    }
}

/// Host work the program is waiting on.
pub(crate) enum Entry<'js> {
    /// A binding call: its future, the program promise's settle functions, and the rejection's shape.
    Call {
        future: BoxFuture<'static, Result<Value, String>>,
        resolve: Function<'js>,
        reject: Function<'js>,
        member: String,
        class: Option<Constructor<'js>>,
        /// What the pending call costs the host (`budget.rs`), released when the entry goes.
        charge: Charge,
    },
    /// A `setTimeout` / `setInterval` timer.
    Timer {
        sleep: Pin<Box<tokio::time::Sleep>>,
        callback: Function<'js>,
        args: Vec<JsValue<'js>>,
        repeat: Option<Duration>,
        /// What the pending timer costs the host (`budget.rs`), released when the entry goes.
        charge: Charge,
    },
}

/// Engine handles the host keeps for the run (cleared before teardown).
pub(crate) struct Handles<'js> {
    pub(crate) intrinsics: Intrinsics<'js>,
    pub(crate) error: Constructor<'js>,
    pub(crate) describe: Function<'js>,
}

/// One run's host state.
pub(crate) struct Host<'js> {
    pub(crate) meter: Arc<Meter>,
    pub(crate) wakeup: Arc<Wakeup>,
    pub(crate) ledger: RefCell<Ledger>,
    pub(crate) pending: RefCell<BTreeMap<u64, Entry<'js>>>,
    next_key: Cell<u64>,
    pub(crate) handles: RefCell<Option<Handles<'js>>>,
    /// Each namespace's rejection class, by namespace index. Native functions look it up here rather than
    /// capturing it: a JavaScript value held by a Rust closure is invisible to the engine's cycle collector,
    /// so a program linking the class back to the function would leak both past the runtime.
    pub(crate) classes: RefCell<Vec<Option<Constructor<'js>>>>,
    /// A persistent run's slot object (`{ global, keep }`, see `repl.rs`).
    pub(crate) repl: RefCell<Option<rquickjs::Object<'js>>>,
    /// What the admitted log entries cost the host beyond their ledger bytes (`budget.rs`), released
    /// when the run ends (the logs leave with the result).
    pub(crate) log_charge: RefCell<Option<Charge>>,
}

impl<'js> Host<'js> {
    pub(crate) fn new(meter: Arc<Meter>, wakeup: Arc<Wakeup>, ledger: Ledger) -> Self {
        Self {
            meter,
            wakeup,
            ledger: RefCell::new(ledger),
            pending: RefCell::new(BTreeMap::new()),
            next_key: Cell::new(1),
            handles: RefCell::new(None),
            classes: RefCell::new(Vec::new()),
            repl: RefCell::new(None),
            log_charge: RefCell::new(None),
        }
    }

    /// Whether the run is over (no new host work may start).
    pub(crate) fn ended(&self) -> bool {
        self.meter.terminal().is_some()
    }

    /// Queue an entry; it is polled on the loop's next turn. Once the run has ended the entry is dropped
    /// unstarted (key 0).
    ///
    /// Its key waits in the wakeup queue until the loop next runs, which a program's synchronous part
    /// postpones as long as its busy budget lasts; an entry removed meanwhile (`clearTimeout` right after
    /// `setTimeout`, in a loop) leaves its key behind. Those stale keys are dropped here once the queue
    /// holds more than twice the pending entries (plus [`COMPACT_SLACK`]), so the queue stays within a
    /// few words per pending entry, which the entry's charge covers (`budget.rs`), however long the
    /// program churns.
    pub(crate) fn insert(&self, entry: Entry<'js>) -> u64 {
        if self.ended() {
            drop(entry);
            return 0;
        }
        let key = self.next_key.get();
        self.next_key.set(key + 1);
        let pending = {
            let mut pending = self.pending.borrow_mut();
            pending.insert(key, entry);
            pending.len()
        };
        if self.wakeup.push(key) > 2 * pending + COMPACT_SLACK {
            let pending = self.pending.borrow();
            self.wakeup.compact(|key| pending.contains_key(&key));
        }
        key
    }

    /// Drop every engine handle and pending entry (a pending binding future is dropped here: nothing the
    /// program started outlives the run).
    pub(crate) fn clear(&self) {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        drop(pending);
        self.handles.borrow_mut().take();
        self.classes.borrow_mut().clear();
        self.repl.borrow_mut().take();
        self.log_charge.borrow_mut().take();
    }

    /// What a native function the program called answers once the run is over (the limits were checked
    /// just before): the engine's own uncatchable `interrupted` error, so the program stops at once rather
    /// than when the interrupt handler next runs (a loop whose every step is a costly host call would
    /// otherwise go on for thousands of steps). `None` for a retired run's function called from a later run,
    /// which starts nothing and throws nothing.
    pub(crate) fn interrupt(&self, ctx: &rquickjs::Ctx<'js>) -> Option<rquickjs::Error> {
        if self.meter.terminal() == Some(Terminal::Retired) {
            return None;
        }
        let _ = rquickjs::Exception::throw_internal(ctx, "interrupted");
        let error = ctx.catch();
        // SAFETY: `ctx` is a live context of this thread and `error` a value of it; marking an error object
        // uncatchable is what the engine does itself when its interrupt handler says stop.
        #[allow(unsafe_code)]
        unsafe {
            rquickjs::qjs::JS_SetUncatchableError(ctx.as_raw().as_ptr(), error.as_raw());
        }
        Some(ctx.throw(error))
    }

    /// Charge the host `bytes` against the heap budget; `None` (and the run is over, as the heap cap)
    /// when they do not fit.
    pub(crate) fn charge(&self, bytes: usize) -> Option<Charge> {
        self.meter.budget.charge(bytes)
    }

    /// Charge one admitted log entry's overhead; `false` (and the run is over) when it does not fit.
    pub(crate) fn charge_log(&self) -> bool {
        let Some(charge) = self.charge(super::budget::LOG_ENTRY_BYTES) else { return false };
        let mut slot = self.log_charge.borrow_mut();
        match slot.as_mut() {
            Some(total) => total.absorb(charge),
            None => *slot = Some(charge),
        }
        true
    }
}
