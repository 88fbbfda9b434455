//! [`Server`]: one JSON-RPC request in, one response out; sessions by id; events to the sink.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};

use super::capabilities;
use super::deep;
use super::outbox::Outbox;
use super::rpc::{self, Failure, INVALID_STATE, Params};
use super::session::Session;

/// The reference `dsh-tools` served over the adapter protocol, independent of any transport.
///
/// Drive it on a runtime from [`super::runtime::build`] (deep values need its big thread stacks).
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    outbox: Arc<Outbox>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

impl Server {
    /// A server writing each event notification (a full JSON-RPC message) to `event_sink`.
    ///
    /// The sink is called under the lock that orders events and responses: it must not block or call
    /// back into the server.
    pub fn new(event_sink: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Server {
            inner: Arc::new(Inner {
                outbox: Arc::new(Outbox::new(Box::new(event_sink))),
                sessions: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Handles one request and returns the full JSON-RPC response.
    ///
    /// Events emitted concurrently may reach the sink after the response is built but before the caller
    /// writes it; transports that must keep them in order use [`Server::handle_with`].
    pub async fn handle(&self, request: Value) -> Value {
        let mut response = Value::Null;
        self.handle_with(&request, |r| response = r).await;
        deep::dismantle(request);
        response
    }

    /// Handles one request and passes the full response to `write` while event emission is held, so
    /// a transport that sends `write`'s value and the sink's notifications down one channel keeps the
    /// protocol's order: every event before the response is counted in its `eventsThrough`.
    pub async fn handle_with(&self, request: &Value, write: impl FnOnce(Value)) {
        let (id, session, close, outcome) = match rpc::split(request) {
            Err((id, failure)) => (id, None, false, Err(failure)),
            Ok(req) => {
                let session = req.params.opt_str("session").ok().flatten();
                let close = req.method == "session/close";
                let outcome = self.dispatch(req.method, req.params).await;
                (req.id, session, close && outcome.is_ok(), outcome)
            }
        };
        let session = session.filter(|_| request_is_session_scoped(request));
        self.inner.outbox.respond(session, close, id, outcome, write);
    }

    /// Closes every open session (on shutdown or restart), dropping what each held.
    pub async fn close_all(&self) {
        let sessions: Vec<_> = self.sessions().drain().collect();
        for (id, session) in sessions {
            session.close().await;
            self.inner.outbox.close(&id);
        }
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.inner.sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn session(&self, params: Params<'_>) -> Result<Arc<Session>, Failure> {
        let id = params.str("session")?;
        self.sessions().get(id).cloned().ok_or_else(|| Failure::unknown("session", id))
    }

    async fn dispatch(&self, method: &str, params: Params<'_>) -> Result<Value, Failure> {
        match method {
            "initialize" => capabilities::initialize(params),
            "session/open" => self.open(params).await,
            "session/close" => {
                let id = params.str("session")?;
                let session = self.sessions().remove(id).ok_or_else(|| Failure::unknown("session", id))?;
                let leaks = session.close().await;
                Ok(json!({ "leaks": leaks }))
            }
            _ => {
                let session = self.session(params)?;
                session.handle(method, params).await
            }
        }
    }

    async fn open(&self, params: Params<'_>) -> Result<Value, Failure> {
        let id = params.str("session")?;
        if self.sessions().contains_key(id) {
            return Err(Failure::new(INVALID_STATE, format!("session {id:?} is already open")));
        }
        if !self.inner.outbox.open(id) {
            return Err(Failure::new(INVALID_STATE, format!("session {id:?} is still closing")));
        }
        let setup = params.get("setup").unwrap_or(&Value::Null);
        match Session::open(id, self.inner.outbox.clone(), setup).await {
            Ok(session) => {
                self.sessions().insert(id.to_owned(), Arc::new(session));
                Ok(json!({}))
            }
            Err(failure) => {
                self.inner.outbox.close(id);
                Err(failure)
            }
        }
    }
}

/// Whether the response gets `eventsThrough`: every method but `initialize` is session-scoped.
fn request_is_session_scoped(request: &Value) -> bool {
    request.get("method").and_then(Value::as_str).is_some_and(|m| m != "initialize")
}
