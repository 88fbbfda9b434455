//! `AdapterSubject`: an external adapter process spoken to over the adapter protocol
//! (`conformance/PROTOCOL.md`), one JSON-RPC message per line on its stdin/stdout.
//!
//! The process runs as `sh -c '<command line>'` in its own process group, so a restart kills everything it
//! started. A reader thread with a large stack parses stdout without a depth limit; a second thread keeps the
//! tail of stderr, which is shown on a crash and never read as a crash signal.
//!
//! # Deep values
//! Replies may hold values nested 100,000 levels deep. Parsing happens on the reader thread (256 MiB stack);
//! the values are then moved to the caller, which must drop them on a thread with a large stack too (the
//! runner runs every trial on one).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_conformance::subject::{Reply, Subject, SubjectError, SubjectInfo};
use serde_json::Value;

mod wire;

pub use wire::PROTOCOL_VERSION;

/// How many stderr lines a crash report keeps.
const STDERR_TAIL_LINES: usize = 40;
/// Stack of the stdout reader thread: parsing and moving deep values is recursive.
const READER_STACK: usize = 256 << 20;
/// How often a waiting request checks whether the process is still alive.
const POLL: Duration = Duration::from_millis(50);
/// How long to wait for an exited process's pipes to drain before reporting the crash.
const DRAIN: Duration = Duration::from_millis(500);

/// One line read from the adapter's stdout.
enum Incoming {
    /// A line, with its parse result (the error text when it is not JSON).
    Line { raw: String, parsed: Result<Value, String> },
    /// stdout closed.
    Eof,
}

/// A running adapter process and its reader threads.
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Incoming>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stderr_done: Receiver<()>,
}

/// An implementation under test served by an adapter process.
pub struct AdapterSubject {
    command: String,
    init_timeout: Duration,
    process: Option<Process>,
    next_id: u64,
    /// Events received but not yet handed out with a reply.
    pending_events: Vec<Value>,
    transcript: Vec<String>,
    /// Set after a protocol error: the stream may be out of step until a restart.
    poisoned: bool,
}

impl AdapterSubject {
    /// Spawns `sh -c command`; `init_timeout` bounds the `initialize` request.
    pub fn spawn(command: &str, init_timeout: Duration) -> Result<Self, SubjectError> {
        let mut subject = AdapterSubject {
            command: command.to_owned(),
            init_timeout,
            process: None,
            next_id: 0,
            pending_events: Vec::new(),
            transcript: Vec::new(),
            poisoned: false,
        };
        subject.process = Some(start(&subject.command)?);
        Ok(subject)
    }

    /// The command line this subject runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    fn crash(&mut self) -> SubjectError {
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
        let stderr_tail = process
            .stderr_tail
            .lock()
            .map(|tail| tail.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        self.poisoned = true;
        SubjectError::Crash { status, stderr_tail }
    }

    fn protocol(&mut self, message: String) -> SubjectError {
        self.poisoned = true;
        SubjectError::Protocol { message }
    }

    /// Sends one request and waits for the response with the same id.
    fn call(&mut self, method: &str, params: &Value, timeout: Duration) -> Result<Reply, SubjectError> {
        if self.poisoned {
            return Err(SubjectError::Protocol {
                message: "adapter was not restarted after an earlier failure".into(),
            });
        }
        self.next_id += 1;
        let id = self.next_id;
        let line = wire::request_line(id, method, params);
        self.transcript.push(format!("→ {}", wire::display(&line)));
        let Some(process) = self.process.as_mut() else { return Err(self.crash()) };
        let written = process
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| process.stdin.write_all(b"\n"))
            .and_then(|()| process.stdin.flush());
        if written.is_err() {
            return Err(self.crash());
        }
        let start = Instant::now();
        loop {
            let Some(process) = self.process.as_mut() else { return Err(self.crash()) };
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                self.poisoned = true;
                return Err(SubjectError::Timeout { method: method.to_owned(), waited: timeout });
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
            let (raw, parsed) = match incoming {
                Incoming::Eof => return Err(self.crash()),
                Incoming::Line { raw, parsed } => (raw, parsed),
            };
            self.transcript.push(format!("← {}", wire::display(&raw)));
            let value = match parsed {
                Ok(value) => value,
                Err(e) => {
                    let msg = format!("adapter wrote a line that is not JSON ({e}): {}", wire::display(&raw));
                    return Err(self.protocol(msg));
                }
            };
            if let Err(problem) = wire::validate_incoming(&value, method) {
                let msg = format!("adapter message is not valid ({problem}): {}", wire::display(&raw));
                dsh_conformance::json::dismantle(value);
                return Err(self.protocol(msg));
            }
            match wire::classify(value, id) {
                wire::Message::Event(params) => self.pending_events.push(params),
                wire::Message::Response(result) => {
                    let events = std::mem::take(&mut self.pending_events);
                    return Ok(Reply { result, events });
                }
                wire::Message::Invalid(problem) => {
                    let msg = format!("{problem}: {}", wire::display(&raw));
                    return Err(self.protocol(msg));
                }
            }
        }
    }

    fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            // The process leads its own group (see `start`): kill the group, then the leader for sure.
            let pgid = process.child.id();
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let _ = process.child.kill();
            let _ = process.child.wait();
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

    fn restart(&mut self) -> Result<(), SubjectError> {
        self.kill();
        self.transcript.push(format!("(adapter restarted: {})", self.command));
        self.pending_events.clear();
        self.poisoned = false;
        self.process = Some(start(&self.command)?);
        Ok(())
    }

    fn take_transcript(&mut self) -> Vec<String> {
        std::mem::take(&mut self.transcript)
    }
}

impl Drop for AdapterSubject {
    fn drop(&mut self) {
        self.kill();
    }
}

fn start(command: &str) -> Result<Process, SubjectError> {
    use std::os::unix::process::CommandExt;
    let spawn_failed = |e: std::io::Error| SubjectError::Crash {
        status: format!("could not start `sh -c {command}`: {e}"),
        stderr_tail: String::new(),
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(spawn_failed)?;
    let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err(SubjectError::Crash { status: "pipes unavailable".into(), stderr_tail: String::new() });
    };
    let (tx, lines) = mpsc::channel();
    std::thread::Builder::new()
        .name("adapter-stdout".into())
        .stack_size(READER_STACK)
        .spawn(move || read_stdout(stdout, &tx))
        .map_err(spawn_failed)?;
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    let tail = Arc::clone(&stderr_tail);
    let (done_tx, stderr_done) = mpsc::channel();
    std::thread::Builder::new()
        .name("adapter-stderr".into())
        .spawn(move || {
            read_stderr(stderr, &tail);
            let _ = done_tx.send(());
        })
        .map_err(spawn_failed)?;
    Ok(Process { child, stdin, lines, stderr_tail, stderr_done })
}

fn read_stdout(stdout: impl Read, tx: &mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        let incoming = match String::from_utf8(std::mem::take(&mut buf)) {
            Ok(raw) => {
                let parsed = wire::parse(&raw);
                Incoming::Line { raw, parsed }
            }
            Err(e) => {
                let raw = String::from_utf8_lossy(e.as_bytes()).into_owned();
                Incoming::Line { raw, parsed: Err("not UTF-8".into()) }
            }
        };
        if tx.send(incoming).is_err() {
            return;
        }
    }
    let _ = tx.send(Incoming::Eof);
}

fn read_stderr(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let line = wire::display(line.trim_end_matches(['\n', '\r']));
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}
