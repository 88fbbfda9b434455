//! `AdapterSubject`: an external adapter process spoken to over the adapter protocol
//! (`conformance/PROTOCOL.md`), one JSON-RPC message per line on its stdin/stdout.
//!
//! The process (`adapter/process.rs`) runs as `sh -c '<command line>'` in its own process group, so a
//! restart kills everything it started. Writes to its stdin go through a writer thread, so they are bounded
//! by the step timeout like the wait for the answer; stdout lines are capped at `lines::MAX_LINE` bytes and
//! parsed without a depth limit on a reader thread with a large stack; stderr is kept as a bounded tail,
//! shown with every CRASH, TIMEOUT and ERROR(adapter), and never read as a crash signal.
//!
//! # Strays
//! A message that belongs to a session already closed (a second `session/close` response, an event that
//! arrives late) is not held against the session in flight: it is kept as a [`Stray`] naming the session it
//! carries, for the runner to blame. After each `session/close` the stream is watched for [`SETTLE`], and at
//! the end of a run [`Subject::finish`] closes stdin and reads what is left.
//!
//! # Deep values
//! Replies may hold values nested 100,000 levels deep. Parsing happens on the reader thread (256 MiB stack);
//! the values are then moved to the caller, which must drop them on a thread with a large stack too (the
//! runner runs every trial on one).

use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use dsh_conformance::subject::{Reply, Stray, Subject, SubjectError, SubjectInfo};
use serde_json::Value;

mod bounded;
pub mod lines;
mod process;
mod reaper;
pub mod wire;

pub use process::kill_all;
pub use wire::PROTOCOL_VERSION;

use process::{Incoming, Process};

/// How often a waiting request checks whether the process is still alive.
const POLL: Duration = Duration::from_millis(50);
/// How long to wait for an exited process's pipes to drain before reporting the crash.
const DRAIN: Duration = Duration::from_millis(500);
/// How long the stream is watched after a `session/close` response for messages of that session.
pub const SETTLE: Duration = Duration::from_millis(2);
/// How long an adapter error waits for stderr written just before it to be read.
const STDERR_GRACE: Duration = Duration::from_millis(20);
/// How many sent requests are remembered, to name the session of a late duplicate response.
const REMEMBERED: u64 = 4096;
/// Events kept for one request; past it they are counted, dropped, and the request is `ERROR(adapter)`.
pub const MAX_STEP_EVENTS: usize = 10_000;

/// An implementation under test served by an adapter process.
pub struct AdapterSubject {
    command: String,
    init_timeout: Duration,
    process: Option<Process>,
    next_id: u64,
    /// Sent requests: id → (method, session).
    sent: BTreeMap<u64, (String, Option<String>)>,
    /// Sessions whose `session/close` was answered.
    closed: HashSet<String>,
    /// The session of the request in flight.
    current: Option<String>,
    /// The session closed last.
    last_closed: Option<String>,
    /// Events received but not yet handed out with a reply.
    pending_events: Vec<Value>,
    strays: bounded::Strays,
    transcript: bounded::Transcript,
    /// Events of the request in flight dropped past [`MAX_STEP_EVENTS`].
    events_cut: usize,
    /// Set after a protocol error: the stream may be out of step until a restart.
    poisoned: bool,
}

/// What one line turned out to be, for the request in flight.
enum Seen {
    Reply(Result<Value, dsh_conformance::subject::RpcError>),
    Event(Value),
    Stray,
}

impl AdapterSubject {
    /// Spawns `sh -c command`; `init_timeout` bounds the `initialize` request.
    pub fn spawn(command: &str, init_timeout: Duration) -> Result<Self, SubjectError> {
        let mut subject = AdapterSubject {
            command: command.to_owned(),
            init_timeout,
            process: None,
            next_id: 0,
            sent: BTreeMap::new(),
            closed: HashSet::new(),
            current: None,
            last_closed: None,
            pending_events: Vec::new(),
            strays: bounded::Strays::default(),
            transcript: bounded::Transcript::default(),
            events_cut: 0,
            poisoned: false,
        };
        subject.process = Some(process::start(&subject.command)?);
        Ok(subject)
    }

