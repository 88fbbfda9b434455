//! The order trials start in, and how many run at once against the in-process reference.
//!
//! libtest-mimic hands trials to its worker threads first come, first served, so a long trial listed last
//! ends the run alone. The suite's long trials are of two kinds, both visible before anything runs:
//! - **busy** ones: items of the large corpus files (100,000-level values), whose cost grows with the bytes
//!   of their span, and scenarios marked `heavy` (a 64 MiB log);
//! - **waiting** ones: scenarios that hold a call while the harness sleeps (`sleep` steps), or whose code
//!   runs are given a short wall-clock ceiling or compute budget they may run into (a spent compute budget
//!   is time on a core, but a trial that starts late with one ends the run alone).
//!
//! They start first, busy and waiting alternately (largest first in each kind), so the waits overlap the
//! busy work; then the scenarios with a code runtime (Python first: a run is a process), then the rest, each
//! kind in listed order. Against the in-process reference the runner uses two threads per core plus
//! [`WAITING_THREADS`] (a waiting trial holds a thread, not a core), and busy trials run in the
//! [`BusyLane`]: one long-lived large-stack thread per core, largest waiting trial first (more at once would
//! only interleave on the cores while their memory peaks add up, and fresh threads would fault their deep
//! stacks in again). The order never changes an outcome: every trial has its own session.

use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex};

use dsh_conformance::Scenario;
use dsh_conformance::scenario::Action;
use dsh_conformance::fixture::Language;

/// A wall-clock ceiling or compute budget at or below this (ms) counts as a wait: a scenario sets one that
/// low to run into it.
const SHORT_WALL_MS: f64 = 5_000.0;
/// A scenario waiting at least this long (ms) starts early.
const WAITING_MS: u64 = 300;

/// What the runner expects of a trial before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// A large corpus item (this many bytes of JSON to build, send and take apart), or a scenario marked
    /// `heavy` (counted as [`HEAVY_BYTES`]).
    Busy(u64),
    /// A scenario that waits about this many milliseconds.
    Waiting(u64),
    /// A scenario whose code runs start processes (Python) or interpreters (TypeScript).
    Runtime(Language),
    /// Anything else: quick.
    Quick,
}

/// What a scenario marked `heavy` counts as among the large corpus items: a 64 MiB log moved twice.
pub const HEAVY_BYTES: u64 = 128 << 20;

/// The expected cost of a scenario trial.
pub fn scenario_cost(scenario: &Scenario) -> Cost {
    if scenario.heavy {
        return Cost::Busy(HEAVY_BYTES);
    }
    let slept: u64 = scenario.steps.iter().map(|s| if let Action::Sleep(ms) = s.action { ms } else { 0 }).sum();
    let setup = scenario.setup.as_ref();
    let limits = setup.and_then(|s| s.runtime_limits.as_ref());
    let short = |ms: Option<&serde_json::Number>| {
        ms.and_then(serde_json::Number::as_f64).filter(|ms| *ms <= SHORT_WALL_MS).map_or(0, |ms| ms as u64)
    };
    // A short compute budget is there to be spent (a busy loop): that long on a core, longer when shared.
    let (wall, compute) = limits.map_or((0, 0), |l| (short(l.max_wall_ms.as_ref()), short(l.compute_ms.as_ref())));
    let waited = slept + wall + compute;
    if waited >= WAITING_MS {
        return Cost::Waiting(waited);
    }
    match setup.and_then(|s| s.runtime) {
        Some(language) => Cost::Runtime(language),
        None => Cost::Quick,
    }
}

/// The start order of trials listed with these costs: indices into `costs`.
pub fn order(costs: &[Cost]) -> Vec<usize> {
    let mut busy: Vec<(u64, usize)> = Vec::new();
    let mut waiting: Vec<(u64, usize)> = Vec::new();
    let (mut python, mut typescript, mut quick) = (Vec::new(), Vec::new(), Vec::new());
    for (i, cost) in costs.iter().enumerate() {
        match cost {
            Cost::Busy(bytes) => busy.push((*bytes, i)),
            Cost::Waiting(ms) => waiting.push((*ms, i)),
            Cost::Runtime(Language::Python) => python.push(i),
            Cost::Runtime(_) => typescript.push(i),
            Cost::Quick => quick.push(i),
        }
    }
    // Largest first; equal costs keep their listed order.
    busy.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    waiting.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = Vec::with_capacity(costs.len());
    let (mut b, mut w) = (busy.into_iter(), waiting.into_iter());
    loop {
        let (next_b, next_w) = (b.next(), w.next());
        if next_b.is_none() && next_w.is_none() {
            break;
        }
        out.extend(next_b.map(|(_, i)| i));
        out.extend(next_w.map(|(_, i)| i));
    }
    out.extend(python);
    out.extend(typescript);
    out.extend(quick);
    out
}

