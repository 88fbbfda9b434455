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
//! [`WAITING_THREADS`] (a waiting trial holds a thread, not a core), and busy trials pass a [`BusyGate`]
//! with one place per core: more of them at once would only interleave on the cores while their memory
//! peaks add up. The order never changes an outcome: every trial has its own session.

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

/// Lets at most one busy trial per core run at once. Busy trials are CPU-bound, so more of them at once
/// only interleave, and each holds hundreds of megabytes: their peak together is memory the kernel must
/// fault in and zero, which on this kind of virtual machine is most of their system time.
pub struct BusyGate {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A busy trial's place at the [`BusyGate`], given back when dropped.
pub struct Permit<'a>(&'a BusyGate);

impl BusyGate {
    /// A gate with one place per core.
    pub fn per_core() -> Self {
        Self::new(cores())
    }

    /// A gate with `places` places (at least one).
    pub fn new(places: usize) -> Self {
        BusyGate { free: Mutex::new(places.max(1)), freed: Condvar::new() }
    }

    /// Waits for a place.
    pub fn enter(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
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
    fn the_busy_gate_lets_in_as_many_as_it_has_places() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let gate = BusyGate::new(2);
        let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    let _place = gate.enter();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    inside.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 2, "two places: never more, and both used");
        assert_eq!(*gate.free.lock().unwrap(), 2, "every place given back");
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