    /// The command line this subject runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    fn tail(&self) -> String {
        self.process.as_ref().map(Process::stderr_text).unwrap_or_default()
    }

    /// `message`, with the stderr tail when there is one.
    fn with_tail(&self, message: String) -> String {
        // What the adapter wrote to stderr just before the bad line may still be in the pipe.
        std::thread::sleep(STDERR_GRACE);
        let tail = self.tail();
        if tail.is_empty() { message } else { format!("{message}\nstderr tail:\n{tail}") }
    }

    fn crash(&mut self) -> SubjectError {
        self.poisoned = true;
        let Some(process) = self.process.as_mut() else {
            return SubjectError::Crash { status: "not running".into(), stderr_tail: String::new() };
        };
        let deadline = Instant::now() + DRAIN;
        let status = loop {
            match process.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                Ok(None) => break "stdout closed; process still running".to_owned(),
                Err(e) => break format!("unknown ({e})"),
            }
        };
        let _ = process.stderr_done.recv_timeout(DRAIN);
        SubjectError::Crash { status, stderr_tail: process.stderr_text() }
    }

    fn protocol(&mut self, message: String) -> SubjectError {
        self.poisoned = true;
        SubjectError::Protocol { message: self.with_tail(message) }
    }

    /// The response to `method` came after more than [`MAX_STEP_EVENTS`] events: an adapter error.
    fn too_many_events(&mut self, method: &str, result: Result<Value, dsh_conformance::subject::RpcError>, events: Vec<Value>) -> SubjectError {
        let cut = std::mem::take(&mut self.events_cut);
        if let Ok(value) = result {
            dsh_conformance::json::dismantle(value);
        }
        events.into_iter().for_each(dsh_conformance::json::dismantle);
        self.protocol(format!(
            "the adapter sent {} events before its response to `{method}`, more than the limit of {MAX_STEP_EVENTS} events a step: the {cut} past the limit were dropped",
            MAX_STEP_EVENTS + cut
        ))
    }

    fn timeout(&mut self, method: &str, waited: Duration) -> SubjectError {
        self.poisoned = true;
        SubjectError::Timeout { method: method.to_owned(), waited }
    }

    /// Sends one request and waits for the response with the same id; the write and the wait share `timeout`.
    fn call(&mut self, method: &str, params: &Value, timeout: Duration) -> Result<Reply, SubjectError> {
        if self.poisoned {
            return Err(SubjectError::Protocol {
                message: "adapter was not restarted after an earlier failure".into(),
            });
        }
        self.next_id += 1;
        let id = self.next_id;
        let session = params.get("session").and_then(Value::as_str).map(str::to_owned);
        self.sent.insert(id, (method.to_owned(), session.clone()));
        if id > REMEMBERED {
            self.sent.remove(&(id - REMEMBERED));
        }
        self.current = session;
        self.events_cut = 0;
        let mut line = wire::request_line(id, method, params);
        self.transcript.push(format!("→ {}", wire::display(&line)));
        line.push('\n');
        let start = Instant::now();
        let Some(process) = self.process.as_mut() else { return Err(self.crash()) };
        let sent = process.stdin.as_ref().is_some_and(|stdin| stdin.send(line.into_bytes()).is_ok());
        if !sent {
            return Err(self.crash());
        }
        match process.written.recv_timeout(timeout) {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => return Err(self.crash()),
            Err(RecvTimeoutError::Timeout) => {
                self.transcript.push("(the adapter stopped reading its stdin: the request could not be written)".into());
                return Err(self.timeout(method, timeout));
            }
        }
        loop {
            let Some(process) = self.process.as_mut() else { return Err(self.crash()) };
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(self.timeout(method, timeout));
            }
            let incoming = match process.lines.recv_timeout(left.min(POLL)) {
                Ok(incoming) => incoming,
                Err(RecvTimeoutError::Timeout) => {
                    if matches!(process.child.try_wait(), Ok(Some(_))) {
                        // Exited: drain what it wrote before dying, then report the crash.
                        match process.lines.recv_timeout(DRAIN) {
                            Ok(incoming) => incoming,
                            Err(_) => return Err(self.crash()),
                        }
                    } else {
                        continue;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => Incoming::Eof,
            };
            match self.take_line(incoming, id, method)? {
                Seen::Event(params) if self.pending_events.len() < MAX_STEP_EVENTS => self.pending_events.push(params),
                Seen::Event(params) => {
                    dsh_conformance::json::dismantle(params);
                    self.events_cut += 1;
                }
                Seen::Stray => {}
                Seen::Reply(result) => {
                    let events = std::mem::take(&mut self.pending_events);
                    if self.events_cut > 0 {
                        return Err(self.too_many_events(method, result, events));
                    }
                    if method == "session/close" {
                        self.settle();
                    }
                    return Ok(Reply { result, events });
                }
            }
        }
    }

    /// One line from stdout, judged against the request `id` (`method`) in flight.
    fn take_line(&mut self, incoming: Incoming, id: u64, method: &str) -> Result<Seen, SubjectError> {
        let (raw, parsed) = match incoming {
            Incoming::Eof => return Err(self.crash()),
            Incoming::TooLong { head, len } => {
                self.transcript.push(format!("← {}… (a line of more than {len} bytes)", wire::display(&head)));
                let msg = format!(
                    "adapter wrote a line longer than the protocol's limit of {} bytes ({len} bytes without a newline so far): {}",
                    lines::MAX_LINE,
                    wire::display(&head)
                );
                return Err(self.protocol(msg));
            }
            Incoming::Line { raw, parsed } => (raw, parsed),
        };
        self.transcript.push(format!("← {}", wire::display(&raw)));
        let value = match parsed {
            Ok(value) => value,
            Err(e) => {
                let msg = match raw.strip_prefix('\u{FEFF}') {
                    // Invisible in the line shown: say it, or the line looks valid.
                    Some(rest) => format!(
                        "adapter wrote a line starting with a byte order mark (U+FEFF, bytes EF BB BF), which is not JSON: protocol lines are UTF-8 without a BOM: <BOM>{}",
                        wire::display(rest)
                    ),
                    None => format!("adapter wrote a line that is not JSON ({e}): {}", wire::display(&raw)),
                };
                return Err(self.protocol(msg));
            }
        };
        // Whose message is it? A response to an earlier request of a closed session, or an event of a
        // closed session, is that session's fault, not the one in flight.
        let owner = match wire::response_id(&value) {
            Some(Some(got)) if got == id => None,
            Some(Some(got)) => match self.sent.get(&got).cloned() {
                Some((earlier, Some(session))) if self.closed.contains(&session) && self.current.as_ref() != Some(&session) => {
                    Some((session, format!("a second response to request {got} (`{earlier}`)")))
                }
                Some((earlier, _)) => {
                    dsh_conformance::json::dismantle(value);
                    let msg = format!(
                        "unexpected response id {got}: request {got} (`{earlier}`) was already answered; the request in flight is {id} (`{method}`): {}",
                        wire::display(&raw)
                    );
                    return Err(self.protocol(msg));
                }
                None => {
                    dsh_conformance::json::dismantle(value);
                    let msg = format!(
                        "unexpected response id {got}: no request with that id was sent; the request in flight is {id} (`{method}`): {}",
                        wire::display(&raw)
                    );
                    return Err(self.protocol(msg));
                }
            },
            Some(None) => None,
            None => wire::event_session(&value).filter(|s| self.closed.contains(s) && self.current.as_ref() != Some(s)).map(|s| {
                let failure = value.get("method").and_then(Value::as_str) == Some(wire::FAILURE);
                (s, if failure { "a failure report after its session was closed" } else { "an event after its session was closed" }.to_owned())
            }),
        };
        if let Some((session, what)) = owner {
            dsh_conformance::json::dismantle(value);
            let message = format!("after session/close of {session}, the adapter sent {what}: {}", wire::display(&raw));
            self.strays.push(Stray { session: Some(session), message });
            return Ok(Seen::Stray);
        }
        if let Err(problem) = wire::validate_incoming(&value, method) {
            let msg = format!("adapter message is not valid ({problem}): {}", wire::display(&raw));
            dsh_conformance::json::dismantle(value);
            return Err(self.protocol(msg));
        }
        match wire::classify(value, id) {
            wire::Message::Event(params) => Ok(Seen::Event(params)),
            wire::Message::Response(result) => Ok(Seen::Reply(result)),
            wire::Message::Failure(text) => Err(self.protocol(text)),
            wire::Message::Invalid(problem) => {
                let msg = format!("{problem}: {}", wire::display(&raw));
                Err(self.protocol(msg))
            }
        }
    }

    /// After a `session/close` response: marks the session closed and takes what arrives within `SETTLE`.
    fn settle(&mut self) {
        if let Some(session) = self.current.take() {
            self.closed.insert(session.clone());
            self.last_closed = Some(session);
        }
        self.watch(Instant::now() + SETTLE);
    }

    /// Reads lines until `deadline` (or the end of stdout) while no request is in flight: each one is a
    /// stray, blamed on the session it names, else on the session closed last.
    fn watch(&mut self, deadline: Instant) {
        loop {
            let Some(process) = self.process.as_mut() else { return };
            let left = deadline.saturating_duration_since(Instant::now());
            let incoming = match process.lines.recv_timeout(left) {
                Ok(Incoming::Eof) | Err(_) => return,
                Ok(incoming) => incoming,
            };
            let seen = self.take_line(incoming, 0, "(none)");
            self.poisoned = false;
            if matches!(seen, Ok(Seen::Stray)) {
                continue;
            }
            let what = match seen {
                Ok(Seen::Event(params)) => {
                    dsh_conformance::json::dismantle(params);
                    "an event while no request was in flight".to_owned()
                }
                Ok(Seen::Reply(_) | Seen::Stray) => "a response while no request was in flight".to_owned(),
                Err(SubjectError::Protocol { message }) => message,
                Err(e) => format!("{e:?}"),
            };
            let last = self.transcript.last().cloned().unwrap_or_default();
            let session = self.last_closed.clone();
            let message = format!("after session/close of {}: {what}: {last}", session.as_deref().unwrap_or("(none)"));
            self.strays.push(Stray { session, message });
        }
    }

    fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill();
        }
    }
}

