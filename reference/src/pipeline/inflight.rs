//! The bodies in flight, and the hard ceiling on each: a body that is still pending after its first poll
//! is listed in the pipeline's [`InFlight`] table until it settles, and is dropped — its call failing with
//! `TOOL_TIMEOUT` — when it outlives the ceiling, or `ABORTED` when the embedder abandons it by hand.
//!
//! Cancellation stays cooperative: the ceiling is for bodies that ignore their signal, which would
//! otherwise run for ever (also after a dropped `execute` future, whose rest runs on in the background).
//! This is the one place a started body is dropped before it completes; ARCHITECTURE.md's invariant says
//! so. A body ready at its first poll costs nothing here: no entry, no clock.
//!
//! The clock is a process-wide reaper thread on the wall clock (`Instant`), not a tokio timer: a paused
//! tokio clock auto-advances while a body waits, and would fire every ceiling at once.
//!
//! No catalog rule (issue 39); upstream has no ceiling (a body that never settles never settles).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::error::{ErrorCode, ToolFailure};
use crate::execution::{ExecutionToken, ToolExecution};
use crate::scope::ScopeKey;

/// The ceiling a runtime starts with: 15 minutes.
pub const DEFAULT_BODY_CEILING: Duration = Duration::from_secs(15 * 60);

/// One body in flight, as [`ToolRuntime::in_flight`](crate::ToolRuntime::in_flight) lists it.
#[derive(Clone, Debug)]
pub struct InFlightBody {
    /// The execution (pass it to [`ToolRuntime::abandon`](crate::ToolRuntime::abandon)).
    pub token: ExecutionToken,
    /// The model's call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The calling agent, if any.
    pub agent: Option<ScopeKey>,
    /// How long the body has run.
    pub running_for: Duration,
    /// Whether its signal is cancelled (a body still listed with `true` is ignoring it).
    pub cancelled: bool,
}

struct Entry {
    exec: Arc<ToolExecution>,
    signal: CancellationToken,
    started: Instant,
    /// Cancelled by the reaper at the ceiling, or by `abandon`.
    reap: CancellationToken,
    ceiling_hit: AtomicBool,
}

/// The pipeline's table of pending bodies and its ceiling.
pub(crate) struct InFlight {
    bodies: Mutex<HashMap<u64, Arc<Entry>>>,
    next: AtomicU64,
    /// The ceiling in nanoseconds; 0 = none.
    ceiling_nanos: AtomicU64,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        let ceiling = u64::try_from(DEFAULT_BODY_CEILING.as_nanos()).unwrap_or(u64::MAX);
        Self { bodies: Mutex::new(HashMap::new()), next: AtomicU64::new(0), ceiling_nanos: AtomicU64::new(ceiling) }
    }

    pub(crate) fn set_ceiling(&self, ceiling: Option<Duration>) {
        let nanos = ceiling.map_or(0, |c| u64::try_from(c.as_nanos()).unwrap_or(u64::MAX).max(1));
        self.ceiling_nanos.store(nanos, Ordering::Relaxed);
    }

    pub(crate) fn ceiling(&self) -> Option<Duration> {
        match self.ceiling_nanos.load(Ordering::Relaxed) {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    pub(crate) fn list(&self) -> Vec<InFlightBody> {
        let bodies = self.bodies.lock().unwrap_or_else(|p| p.into_inner());
        let mut list: Vec<InFlightBody> = bodies
            .values()
            .map(|e| InFlightBody {
                token: e.exec.token,
                call_id: e.exec.call_id.clone(),
                tool: e.exec.name.clone(),
                agent: e.exec.agent.clone(),
                running_for: e.started.elapsed(),
                cancelled: e.signal.is_cancelled(),
            })
            .collect();
        list.sort_by_key(|body| std::cmp::Reverse(body.running_for));
        list
    }

    /// Drop the pending body of `token` now; `false` when none is in flight.
    pub(crate) fn abandon(&self, token: ExecutionToken) -> bool {
        let bodies = self.bodies.lock().unwrap_or_else(|p| p.into_inner());
        let found = bodies.values().find(|e| e.exec.token == token);
        found.map(|e| e.reap.cancel()).is_some()
    }

    /// `body` (a contained body future) bounded by the ceiling and listed while pending; `signal` is the
    /// one the body observes.
    pub(crate) fn bound<'a, F>(&'a self, exec: &'a Arc<ToolExecution>, signal: &'a CancellationToken, body: F) -> Bounded<'a, F> {
        Bounded { body, table: self, exec, signal, listed: None }
    }
}

/// A body under the ceiling; resolves to the body's outcome, or the failure that replaced it. It
/// borrows the execution and the signal, and clones them only once the body is pending: a body ready at
/// its first poll costs no reference count and no token lock.
pub(crate) struct Bounded<'a, F> {
    body: F,
    table: &'a InFlight,
    exec: &'a Arc<ToolExecution>,
    signal: &'a CancellationToken,
    listed: Option<Listed>,
}

