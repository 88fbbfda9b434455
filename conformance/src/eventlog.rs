//! The session's event stream as the checker sees it: every `event` notification is validated, must
//! belong to the session and must carry the next `seq` (from 1, no gaps, no duplicates); a response's
//! `eventsThrough` must name exactly the last event that arrived before it: not one that has not arrived,
//! and not less than those that did (they were sent before it). Any breach is `ERROR(adapter)`.
//! Events wait here until the next `events` step takes them.

use serde_json::Value;

use crate::json::dismantle;
use crate::messages::MessageValidator;

/// Events received and not yet checked by an `events` step.
#[derive(Debug)]
pub struct EventLog {
    session: String,
    last_seq: u64,
    pending: Vec<Value>,
}

impl EventLog {
    /// An empty log for one session.
    pub fn new(session: &str) -> EventLog {
        EventLog { session: session.to_string(), last_seq: 0, pending: Vec::new() }
    }

    /// The `seq` of the last event received (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Takes the `params` of the event notifications that came with one reply, in arrival order.
    pub fn receive(&mut self, events: Vec<Value>, validator: &MessageValidator) -> Result<(), String> {
        let mut events = events.into_iter();
        while let Some(params) = events.next() {
            let checked = self.accept(params, validator);
            if checked.is_err() {
                events.for_each(dismantle);
                return checked;
            }
        }
        Ok(())
    }

    fn accept(&mut self, params: Value, validator: &MessageValidator) -> Result<(), String> {
        if let Err(e) = validator.event_params(&params) {
            dismantle(params);
            return Err(e);
        }
        let Value::Object(mut map) = params else { return Err("an event's params are not a mapping".into()) };
        let session = map.get("session").and_then(Value::as_str).unwrap_or_default().to_string();
        let seq = map.get("seq").and_then(Value::as_u64).unwrap_or(0);
        let event = map.shift_remove("event").unwrap_or(Value::Null);
        dismantle(Value::Object(map));
        if session != self.session {
            dismantle(event);
            return Err(format!("event for session {session:?} during session {:?}", self.session));
        }
        if seq != self.last_seq + 1 {
            dismantle(event);
            let what = if seq <= self.last_seq { "duplicate or out-of-order" } else { "gap in" };
            return Err(format!("{what} event seq: got {seq} after {}", self.last_seq));
        }
        self.last_seq = seq;
        self.pending.push(event);
        Ok(())
    }

    /// Checks a successful response's `eventsThrough` against the events received.
    pub fn check_through(&self, method: &str, result: &Value) -> Result<(), String> {
        let through = result.get("eventsThrough").and_then(Value::as_u64).unwrap_or(0);
        if through > self.last_seq {
            return Err(format!(
                "{method} answered eventsThrough {through}, but only events up to seq {} arrived before it",
                self.last_seq
            ));
        }
        if through < self.last_seq {
            return Err(format!(
                "{method} answered eventsThrough {through}, but events up to seq {} arrived before it (so were sent before it)",
                self.last_seq
            ));
        }
        Ok(())
    }

    /// The events received since the last call, in order.
    pub fn take(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.pending)
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.take().into_iter().for_each(dismantle);
    }
}
