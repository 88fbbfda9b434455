//! Nothing an adapter starts outlives its adapter, and no adapter outlives the harness (Linux).
//!
//! - **Spawning.** Every adapter is forked by one `adapter-spawner` thread that lives as long as the
//!   harness, with `PR_SET_PDEATHSIG` = SIGKILL set between fork and exec: the kernel kills the adapter's
//!   leader when the *thread* that forked it exits, so a libtest worker thread must not fork it.
//! - **Subreaper.** The first spawn makes the harness a child subreaper (`PR_SET_CHILD_SUBREAPER`): a
//!   grandchild whose parent exits is re-parented to the harness instead of init, so it stays in reach.
//! - **Tearing down** one adapter ([`kill_tree`]) kills, from one `/proc` snapshot grown to a fixpoint and
//!   repeated while something new turns up: its process group, its descendants by `ppid` chain, every
//!   process carrying its `DSH_HARNESS_ADAPTER` token, and every process holding one of its three pipes
//!   (a grandchild that cleared its environment and called `setsid` but still holds stdout is found so).
//!   What it killed that was re-parented to the harness is reaped.
//! - **Sentinel.** A small `sh` started with the spawner, in its own process group, ignoring
//!   SIGINT/SIGTERM/SIGHUP, reads `+ PGID` / `- PGID` lines on its stdin. When the harness dies however it
//!   dies (SIGKILL, OOM), the pipe closes: the sentinel kills every group still listed and every process
//!   carrying a token of this harness. PDEATHSIG alone reaches only the leader (`sh -c` does not exec).
//! - [`kill_inherited`] kills what was re-parented to the harness and not attributed to any adapter.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};

/// The environment variable that marks every process an adapter starts.
pub const TOKEN_VAR: &str = "DSH_HARNESS_ADAPTER";

/// How many times a teardown rescans `/proc` for processes that appeared while it was killing.
const ROUNDS: usize = 5;
/// How long a teardown waits for the processes it killed to become zombies it can reap.
const REAP_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

type Job = (Command, mpsc::Sender<std::io::Result<Child>>);

struct Spawner {
    jobs: Mutex<Sender<Job>>,
    sentinel: Mutex<Option<(u32, ChildStdin)>>,
}

static SPAWNER: OnceLock<Spawner> = OnceLock::new();
/// Every pid the spawner started (adapters and the sentinel): the harness's own children.
static SPAWNED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// The sentinel's program; `$1` is the token prefix of this harness (`<pid>-`).
const SENTINEL: &str = r#"trap '' INT TERM HUP
g=
while read -r op n; do
  case $op in
    +) g="$g $n" ;;
    -) h=; for x in $g; do [ "$x" = "$n" ] || h="$h $x"; done; g=$h ;;
  esac
done
for n in $g; do kill -KILL -$n 2>/dev/null; done
for f in $(grep -lsxz "$2=$1[0-9]*" /proc/[0-9]*/environ); do p=${f#/proc/}; kill -KILL ${p%/environ} 2>/dev/null; done
"#;

fn spawner() -> &'static Spawner {
    SPAWNER.get_or_init(|| {
        become_subreaper();
        let (jobs, inbox) = mpsc::channel::<Job>();
        // The thread never ends (its sender is in a static): PDEATHSIG watches the thread that forked.
        let _ = std::thread::Builder::new().name("adapter-spawner".into()).spawn(move || {
            for (mut command, reply) in inbox {
                let spawned = command.spawn();
                if let (Ok(child), Ok(mut all)) = (&spawned, SPAWNED.lock()) {
                    all.push(child.id());
                }
                let _ = reply.send(spawned);
            }
        });
        Spawner { jobs: Mutex::new(jobs), sentinel: Mutex::new(start_sentinel()) }
    })
}

fn start_sentinel() -> Option<(u32, ChildStdin)> {
    use std::os::unix::process::CommandExt;
    let prefix = format!("{}-", std::process::id());
    let mut child = Command::new("sh")
        .args(["-c", SENTINEL, "dsh-harness-sentinel", &prefix, TOKEN_VAR])
        .env_remove(TOKEN_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    if let Ok(mut all) = SPAWNED.lock() {
        all.push(child.id());
    }
    Some((child.id(), child.stdin.take()?))
}

#[allow(unsafe_code)]
fn become_subreaper() {
    // SAFETY: prctl with integer arguments only changes an attribute of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong);
    }
}

/// Spawns `command` from the spawner thread, the child set to get SIGKILL when the harness dies.
#[allow(unsafe_code)]
pub fn spawn(mut command: Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the hook runs between fork and exec and calls only async-signal-safe functions
    // (prctl, getppid); it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The harness may have died before the prctl: then nothing would ever kill this child.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let (reply, answer) = mpsc::channel();
    let sent = spawner().jobs.lock().map_err(|_| std::io::Error::other("the spawner lock is poisoned"))?.send((command, reply));
    sent.map_err(|_| std::io::Error::other("the adapter-spawner thread could not be started"))?;
    answer.recv().map_err(|_| std::io::Error::other("the adapter-spawner thread ended"))?
}

