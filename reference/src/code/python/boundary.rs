//! The boundary around each Python run ([`PythonIsolation::Contained`], the default): what the host builds
//! once per fork server so that every run process it forks — and a directly spawned one — confines itself
//! before it answers `boot-ack`, i.e. before any program text is even received.
//!
//! The pieces, each from what Linux gives an unprivileged process (no root, no container, no namespaces):
//! - **Landlock** (a ruleset built here with the `landlock` crate and handed to the interpreter as fd 4;
//!   the run calls `landlock_restrict_self` on it): the filesystem is read-only and only beneath the
//!   interpreter's own directories and the system library directories ([`Boundary::read_paths`]), plus
//!   `/dev/null` (read, write) and `/dev/zero`, `/dev/urandom`, `/dev/random` (read); no other write,
//!   create, remove, truncate or device ioctl anywhere; no TCP bind or connect; signals and abstract
//!   UNIX sockets scoped to the run's own domain, so it cannot signal (stop, kill) the fork server, the
//!   host or another run, and ptrace of anything outside its domain is refused. Needs Landlock ABI 6.
//! - **seccomp** (a BPF program compiled here with `seccompiler`, installed by the run): no new process
//!   (`fork`, `vfork`, `clone` without `CLONE_THREAD`, `execve`, `execveat`; `clone3` answers `ENOSYS` so
//!   the C library falls back to `clone` for threads), no `socket`, no leaving the process group
//!   (`setsid`, `setpgid`), no turning off the parent-death signal, no memory the address-space cap cannot
//!   see (`memfd_create`, System V and POSIX shared memory and message queues), and none of the
//!   administrative calls (mounts, namespaces, keyrings, BPF, perf, io_uring, scheduler and time changes,
//!   modules, reboot, raising rlimits, ptrace and cross-process memory access). Refused calls fail with
//!   `EPERM`; the process goes on.
//! - The bootstrap also drops every capability (the host may run as root), sets `no_new_privs`,
//!   `RLIMIT_CORE` 0 (no core file lands on the host), `RLIMIT_NOFILE` 64 and `RLIMIT_MEMLOCK` 0, and asks
//!   for `SIGKILL` when its parent (the fork server) dies; the fork server is itself spawned with
//!   `SIGKILL` on the host's death, from a thread that lives as long as the host process (`zygote.rs`).
//!
//! Because a run cannot start a process, the address-space cap (`RLIMIT_AS`) of its one process bounds
//! the memory of everything it can start; and because it cannot leave its process group, signal out of
//! its domain or outlive its parent, nothing of it survives its settlement, the fork server or the host.
//!
//! Fail closed: [`Boundary::build`] refuses, naming what is missing, when the kernel lacks Landlock ABI 6
//! or seccomp filters, and the runtime then refuses to be built; only an explicit
//! [`PythonIsolation::Host`] runs programs without it. A run whose bootstrap cannot apply a piece exits
//! with [`EXIT_BOUNDARY`] before reading its program.
//!
//! Spec: none of the conformance rules (upstream's Python runtime ships only a protocol); containment
//! posture of the reference, documented in `code/mod.rs` and the crate README.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// How a [`PythonRuntime`](super::PythonRuntime) runs programs. Named after upstream's runtime
/// `isolation` descriptor; the reference's postures are its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PythonIsolation {
    /// The default: each run is its own process confined by Landlock, seccomp, dropped capabilities and
    /// rlimits (see the module docs of `code::python` and the posture table in `code`): it reads only
    /// the interpreter's files, writes nothing, opens no socket, starts no process, cannot signal or trace
    /// anything outside itself, and dies with its fork server, which dies with the host. Building a
    /// runtime in this posture fails, naming what is missing, on a kernel without Landlock ABI 6 or
    /// seccomp filters.
    #[default]
    Contained,
    /// No boundary: each run is still a fresh process with an empty environment, its own process group,
    /// the CPU and address-space rlimits and the host's budgets — but it reads and writes the host's files
    /// as the host's user, opens sockets, starts processes (killed with its group at settlement, unless
    /// they leave it) and can signal any process the host's user can. Only for programs you trust, or
    /// where an outer sandbox (a container, a VM) is the boundary.
    Host,
}

/// Exit status of a run whose bootstrap could not apply the boundary (see `bootstrap.py`).
pub(super) const EXIT_BOUNDARY: i32 = 88;

