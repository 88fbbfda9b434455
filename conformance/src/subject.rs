//! The `Subject` seam: one implementation under test, spoken to in adapter-protocol terms.
//!
//! The checker drives every subject through this trait, whether it is the reference served in-process
//! (`dsh-harness`'s `ReferenceSubject`) or an external adapter process (`AdapterSubject`). Requests and
//! replies are the JSON of `conformance/PROTOCOL.md`, so both kinds of subject are checked identically.

use std::time::Duration;

use serde_json::Value;

/// What a subject says about itself in answer to `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectInfo {
    /// The protocol version the subject speaks (`"1.0"`).
    pub protocol_version: String,
    /// `implementation.name`.
    pub name: String,
    /// `implementation.version`.
    pub version: String,
    /// `implementation.language`.
    pub language: String,
    /// `capabilities.profiles`.
    pub profiles: Vec<String>,
    /// `capabilities.features`.
    pub features: Vec<String>,
    /// `capabilities.runtimes`.
    pub runtimes: Vec<String>,
}

/// A JSON-RPC error object returned by the subject.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// JSON-RPC error code.
    pub code: i64,
    /// Human-readable message.
    pub message: String,
    /// Optional `data`.
    pub data: Option<Value>,
}

/// One answered request: its result or error, and the session events that arrived up to the response.
#[derive(Debug)]
pub struct Reply {
    /// `result` of the response, or its `error`.
    pub result: Result<Value, RpcError>,
    /// Event notifications (`params` of each `event` notification) received since the previous reply,
    /// in arrival order.
    pub events: Vec<Value>,
}

/// Why a request got no well-formed reply. Each maps to one outcome of the taxonomy.
#[derive(Debug, Clone, PartialEq)]
pub enum SubjectError {
    /// No response within the step timeout: `TIMEOUT {step}`.
    Timeout {
        /// The method that went unanswered.
        method: String,
        /// How long the harness waited.
        waited: Duration,
    },
    /// The adapter process exited: `CRASH {exit status, stderr tail}`.
    Crash {
        /// Exit status as text (`exit status: 3`, `signal: 9`), when known.
        status: String,
        /// The last lines the adapter wrote to stderr.
        stderr_tail: String,
    },
    /// The adapter sent something that is not a valid protocol message: `ERROR(adapter)`.
    Protocol {
        /// What was wrong, naming the offending line.
        message: String,
    },
}

/// A message that arrived outside the request it could belong to: a second response to a request of a
/// session already closed, an event after its session closed, anything received while no request was in
/// flight. The runner blames `session` (the session the message carries, else the one closed last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// The session to blame, when one can be named.
    pub session: Option<String>,
    /// What arrived, naming the line.
    pub message: String,
}

/// One implementation under test.
///
/// `request` sends one request and blocks until its response (or failure). After a `Crash` or `Timeout`
/// the caller calls [`Subject::restart`] before the next scenario.
pub trait Subject: Send {
    /// Sends `initialize` (once per process) and returns what the subject declared.
    fn initialize(&mut self) -> Result<SubjectInfo, SubjectError>;
    /// Sends one request and waits at most `timeout` for its response.
    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Reply, SubjectError>;
    /// Sends one request as [`request`](Self::request) does and hands `params` back, for a caller that
    /// sends the same (possibly 100,000-level) value again: a subject that only reads them returns them
    /// instead of the caller copying them first. The default copies them before sending. After a failure
    /// what comes back may be `null` (the caller stops there anyway).
    fn request_keeping(&mut self, method: &str, params: Value, timeout: Duration) -> (Result<Reply, SubjectError>, Value) {
        let kept = crate::json::deep_clone(&params);
        (self.request(method, params, timeout), kept)
    }
    /// Kills and restarts the subject after a crash or timeout (a no-op for in-process subjects that
    /// cannot crash); the next call is `initialize`.
    fn restart(&mut self) -> Result<(), SubjectError>;
    /// The protocol lines exchanged since the last call to this method, for failure transcripts
    /// (`→ ...` for sent, `← ...` for received). In-process subjects render the same JSON.
    fn take_transcript(&mut self) -> Vec<String>;
    /// Forgets the protocol lines exchanged since the last take, without rendering them (a PASS's
    /// transcript is never shown). The default takes and drops them.
    fn discard_transcript(&mut self) {
        drop(self.take_transcript());
    }
    /// The last lines the subject wrote to its stderr, shown with a TIMEOUT or ERROR(adapter) (empty for
    /// subjects without one).
    fn stderr_tail(&mut self) -> String {
        String::new()
    }
    /// The [`Stray`] messages seen since the last call.
    fn take_strays(&mut self) -> Vec<Stray> {
        Vec::new()
    }
    /// Ends the subject at the end of a run: waits at most `wait` for whatever it still sends, then stops
    /// it; returns the strays seen since the last `take_strays`.
    fn finish(&mut self, wait: Duration) -> Vec<Stray> {
        let _ = wait;
        self.take_strays()
    }
}
