//! The fork server ("zygote") of Python runs: one `python3 -I` per [`PythonRuntime`](super::PythonRuntime)
//! (and the runtimes derived from it with `with_limits`), started on the first run, that has imported the
//! bootstrap and never runs a program; it forks one child per per-call run (and one per persistent
//! environment), and that child goes on exactly as a freshly spawned interpreter would from the
//! bootstrap's `_main()`.
//!
//! Why a fork server: nearly all of a run's cost was interpreter start-up and the bootstrap's imports
//! (~40 ms of CPU). A pool of ready interpreters each used once still pays that CPU per run, so on two
//! cores it cannot go below ~20 ms a run; a fork costs ~1 ms and keeps a fresh process per run.
//!
//! The spare: once no request is waiting, the zygote forks one child ahead, which makes its event loop and
//! waits for a run's descriptors (it has run nothing); the next request is handed to it (`send_fds` on the
//! spare's own socket pair) and answered with its pid, so the fork, the loop and their copy-on-write faults
//! (~2 ms of a trivial run's ~5.5) are off the run's path. Without a spare (the first run, runs that
//! arrive together, a spare that died) the child is forked on the spot as before. The spare closes the
//! zygote's control socket at once, so the host still sees EOF when the zygote dies, and exits on EOF of its
//! own socket; it is reaped and reported (`X`) like any child, which the reader ignores for a pid no `P`
//! announced.
//!
//! Isolation: each run is its own process, leader of its own process group (`setpgid` in the child and in
//! the zygote, before the pid is reported, so the host's `kill(-pgid)` at settlement always reaches the
//! group); the bootstrap applies `RLIMIT_CPU` / `RLIMIT_AS` from the `boot` frame (the child's CPU time
//! and usage start at zero at fork) and, in the contained posture, the boundary of `boundary.rs` (the
//! zygote holds the Landlock ruleset as its fd 4 and gets the seccomp programs as `--contain`; it applies
//! neither to itself, since it must fork); stdin is `/dev/null`, stdout / stderr are pipes and fd 3 a
//! socket pair the host creates per run and passes with `SCM_RIGHTS`; every other descriptor is closed in
//! the child; the environment is empty. Every child asks for `SIGKILL` at the zygote's death and checks
//! the zygote is still its parent. Nothing a program does reaches the zygote or the next run: in the
//! contained posture it can neither signal nor trace them (Landlock scoping). What forked children do
//! share is what the zygote had before any program ran: its imported modules (as a fresh interpreter
//! importing the bootstrap has), its working directory (the host's when the zygote started), and
//! CPython's string-hash secret (`hash(str)` is the same in every run one fork server forks; a fresh
//! interpreter draws a new one).
//!
//! Names table (issue 39): a run's boot frame lists its namespaces' names, which the child parses (at
//! 10,000 names, ~2 ms of JSON and dict building per run). Instead, a large names set (at least
//! [`TABLE_MIN_NAMES`] distinct names) that two fork requests in a row want is sent to the zygote once
//! (`T`): the zygote parses it and holds it as its one table, kills its spare (forked without it), and every
//! child forked afterwards inherits the parsed table, so that run's boot frame carries only the table's id
//! and its name count. The table is keyed by [`BindingNames::id`], unique in this process and never
//! reused, so a table can only ever serve the very names set it was made from: a newer generation's names
//! are another set with another id, which the host either loads (replacing the table) or lists inline.
//! The host knows which table each child inherited (the one loaded when it asked for the fork; none for a
//! direct spawn or a replaced zygote), and the child checks the id and the count, exiting rather than
//! running with a table it did not inherit. A child drops any table its first boot does not use before
//! its program arrives: a program sees no names but its own.
//!
//! Protocol on the control socket (the zygote's fd 3): a request is one byte with three descriptors
//! attached, or the byte `T` followed by a table (8-byte id, 8-byte length, the names' JSON array); the
//! zygote answers, in request order, `P <pid>` or `E <why>`, and reports every child it
//! reaps as `X <pid> <raw wait status>`. A reader thread (not a task: runs may come from several tokio
//! runtimes) hands each `P` to the oldest waiting request and each `X` to its run's [`Leader`].
//!
//! Lifetime: the zygote ends when the last clone of its runtime, and of every runtime
//! [`with_limits`](super::PythonRuntime::with_limits) derived from it, is dropped (the control socket is shut down,
//! the zygote killed and reaped), on EOF of its control socket, and by `SIGKILL` when this process dies
//! however it dies (its parent-death signal, armed by the keeper thread that spawned it); its children die
//! with it the same way. A request it leaves unanswered for [`FORK_REPLY`] marks it wedged: it is killed
//! and replaced, and the request falls back to a direct spawn. A zygote that died is replaced on the
//! next run; a run whose fork fails falls back to spawning its interpreter directly (`process::spawn`),
//! and only if that fails too does it end as `worker-exit` naming the error. A persistent environment's
//! process ([`CodeExecutionMode::PersistentInMemory`](crate::code::CodeExecutionMode)) is forked the same
//! way and then lives across its owner's runs: starting one costs a fork, not an interpreter start-up
//! (~100 ms of CPU through a version manager's shims), and it is still released with its owner.
//!
//! Spec: RUN-034 (fresh state per run); containment: nothing the program started outlives the run.

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufRead, BufReader, IoSlice};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

