//! Tests of per-call runs forked by the fork server (`zygote.rs`): nothing one run sets (a global, a
//! builtin, a module attribute, an open descriptor) is there in the next; each run is its own process
//! group under the zygote; concurrent runs get distinct processes; a killed zygote is replaced, a stopped
//! one bounds the runs waiting on it and is replaced; no zygote
//! outlives its runtime; the spare the zygote forks ahead serves the next run, clean.
//!
//! Spec: RUN-034 (fresh state per run).
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::PythonRuntime;
use crate::code::{CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeLimits, RunSignal};

fn runtime() -> PythonRuntime {
    PythonRuntime::new(CodeRuntimeLimits { max_wall_ms: 20_000.0, ..CodeRuntimeLimits::default() }).unwrap()
}

async fn run(rt: &PythonRuntime, program: &str) -> CodeRunResult {
    let request = CodeRunRequest { program: program.to_owned(), bindings: Vec::new(), signal: RunSignal::new(), state_owner: None };
    rt.run(request).await.unwrap()
}

async fn value(rt: &PythonRuntime, program: &str) -> Value {
    let result = run(rt, program).await;
    assert_eq!(result.error, None, "{result:?}");
    result.value.unwrap_or(Value::Null)
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rfind(')').and_then(|close| stat[close + 1..].split_ascii_whitespace().next().map(str::to_owned));
        !matches!(state.as_deref(), Some("Z" | "X"))
    })
}

/// What a run sees of itself: pid, parent, process group, and whether `fd` is open.
const SELF_REPORT: &str = "import os\n\
    def is_open(fd):\n    try:\n        os.fstat(fd)\n        return True\n    except OSError:\n        return False\n";

#[tokio::test]
async fn a_run_leaves_no_global_module_attribute_or_descriptor_for_the_next() {
    let rt = runtime();
    let first = "global leaked\nleaked = 1\nimport builtins, json, os\nbuiltins.leaked_builtin = 2\njson.x = 1\n\
        fd = os.open('/dev/null', os.O_RDONLY)\nreturn [fd, os.getpid()]";
    let first = value(&rt, first).await;
    let (fd, first_pid) = (first[0].as_i64().unwrap(), first[1].as_i64().unwrap());
    let second = format!(
        "{SELF_REPORT}import builtins, json\nreturn ['leaked' in globals(), hasattr(builtins, 'leaked_builtin'), \
         hasattr(json, 'x'), is_open({fd}), os.getpid()]"
    );
    let second = value(&rt, &second).await;
    assert_eq!(second.as_array().unwrap()[..4], [json!(false), json!(false), json!(false), json!(false)], "{second}");
    assert_ne!(second[4].as_i64(), Some(first_pid), "each run is a process of its own");
}

#[tokio::test]
async fn each_run_is_a_group_leader_forked_by_the_zygote() {
    let rt = runtime();
    let report = format!("{SELF_REPORT}return [os.getpid(), os.getppid(), os.getpgid(0), [f for f in range(256) if is_open(f)]]");
    let seen = value(&rt, &report).await;
    let zygote = rt.inner.zygote.pid().unwrap();
    assert_eq!(seen[1].as_u64(), Some(u64::from(zygote)), "{seen}");
    assert_eq!(seen[0], seen[2], "the child leads its own process group");
    // 0-3 are the run's; the rest are its own event loop's (epoll and its self-pipe) and the listing's.
    let fds: Vec<i64> = seen[3].as_array().unwrap().iter().filter_map(Value::as_i64).collect();
    assert_eq!(fds[..4], [0, 1, 2, 3], "{seen}");
    assert!(fds.len() <= 8, "no descriptor of the zygote leaks into a run: {seen}");
    // The zygote itself runs nothing: it is not in the run's group.
    assert_ne!(seen[2].as_u64(), Some(u64::from(zygote)));
}

#[tokio::test]
async fn concurrent_runs_are_distinct_processes() {
    let rt = runtime();
    let runs: Vec<_> = (0..6).map(|_| value(&rt, "import os, asyncio\nawait asyncio.sleep(0.05)\nreturn os.getpid()")).collect();
    let mut pids: Vec<i64> = futures_util::future::join_all(runs).await.iter().filter_map(Value::as_i64).collect();
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(pids.len(), 6, "{pids:?}");
}

#[tokio::test]
async fn a_killed_zygote_is_replaced() {
    let rt = runtime();
    assert_eq!(value(&rt, "return 1").await, json!(1));
    let old = rt.inner.zygote.pid().unwrap();
    std::process::Command::new("kill").args(["-KILL", &old.to_string()]).status().unwrap();
    // The reader thread sees EOF shortly after the kill; either way the next run must succeed.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(value(&rt, "return 2").await, json!(2));
    let new = rt.inner.zygote.pid().unwrap();
    assert_ne!(old, new);
    assert!(!alive(old));
}

