//! The explorer's driver (issue 40): runs one scenario on one subject with no expectations and keeps what
//! it answered — each request's result or error and the session's events — normalized, so two subjects'
//! observations compare with `==`.
//!
//! Normalized away: `eventsThrough` and the events' `session`/`seq` (transport bookkeeping), the code and
//! message of a JSON-RPC error other than setup-rejected (each adapter's own), which reply
//! carried an event (the events are one sequence per session, as the scenario's `events` steps see them),
//! and the events sent while the session closes (no step of a scenario can check them). Nothing else is
//! free to differ in the generated vocabulary: ids are the scenario's own, no durations are reported, and
//! the generator never has two calls in flight that could settle in either order.

use std::time::Duration;

use serde_json::{Value, json};

use dsh_conformance::protocol::{self, Request, RequestBuilder};
use dsh_conformance::subject::{Subject, SubjectError};
use dsh_conformance::{Action, Scenario};

/// What one subject answered to one scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    /// One entry per answered step (`{step, method, answer}`), then `{close}` with the leak report.
    pub answers: Vec<Value>,
    /// The session's events before it closed, in order.
    pub events: Vec<Value>,
    /// Why the run stopped early (a timeout, a crash, a broken reply): the subject was restarted.
    pub stopped: Option<String>,
    /// The JSON-RPC error messages, in order: shown, never compared (each adapter words its own).
    pub messages: Vec<String>,
}

impl Observation {
    /// Whether two subjects answered alike: same answers, same events, stopped alike (the wording of a
    /// stop and of a JSON-RPC error is each subject's own).
    pub fn agrees(&self, other: &Observation) -> bool {
        self.answers == other.answers && self.events == other.events && self.stopped.is_some() == other.stopped.is_some()
    }

    /// One line per answer, then one per event: what is compared and shown.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.answers.iter().map(|a| dsh_conformance::json::write(a, false)).collect();
        lines.extend(self.events.iter().map(|e| format!("event {}", dsh_conformance::json::write(e, false))));
        if let Some(stopped) = &self.stopped {
            lines.push(format!("stopped: {stopped}"));
        }
        lines.extend(self.messages.iter().map(|m| format!("(not compared) {m}")));
        lines
    }
}

/// Runs `scenario` on `subject` (already initialized): open, every step's requests, close.
pub fn observe(subject: &mut dyn Subject, scenario: &Scenario, timeout: Duration) -> Observation {
    let mut obs = Observation::default();
    let open = protocol::open_request(scenario);
    match send(subject, open, timeout, &mut obs) {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            obs.answers.push(json!({ "step": 0, "method": "session/open", "error": error }));
            let mut closing = Observation::default();
            let _ = send(subject, protocol::close_request(&scenario.id), timeout, &mut closing);
            return obs;
        }
        Err(stop) => return stopped(subject, obs, stop),
    }
    let mut builder = RequestBuilder::new(&scenario.id);
    for (i, step) in scenario.steps.iter().enumerate() {
        if matches!(step.action, Action::Events(_) | Action::Sleep(_)) {
            continue;
        }
        let (requests, _) = builder.step(step);
        for request in requests {
            let method = request.method;
            match send(subject, request, timeout, &mut obs) {
                Ok(Ok(result)) => obs.answers.push(json!({ "step": i + 1, "method": method, "result": result })),
                Ok(Err(error)) => obs.answers.push(json!({ "step": i + 1, "method": method, "error": error })),
                Err(stop) => return stopped(subject, obs, format!("step {} {method}: {stop}", i + 1)),
            }
        }
    }
    let mut closing = Observation::default();
    match send(subject, protocol::close_request(&scenario.id), timeout, &mut closing) {
        Ok(Ok(result)) => obs.answers.push(json!({ "close": result })),
        Ok(Err(error)) => obs.answers.push(json!({ "close": { "error": error } })),
        Err(stop) => return stopped(subject, obs, format!("session/close: {stop}")),
    }
    obs
}

fn stopped(subject: &mut dyn Subject, mut obs: Observation, why: String) -> Observation {
    obs.stopped = Some(why);
    let _ = subject.restart();
    let _ = subject.initialize();
    obs
}

/// One request: `Ok(Ok(result))` (without `eventsThrough`), `Ok(Err({code, message}))` for a JSON-RPC error,
/// `Err` when the subject did not answer properly (it must be restarted). Events and error messages go to
/// `obs`.
fn send(subject: &mut dyn Subject, request: Request, timeout: Duration, obs: &mut Observation) -> Result<Result<Value, Value>, String> {
    let method = request.method;
    let reply = subject.request(method, request.params, timeout).map_err(|e| match e {
        SubjectError::Timeout { method, waited } => format!("timeout: {method} unanswered after {waited:?}"),
        SubjectError::Crash { status, stderr_tail } => format!("crash: {status}: {}", stderr_tail.trim_end()),
        SubjectError::Protocol { message } => format!("protocol: {message}"),
    })?;
    for mut params in reply.events {
        obs.events.push(params.get_mut("event").map(Value::take).unwrap_or(Value::Null));
    }
    Ok(match reply.result {
        Ok(mut result) => {
            if let Some(map) = result.as_object_mut() {
                map.shift_remove("eventsThrough");
            }
            Ok(result)
        }
        Err(rpc) => {
            obs.messages.push(format!("{method}: JSON-RPC error {}: {}", rpc.code, rpc.message));
            // Error codes other than setup-rejected are each adapter's own (PROTOCOL.md § Session requests).
            let code = if rpc.code == dsh_conformance::checker::SETUP_REJECTED { json!(rpc.code) } else { json!("adapter's own") };
            Err(json!({ "code": code }))
        }
    })
}
