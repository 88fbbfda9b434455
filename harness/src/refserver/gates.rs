//! Named gates of one session: `openGate` opens one (idempotently), fixture code waits on them.
//!
//! A gate is a `watch` channel of "opened". Waiters are counted while they wait (a drop guard keeps the
//! count right when the waiting future is cancelled), so the leak report can name gates someone is still
//! waiting on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

struct Gate {
    opened: watch::Sender<bool>,
    waiters: usize,
}

impl Gate {
    fn new() -> Self {
        Gate { opened: watch::Sender::new(false), waiters: 0 }
    }
}

/// The gates of one session, created on first mention.
#[derive(Clone, Default)]
pub struct Gates {
    map: Arc<Mutex<BTreeMap<String, Gate>>>,
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woken {
    /// The gate opened.
    Opened,
    /// The signal aborted first.
    Aborted,
}

impl Gates {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Gate>> {
        self.map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens `gate` (a no-op when already open).
    pub fn open(&self, gate: &str) {
        let mut map = self.lock();
        let entry = map.entry(gate.to_owned()).or_insert_with(Gate::new);
        entry.opened.send_replace(true);
    }

    /// Whether `gate` has been opened.
    pub fn is_open(&self, gate: &str) -> bool {
        self.lock().get(gate).is_some_and(|g| *g.opened.borrow())
    }

    /// Waits until `gate` opens.
    pub async fn wait(&self, gate: &str) {
        self.wait_or_abort(gate, None).await;
    }

    /// Waits until `gate` opens or `signal` (when given) is cancelled.
    pub async fn wait_or_abort(&self, gate: &str, signal: Option<&CancellationToken>) -> Woken {
        let mut receiver = {
            let mut map = self.lock();
            let entry = map.entry(gate.to_owned()).or_insert_with(Gate::new);
            if *entry.opened.borrow() {
                return Woken::Opened;
            }
            entry.waiters += 1;
            entry.opened.subscribe()
        };
        let _waiting = Waiting { gates: self, gate };
        let opened = async {
            // The sender lives in the map for the session's lifetime; an error means the session is gone.
            let _ = receiver.wait_for(|open| *open).await;
        };
        match signal {
            None => {
                opened.await;
                Woken::Opened
            }
            Some(signal) => tokio::select! {
                biased;
                _ = opened => Woken::Opened,
                _ = signal.cancelled() => Woken::Aborted,
            },
        }
    }

    /// Gates that are not open and that some code is waiting on, by name.
    pub fn unopened_waited(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, g)| g.waiters > 0 && !*g.opened.borrow())
            .map(|(name, _)| name.clone())
            .collect()
    }
}

struct Waiting<'a> {
    gates: &'a Gates,
    gate: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.gates.lock().get_mut(self.gate) {
            g.waiters = g.waiters.saturating_sub(1);
        }
    }
}