use super::boundary::Boundary;
use super::frames;
use crate::code::BindingNames;
use super::process::{self, GroupGuard, Interpreter, Leader, Spawned};

/// A fork reply: the child's pid and where its exit status will arrive, or why the fork failed.
type Reply = Result<(i32, oneshot::Receiver<i32>), String>;

/// A sent fork request: where its reply arrives, the zygote asked, and the names table the child will hold.
type Requested = (oneshot::Receiver<Reply>, Arc<Mutex<Shared>>, Option<u64>);

/// How long a fork request may go unanswered before the fork server is taken for wedged: it is killed
/// (its runs die with it), the request falls back to a direct spawn, and the next request starts a new
/// one. A fork takes about a millisecond; this is generous for a loaded machine.
const FORK_REPLY: std::time::Duration = std::time::Duration::from_secs(5);

/// The fewest distinct names a set needs to be sent to the zygote as its table: below it, listing the
/// names in the boot frame costs the child less than a table swap costs the zygote (a parse and a spare).
pub(super) const TABLE_MIN_NAMES: usize = 256;

/// The fork server of one runtime: started lazily, replaced when it died or stopped answering.
pub(super) struct Zygote {
    interpreter: Interpreter,
    boundary: Option<Boundary>,
    launcher: &'static str,
    bootstrap: &'static str,
    live: Mutex<Option<Live>>,
}

/// A running zygote.
struct Live {
    process: Child,
    control: UnixStream,
    shared: Arc<Mutex<Shared>>,
    /// The id of the names table the zygote holds (every child forked from now on inherits it).
    table: Option<u64>,
    /// The names set the previous fork request wanted as a table (a second request in a row loads it).
    wanted: Option<u64>,
}

