//! The single ordered exit for events and responses.
//!
//! Every event notification and every response leaves through [`Outbox`] under one lock: an event takes
//! the next `seq` of its session and goes to the sink; a response reads the session's last `seq` as its
//! `eventsThrough` and is written by its caller while the lock is still held. So no event can slip between
//! reading `eventsThrough` and writing the response, and none written before it is missing from it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use super::rpc::{self, Failure};

/// Where notifications go (a full JSON-RPC notification each).
pub type Sink = Box<dyn Fn(Value) + Send + Sync>;

/// Event sequencing and the ordered exit.
pub struct Outbox {
    /// Last emitted `seq` per open session.
    seqs: Mutex<HashMap<String, u64>>,
    sink: Sink,
}

impl Outbox {
    /// An outbox writing notifications to `sink`.
    pub fn new(sink: Sink) -> Self {
        Outbox { seqs: Mutex::new(HashMap::new()), sink }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.seqs.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts counting events for `session` from 1; false when it is already open.
    pub fn open(&self, session: &str) -> bool {
        let mut seqs = self.lock();
        if seqs.contains_key(session) {
            return false;
        }
        seqs.insert(session.to_owned(), 0);
        true
    }

    /// Stops events of `session` (events of a closed session are dropped).
    pub fn close(&self, session: &str) {
        self.lock().remove(session);
    }

    /// Emits one event of `session`, numbered with its next `seq`.
    pub fn emit(&self, session: &str, event: Value) {
        let mut seqs = self.lock();
        if let Some(seq) = seqs.get_mut(session) {
            *seq += 1;
            (self.sink)(rpc::event(session, *seq, event));
        }
    }

    /// Builds the response to request `id` and hands it to `write` under the lock. A successful object
    /// result of a session request gets `eventsThrough`; with `close` the session stops counting after it.
    pub fn respond(
        &self,
        session: Option<&str>,
        close: bool,
        id: Value,
        outcome: Result<Value, Failure>,
        write: impl FnOnce(Value),
    ) {
        let mut seqs = self.lock();
        let response = match outcome {
            Ok(mut result) => {
                if let (Some(session), Value::Object(fields)) = (session, &mut result) {
                    let through = seqs.get(session).copied().unwrap_or(0);
                    fields.insert("eventsThrough".into(), through.into());
                }
                rpc::success(id, result)
            }
            Err(failure) => rpc::error(id, failure),
        };
        if close {
            if let Some(session) = session {
                seqs.remove(session);
            }
        }
        write(response);
        drop(seqs);
    }
}