/// A pending body's table entry, its reaper deadline and the wait on its reap signal.
struct Listed {
    id: u64,
    entry: Arc<Entry>,
    deadline: Option<(Instant, u64)>,
    reaped: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<F, V> Future for Bounded<'_, F>
where
    F: Future<Output = Result<Result<V, ToolFailure>, String>> + Unpin,
{
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(listed) = &mut this.listed
            && listed.reaped.as_mut().poll(cx).is_ready()
        {
            let failure = match listed.entry.ceiling_hit.load(Ordering::SeqCst) {
                true => ceiling_failure(&this.exec.name, this.table.ceiling()),
                false => ToolFailure::harness(
                    format!("tool \"{}\" was abandoned by the host while its body was still running", this.exec.name),
                    "AbortError",
                    ErrorCode::ABORTED,
                ),
            };
            return Poll::Ready(Ok(Err(failure)));
        }
        if let Poll::Ready(output) = Pin::new(&mut this.body).poll(cx) {
            return Poll::Ready(output);
        }
        if this.listed.is_none() {
            let entry = Arc::new(Entry {
                exec: Arc::clone(this.exec),
                signal: this.signal.clone(),
                started: Instant::now(),
                reap: CancellationToken::new(),
                ceiling_hit: AtomicBool::new(false),
            });
            let mut reaped = Box::pin(entry.reap.clone().cancelled_owned());
            let _ = reaped.as_mut().poll(cx); // registers the waker
            let id = this.table.next.fetch_add(1, Ordering::Relaxed);
            this.table.bodies.lock().unwrap_or_else(|p| p.into_inner()).insert(id, Arc::clone(&entry));
            let deadline = this.table.ceiling().map(|ceiling| reaper().arm(entry.started + ceiling, &entry));
            this.listed = Some(Listed { id, entry, deadline, reaped });
        }
        Poll::Pending
    }
}

impl<F> Drop for Bounded<'_, F> {
    fn drop(&mut self) {
        if let Some(listed) = self.listed.take() {
            self.table.bodies.lock().unwrap_or_else(|p| p.into_inner()).remove(&listed.id);
            if let Some(key) = listed.deadline {
                reaper().disarm(key);
            }
        }
    }
}

fn ceiling_failure(tool: &str, ceiling: Option<Duration>) -> ToolFailure {
    let ceiling = ceiling.map_or_else(|| "its ceiling".to_owned(), |c| format!("the body ceiling of {c:?}"));
    ToolFailure::harness(
        format!("tool \"{tool}\" ran past {ceiling} and was abandoned (it did not stop when cancelled)"),
        "TimeoutError",
        ErrorCode::TOOL_TIMEOUT,
    )
}

/// The process-wide clock: deadlines in order, one thread waiting for the earliest.
struct Reaper {
    deadlines: Mutex<BTreeMap<(Instant, u64), Weak<Entry>>>,
    wake: Condvar,
    next: AtomicU64,
}

fn reaper() -> &'static Reaper {
    static REAPER: OnceLock<&'static Reaper> = OnceLock::new();
    REAPER.get_or_init(|| {
        let reaper: &'static Reaper =
            Box::leak(Box::new(Reaper { deadlines: Mutex::new(BTreeMap::new()), wake: Condvar::new(), next: AtomicU64::new(0) }));
        // If the thread cannot start, ceilings are not enforced; the in-flight list still works.
        let _ = std::thread::Builder::new().name("dsh-tools-body-ceiling".into()).spawn(move || reaper.run());
        reaper
    })
}

impl Reaper {
    /// Reap `entry` at `deadline`; the key disarms it.
    fn arm(&self, deadline: Instant, entry: &Arc<Entry>) -> (Instant, u64) {
        let key = (deadline, self.next.fetch_add(1, Ordering::Relaxed));
        let mut deadlines = self.deadlines.lock().unwrap_or_else(|p| p.into_inner());
        let earliest = deadlines.keys().next().is_none_or(|first| key < *first);
        deadlines.insert(key, Arc::downgrade(entry));
        if earliest {
            self.wake.notify_one();
        }
        key
    }

    fn disarm(&self, key: (Instant, u64)) {
        self.deadlines.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
    }

    fn run(&self) {
        let mut deadlines = self.deadlines.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            while let Some(entry) = deadlines.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                if let Some(entry) = entry.remove().upgrade() {
                    entry.ceiling_hit.store(true, Ordering::SeqCst);
                    entry.reap.cancel();
                }
            }
            deadlines = match deadlines.keys().next().map(|(at, _)| at.saturating_duration_since(now)) {
                Some(wait) => self.wake.wait_timeout(deadlines, wait).unwrap_or_else(|p| p.into_inner()).0,
                None => self.wake.wait(deadlines).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }
}
