//! The Python child process: interpreter resolution (once, to an absolute path, so no pyenv shim runs per
//! start, with the import paths the contained posture opens for reading), spawning `python3 -I` in its own process group with one end of a `UnixStream` pair as fd 3
//! (the direct path; `zygote.rs` forks the same child from a fork server), the [`Leader`] a run waits on
//! whichever way it started, killing the whole group at settlement and on drop, and reading the child's CPU
//! time for the busy budget.
//!
//! Spec: RUN-027 (busy time), RUN-034 (fresh state per run); containment: nothing the program started
//! outlives the run.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;

use tokio::io::AsyncRead;
use tokio::net::UnixStream;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::boundary::{Boundary, EXIT_BOUNDARY, RULESET_FD};

/// The protocol fd from the child's perspective (upstream `PROTOCOL_FD`).
pub(super) const PROTOCOL_FD: i32 = 3;

/// A resolved interpreter: the real executable, and the directories its imports read from (`sys.path`,
/// which the contained posture's Landlock ruleset opens for reading).
#[derive(Clone, Debug)]
pub(super) struct Interpreter {
    pub path: PathBuf,
    pub import_paths: Vec<PathBuf>,
}

/// Resolve `program` (a name searched on `PATH`, or a path) to the absolute path of the real interpreter
/// by asking it for `sys.executable` (and its `sys.path`), once per process and name (a success is cached:
/// starting an interpreter to ask costs as much as a run). The bootstrap needs Python 3.10 or later.
pub(super) fn resolve_interpreter(program: &OsStr) -> Result<Interpreter, String> {
    static RESOLVED: Mutex<Vec<(OsString, Interpreter)>> = Mutex::new(Vec::new());
    let cached = RESOLVED.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|(name, _)| name == program).map(|(_, p)| p.clone());
    if let Some(interpreter) = cached {
        return Ok(interpreter);
    }
    let interpreter = ask_interpreter(program)?;
    RESOLVED.lock().unwrap_or_else(|p| p.into_inner()).push((program.to_owned(), interpreter.clone()));
    Ok(interpreter)
}

fn ask_interpreter(program: &OsStr) -> Result<Interpreter, String> {
    let ask = "import sys, json, os; sys.stdout.write(json.dumps([sys.executable, os.path.dirname(os.__file__), *sys.path]) \
               if sys.version_info >= (3, 10) else '')";
    let output = std::process::Command::new(program)
        .args(["-I", "-c", ask])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
    if !output.status.success() {
        return Err(format!("{} -I -c ... exited with {}", program.to_string_lossy(), output.status));
    }
    if output.stdout.is_empty() {
        return Err(format!("{} is older than Python 3.10", program.to_string_lossy()));
    }
    let answer: Vec<String> = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("{} answered no usable sys.executable: {e}", program.to_string_lossy()))?;
    let mut answer = answer.into_iter().map(PathBuf::from);
    let path = answer.next().unwrap_or_default();
    if !path.is_absolute() || !path.is_file() {
        return Err(format!("{} reported no usable sys.executable ({})", program.to_string_lossy(), path.display()));
    }
    let import_paths = answer.filter(|p| p.is_absolute()).collect();
    Ok(Interpreter { path, import_paths })
}

/// A child's stdout or stderr, read end.
pub(super) type Pipe = Box<dyn AsyncRead + Send + Unpin>;

/// A started child with its channels. The group guard kills the whole process group when dropped.
pub(super) struct Spawned {
    pub child: Leader,
    pub group: GroupGuard,
    pub channel: UnixStream,
    pub stdout: Pipe,
    pub stderr: Pipe,
}

/// The leader of a run's process group, and how its exit status arrives: reaped by tokio (spawned here),
/// or reaped by the fork server and reported over its control socket (forked by `zygote.rs`).
pub(super) enum Leader {
    /// Spawned directly: this process is its parent.
    Spawned(Child),
    /// Forked by the fork server: the raw wait status arrives on `exit`, then is kept in `status`.
    Forked { exit: Option<oneshot::Receiver<i32>>, status: Option<ExitStatus> },
}

impl Leader {
    /// The leader's exit status, once it has exited (cancel-safe: a timeout around it loses nothing).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        match self {
            Self::Spawned(child) => child.wait().await,
            Self::Forked { exit, status } => {
                if let Some(status) = status {
                    return Ok(*status);
                }
                let receiver = exit.as_mut().ok_or_else(|| io::Error::other("the worker's exit status was lost"))?;
                let raw = receiver.await.map_err(|_| io::Error::other("the fork server ended before reporting the worker's exit"))?;
                *exit = None;
                let reaped = ExitStatus::from_raw(raw);
                *status = Some(reaped);
                Ok(reaped)
            }
        }
    }
}

/// Spawn `interpreter -I -c <launcher> <bootstrap>` with an empty environment, stdin closed, stdout and
/// stderr piped, fd 3 connected to the returned channel, as the leader of a new process group (and, with a
/// `boundary`, the ruleset as fd 4 and `--contain`: the bootstrap confines itself before its program).
pub(super) fn spawn(interpreter: &Path, launcher: &str, bootstrap: &str, boundary: Option<&Boundary>) -> io::Result<Spawned> {
    let (host, child_end) = std::os::unix::net::UnixStream::pair()?;
    let child_fd: OwnedFd = child_end.into();
    let raw = child_fd.as_raw_fd();
    let mut command = Command::from(interpreter_command(interpreter, launcher, bootstrap, raw, boundary));
    command.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let spawned = command.spawn();
    drop(child_fd); // the child holds its own copy; ours must close so EOF means the child is gone
    let mut child = spawned?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    let group = GroupGuard { pgid: pid };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(io::Error::other("child pipes missing"));
    };
    host.set_nonblocking(true)?;
    let channel = UnixStream::from_std(host)?;
    Ok(Spawned { child: Leader::Spawned(child), group, channel, stdout: Box::new(stdout), stderr: Box::new(stderr) })
}

