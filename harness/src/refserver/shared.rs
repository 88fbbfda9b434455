//! What fixture code (tool bodies, listeners, the approval seam), call tasks and the session share: the
//! session's event exit, gates, started calls, the execution tokens seen, `mark` waiters and the task set.
//! Below the engine and the fixture interpreter, which receive it; the session owns it.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use dsh_tools::ExecutionToken;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::calls::Calls;
use super::gates::Gates;
use super::outbox::Outbox;
use super::quiesce::Activity;

/// A started call's task.
pub type CallTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What fixture code (tool bodies, listeners) and call tasks share with the session.
pub struct Shared {
    /// The session id.
    pub session: String,
    outbox: Arc<Outbox>,
    /// Named gates.
    pub gates: Gates,
    /// Started calls.
    pub calls: Calls,
    /// Each call's execution token, from the first body or listener that saw it (for `parent`).
    tokens: Mutex<HashMap<String, ExecutionToken>>,
    /// Labels of the `mark` events sent so far (`events/waitFor`), and the wake-up for their waiters.
    marks: Mutex<HashSet<String>>,
    marked: Notify,
    /// The session's tasks (started calls, and the suspended rest of asynchronous observers).
    tasks: Mutex<JoinSet<()>>,
    activity: Arc<Activity>,
    /// The engine, for instructions that register or dispose from inside running code.
    host: Mutex<Option<Weak<dyn Host>>>,
}

/// What running code may ask of the session's engine (the `addHook` and `dispose` instructions).
pub trait Host: Send + Sync {
    /// Register a listener as the `addHook` step does; the error is what the code throws.
    fn add_hook(&self, hook: &Value) -> Result<(), String>;
    /// Dispose a handle as the `dispose` step does; the error is what the code throws.
    fn dispose(&self, handle: &str) -> Result<(), String>;
}

impl Shared {
    /// The shared state of a new session `id` whose events leave through `outbox`.
    pub fn new(id: &str, outbox: Arc<Outbox>) -> Arc<Shared> {
        Arc::new(Shared {
            session: id.to_owned(),
            outbox,
            gates: Gates::default(),
            calls: Calls::default(),
            tokens: Mutex::default(),
            marks: Mutex::default(),
            marked: Notify::new(),
            tasks: Mutex::new(JoinSet::new()),
            activity: Arc::default(),
            host: Mutex::default(),
        })
    }

    /// Quiescence tracking of the session's tasks.
    pub(super) fn activity(&self) -> &Activity {
        &self.activity
    }

    /// Emits one event of this session; a `mark` also releases `events/waitFor` requests for its label.
    pub fn emit(&self, event: Value) {
        let mark = match (event.get("type").and_then(Value::as_str), event.get("label").and_then(Value::as_str)) {
            (Some("mark"), Some(label)) => Some(label.to_owned()),
            _ => None,
        };
        self.outbox.emit(&self.session, event);
        if let Some(label) = mark {
            self.marks.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(label);
            self.marked.notify_waiters();
        }
    }

    pub(super) fn tasks(&self) -> MutexGuard<'_, JoinSet<()>> {
        self.tasks.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `task` as one of the session's tasks: counted for quiescence and in the leak report. Call
    /// from within the session's runtime (every request and task runs there).
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                self.tasks().spawn_on(self.activity.track(task), &handle);
            }
            // Unreachable in the server (everything runs on its runtime); never panic for it.
            Err(_) => eprintln!("dsh-reference: session {}: task dropped outside the runtime", self.session),
        }
    }

    /// Resolves once a `mark` event with `label` has been sent (at once if it already was).
    pub async fn wait_for_mark(&self, label: &str) {
        loop {
            let notified = self.marked.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.marks.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).contains(label) {
                return;
            }
            notified.await;
        }
    }

    fn tokens(&self) -> MutexGuard<'_, HashMap<String, ExecutionToken>> {
        self.tokens.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records the token of `call_id` unless one was seen already.
    pub fn note_token(&self, call_id: &str, token: ExecutionToken) {
        let mut tokens = self.tokens();
        if !tokens.contains_key(call_id) {
            tokens.insert(call_id.to_owned(), token);
        }
    }

    /// The token seen for `call_id`.
    pub fn token(&self, call_id: &str) -> Option<ExecutionToken> {
        self.tokens().get(call_id).copied()
    }

    /// Lets running code reach `host` (held weakly: the engine owns this state).
    pub fn set_host(&self, host: Weak<dyn Host>) {
        *self.host.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(host);
    }

    fn host(&self) -> Result<Arc<dyn Host>, String> {
        let host = self.host.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        host.and_then(|h| h.upgrade()).ok_or_else(|| "the session's engine is gone".to_owned())
    }

    /// The `addHook` instruction.
    pub fn host_add_hook(&self, hook: &Value) -> Result<(), String> {
        self.host()?.add_hook(hook)
    }

    /// The `dispose` instruction.
    pub fn host_dispose(&self, handle: &str) -> Result<(), String> {
        self.host()?.dispose(handle)
    }
}