/// What the reader thread and the requesters share.
#[derive(Default)]
struct Shared {
    /// Set when the control socket reached EOF or failed, or a request went unanswered: the zygote is gone
    /// (or is to be replaced).
    dead: bool,
    /// Requests sent and not yet answered, oldest first (the zygote answers in order).
    waiting: VecDeque<(std::time::Instant, oneshot::Sender<Reply>)>,
    /// Forked children not yet reaped.
    exits: HashMap<i32, oneshot::Sender<i32>>,
    /// The zygote's pid (killed when a request goes unanswered).
    zygote: i32,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl Zygote {
    /// A fork server for `interpreter`, not started yet; each run it starts confines itself within
    /// `boundary` (none: the host posture).
    pub(super) fn new(interpreter: Interpreter, boundary: Option<Boundary>, launcher: &'static str, bootstrap: &'static str) -> Self {
        Self { interpreter, boundary, launcher, bootstrap, live: Mutex::new(None) }
    }

    /// The interpreter runs use.
    pub(super) fn interpreter(&self) -> &Path {
        &self.interpreter.path
    }

    /// Whether runs are contained (see `boundary.rs`).
    pub(super) fn contained(&self) -> bool {
        self.boundary.is_some()
    }

    /// What a contained run may read (empty in the host posture, where it reads what the host's user can).
    pub(super) fn readable(&self) -> &[std::path::PathBuf] {
        self.boundary.as_ref().map_or(&[], Boundary::read_paths)
    }

    /// Start one fresh child for a run: forked by the zygote, or, when the zygote cannot be started, cannot
    /// fork or does not answer within [`FORK_REPLY`], spawned directly. `wanted` is the run's largest names
    /// set; the child comes with the id of the names table it inherited, if any (see the module doc).
    pub(super) async fn start(&self, wanted: Option<&BindingNames>) -> io::Result<(Spawned, Option<u64>)> {
        match self.fork(wanted).await {
            Ok(forked) => Ok(forked),
            Err(_) => Ok((process::spawn(&self.interpreter.path, self.launcher, self.bootstrap, self.boundary.as_ref())?, None)),
        }
    }

    /// The zygote's pid, if one is running (tests check that none outlives its runtime).
    #[cfg(test)]
    pub(super) fn pid(&self) -> Option<u32> {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|live| live.process.id())
    }

    async fn fork(&self, wanted: Option<&BindingNames>) -> io::Result<(Spawned, Option<u64>)> {
        let (host, child_channel) = UnixStream::pair()?;
        // nix's pipe2, not std's `io::pipe` (Rust 1.87; the crate's MSRV is 1.85).
        let (stdout, child_stdout) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let (stderr, child_stderr) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let fds: [OwnedFd; 3] = [child_channel.into(), child_stdout, child_stderr];
        let (reply, asked, table) = self.request(&fds, wanted)?;
        drop(fds); // the zygote holds its copies now; ours must close so EOF means the child is gone
        let Ok(answer) = tokio::time::timeout(FORK_REPLY, reply).await else {
            // Wedged (stopped, starved, swapped out): replace it rather than wait on it forever.
            let zygote = {
                let mut shared = lock(&asked);
                shared.dead = true;
                shared.zygote
            };
            let _ = process::nix_kill(zygote, libc::SIGKILL);
            return Err(io::Error::other("the fork server did not answer"));
        };
        let (pid, exit) = answer.map_err(|_| io::Error::other("the fork server ended"))?.map_err(io::Error::other)?;
        let group = GroupGuard::new(pid);
        host.set_nonblocking(true)?;
        let channel = tokio::net::UnixStream::from_std(host)?;
        let stdout = tokio::net::unix::pipe::Receiver::from_owned_fd(stdout)?;
        let stderr = tokio::net::unix::pipe::Receiver::from_owned_fd(stderr)?;
        let child = Leader::Forked { exit: Some(exit), status: None };
        Ok((Spawned { child, group, channel, stdout: Box::new(stdout), stderr: Box::new(stderr) }, table))
    }

