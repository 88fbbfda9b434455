//! One adapter process: spawning it as `sh -c '<command line>'` in its own process group, its three
//! pipe threads (a writer, so a write to an adapter that stops reading is bounded by the step timeout;
//! the bounded stdout and stderr readers of `lines.rs`), and killing everything it started.
//!
//! # Killing
//! A restart, the end of a run and an interrupted run (`run/interrupt.rs`) kill the adapter's process
//! group, its descendants, every process that still carries this adapter's `DSH_HARNESS_ADAPTER` token in
//! its environment and every process holding one of its pipes (`reaper.rs`, which also spawns it so that
//! it dies with the harness). Every live adapter is listed in a process-wide registry so that a signal
//! handler can kill them all.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use dsh_conformance::subject::SubjectError;
use serde_json::Value;

use super::lines::{Line, LineReader, MAX_LINE, StderrTail};
use super::reaper::{self, TOKEN_VAR};
use super::wire;

/// Stack of the stdout reader thread: parsing and moving deep values is recursive.
const READER_STACK: usize = 256 << 20;

/// One line read from the adapter's stdout.
pub enum Incoming {
    /// A line, with its parse result (the error text when it is not JSON).
    Line { raw: String, parsed: Result<Value, String> },
    /// A line longer than `MAX_LINE`: its first bytes and its length when it passed the cap.
    TooLong { head: String, len: usize },
    /// stdout closed.
    Eof,
}

/// A running adapter process and its pipe threads.
pub struct Process {
    pub child: Child,
    /// Lines to write to stdin; dropping it closes stdin.
    pub stdin: Option<Sender<Vec<u8>>>,
    /// One answer per line written: `Err` when stdin is closed.
    pub written: Receiver<std::io::Result<()>>,
    pub lines: Receiver<Incoming>,
    pub stderr_tail: Arc<Mutex<StderrTail>>,
    pub stderr_done: Receiver<()>,
    token: String,
    /// The names of its three pipes (`pipe:[inode]`): whoever else holds one was started by it.
    pipes: Vec<PathBuf>,
}

/// A live adapter, for [`kill_all`].
#[derive(Clone)]
struct Live {
    leader: u32,
    token: String,
    pipes: Vec<PathBuf>,
}

/// Live adapters.
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Starts `sh -c command`.
pub fn start(command: &str) -> Result<Process, SubjectError> {
    use std::os::unix::process::CommandExt;
    let spawn_failed = |e: std::io::Error| SubjectError::Crash {
        status: format!("could not start `sh -c {command}`: {e}"),
        stderr_tail: String::new(),
    };
    use std::os::fd::AsRawFd;
    let token = format!("{}-{}", std::process::id(), NEXT_TOKEN.fetch_add(1, Ordering::Relaxed));
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).env(TOKEN_VAR, &token).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = reaper::spawn(sh).map_err(spawn_failed)?;
    reaper::note_group('+', child.id());
    let (Some(mut stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        reaper::kill_tree(child.id(), &token, &[]);
        reaper::note_group('-', child.id());
        let _ = child.wait();
        return Err(SubjectError::Crash { status: "pipes unavailable".into(), stderr_tail: String::new() });
    };
    let pipes: Vec<PathBuf> = [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()].into_iter().filter_map(reaper::pipe_name).collect();
    if let Ok(mut live) = LIVE.lock() {
        live.push(Live { leader: child.id(), token: token.clone(), pipes: pipes.clone() });
    }
    let (to_stdin, from_harness) = mpsc::channel::<Vec<u8>>();
    let (ack, written) = mpsc::channel();
    let (tx, lines) = mpsc::channel();
    let stderr_tail = Arc::new(Mutex::new(StderrTail::default()));
    let tail = Arc::clone(&stderr_tail);
    let (done_tx, stderr_done) = mpsc::channel();
    let threads = std::thread::Builder::new().name("adapter-stdin".into()).spawn(move || {
        for bytes in from_harness {
            let result = stdin.write_all(&bytes).and_then(|()| stdin.flush());
            let failed = result.is_err();
            if ack.send(result).is_err() || failed {
                return;
            }
        }
    });
    let threads = threads.and_then(|_| {
        std::thread::Builder::new().name("adapter-stdout".into()).stack_size(READER_STACK).spawn(move || read_stdout(stdout, &tx))
    });
    let threads = threads.and_then(|_| {
        std::thread::Builder::new().name("adapter-stderr".into()).spawn(move || {
            read_stderr(stderr, &tail);
            let _ = done_tx.send(());
        })
    });
    let process = Process { child, stdin: Some(to_stdin), written, lines, stderr_tail, stderr_done, token, pipes };
    if let Err(e) = threads {
        let mut process = process;
        process.kill();
        return Err(spawn_failed(e));
    }
    Ok(process)
}

impl Process {
    /// The stderr tail so far.
    pub fn stderr_text(&self) -> String {
        self.stderr_tail.lock().map(|t| t.text()).unwrap_or_default()
    }

    /// Kills everything it started (`reaper::kill_tree`) and reaps the leader.
    pub fn kill(&mut self) {
        self.stdin = None;
        reaper::kill_tree(self.child.id(), &self.token, &self.pipes);
        let _ = self.child.kill();
        let _ = self.child.wait();
        reaper::note_group('-', self.child.id());
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|l| l.token != self.token);
        }
    }
}

/// Kills every live adapter and whatever was re-parented to the harness (for a signal handler and the end
/// of a run: the live leaders are not reaped).
pub fn kill_all() {
    let live = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
    for adapter in &live {
        reaper::kill_tree(adapter.leader, &adapter.token, &adapter.pipes);
    }
    reaper::kill_inherited(&live.iter().map(|l| l.leader).collect::<Vec<_>>());
}

fn read_stdout(stdout: impl std::io::Read, tx: &Sender<Incoming>) {
    let mut reader = LineReader::new(stdout, MAX_LINE);
    while let Ok(Some(line)) = reader.next_line() {
        let incoming = match line {
            Line::TooLong { head, len } => Incoming::TooLong { head: String::from_utf8_lossy(&head).into_owned(), len },
            Line::Full(bytes) => match String::from_utf8(bytes) {
                Ok(raw) => {
                    let parsed = wire::parse(&raw);
                    Incoming::Line { raw, parsed }
                }
                Err(e) => {
                    let raw = String::from_utf8_lossy(e.as_bytes()).into_owned();
                    Incoming::Line { raw, parsed: Err("not UTF-8".into()) }
                }
            },
        };
        if tx.send(incoming).is_err() {
            return;
        }
    }
    let _ = tx.send(Incoming::Eof);
}

fn read_stderr(mut stderr: impl std::io::Read, tail: &Mutex<StderrTail>) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match stderr.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if let Ok(mut tail) = tail.lock() {
            tail.push(&buf[..n]);
        }
    }
}
