//! One session: the state a scenario builds (the [`Shared`] state and the engine holding the `dsh-tools`
//! runtime) and the handling of its requests, which flow one way: server → session → engine.

use std::sync::Arc;

use serde_json::{Value, json};

use super::engine::Engine;
use super::outbox::Outbox;
use super::rpc::{Failure, METHOD_NOT_FOUND, Params};
use super::shared::Shared;

/// How long a request waits for the session's tasks to settle, and `session/close` for finishing tasks
/// to end before counting them as live.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(200);

/// One open session.
pub struct Session {
    shared: Arc<Shared>,
    engine: Arc<Engine>,
}

impl Session {
    /// Opens a session: builds the runtime from `setup` and registers what it declares.
    pub async fn open(id: &str, outbox: Arc<Outbox>, setup: &Value) -> Result<Session, Failure> {
        let shared = Shared::new(id, outbox);
        let engine = Arc::new(Engine::open(shared.clone(), setup)?);
        let host: Arc<dyn super::shared::Host> = engine.clone();
        shared.set_host(Arc::downgrade(&host));
        Ok(Session { shared, engine })
    }

    /// Handles one session request other than open and close, answering once the session's tasks have
    /// run as far as they can (see [`super::quiesce`]).
    pub async fn handle(&self, method: &str, params: Params<'_>) -> Result<Value, Failure> {
        let outcome = self.serve(method, params).await;
        // Bounded: a task that never stops being busy must not wedge the protocol.
        let _ = tokio::time::timeout(SETTLE, self.shared.activity().settled()).await;
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
                // `reason: null` aborts with the value null (JavaScript `abort(null)`), not without one.
                if let Some(reason) = params.present("reason") {
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