    /// Send one fork request (starting or replacing the zygote first if needed, loading `wanted` as its
    /// table when the previous request wanted it too); the reply arrives on the returned receiver, the
    /// zygote asked is known by its shared state, and the child will hold the table whose id comes back.
    fn request(&self, fds: &[OwnedFd; 3], wanted: Option<&BindingNames>) -> io::Result<Requested> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(current) = live.as_ref() {
            // A request older than FORK_REPLY still unanswered: the zygote is wedged, even when the run
            // that asked stopped waiting (its wall ceiling or abort came first).
            let mut shared = lock(&current.shared);
            if shared.waiting.front().is_some_and(|(asked, _)| asked.elapsed() > FORK_REPLY) {
                shared.dead = true;
            }
        }
        if live.as_ref().is_none_or(|l| lock(&l.shared).dead) {
            *live = None; // drops (kills and reaps) a dead zygote
            *live = Some(Live::start(&self.interpreter.path, self.launcher, self.bootstrap, self.boundary.as_ref())?);
        }
        let Some(current) = live.as_mut() else { return Err(io::Error::other("no fork server")) };
        let wanted = wanted.filter(|names| names.distinct_len() >= TABLE_MIN_NAMES);
        if let Some(names) = wanted
            && current.table != Some(names.id())
            && current.wanted == Some(names.id())
        {
            current.table = None; // the zygote drops the table it held before reading the new one
            if let Err(e) = current.load_table(names) {
                lock(&current.shared).dead = true;
                return Err(io::Error::other(format!("cannot reach the fork server: {e}")));
            }
            current.table = Some(names.id());
        }
        current.wanted = wanted.map(BindingNames::id);
        let table = current.table;
        let (sender, receiver) = oneshot::channel();
        let mut shared = lock(&current.shared);
        // Queued and sent under one lock, so the queue order is the order the zygote answers in.
        let raw: Vec<i32> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        let rights = [nix::sys::socket::ControlMessage::ScmRights(&raw)];
        let sent = nix::sys::socket::sendmsg::<()>(
            current.control.as_raw_fd(),
            &[IoSlice::new(b"F")],
            &rights,
            nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
            None,
        );
        if let Err(e) = sent {
            shared.dead = true;
            return Err(io::Error::other(format!("cannot reach the fork server: {e}")));
        }
        shared.waiting.push_back((std::time::Instant::now(), sender));
        Ok((receiver, Arc::clone(&current.shared), table))
    }
}

impl Live {
    /// Start the zygote, spawned by the keeper thread so that it dies with this process (its parent-death
    /// signal follows the thread that spawned it, and the keeper lives as long as the process).
    fn start(interpreter: &Path, launcher: &str, bootstrap: &str, boundary: Option<&Boundary>) -> io::Result<Self> {
        let (control, zygote_end) = UnixStream::pair()?;
        let zygote_fd: OwnedFd = zygote_end.into();
        let mut command = process::interpreter_command(interpreter, launcher, bootstrap, zygote_fd.as_raw_fd(), boundary);
        command.arg("--zygote").stdout(Stdio::null()).stderr(Stdio::null());
        let process = keeper::spawn(command)?;
        drop(zygote_fd);
        let pid = i32::try_from(process.id()).unwrap_or(0);
        let shared = Arc::new(Mutex::new(Shared { zygote: pid, ..Shared::default() }));
        let reader = control.try_clone()?;
        let thread_shared = Arc::clone(&shared);
        let started = std::thread::Builder::new().name("dsh-python-zygote".to_owned()).spawn(move || read_replies(reader, &thread_shared));
        if let Err(e) = started {
            let mut live = Self { process, control, shared, table: None, wanted: None };
            live.stop();
            return Err(e);
        }
        Ok(Self { process, control, shared, table: None, wanted: None })
    }