/// `trials` in the start order [`order`] gives for `costs` (one per trial, in the same order).
pub fn reorder<T>(trials: Vec<T>, costs: &[Cost]) -> Vec<T> {
    debug_assert_eq!(trials.len(), costs.len(), "one cost per trial");
    if trials.len() != costs.len() {
        return trials;
    }
    let mut slots: Vec<Option<T>> = trials.into_iter().map(Some).collect();
    order(costs).into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)).collect()
}

/// Worker threads against the in-process reference when the command line names none: two per core, plus
/// [`WAITING_THREADS`] for the trials that mostly wait.
pub fn in_process_threads() -> usize {
    cores() * 2 + WAITING_THREADS
}

/// Worker threads against an adapter when the command line names none: one per core, each with its own
/// adapter process (measured against rc.8 on 2 cores: 72-80 s with one process, 42-46 s with two).
pub fn adapter_processes() -> usize {
    cores()
}

/// Threads beyond two per core: a waiting trial holds one for up to 2.5 s without using a core, and the
/// suite has about ten (measured on 2 cores: 4 threads 5.5–6.9 s, 8 threads 4.1–4.9 s; with the busy gate,
/// 12 threads 4.1–4.2 s against 8 threads 4.5–4.8 s, and 16 no faster).
pub const WAITING_THREADS: usize = 8;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Runs busy trials on one long-lived large-stack thread per core, the largest waiting one first.
///
/// Busy trials are CPU-bound, so more of them at once would only interleave on the cores while their memory
/// peaks add up. Whatever stack a deep trial touches, a fresh thread would fault in again, page by page
/// (measured while corpus items were still parsed recursively: 45,000 faults and 0.2–1.5 s of system time
/// for one `deep_dsl` item, against 0.9 s of user time); the lane's threads live for the whole run, so
/// their stacks are faulted in once and then reused.
pub struct BusyLane {
    shared: std::sync::Arc<Lane>,
    workers: usize,
    stack: usize,
}

struct Lane {
    state: Mutex<LaneState>,
    ready: Condvar,
}

#[derive(Default)]
struct LaneState {
    queue: BinaryHeap<Queued>,
    started: usize,
    submitted: u64,
}

/// A waiting job: the largest cost first, then the one submitted first.
struct Queued {
    cost: u64,
    seq: u64,
    job: Box<dyn FnOnce() + Send>,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.cost, self.seq) == (other.cost, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.cost.cmp(&other.cost).then(other.seq.cmp(&self.seq))
    }
}

impl BusyLane {
    /// A lane with one thread per core, each with a `stack`-byte stack.
    pub fn per_core(stack: usize) -> Self {
        Self::new(cores(), stack)
    }

    /// A lane with `workers` threads (at least one), started as jobs arrive.
    pub fn new(workers: usize, stack: usize) -> Self {
        let shared = std::sync::Arc::new(Lane { state: Mutex::new(LaneState::default()), ready: Condvar::new() });
        BusyLane { shared, workers: workers.max(1), stack }
    }

    /// Runs `f` on one of the lane's threads once it is the largest job waiting (`cost`: its expected
    /// size) and a thread is free, and waits for it.
    pub fn run<T: Send + 'static>(&self, cost: u64, f: impl FnOnce() -> T + Send + 'static) -> Result<T, Unrun> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = Box::new(move || {
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(ran.map_err(|panic| Unrun::Panicked(panic_text(panic))));
        });
        let mut state = lock(&self.shared.state);
        state.submitted += 1;
        let seq = state.submitted;
        state.queue.push(Queued { cost, seq, job });
        if state.started < self.workers {
            let shared = std::sync::Arc::clone(&self.shared);
            let spawned =
                std::thread::Builder::new().name("trial".into()).stack_size(self.stack).spawn(move || work(&shared));
            match spawned {
                Ok(_) => state.started += 1,
                Err(e) if state.started == 0 => {
                    // No thread would ever take the job: take it back.
                    state.queue.retain(|q| q.seq != seq);
                    return Err(Unrun::NoThread(e.to_string()));
                }
                // The threads already running will take it.
                Err(_) => {}
            }
        }
        drop(state);
        self.shared.ready.notify_one();
        rx.recv().unwrap_or_else(|_| Err(Unrun::Panicked("the busy lane dropped the trial".into())))
    }
}

/// Why a job given to a thread did not give back its result.
#[derive(Debug, PartialEq, Eq)]
pub enum Unrun {
    /// It panicked with this message.
    Panicked(String),
    /// No thread could be started for it (the system's error).
    NoThread(String),
}

impl std::fmt::Display for Unrun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unrun::Panicked(message) => write!(f, "the harness panicked: {message}"),
            Unrun::NoThread(error) => write!(f, "cannot start a trial thread: {error}"),
        }
    }
}