/// Tells the sentinel a process group to kill if the harness dies (`+`), or no longer to (`-`).
pub fn note_group(sign: char, pgid: u32) {
    let Some(spawner) = SPAWNER.get() else { return };
    if let Ok(mut sentinel) = spawner.sentinel.lock() {
        if let Some((_, stdin)) = sentinel.as_mut() {
            let _ = writeln!(stdin, "{sign} {pgid}").and_then(|()| stdin.flush());
        }
    }
}

/// The name (`pipe:[inode]`) of one of the harness's own descriptors, to find who else holds that pipe.
pub fn pipe_name(fd: std::os::fd::RawFd) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()
}

/// One process as `/proc/<pid>/stat` shows it.
#[derive(Clone, Copy)]
struct Proc {
    pid: u32,
    ppid: u32,
    pgid: u32,
}

/// Every live (not zombie) process but the harness.
fn snapshot() -> Vec<Proc> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            let pgid = fields.next()?.parse().ok()?;
            (state != "Z" && state != "X").then_some(Proc { pid, ppid, pgid })
        })
        .collect()
}

fn carries(pid: u32, needle: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle))
}

fn holds(pid: u32, pipes: &[PathBuf]) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| pipes.contains(&target)))
}

/// Kills one adapter's processes (see the module doc) and reaps those re-parented to the harness.
pub fn kill_tree(leader: u32, token: &str, pipes: &[PathBuf]) {
    let needle = format!("{TOKEN_VAR}={token}").into_bytes();
    let sentinel = sentinel_pid();
    let mut attributed: HashSet<u32> = HashSet::from([leader]);
    let mut killed = HashSet::new();
    // The first snapshot comes before any kill: once a parent dies, its children's ppid is the harness.
    for round in 0..ROUNDS {
        let procs: Vec<Proc> = snapshot().into_iter().filter(|p| Some(p.pid) != sentinel).collect();
        // Direct marks first, then descendants of anything marked, to a fixpoint.
        for p in &procs {
            if p.pgid == leader || carries(p.pid, &needle) || holds(p.pid, pipes) {
                attributed.insert(p.pid);
            }
        }
        loop {
            let before = attributed.len();
            let children: Vec<u32> = procs.iter().filter(|p| attributed.contains(&p.ppid)).map(|p| p.pid).collect();
            attributed.extend(children);
            if attributed.len() == before {
                break;
            }
        }
        let alive: Vec<u32> = procs.iter().map(|p| p.pid).filter(|pid| attributed.contains(pid)).collect();
        if round == 0 {
            kill(-(leader as i32));
        }
        if alive.is_empty() {
            break;
        }
        for &pid in &alive {
            kill(pid as i32);
        }
        killed.extend(alive);
    }
    killed.remove(&leader);
    reap(killed);
}

/// Kills every process re-parented to the harness that no adapter claims (the end of a run, a signal).
pub fn kill_inherited(live_leaders: &[u32]) {
    if SPAWNER.get().is_none() {
        return;
    }
    let me = std::process::id();
    let ours: Vec<u32> = SPAWNED.lock().map(|s| s.clone()).unwrap_or_default();
    let orphans: Vec<u32> =
        snapshot().into_iter().filter(|p| p.ppid == me && !ours.contains(&p.pid) && !live_leaders.contains(&p.pid)).map(|p| p.pid).collect();
    for &pid in &orphans {
        kill(pid as i32);
    }
    reap(orphans.into_iter().collect());
}

fn sentinel_pid() -> Option<u32> {
    SPAWNER.get().and_then(|s| s.sentinel.lock().ok().and_then(|s| s.as_ref().map(|(pid, _)| *pid)))
}

#[allow(unsafe_code)]
fn kill(target: i32) {
    // SAFETY: kill(2) with a pid or a negated process group id; no memory is involved.
    unsafe {
        libc::kill(target, libc::SIGKILL);
    }
}

/// Waits (bounded) for the killed processes that are children of the harness, so no zombie stays.
#[allow(unsafe_code)]
fn reap(mut pids: HashSet<u32>) {
    let me = std::process::id();
    let ours: Vec<u32> = SPAWNED.lock().map(|s| s.clone()).unwrap_or_default();
    // Only what was re-parented to the harness: a child `std::process::Child` owns is waited by its owner.
    pids.retain(|pid| !ours.contains(pid) && parent_of(*pid) == Some(me));
    let deadline = std::time::Instant::now() + REAP_WAIT;
    while !pids.is_empty() && std::time::Instant::now() < deadline {
        pids.retain(|&pid| {
            let mut status = 0;
            // SAFETY: waitpid on one pid with WNOHANG; `status` is a valid out pointer.
            let got = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
            got == 0
        });
        if !pids.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}
