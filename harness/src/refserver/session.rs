//! One session: the state a scenario builds (gates, calls, tasks, the `dsh-tools` runtime) and the
//! handling of its requests.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_tools::ExecutionToken;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::calls::Calls;
use super::engine::Engine;
use super::gates::Gates;
use super::outbox::Outbox;
use super::quiesce::Activity;
use super::rpc::{Failure, METHOD_NOT_FOUND, Params};

/// A started call's task.
pub type CallTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// How long a request waits for the session's tasks to settle, and `session/close` for finishing tasks
/// to end before counting them as live.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(200);

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
}

impl Shared {
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

    fn tasks(&self) -> MutexGuard<'_, JoinSet<()>> {
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
}

/// One open session.
pub struct Session {
    shared: Arc<Shared>,
    engine: Engine,
}

impl Session {
    /// Opens a session: builds the runtime from `setup` and registers what it declares.
    pub async fn open(id: &str, outbox: Arc<Outbox>, setup: &Value) -> Result<Session, Failure> {
        let shared = Arc::new(Shared {
            session: id.to_owned(),
            outbox,
            gates: Gates::default(),
            calls: Calls::default(),
            tokens: Mutex::default(),
            marks: Mutex::default(),
            marked: Notify::new(),
            tasks: Mutex::new(JoinSet::new()),
            activity: Arc::default(),
        });
        let engine = Engine::open(shared.clone(), setup)?;
        Ok(Session { shared, engine })
    }

    /// Handles one session request other than open and close, answering once the session's tasks have
    /// run as far as they can (see [`super::quiesce`]).
    pub async fn handle(&self, method: &str, params: Params<'_>) -> Result<Value, Failure> {
        let outcome = self.serve(method, params).await;
        // Bounded: a task that never stops being busy must not wedge the protocol.
        let _ = tokio::time::timeout(SETTLE, self.shared.activity.settled()).await;
        outcome
    }

    async fn serve(&self, method: &str, params: Params<'_>) -> Result<Value, Failure> {
        match method {
            "gate/open" => {
                self.shared.gates.open(params.str("gate")?);
                Ok(json!({}))
            }
            "call/start" => {
                let task = self.engine.start_call(params)?;
                self.shared.spawn(task);
                Ok(json!({}))
            }
            "call/await" => {
                let result = self.shared.calls.wait(params.str("callId")?).await?;
                Ok(super::deep::object([("result", result)]))
            }
            "events/waitFor" => {
                self.shared.wait_for_mark(params.str("label")?).await;
                Ok(json!({}))
            }
            "call/abort" => {
                let call_id = params.str("callId")?;
                if let Some(reason) = params.get("reason") {
                    self.engine.note_abort_reason(call_id, reason);
                }
                self.shared.calls.abort(call_id)?;
                Ok(json!({}))
            }
            _ => match self.engine.handle(method, params) {
                Some(outcome) => outcome,
                None => Err(Failure::new(METHOD_NOT_FOUND, format!("unknown method {method:?}"))),
            },
        }
    }

    /// The leak report, then drops everything the session held (tasks still alive are aborted).
    pub async fn close(&self) -> Value {
        let mut tasks = std::mem::take(&mut *self.shared.tasks());
        // A call task publishes its result as its last act: give tasks that are just finishing a moment
        // to end, so only tasks that are really stuck count.
        let settle = tokio::time::Instant::now() + SETTLE;
        while !tasks.is_empty() {
            match tokio::time::timeout_at(settle, tasks.join_next()).await {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        let live = tasks.len();
        let leaks = json!({
            "pendingCalls": self.shared.calls.pending(),
            "unopenedGates": self.shared.gates.unopened_waited(),
            "liveTasks": live,
        });
        tasks.shutdown().await;
        self.engine.close();
        leaks
    }
}
