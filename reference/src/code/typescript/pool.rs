//! The threads runs execute on: each run needs a thread of its own with a large stack (deeply nested values
//! and program text are walked there, and the engine may block it for a whole busy budget, which must never
//! be a tokio worker). Spawning a 256 MiB-stack thread per run costs more than the run itself, so finished
//! threads wait (up to a minute) to take the next run.
//!
//! Abandoned runs: the caller of a run is answered at the wall ceiling plus the backstop whatever the run
//! thread is doing (`mod.rs`), and a caller may drop the run's future; either way the thread goes on until
//! the engine's next limit check, which a single step the engine cannot interrupt delays (a QuickJS
//! built-in such as `"r".repeat(80 * 2 ** 20)` or `Array(2 ** 26).join("")`, turning a huge completion into
//! JSON). Such a run keeps its thread, its CPU and up to its heap cap until that step ends, after its
//! caller moved on. Their number is bounded: each run whose caller left before its thread finished is
//! counted ([`tether`]), and a new run starts only while fewer than [`MAX_ABANDONED_RUNS`] are counted
//! ([`admission`]): with more, it waits for one to end. Beyond the runs its callers await, the host then
//! holds at most [`MAX_ABANDONED_RUNS`] abandoned runs plus those that were in flight when the bound was
//! reached, each within what one run may hold (its heap cap, and the host's copy of a completion being
//! turned into its result). Memory is bounded at the cost of availability: a built-in that neither
//! allocates nor polls the interrupt handler runs as long as its input says (`Array(2 ** 26).join("")`
//! takes about 7 s in a debug build, about 100 ns an element), and while [`MAX_ABANDONED_RUNS`] runs are in
//! such steps every new run waits, ending at its wall ceiling if none finishes first.
//!
//! Spec: RUN-034 (runs share no program state: a thread only carries the next run's fresh engine), RUN-031
//! (heap cap: abandoned runs are bounded in count, each within its cap).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// A run's work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// The run thread's stack.
pub(crate) const RUN_STACK_BYTES: usize = 256 * 1024 * 1024;
/// How long an idle thread waits for another run.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Idle threads: an id and the channel that hands one of them its next job.
static IDLE: Mutex<Vec<(u64, Sender<Job>)>> = Mutex::new(Vec::new());
static NEXT_ID: Mutex<u64> = Mutex::new(0);

fn idle() -> std::sync::MutexGuard<'static, Vec<(u64, Sender<Job>)>> {
    IDLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `job` on an idle run thread, or on a new one.
pub(crate) fn submit(mut job: Job) -> std::io::Result<()> {
    loop {
        let Some((_, sender)) = idle().pop() else { break };
        match sender.send(job) {
            Ok(()) => return Ok(()),
            Err(returned) => job = returned.0,
        }
    }
    let id = {
        let mut next = NEXT_ID.lock().unwrap_or_else(|p| p.into_inner());
        *next += 1;
        *next
    };
    std::thread::Builder::new().name("dsh-ts-run".to_owned()).stack_size(RUN_STACK_BYTES).spawn(move || worker(id, job))?;
    Ok(())
}

fn worker(id: u64, first: Job) {
    let mut job = first;
    loop {
        // A job never unwinds into the pool (runs contain their own failures); keep the thread either way.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let (sender, receiver) = channel::<Job>();
        idle().push((id, sender));
        job = match receiver.recv_timeout(IDLE_TIMEOUT) {
            Ok(next) => next,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                let mut idle = idle();
                if let Some(at) = idle.iter().position(|(other, _)| *other == id) {
                    idle.swap_remove(at);
                    return;
                }
                drop(idle);
                // A submitter took this thread just now: its job is on the way.
                match receiver.recv() {
                    Ok(next) => next,
                    Err(_) => return,
                }
            }
        };
    }
}

/// How many runs whose callers left may still be working when a new run starts.
pub const MAX_ABANDONED_RUNS: usize = 2;

/// Runs whose caller left (answered by the backstop, or its future dropped) while their thread works.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);
/// Woken when an abandoned run's thread finishes.
static FREED: Notify = Notify::const_new();

/// How many runs are abandoned now, in this process (every TypeScript runtime shares the run threads and
/// the bound): their callers left while their threads still work.
pub fn abandoned_runs() -> usize {
    ABANDONED.load(Ordering::Acquire)
}

/// Wait until fewer than [`MAX_ABANDONED_RUNS`] runs are abandoned (at once when they are).
pub(crate) async fn admission() {
    if abandoned_runs() < MAX_ABANDONED_RUNS {
        return;
    }
    loop {
        let freed = FREED.notified();
        tokio::pin!(freed);
        freed.as_mut().enable();
        if abandoned_runs() < MAX_ABANDONED_RUNS {
            return;
        }
        freed.await;
    }
}

const LEFT: u8 = 1;
const DONE: u8 = 2;

/// The caller's end: dropped without [`CallerEnd::answered`], the run counts as abandoned until its job ends.
pub(crate) struct CallerEnd {
    state: Arc<AtomicU8>,
    answered: bool,
}

/// The job's end: dropped when the job ends (or is dropped unrun).
pub(crate) struct ThreadEnd(Arc<AtomicU8>);

/// One run's tether between its caller and its thread: the [`CallerEnd`] goes with the caller, the
/// [`ThreadEnd`] with the job. A caller that leaves before the job is done counts the run as abandoned
/// until it is.
pub(crate) fn tether() -> (CallerEnd, ThreadEnd) {
    let state = Arc::new(AtomicU8::new(0));
    (CallerEnd { state: Arc::clone(&state), answered: false }, ThreadEnd(state))
}

impl CallerEnd {
    /// The job answered: the caller does not leave it behind.
    pub(crate) fn answered(mut self) {
        self.answered = true;
    }
}

impl Drop for CallerEnd {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        // Counted first, taken back when the job is already done: the count never dips below the truth.
        ABANDONED.fetch_add(1, Ordering::AcqRel);
        if self.state.fetch_or(LEFT, Ordering::AcqRel) & DONE != 0 {
            ABANDONED.fetch_sub(1, Ordering::AcqRel);
            FREED.notify_waiters();
        }
    }
}

impl Drop for ThreadEnd {
    fn drop(&mut self) {
        if self.0.fetch_or(DONE, Ordering::AcqRel) & LEFT != 0 {
            ABANDONED.fetch_sub(1, Ordering::AcqRel);
            FREED.notify_waiters();
        }
    }
}