/// `interpreter -I -c <launcher> <bootstrap> [--contain <filters>]` with an empty environment and stdin
/// closed, as the leader of a new process group, with `fd` as its fd 3 and the boundary's ruleset as its
/// fd 4 ([`descriptor_hook`]), killed when the thread that spawns it ends (`PR_SET_PDEATHSIG`): the
/// command both the direct spawn and the fork server (`zygote.rs`) start; each caller sets stdout and
/// stderr.
pub(super) fn interpreter_command(
    interpreter: &Path,
    launcher: &str,
    bootstrap: &str,
    fd: i32,
    boundary: Option<&Boundary>,
) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(interpreter);
    command.arg("-I").arg("-c").arg(launcher).arg(bootstrap);
    if let Some(boundary) = boundary {
        command.arg("--contain").arg(boundary.filters_hex());
    }
    command.env_clear().stdin(Stdio::null()).process_group(0);
    let ruleset = boundary.map(|b| b.ruleset().as_raw_fd());
    // SAFETY: see `descriptor_hook`: the hook runs between fork and exec and only calls `fcntl`, `dup2`,
    // `prctl` and `getppid`.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(descriptor_hook(fd, ruleset, std::process::id()));
    }
    command
}

/// A `pre_exec` hook making `fd` the child's fd 3 and `ruleset` its fd 4 (both inheritable), and asking
/// for `SIGKILL` when the spawning thread ends (an already-dead `parent` ends the child at once). The
/// closure calls only `fcntl`, `dup2`, `prctl`, `getppid` and `_exit`, which are async-signal-safe; it
/// touches no memory shared with the parent and allocates nothing. The descriptors must stay open in the
/// parent until the spawn returns (the child got copies).
fn descriptor_hook(fd: i32, ruleset: Option<i32>, parent: u32) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    #[allow(unsafe_code)]
    move || {
        // SAFETY: integer-argument syscalls on descriptors this (forked) process holds.
        unsafe {
            // Both copied above the targets first, so neither dup2 overwrites the other's source.
            let protocol = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
            let copy = ruleset.map_or(-1, |ruleset| libc::fcntl(ruleset, libc::F_DUPFD_CLOEXEC, 10));
            if protocol < 0 || (ruleset.is_some() && copy < 0) {
                return Err(io::Error::last_os_error());
            }
            if libc::dup2(protocol, PROTOCOL_FD) < 0 || (ruleset.is_some() && libc::dup2(copy, RULESET_FD) < 0) {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(EXIT_BOUNDARY);
            }
        }
        Ok(())
    }
}

/// Kills the child's process group (the child is its leader) when dropped or asked to.
#[derive(Debug)]
pub(super) struct GroupGuard {
    pgid: i32,
}

impl GroupGuard {
    /// The guard of the group `pgid` leads (a forked child made its own group before its pid was known).
    pub fn new(pgid: i32) -> Self {
        Self { pgid }
    }

    /// SIGKILL every process of the group, and its leader by pid in case it left the group (which the
    /// contained posture refuses; the host posture cannot) — idempotent; a vanished group is fine.
    pub fn kill(&self) {
        if self.pgid > 1 {
            // The group id stays reserved while any member (even a zombie leader) exists.
            let _ = nix_killpg(self.pgid, libc::SIGKILL);
            let _ = nix_kill(self.pgid, libc::SIGKILL);
        }
    }

    /// Whether the group still has a member (a zombie counts) — after the leader is reaped, usually not.
    pub fn has_members(&self) -> bool {
        self.pgid > 1 && nix_killpg(self.pgid, 0) == 0
    }

    /// Whether a member of the group is still running (not a zombie), by scanning `/proc`.
    pub fn has_running_members(&self) -> bool {
        let Ok(entries) = std::fs::read_dir("/proc") else { return false };
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else { return false };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            let Some(close) = stat.rfind(')') else { return false };
            let mut fields = stat[close + 1..].split_ascii_whitespace();
            let state = fields.next();
            let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
            pgrp == Some(self.pgid) && !matches!(state, Some("Z" | "X"))
        })
    }

    /// The group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `killpg(2)`. The only libc call outside `pre_exec` hooks: no safe std or tokio API signals a process group,
/// and a forked grandchild must not outlive the run.
#[allow(unsafe_code)]
pub(super) fn nix_killpg(pgid: i32, signal: i32) -> i32 {
    // SAFETY: killpg takes two integers and touches no memory of this process.
    unsafe { libc::killpg(pgid, signal) }
}

/// `kill(2)` of one process, for the leader of a group that may have left it.
#[allow(unsafe_code)]
pub(super) fn nix_kill(pid: i32, signal: i32) -> i32 {
    // SAFETY: kill takes two integers and touches no memory of this process.
    unsafe { libc::kill(pid, signal) }
}

/// Clock ticks per second of `/proc/<pid>/stat` times: Linux's `USER_HZ`, fixed at 100 in its ABI.
const USER_HZ: f64 = 100.0;

/// The CPU time (user + system, all threads) the process has used, in milliseconds, from
/// `/proc/<pid>/stat`; `None` once it is gone.
pub(super) fn cpu_time_ms(pid: i32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // After the command: state is field 3, utime 14, stime 15 (1-based), so indices 11 and 12 here.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 1000.0 / USER_HZ)
}
