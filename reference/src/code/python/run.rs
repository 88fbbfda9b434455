//! One Python run driven to settlement (the host half of the protocol, upstream worker-thread
//! `execute()`'s shape): start (`worker.rs`), `boot` → `boot-ack` → `run`, then one loop over fd-3 frames, binding
//! completions, stray stdout/stderr, the busy-time poll, the wall ceiling, the abort signal and disposal.
//! The first terminal event settles the run: the process group is killed, in-flight bindings are aborted
//! and awaited, the pipes drained (stray output still counts, as upstream's drain does), the leader reaped,
//! and the result built through the output ledger.
//!
//! Spec: RUN-007, RUN-022, RUN-023, RUN-027, RUN-028, RUN-029, RUN-031, RUN-032, RUN-041, RUN-051.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::frames::{self, BootNames, BootNamespace, ChildFrame, DoneKind, DoneValue};
use super::json;
use crate::code::ledger::OutputLedger;
use super::process::{self, Leader};
use super::worker::{Resident, Worker, next_ready, next_stray, start_bounded};
use super::zygote::Zygote;
use super::boundary::EXIT_BOUNDARY;
use super::{HEAP_EXIT_MESSAGE, Namespace};
use crate::callback::{BoxFuture, Contained};
use crate::code::{BindingNames, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntimeLimits, ENVIRONMENT_RELEASED};
use crate::value::js_number_string;

/// The launcher `-c` runs: the bootstrap arrives as `sys.argv[1]` and is compiled under its own file name,
/// so its frames can be told apart from the program's in tracebacks.
pub(super) const LAUNCHER: &str = "import sys;exec(compile(sys.argv.pop(1),'<dsh-bootstrap>','exec'))";
/// The child side.
pub(super) const BOOTSTRAP: &str = concat!(include_str!("contain.py"), include_str!("bootstrap.py"));
/// Bootstrap exit statuses (see `bootstrap.py`).
const EXIT_HEAP: i32 = 86;
/// The `worker-exit` message of a run whose process could not confine itself (`contain.py`): it ran no
/// program.
const BOUNDARY_EXIT_MESSAGE: &str = "worker error: the run could not apply its boundary (Landlock, seccomp, capabilities); no program ran";
/// Spare inbox room made before each read of fd 3.
const READ_CHUNK: usize = 1 << 18;
/// How often the child's CPU time is sampled at most (upstream `ELU_POLL_INTERVAL_MS`).
const CPU_POLL: Duration = Duration::from_millis(25);
/// How long settlement waits for forked members of the group to die after the kill.
const GROUP_EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long settlement waits for the pipes to reach EOF after the kill (a setsid grandchild may hold them).
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How a run settles; the result is built after the drain, so late stray output still counts.
enum Finish {
    Success(Option<Value>),
    Failure(CodeRunErrorKind, String),
    /// The output ledger overflowed; the text that did not fit (if any) is appended to the logs.
    Limit(Option<String>),
}

