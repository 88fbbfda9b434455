//! The session log seam: the entries dsh-tools appends to an agent's session (upstream
//! `exec.agent.session.append(type, data)`), each reported to the runtime's session-append observers
//! ([`crate::ToolRuntime::on_session_append`]) as one [`SessionEntry`]. In dsh-tools 0.1 the only entries
//! are the `run_code` dispatch log's (`tool/code-dispatch-start`, `tool/code-dispatch`, RUN-015); code
//! built on the runtime (the dsh-codemode preset) appends through [`crate::ToolRuntime::append_session_entry`],
//! so an observer sees every entry whatever its type — which is how "sub-calls write no session log"
//! (CDM-031) is checked for any entry type, not only the dispatch log's.
//!
//! Spec: RUN-015, RUN-058, CDM-031.

use std::sync::Arc;

use serde_json::Value;

use super::list::{HookGuard, HookList};
use crate::scope::ScopeKey;

/// One entry appended to an agent's session log.
#[derive(Clone, Debug)]
pub struct SessionEntry {
    /// The agent whose session the entry went to.
    pub agent: ScopeKey,
    /// The entry's type (`tool/code-dispatch-start`, `tool/code-dispatch`, ...).
    pub entry_type: String,
    /// The entry's data as logged (a detached snapshot).
    pub data: Value,
}

/// An observer of session appends (one call per entry, in append order).
pub type SessionAppendObserver = Arc<dyn Fn(&SessionEntry) + Send + Sync>;

/// The session-append observers of one runtime; cloning shares them.
#[derive(Clone)]
pub(crate) struct SessionLog {
    observers: Arc<HookList<SessionAppendObserver>>,
}

impl SessionLog {
    pub(crate) fn new() -> Self {
        Self { observers: HookList::new() }
    }

    /// Add an observer; dropping the guard removes it.
    pub(crate) fn observe(&self, observer: SessionAppendObserver) -> HookGuard {
        self.observers.add(None, observer)
    }

    /// Report one appended entry to every observer (an observer that panics is skipped).
    pub(crate) fn append(&self, entry: &SessionEntry) {
        for observer in self.observers.snapshot().iter() {
            let _ = crate::callback::contain(|| (observer.hook)(entry));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn every_observer_sees_each_entry_until_its_guard_drops() {
        let log = SessionLog::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let guard = log.observe(Arc::new(move |entry: &SessionEntry| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(entry.entry_type.clone());
        }));
        let _panics = log.observe(Arc::new(|_: &SessionEntry| panic!("an observer that fails is skipped")));
        let entry = |t: &str| SessionEntry { agent: ScopeKey::new("a"), entry_type: t.to_owned(), data: Value::Null };
        log.append(&entry("x/one"));
        drop(guard);
        log.append(&entry("x/two"));
        assert_eq!(*seen.lock().unwrap_or_else(|p| p.into_inner()), vec!["x/one".to_owned()]);
    }
}