/// The descriptor number the Landlock ruleset has in the interpreter.
pub(super) const RULESET_FD: i32 = 4;

/// The Landlock ABI the boundary needs: 6 is the first with signal and abstract-socket scoping.
const REQUIRED_ABI: i64 = 6;

/// What the bootstrap applies: the Landlock ruleset (passed as fd 4) and the seccomp programs (passed as
/// one hex argument, `prog[,prog…]`, each the native bytes of its `sock_filter` array).
#[derive(Debug)]
pub(super) struct Boundary {
    ruleset: OwnedFd,
    filters_hex: String,
    read_paths: Vec<PathBuf>,
}

impl Boundary {
    /// Build the boundary for an interpreter whose own directories are `interpreter_paths`, or say what
    /// this kernel lacks.
    pub(super) fn build(interpreter_paths: &[PathBuf]) -> Result<Self, String> {
        let abi = kernel_landlock_abi();
        if abi < REQUIRED_ABI {
            let found = if abi <= 0 { "no Landlock".to_owned() } else { format!("Landlock ABI {abi}") };
            return Err(format!(
                "the contained posture needs Landlock ABI {REQUIRED_ABI} (filesystem, TCP and signal scoping); this kernel offers {found} \
                 (PythonIsolation::Host runs programs without a boundary)"
            ));
        }
        if !seccomp_filters_available() {
            return Err("the contained posture needs seccomp filters (CONFIG_SECCOMP_FILTER); this kernel offers none \
                        (PythonIsolation::Host runs programs without a boundary)"
                .to_owned());
        }
        let read_paths = read_paths(interpreter_paths);
        let ruleset = ruleset(&read_paths).map_err(|e| format!("cannot build the Landlock ruleset: {e}"))?;
        let filters_hex = filters().map_err(|e| format!("cannot compile the seccomp filter: {e}"))?;
        Ok(Self { ruleset, filters_hex, read_paths })
    }

    /// The ruleset descriptor the interpreter inherits as fd 4.
    pub(super) fn ruleset(&self) -> &OwnedFd {
        &self.ruleset
    }

    /// The bootstrap's `--contain` argument.
    pub(super) fn filters_hex(&self) -> &str {
        &self.filters_hex
    }

    /// The directories (and files) a run may read.
    pub(super) fn read_paths(&self) -> &[PathBuf] {
        &self.read_paths
    }
}

/// The kernel's Landlock ABI version (`landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`),
/// or ≤ 0 when it has none.
#[allow(unsafe_code)]
fn kernel_landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer and size 0 this call only reports the ABI version.
    unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, LANDLOCK_CREATE_RULESET_VERSION) }
}

/// Whether seccomp filters can return errno values here (the file lists the actions the kernel has).
fn seccomp_filters_available() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail").is_ok_and(|actions| actions.split_whitespace().any(|a| a == "errno"))
}

/// What a run may read: the interpreter's directories and the system's shared-library and locale data.
fn read_paths(interpreter_paths: &[PathBuf]) -> Vec<PathBuf> {
    let system = ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/etc/ld.so.cache", "/usr/share/zoneinfo"];
    let mut paths: Vec<PathBuf> = Vec::new();
    for path in interpreter_paths.iter().map(PathBuf::as_path).chain(system.iter().map(Path::new)) {
        if path.is_absolute() && path.exists() && path != Path::new("/") && !paths.iter().any(|p| p == path) {
            paths.push(path.to_path_buf());
        }
    }
    paths
}

/// The devices a run may open: the sink and the sources of zeros and random bytes (`true`: writable).
const DEVICES: [(&str, bool); 4] = [("/dev/null", true), ("/dev/zero", false), ("/dev/urandom", false), ("/dev/random", false)];

fn ruleset(read_paths: &[PathBuf]) -> Result<OwnedFd, landlock::RulesetError> {
    let abi = ABI::V6;
    let created = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))?
        .handle_access(AccessNet::from_all(abi))?
        .scope(Scope::from_all(abi))?
        .create()?
        .add_rules(path_beneath_rules(read_paths, AccessFs::ReadFile | AccessFs::ReadDir))?
        .add_rules(DEVICES.iter().filter_map(|(path, writable)| {
            let access = if *writable { AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate } else { AccessFs::ReadFile.into() };
            PathFd::new(path).ok().map(|fd| Ok::<_, landlock::RulesetError>(PathBeneath::new(fd, access)))
        }))?;
    let fd: Option<OwnedFd> = created.into();
    // HardRequirement guarantees a real ruleset; a missing descriptor would mean no boundary.
    fd.ok_or_else(|| landlock::RulesetError::from(landlock::CreateRulesetError::MissingHandledAccess))
}