/// A fork server that stops answering (stopped from outside: runs cannot signal it) holds no run past its
/// wall ceiling or abort, and is replaced once a request has waited `FORK_REPLY`; its runs die with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_zygote_bounds_the_runs_waiting_on_it_and_is_replaced() {
    use std::time::{Duration, Instant};
    let rt = runtime();
    assert_eq!(value(&rt, "return 1").await, json!(1));
    let old = rt.inner.zygote.pid().unwrap();
    std::process::Command::new("kill").args(["-STOP", &old.to_string()]).status().unwrap();
    // Bounded by the wall ceiling.
    let short = rt.with_limits(CodeRuntimeLimits { max_wall_ms: 800.0, ..rt.limits() }).unwrap();
    let started = Instant::now();
    let result = run(&short, "return 1").await;
    assert_eq!(result.error.map(|e| (e.kind, e.message)), Some((crate::code::CodeRunErrorKind::Timeout, "wall-clock ceiling reached (800ms)".to_owned())));
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // Bounded by the abort signal.
    let signal = RunSignal::new();
    let waiting = tokio::spawn({
        let (rt, signal) = (rt.clone(), signal.clone());
        async move { rt.run(CodeRunRequest { program: "return 1".to_owned(), bindings: Vec::new(), signal, state_owner: None }).await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    signal.abort("enough");
    let aborted = tokio::time::timeout(Duration::from_secs(2), waiting).await.unwrap().unwrap();
    assert_eq!(aborted.error.map(|e| e.message), Some("enough".to_owned()));
    // A run with time to spare waits at most FORK_REPLY, then starts anyway; the wedged server is killed.
    let started = Instant::now();
    assert_eq!(value(&rt, "return 2").await, json!(2));
    assert!(started.elapsed() < Duration::from_secs(9), "{:?}", started.elapsed());
    assert_eq!(value(&rt, "return 3").await, json!(3));
    let new = rt.inner.zygote.pid().unwrap();
    assert_ne!(old, new, "the wedged fork server was replaced");
    for _ in 0..100 {
        if !alive(old) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(old), "the wedged fork server was killed");
}

#[tokio::test]
async fn no_zygote_outlives_its_runtime() {
    let rt = runtime();
    let clone = rt.clone();
    assert_eq!(value(&rt, "return 1").await, json!(1));
    let zygote = rt.inner.zygote.pid().unwrap();
    assert!(alive(zygote));
    drop(rt);
    assert!(alive(zygote), "a clone keeps the runtime and its zygote");
    assert_eq!(value(&clone, "return 3").await, json!(3));
    drop(clone);
    assert!(!alive(zygote), "dropping the last clone ends and reaps the zygote");
}

#[tokio::test]
async fn a_runtime_with_other_limits_shares_the_fork_server_and_nothing_else() {
    let base = runtime();
    assert_eq!(value(&base, "return 1").await, json!(1));
    let zygote = base.inner.zygote.pid().unwrap();
    let tight = CodeRuntimeLimits { max_output_bytes: 40, ..base.limits() };
    let derived = base.with_limits(tight).unwrap();
    assert_eq!(derived.limits(), tight);
    assert_eq!(derived.interpreter(), base.interpreter());
    // Its runs are forked by the same zygote, under its own budgets.
    let parent = value(&derived, "import os\nreturn os.getppid()").await;
    assert_eq!(parent.as_u64(), Some(u64::from(zygote)));
    let over = run(&derived, "print('y' * 100)").await;
    assert_eq!(over.error.map(|e| e.kind), Some(crate::code::CodeRunErrorKind::OutputLimit));
    // Its disposal is its own.
    derived.dispose();
    assert!(derived.run(CodeRunRequest { program: "return 1".to_owned(), bindings: Vec::new(), signal: RunSignal::new(), state_owner: None }).await.is_err());
    assert_eq!(value(&base, "return 2").await, json!(2));
    // The zygote lives while any runtime sharing it does.
    drop(base);
    assert!(alive(zygote), "the derived runtime keeps the fork server");
    drop(derived);
    assert!(!alive(zygote), "dropping the last runtime sharing it ends and reaps the zygote");
    assert!(runtime().with_limits(CodeRuntimeLimits { compute_ms: 0.0, ..CodeRuntimeLimits::default() }).is_err());
}

/// The zygote's living children (a spare, or runs in progress).
fn children(zygote: u32) -> Vec<i64> {
    let path = format!("/proc/{zygote}/task/{zygote}/children");
    std::fs::read_to_string(path).unwrap_or_default().split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

#[tokio::test]
async fn the_next_run_is_the_spare_forked_ahead_and_starts_clean() {
    let rt = runtime();
    let first = value(&rt, "import os\nreturn os.getpid()").await;
    let zygote = rt.inner.zygote.pid().unwrap();
    // Once idle, the zygote forks one spare and keeps it waiting.
    let mut spare = Vec::new();
    for _ in 0..200 {
        spare = children(zygote).into_iter().filter(|pid| Some(*pid) != first.as_i64() && alive(*pid as u32)).collect();
        if !spare.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(spare.len(), 1, "one spare waits: {spare:?}");
    let report = format!(
        "{SELF_REPORT}import sys\nreturn [os.getpid(), os.getpgid(0), [f for f in range(256) if is_open(f)], \
         '__dsh_main__' in globals(), [m for m in sys.modules if m.startswith('__main__')]]"
    );
    let seen = value(&rt, &report).await;
    assert_eq!(seen[0].as_i64(), Some(spare[0]), "the run is the spare: {seen}");
    assert_eq!(seen[0], seen[1], "the spare leads its own process group");
    let fds: Vec<i64> = seen[2].as_array().unwrap().iter().filter_map(Value::as_i64).collect();
    assert_eq!(fds[..4], [0, 1, 2, 3], "{seen}");
    assert!(fds.len() <= 8, "nothing of the zygote's (its control socket, its wake-up pipe, the spare's channel): {seen}");
    // The spare waited with nothing to show: the next spare is a process of its own.
    let next = value(&rt, "import os\nreturn os.getpid()").await;
    assert_ne!(next, seen[0]);
}