/// Run one validated request to settlement: in a fresh process (per-call), or in the owner's resident
/// one. The worker comes back when the program completed on its own in a persistent run.
pub(super) async fn run(
    zygote: &Zygote,
    limits: CodeRuntimeLimits,
    disposed: &CancellationToken,
    request: CodeRunRequest,
    namespaces: Vec<Namespace>,
    resident: Option<Resident>,
) -> (CodeRunResult, Option<Worker>) {
    let ledger = OutputLedger::new(limits.max_output_bytes);
    let persistent = resident.is_some();
    let (released, existing) = match resident {
        Some(resident) => (Some(resident.released), resident.worker),
        None => (None, None),
    };
    if request.signal.aborted() {
        return (ledger.failure(Vec::new(), CodeRunErrorKind::Abort, request.signal.reason()), existing);
    }
    let requested = Instant::now();
    let mut worker = match existing {
        Some(worker) => worker,
        // Starting is bounded by the wall ceiling, the abort signal and disposal like the run itself: a
        // fork server that does not answer cannot hold a run past them.
        None => match start_bounded(zygote, limits, disposed, &request, requested, largest_names(&namespaces)).await {
            Ok(worker) => worker,
            Err((kind, message)) => return (ledger.failure(Vec::new(), kind, message), None),
        },
    };
    let boot_namespaces: Vec<BootNamespace<'_>> = namespaces
        .iter()
        .map(|ns| {
            let names = ns.bindings.names();
            BootNamespace {
                global: &ns.global,
                names: if worker.table == Some(names.id()) {
                    BootNames::Table { id: names.id(), count: names.distinct_len() }
                } else {
                    BootNames::Inline(frames::names_array(names))
                },
                error_class: ns.error_class.as_ref().map(|c| (c.name.as_str(), c.member_name_property.as_str())),
            }
        })
        .collect();
    // The child keeps the table only if this boot used it (a persistent process's later boots may too).
    if !boot_namespaces.iter().any(|ns| matches!(ns.names, BootNames::Table { .. })) {
        worker.table = None;
    }
    let cpu_seconds = (limits.compute_ms / 1000.0).ceil().clamp(1.0, 1e9) as u64 + 1;
    let boot = frames::boot_frame(
        cpu_seconds,
        limits.max_heap_bytes,
        limits.max_output_bytes,
        limits.max_output_bytes,
        &boot_namespaces,
        persistent,
    );
    worker.queued.fetch_add(boot.len() as u64, Ordering::Relaxed);
    let _ = worker.outbox.send(boot);
    drop(boot_namespaces);

    let mut driver = Driver {
        limits,
        pid: worker.group.pgid(),
        ledger,
        logs: Vec::new(),
        stray: Vec::new(),
        terminal_override: None,
        namespaces,
        answered: HashSet::new(),
        calls: FuturesUnordered::new(),
        outbox: worker.outbox.clone(),
        queued: Arc::clone(&worker.queued),
        pending_run: Some(frames::run_frame(&request.program)),
        booted: false,
        persistent,
        completed: false,
        cpu_baseline_ms: 0.0,
        frame_cap: frames::max_frame_bytes(limits.max_output_bytes),
        pending_bytes: 0,
    };
    let finish = driver.drive(&mut worker, &request, disposed, released.as_ref(), requested).await;
    // Dropping the pending binding futures is what aborting their tasks did: the bridge still drains the
    // sub-calls it started.
    driver.calls.clear();

    if persistent && driver.completed && driver.terminal_override.is_none() {
        // The child is back at its loop: keep it. Output already in its pipes belongs to this run.
        for pipe in [0, 1] {
            loop {
                let next = match pipe {
                    0 => next_ready(&mut worker.stdout).await,
                    _ => next_ready(&mut worker.stderr).await,
                };
                let Some(text) = next else { break };
                driver.admit_stray(text);
            }
        }
        if driver.terminal_override.is_none() {
            return (driver.result(finish), Some(worker));
        }
    }

    // Settle: nothing the program started outlives the run.
    worker.group.kill();
    worker.writer.abort();
    let drain_deadline = Instant::now() + DRAIN_GRACE;
    if let Some(stray) = worker.stdout.as_mut() {
        while let Ok(Some(text)) = tokio::time::timeout_at(drain_deadline, stray.next()).await {
            driver.admit_stray(text);
        }
    }
    if let Some(stray) = worker.stderr.as_mut() {
        while let Ok(Some(text)) = tokio::time::timeout_at(drain_deadline, stray.next()).await {
            driver.admit_stray(text);
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), worker.child.wait()).await;
    // A forked member dies asynchronously after the kill: wait (bounded) until none is running, so the
    // run resolves only once nothing it started is alive. Zombies left to the reaper of orphans are dead.
    if worker.group.has_members() {
        let deadline = Instant::now() + GROUP_EXIT_GRACE;
        while worker.group.has_running_members() && Instant::now() < deadline {
            worker.group.kill();
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    (driver.result(finish), None)
}

/// The run's largest names set (most distinct names): the one worth the fork server's names table.
fn largest_names(namespaces: &[Namespace]) -> Option<&BindingNames> {
    namespaces.iter().map(|ns| &**ns.bindings.names()).max_by_key(|names| names.distinct_len())
}

/// A settled binding call: its id and what the binding resolved to (`Err` of the outer result: it
/// panicked, with the panic's message).
type CallOutcome = (f64, u64, Result<Result<Value, String>, String>);

/// What one pending binding call is charged against the heap cap: its `call` frame's length four times
/// over (the parsed arguments as host values, and the future that holds them) plus a fixed overhead. A
/// program that starts calls without awaiting them makes the host hold them; the cap bounds that too.
fn pending_call_charge(frame_len: usize) -> u64 {
    (frame_len as u64).saturating_mul(4).saturating_add(1024)
}

/// The state of one run between spawn and settlement.
struct Driver {
    limits: CodeRuntimeLimits,
    pid: i32,
    ledger: OutputLedger,
    logs: Vec<String>,
    stray: Vec<String>,
    /// Set when stray output overflowed the ledger: it overrides any other outcome (upstream
    /// `terminalOverride`).
    terminal_override: Option<String>,
    namespaces: Vec<Namespace>,
    answered: HashSet<u64>, // the bits of each answered call id
    /// Pending binding calls, polled by the run's own loop. Their replies go out in the order the bindings
    /// resolved (wake order), which is the order the bridge committed them: the program receives results
    /// in commit order, as upstream's host delivers them (RUN-041). Tasks on a multi-threaded runtime
    /// would race each other to the reply.
    calls: FuturesUnordered<BoxFuture<'static, CallOutcome>>,
    outbox: mpsc::UnboundedSender<Vec<u8>>,
    queued: Arc<AtomicU64>,
    /// The `run` frame, sent once `boot-ack` arrives.
    pending_run: Option<Vec<u8>>,
    booted: bool,
    /// A persistent run: frames a kept child wrote while idle (before this run's `boot-ack`) are dropped.
    persistent: bool,
    /// The program's own `done` frame arrived.
    completed: bool,
    cpu_baseline_ms: f64,
    frame_cap: usize,
    /// What the pending binding calls are charged against the heap cap.
    pending_bytes: u64,
}

impl Driver {
    async fn drive(
        &mut self,
        worker: &mut Worker,
        request: &CodeRunRequest,
        disposed: &CancellationToken,
        released: Option<&CancellationToken>,
        requested: Instant,
    ) -> Finish {
        let Worker { child, reader, stdout, stderr, inbox, .. } = worker;
        // The wall ceiling counts from the request for a process (start-up included); the CPU poll from now.
        let start = Instant::now();
        let wall = Duration::try_from_secs_f64(self.limits.max_wall_ms / 1000.0).unwrap_or(Duration::MAX);
        let wall_deadline = requested.checked_add(wall).unwrap_or_else(|| requested + Duration::from_secs(86_400 * 365));
        let mut scanned = 0usize;
        // Made once and polled again on every turn (a select over fresh futures registered two timers and
        // three cancellation waiters per binding call).
        let aborted = request.signal.token().cancelled();
        let disposal = disposed.cancelled();
        let release = until_released(released);
        let wall_ceiling = sleep_until(wall_deadline);
        let cpu_poll = sleep_until(start + CPU_POLL);
        tokio::pin!(aborted, disposal, release, wall_ceiling, cpu_poll);
        loop {
            // Frames are read straight into the inbox (a 64 MiB log is one frame: no staging copy).
            inbox.reserve(READ_CHUNK);
            // Biased: the signal, disposal and the budgets first, then replies, so a child flooding fd 3
            // can neither starve the budgets nor its own pending calls.
            tokio::select! {
                biased;
                () = &mut aborted => {
                    return Finish::Failure(CodeRunErrorKind::Abort, request.signal.reason());
                }
                () = &mut disposal => {
                    return Finish::Failure(CodeRunErrorKind::Abort, "runtime disposed".to_owned());
                }
                () = &mut release => {
                    return Finish::Failure(CodeRunErrorKind::Abort, ENVIRONMENT_RELEASED.to_owned());
                }
                () = &mut wall_ceiling => {
                    return Finish::Failure(
                        CodeRunErrorKind::Timeout,
                        format!("wall-clock ceiling reached ({}ms)", js_number_string(self.limits.max_wall_ms)),
                    );
                }
                () = &mut cpu_poll, if self.booted => {
                    let busy = process::cpu_time_ms(self.pid).map_or(0.0, |ms| ms - self.cpu_baseline_ms);
                    if busy > self.limits.compute_ms {
                        return self.busy_exhausted();
                    }
                    let remaining = Duration::try_from_secs_f64((self.limits.compute_ms - busy).max(1.0) / 1000.0).unwrap_or(CPU_POLL);
                    cpu_poll.as_mut().reset(Instant::now() + remaining.min(CPU_POLL));
                }
                Some(settled) = self.calls.next(), if !self.calls.is_empty() => {
                    if let Some(finish) = self.on_call_settled(settled) {
                        return finish;
                    }
                }
                read = reader.read_buf(inbox) => {
                    let n: usize = read.unwrap_or_default();
                    if n == 0 {
                        return self.channel_closed(child).await;
                    }
                    let mut start = 0;
                    while let Some(offset) = memchr::memchr(b'\n', &inbox[scanned..]) {
                        let end = scanned + offset;
                        let finish = self.on_line(&inbox[start..end]);
                        start = end + 1;
                        scanned = start;
                        if let Some(finish) = finish {
                            inbox.drain(..start);
                            return finish;
                        }
                    }
                    inbox.drain(..start);
                    scanned = inbox.len();
                    if inbox.len() > self.frame_cap {
                        return malformed(format!("frame exceeds {} bytes", self.frame_cap));
                    }
                }
                text = next_stray(stdout) => {
                    match text {
                        Some(text) => if let Some(finish) = self.admit_stray(text) { return finish; },
                        None => *stdout = None,
                    }
                }
                text = next_stray(stderr) => {
                    match text {
                        Some(text) => if let Some(finish) = self.admit_stray(text) { return finish; },
                        None => *stderr = None,
                    }
                }
            }
        }
    }

    fn busy_exhausted(&self) -> Finish {
        Finish::Failure(
            CodeRunErrorKind::Timeout,
            format!("compute budget exhausted ({}ms busy)", js_number_string(self.limits.compute_ms)),
        )
    }

    /// One complete frame line.
    fn on_line(&mut self, line: &[u8]) -> Option<Finish> {
        let frame = match frames::parse_child_frame(line) {
            Ok(frames::Parsed::Frame(frame)) => frame,
            // What upstream's validateChildFrame rejects is dropped silently (as if never sent).
            Ok(frames::Parsed::Dropped) => return None,
            Err(e) => return Some(malformed(e)),
        };
        if !self.booted {
            return match frame {
                ChildFrame::BootAck => {
                    self.booted = true;
                    self.cpu_baseline_ms = process::cpu_time_ms(self.pid).unwrap_or(0.0);
                    if let Some(run) = self.pending_run.take() {
                        self.queue(run);
                    }
                    None
                }
                // A kept child's idle-time output (a thread printing after the last run) is nobody's.
                ChildFrame::Log { .. } | ChildFrame::Call { .. } | ChildFrame::Done { .. } if self.persistent => None,
                _ => Some(malformed("expected boot-ack first".to_owned())),
            };
        }
        self.completed = matches!(frame, ChildFrame::Done { .. });
        match frame {
            ChildFrame::BootAck => Some(malformed("unexpected second boot-ack".to_owned())),
            ChildFrame::Log { truncated: true, .. } => Some(Finish::Limit(None)),
            ChildFrame::Log { text, truncated: false } => {
                self.ledger.admit(text, &mut self.logs).err().map(|text| Finish::Limit(Some(text)))
            }
            ChildFrame::Call { id, global, name, args } => self.on_call(id, &global, &name, args, line.len()),
            ChildFrame::Done { error: Some((kind, message)), value } => {
                if let DoneValue::Value(v) = value {
                    crate::value::dismantle(v);
                }
                let kind = match kind {
                    DoneKind::Exception => CodeRunErrorKind::Exception,
                    DoneKind::InvalidOutput => CodeRunErrorKind::InvalidOutput,
                    DoneKind::OutputLimit => CodeRunErrorKind::OutputLimit,
                };
                Some(Finish::Failure(kind, message))
            }
            ChildFrame::Done { error: None, value: DoneValue::Absent } => Some(Finish::Success(None)),
            ChildFrame::Done { error: None, value: DoneValue::Lossy } => Some(Finish::Failure(
                CodeRunErrorKind::InvalidOutput,
                "program completion must be lossless JSON".to_owned(),
            )),
            ChildFrame::Done { error: None, value: DoneValue::Value(v) } => Some(Finish::Success(Some(v))),
        }
    }

    /// A `call` frame: answered at most once per id, like upstream's host. The calls pending at once are
    /// bounded by the heap cap (`pending_call_charge`): past it the run ends as the heap cap ends it.
    fn on_call(&mut self, id: f64, global: &str, name: &str, args: Value, frame_len: usize) -> Option<Finish> {
        // Ids are JavaScript numbers (finite, never -0), so their bits identify them.
        if !self.answered.insert(id.to_bits()) {
            crate::value::dismantle(args);
            return None;
        }
        let charge = pending_call_charge(frame_len);
        self.pending_bytes = self.pending_bytes.saturating_add(charge);
        if self.host_held() > self.limits.max_heap_bytes {
            crate::value::dismantle(args);
            return Some(Finish::Failure(CodeRunErrorKind::WorkerExit, HEAP_EXIT_MESSAGE.to_owned()));
        }
        let function = self.namespaces.iter().find(|ns| ns.global == global).and_then(|ns| ns.bindings.get(name));
        let Some(function) = function else {
            crate::value::dismantle(args);
            let label = json::json_string(&format!("{global}.{name}"));
            self.queue(frames::reply_err_frame(id, &format!("unknown binding {label}")));
            self.pending_bytes -= charge;
            return None;
        };
        // Call the binding here, in frame order: its synchronous part submits the call (the run_code bridge
        // queues it at once, like upstream's async binding before its first await). Calling it inside the
        // spawned task would let the multi-threaded scheduler reorder submissions, or settle the run first.
        let pending = Contained(function(Some(args)));
        self.calls.push(Box::pin(async move { (id, charge, pending.await) }));
        None
    }

    /// A binding settled: reply, unless the run already settled (then this is never reached).
    fn on_call_settled(&mut self, (id, charge, outcome): CallOutcome) -> Option<Finish> {
        self.pending_bytes = self.pending_bytes.saturating_sub(charge);
        let frame = match outcome {
            Ok(Ok(value)) => {
                let frame = frames::reply_ok_frame(id, &value)
                    .unwrap_or_else(|| frames::reply_err_frame(id, "binding resolution must be lossless JSON"));
                crate::value::dismantle(value);
                frame
            }
            Ok(Err(message)) | Err(message) => frames::reply_err_frame(id, &message),
        };
        self.queue(frame);
        (self.host_held() > self.limits.max_heap_bytes).then(|| Finish::Failure(CodeRunErrorKind::WorkerExit, HEAP_EXIT_MESSAGE.to_owned()))
    }

    /// Queue a frame for the child, counted until it is written.
    fn queue(&self, frame: Vec<u8>) {
        self.queued.fetch_add(frame.len() as u64, Ordering::Relaxed);
        if self.outbox.send(frame).is_err() {
            // The writer is gone (the child closed fd 3): nothing will be written, nothing is held.
            self.queued.store(0, Ordering::Relaxed);
        }
    }

    /// What the program makes the host hold: pending binding calls and replies it has not read.
    fn host_held(&self) -> u64 {
        self.pending_bytes.saturating_add(self.queued.load(Ordering::Relaxed))
    }

    /// Stray fd 1/2 output: one log entry per chunk; an overflow is terminal and overrides everything.
    fn admit_stray(&mut self, text: String) -> Option<Finish> {
        if self.terminal_override.is_some() {
            return None;
        }
        match self.ledger.admit(text, &mut self.stray) {
            Ok(()) => None,
            Err(text) => {
                self.terminal_override = Some(text);
                Some(Finish::Limit(None))
            }
        }
    }

    /// fd 3 reached EOF before `done`: the child exited (or closed the channel).
    async fn channel_closed(&mut self, child: &mut Leader) -> Finish {
        use std::os::unix::process::ExitStatusExt;
        let status = tokio::time::timeout(Duration::from_millis(200), child.wait()).await;
        let message = match status {
            Ok(Ok(status)) => match (status.code(), status.signal()) {
                (Some(EXIT_HEAP), _) => return Finish::Failure(CodeRunErrorKind::WorkerExit, HEAP_EXIT_MESSAGE.to_owned()),
                (Some(EXIT_BOUNDARY), _) if !self.booted => {
                    return Finish::Failure(CodeRunErrorKind::WorkerExit, BOUNDARY_EXIT_MESSAGE.to_owned());
                }
                (Some(code), _) => format!("worker exited with code {code} before completing"),
                (None, Some(libc::SIGXCPU)) => return self.busy_exhausted(),
                (None, Some(signal)) => format!("worker exited with signal {} before completing", signal_name(signal)),
                (None, None) => "worker exited before completing".to_owned(),
            },
            Ok(Err(e)) => format!("worker error: {e}"),
            Err(_) => "worker closed the protocol channel before completing".to_owned(),
        };
        Finish::Failure(CodeRunErrorKind::WorkerExit, message)
    }

    /// The settled result: logs, then stray logs, through the ledger.
    fn result(mut self, finish: Finish) -> CodeRunResult {
        let mut all = std::mem::take(&mut self.logs);
        all.append(&mut self.stray);
        if let Some(text) = self.terminal_override.take() {
            if let Finish::Success(Some(v)) = finish {
                crate::value::dismantle(v);
            }
            all.push(text);
            return self.ledger.limit(all);
        }
        match finish {
            // The child's own completion check is conservative; the host stands in for the exact one.
            Finish::Success(value) => self.ledger.completion(all, value),
            Finish::Failure(kind, message) => self.ledger.failure(all, kind, message),
            Finish::Limit(extra) => {
                all.extend(extra);
                self.ledger.limit(all)
            }
        }
    }
}

fn malformed(detail: String) -> Finish {
    Finish::Failure(CodeRunErrorKind::WorkerExit, format!("worker sent a malformed frame: {detail}"))
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        _ => return format!("{signal}"),
    };
    name.to_owned()
}

/// Resolves when the owner is released; never for a per-call run.
async fn until_released(released: Option<&CancellationToken>) {
    match released {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