/// A lane thread: takes the largest waiting job, runs it, and waits for the next, for the rest of the run.
fn work(lane: &Lane) {
    loop {
        let job = {
            let mut state = lock(&lane.state);
            loop {
                if let Some(queued) = state.queue.pop() {
                    break queued.job;
                }
                state = lane.ready.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        job();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The message of a caught panic.
pub fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "(no message)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_trials_start_first_alternating_then_runtimes_then_the_rest() {
        let costs = [
            Cost::Quick,
            Cost::Runtime(Language::Typescript),
            Cost::Busy(10),
            Cost::Waiting(1500),
            Cost::Runtime(Language::Python),
            Cost::Busy(30),
            Cost::Waiting(2000),
            Cost::Busy(20),
            Cost::Quick,
        ];
        assert_eq!(order(&costs), [5, 6, 7, 3, 2, 4, 1, 0, 8]);
        assert_eq!(order(&[]), Vec::<usize>::new());
    }

    #[test]
    fn the_busy_lane_runs_on_its_threads_largest_first_and_reuses_them() {
        use std::sync::{Arc, Mutex};
        let lane = Arc::new(BusyLane::new(1, 1 << 20));
        // Hold the lane's only thread, so the next jobs queue up behind it.
        let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
        let first = {
            let lane = Arc::clone(&lane);
            std::thread::spawn(move || lane.run(0, move || (hold_rx.recv().ok(), std::thread::current().id()).1))
        };
        while lock(&lane.shared.state).started == 0 || !lock(&lane.shared.state).queue.is_empty() {
            std::thread::yield_now();
        }
        let order = Arc::new(Mutex::new(Vec::new()));
        let jobs: Vec<_> = [10_u64, 30, 20, 30]
            .into_iter()
            .enumerate()
            .map(|(i, cost)| {
                let (mine, order) = (Arc::clone(&lane), Arc::clone(&order));
                let job = std::thread::spawn(move || {
                    mine.run(cost, move || {
                        order.lock().unwrap().push(i);
                        std::thread::current().id()
                    })
                });
                // Submitted one after another, so equal costs keep their order.
                while lock(&lane.shared.state).queue.len() < i + 1 {
                    std::thread::yield_now();
                }
                job
            })
            .collect();
        hold_tx.send(()).unwrap();
        let thread = first.join().unwrap().unwrap();
        for job in jobs {
            assert_eq!(job.join().unwrap().unwrap(), thread, "every job ran on the lane's one thread");
        }
        assert_eq!(*order.lock().unwrap(), [1, 3, 2, 0], "largest first; equal costs in submission order");
        assert_eq!(lock(&lane.shared.state).started, 1, "one thread, started once");
    }

    #[test]
    fn a_panicking_job_is_reported_and_the_lane_goes_on() {
        let lane = BusyLane::new(2, 1 << 20);
        let panicked = lane.run(1, || -> u8 { panic!("deliberately") });
        assert_eq!(panicked, Err(Unrun::Panicked("deliberately".to_owned())));
        assert_eq!(lane.run(1, || 7), Ok(7));
        let two = std::thread::scope(|scope| {
            let a = scope.spawn(|| lane.run(5, || std::thread::sleep(std::time::Duration::from_millis(30))));
            let b = scope.spawn(|| lane.run(5, || std::thread::sleep(std::time::Duration::from_millis(30))));
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!(two, (Ok(()), Ok(())));
        assert!(lock(&lane.shared.state).started <= 2, "never more threads than places");
    }

    #[test]
    fn sleeps_short_wall_ceilings_and_short_compute_budgets_are_waits() {
        let parse = |yaml: &str| -> Scenario {
            let value: serde_json::Value = serde_yaml::from_str(yaml).unwrap_or_default();
            serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
        };
        let base = "id: s\nrules: [R-1]\nlevel: must\ndescription: d\n";
        assert_eq!(scenario_cost(&parse(base)), Cost::Quick);
        let slept = format!("{base}steps:\n  - sleep: 1500\n  - sleep: 100\n");
        assert_eq!(scenario_cost(&parse(&slept)), Cost::Waiting(1600));
        let short = format!("{base}setup:\n  runtime: python\n  runtimeLimits: {{ maxWallMs: 2000 }}\n");
        assert_eq!(scenario_cost(&parse(&short)), Cost::Waiting(2000));
        let long = format!("{base}setup:\n  runtime: python\n  runtimeLimits: {{ maxWallMs: 20000 }}\n");
        assert_eq!(scenario_cost(&parse(&long)), Cost::Runtime(Language::Python));
        let spent = format!("{base}setup:\n  runtime: python\n  runtimeLimits: {{ computeMs: 300, maxWallMs: 20000 }}\n");
        assert_eq!(scenario_cost(&parse(&spent)), Cost::Waiting(300), "a short compute budget starts early too");
        assert_eq!(scenario_cost(&parse(&format!("{base}heavy: true\n"))), Cost::Busy(HEAVY_BYTES));
    }
}