impl Subject for AdapterSubject {
    fn initialize(&mut self) -> Result<SubjectInfo, SubjectError> {
        let params = wire::initialize_params();
        let reply = self.call("initialize", &params, self.init_timeout)?;
        match reply.result {
            Ok(result) => wire::subject_info(&result).map_err(|m| self.protocol(m)),
            Err(e) => Err(self.protocol(format!("initialize failed: {} (code {})", e.message, e.code))),
        }
    }

    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Reply, SubjectError> {
        self.call(method, &params, timeout)
    }

    fn request_keeping(&mut self, method: &str, params: Value, timeout: Duration) -> (Result<Reply, SubjectError>, Value) {
        // The request line is written from the params, which stay ours.
        (self.call(method, &params, timeout), params)
    }

    fn restart(&mut self) -> Result<(), SubjectError> {
        self.kill();
        self.transcript.push(format!("(adapter restarted: {})", self.command));
        self.pending_events.clear();
        self.current = None;
        self.poisoned = false;
        self.process = Some(process::start(&self.command)?);
        Ok(())
    }

    fn stderr_tail(&mut self) -> String {
        self.tail()
    }

    fn take_strays(&mut self) -> Vec<Stray> {
        self.strays.take(self.last_closed.as_ref())
    }

    fn finish(&mut self, wait: Duration) -> Vec<Stray> {
        if let Some(process) = self.process.as_mut() {
            // Closing stdin asks the adapter to exit; whatever it still writes is read, up to `wait`.
            process.stdin = None;
            self.watch(Instant::now() + wait);
        }
        self.kill();
        self.take_strays()
    }

    fn take_transcript(&mut self) -> Vec<String> {
        self.transcript.take()
    }
}

impl Drop for AdapterSubject {
    fn drop(&mut self) {
        self.kill();
    }
}
