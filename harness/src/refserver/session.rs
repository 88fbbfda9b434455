//! One session: the state a scenario builds (gates, calls, tasks, the `dsh-tools` runtime) and the
//! handling of its requests.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_tools::ExecutionToken;
use serde_json::{Value, json};
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
}

impl Shared {
    /// Emits one event of this session.
    pub fn emit(&self, event: Value) {
        self.outbox.emit(&self.session, event);
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
    tasks: Mutex<JoinSet<()>>,
    activity: Arc<Activity>,
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
        });
        let engine = Engine::open(shared.clone(), setup)?;
        Ok(Session { shared, tasks: Mutex::new(JoinSet::new()), activity: Arc::default(), engine })
    }

    fn tasks(&self) -> MutexGuard<'_, JoinSet<()>> {
        self.tasks.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Handles one session request other than open and close, answering once the session's tasks have
    /// run as far as they can (see [`super::quiesce`]).
    pub async fn handle(&self, method: &str, params: Params<'_>) -> Result<Value, Failure> {
        let outcome = self.serve(method, params).await;
        // Bounded: a task that never stops being busy must not wedge the protocol.
        let _ = tokio::time::timeout(SETTLE, self.activity.settled()).await;
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
                self.tasks().spawn(self.activity.track(task));
                Ok(json!({}))
            }
            "call/await" => {
                let result = self.shared.calls.wait(params.str("callId")?).await?;
                Ok(super::deep::object([("result", result)]))
            }
            "call/abort" => {
                self.shared.calls.abort(params.str("callId")?)?;
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
        let mut tasks = std::mem::take(&mut *self.tasks());
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