/// The seccomp programs, hex-encoded and comma-separated: the `EPERM` denials, then `clone3` → `ENOSYS`.
fn filters() -> Result<String, seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let deny = SeccompFilter::new(denied_calls()?, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?;
    let clone3: BTreeMap<i64, Vec<SeccompRule>> = [(libc::SYS_clone3, Vec::new())].into_iter().collect();
    let no_clone3 = SeccompFilter::new(clone3, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)?;
    let mut hex = String::new();
    for filter in [deny, no_clone3] {
        let program = BpfProgram::try_from(filter)?;
        if !hex.is_empty() {
            hex.push(',');
        }
        for instruction in &program {
            let mut bytes = [0u8; 8];
            bytes[..2].copy_from_slice(&instruction.code.to_ne_bytes());
            bytes[2] = instruction.jt;
            bytes[3] = instruction.jf;
            bytes[4..].copy_from_slice(&instruction.k.to_ne_bytes());
            for byte in bytes {
                let _ = write!(hex, "{byte:02x}");
            }
        }
    }
    Ok(hex)
}

/// The calls the run is refused, each unconditionally or under the conditions given.
fn denied_calls() -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::Error> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let always = [
        // New processes and programs.
        libc::SYS_execve,
        libc::SYS_execveat,
        // Networking (socketpair stays: the event loop's self-pipe).
        libc::SYS_socket,
        // Leaving the process group the host kills at settlement.
        libc::SYS_setsid,
        libc::SYS_setpgid,
        // Other processes and their memory.
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        libc::SYS_kcmp,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
        // Memory the address-space cap does not see, and IPC objects that outlive the process.
        libc::SYS_memfd_create,
        libc::SYS_memfd_secret,
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgctl,
        libc::SYS_semget,
        libc::SYS_semctl,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        // Raising limits (capabilities are dropped too; this keeps it so if they were not).
        libc::SYS_setrlimit,
        // Namespaces, mounts and the kernel's administrative surface.
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_personality,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
        libc::SYS_setpriority,
        libc::SYS_ioprio_set,
        libc::SYS_acct,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_syslog,
        libc::SYS_quotactl,
        libc::SYS_name_to_handle_at,
        libc::SYS_open_by_handle_at,
        libc::SYS_fanotify_init,
        libc::SYS_vhangup,
    ];
    for call in always {
        rules.insert(call, Vec::new());
    }
    #[cfg(target_arch = "x86_64")]
    for call in [libc::SYS_fork, libc::SYS_vfork, libc::SYS_iopl, libc::SYS_ioperm, libc::SYS_modify_ldt] {
        rules.insert(call, Vec::new());
    }
    // `clone` only without CLONE_THREAD: threads stay, processes do not.
    let clone_thread = libc::CLONE_THREAD as u64;
    let process = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(clone_thread), 0)?;
    rules.insert(libc::SYS_clone, vec![SeccompRule::new(vec![process])?]);
    // `prlimit64` only when it sets a limit (a null new-limit pointer is a read).
    let sets = SeccompCondition::new(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)?;
    rules.insert(libc::SYS_prlimit64, vec![SeccompRule::new(vec![sets])?]);
    // `prctl(PR_SET_PDEATHSIG, …)`: the run must die with its fork server.
    let pdeathsig = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::PR_SET_PDEATHSIG as u64)?;
    rules.insert(libc::SYS_prctl, vec![SeccompRule::new(vec![pdeathsig])?]);
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_builds_on_this_kernel_or_names_what_is_missing() {
        match Boundary::build(&[]) {
            Ok(boundary) => {
                assert!(boundary.filters_hex().split(',').count() == 2);
                assert!(boundary.filters_hex().split(',').all(|p| !p.is_empty() && p.len() % 16 == 0));
                assert!(boundary.read_paths().iter().all(|p| p.is_absolute()));
            }
            Err(why) => {
                eprintln!("this kernel cannot give the boundary; checking the refusal names it: {why}");
                assert!(why.contains("Landlock") || why.contains("seccomp"), "{why}");
                assert!(why.contains("PythonIsolation::Host"), "{why}");
            }
        }
    }
}