    /// Send `names` as the zygote's table (`T`, see the module doc). A blocking write: the zygote reads it
    /// at once (it never runs a program), and the reader thread keeps its replies flowing meanwhile.
    fn load_table(&self, names: &BindingNames) -> io::Result<()> {
        let json = frames::names_array(names);
        let mut message = Vec::with_capacity(17 + json.len());
        message.push(b'T');
        message.extend_from_slice(&names.id().to_le_bytes());
        message.extend_from_slice(&(json.len() as u64).to_le_bytes());
        message.extend_from_slice(json.as_bytes());
        let mut sent = 0;
        while sent < message.len() {
            // MSG_NOSIGNAL: a zygote that died is an error here, not a SIGPIPE for the host.
            match nix::sys::socket::send(self.control.as_raw_fd(), &message[sent..], nix::sys::socket::MsgFlags::MSG_NOSIGNAL) {
                Ok(n) => sent += n,
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Shut the control socket (the zygote and the reader thread see EOF), kill the zygote, reap it.
    fn stop(&mut self) {
        let _ = self.control.shutdown(std::net::Shutdown::Both);
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The reader thread: dispatch each reply line until EOF, then mark the zygote dead and drop every waiter
/// (their runs fall back, or see the exit status as lost).
fn read_replies(control: UnixStream, shared: &Mutex<Shared>) {
    let mut lines = BufReader::new(control);
    let mut line = String::new();
    loop {
        line.clear();
        if !matches!(lines.read_line(&mut line), Ok(n) if n > 0) {
            break;
        }
        let mut words = line.trim_end().splitn(3, ' ');
        match (words.next(), words.next(), words.next()) {
            (Some("P"), Some(pid), None) => {
                let Ok(pid) = pid.parse::<i32>() else { break };
                let (exit, status) = oneshot::channel();
                let mut guard = lock(shared);
                guard.exits.insert(pid, exit);
                let waiter = guard.waiting.pop_front().map(|(_, waiter)| waiter);
                drop(guard);
                if waiter.is_none_or(|w| w.send(Ok((pid, status))).is_err()) {
                    // Its run is gone (its future was dropped): nobody will settle this child.
                    let _ = process::nix_killpg(pid, libc::SIGKILL);
                }
            }
            (Some("E"), why, rest) => {
                let why = [why, rest].into_iter().flatten().collect::<Vec<_>>().join(" ");
                if let Some((_, waiter)) = lock(shared).waiting.pop_front() {
                    let _ = waiter.send(Err(format!("the fork server cannot fork: {why}")));
                }
            }
            (Some("X"), Some(pid), Some(status)) => {
                let (Ok(pid), Ok(status)) = (pid.parse::<i32>(), status.parse::<i32>()) else { break };
                if let Some(exit) = lock(shared).exits.remove(&pid) {
                    let _ = exit.send(status);
                }
            }
            _ => break,
        }
    }
    let mut guard = lock(shared);
    guard.dead = true;
    guard.waiting.clear();
    guard.exits.clear();
}

/// The keeper: one thread per process, alive until the process exits, that spawns every fork server. A
/// fork server's parent-death signal (`PR_SET_PDEATHSIG`, set by `process::interpreter_command`) fires
/// when the thread that spawned it ends; spawned from a runtime's worker or a test's thread it would die
/// with that thread, killing its runs, while the process and its other runtimes live on.
mod keeper {
    use std::io;
    use std::process::{Child, Command};
    use std::sync::mpsc::{Sender, SyncSender, channel, sync_channel};
    use std::sync::{Mutex, OnceLock};

    type Job = (Command, SyncSender<io::Result<Child>>);

    /// Spawn `command` on the keeper thread and hand back the child.
    pub(super) fn spawn(command: Command) -> io::Result<Child> {
        static KEEPER: OnceLock<Mutex<Option<Sender<Job>>>> = OnceLock::new();
        let keeper = KEEPER.get_or_init(|| Mutex::new(start()));
        let (reply, answer) = sync_channel(1);
        let sent = keeper.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|jobs| jobs.send((command, reply)));
        match sent {
            Some(Ok(())) => answer.recv().unwrap_or_else(|_| Err(io::Error::other("the fork-server keeper thread ended"))),
            _ => Err(io::Error::other("the fork-server keeper thread could not be started")),
        }
    }

    fn start() -> Option<Sender<Job>> {
        let (jobs, inbox) = channel::<Job>();
        let started = std::thread::Builder::new().name("dsh-python-keeper".to_owned()).spawn(move || {
            for (mut command, reply) in inbox {
                let _ = reply.send(command.spawn());
            }
        });
        started.ok().map(|_| jobs)
    }
}
