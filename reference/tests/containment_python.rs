//! The hostile Python corpus (`tests/hostile/python/*.py`) against the contained posture
//! ([`PythonIsolation::Contained`], the default): each program is something a hostile model would write
//! (signal or trace the fork server, fork bombs, detached grandchildren, memory in children or outside
//! the address-space cap, reading the host's files and other processes' `/proc`, writes outside the run,
//! sockets, raised rlimits, a disarmed parent-death signal, floods). For each, this checks that the host
//! survives, that the run settles within its wall ceiling plus a grace with the failure its header
//! expects, that the host's memory stays under a bound, that no process the run started exists afterwards
//! (the test process is a child subreaper, so an escaped orphan would become its child and be seen), that
//! a path it tried to write is absent, and that the next run on the same fork server still works. Floods
//! of binding calls (every program gets `tools.echo` and `tools.hang`, which never answers) are bounded
//! by the heap cap on the host side too.
//!
//! Header lines of a corpus program (the TypeScript corpus uses the same keys with `//`):
//! `# hostile: <what it tries>`, `# expect: <kind>[: <regex>]` (a run-error kind, `ok`, `any` or
//! `any-failure`), `# limits: wall_ms=… compute_ms=… heap_mb=… output_bytes=…`, `# absent: <path>`.
//!
//! Where the kernel cannot give the boundary, the test says so and checks the fail-closed refusal instead.
#![cfg(feature = "python")]
#![allow(clippy::unwrap_used)]

mod containment_support;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_tools::code::python::{PythonIsolation, PythonRuntime};
use dsh_tools::code::{
    BindingFn, CodeBindingErrorClass, CodeBindingNamespace, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeLimits, RunSignal,
};

/// Settlement may come this long after the wall ceiling (kill, drain, reap; a debug build on a busy
/// two-core machine).
const GRACE: Duration = Duration::from_secs(3);
/// Growth of the host's resident memory allowed over the whole corpus, measured after the allocator has
/// returned what it kept: runs live in their own processes, so the host holds only frames and logs, each
/// within the output ledger (1 MiB here), and pending binding calls, within each run's heap cap (a
/// call flood's frames are freed when its run settles).
const HOST_RSS_BOUND_KB: u64 = 64 * 1024;

struct Case {
    name: String,
    program: String,
    expect: String,
    pattern: Option<regex::Regex>,
    limits: CodeRuntimeLimits,
    absent: Vec<PathBuf>,
}

fn corpus() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/python");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "py")).collect();
    files.sort();
    files.iter().map(|path| parse(path)).collect()
}

fn parse(path: &std::path::Path) -> Case {
    let program = std::fs::read_to_string(path).unwrap();
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let mut limits = CodeRuntimeLimits { compute_ms: 5_000.0, max_wall_ms: 5_000.0, max_output_bytes: 1 << 20, max_heap_bytes: 64 << 20, max_model_text_bytes: None };
    let (mut expect, mut pattern, mut absent, mut hostile) = (None, None, Vec::new(), false);
    for line in program.lines().take_while(|l| l.starts_with('#')) {
        let Some((key, value)) = line.trim_start_matches('#').trim().split_once(':') else { continue };
        let value = value.trim();
        match key {
            "hostile" => hostile = !value.is_empty(),
            "expect" => {
                let (kind, regex) = value.split_once(':').map_or((value, None), |(k, r)| (k, Some(r.trim())));
                expect = Some(kind.trim().to_owned());
                pattern = regex.map(|r| regex::Regex::new(r).unwrap_or_else(|e| panic!("{name}: bad expect regex: {e}")));
            }
            "limits" => {
                for setting in value.split_whitespace() {
                    let (k, v) = setting.split_once('=').unwrap_or_else(|| panic!("{name}: bad limit {setting}"));
                    let v: f64 = v.parse().unwrap_or_else(|_| panic!("{name}: bad limit {setting}"));
                    match k {
                        "wall_ms" => limits.max_wall_ms = v,
                        "compute_ms" => limits.compute_ms = v,
                        "heap_mb" => limits.max_heap_bytes = (v as u64) << 20,
                        "output_bytes" => limits.max_output_bytes = v as u64,
                        _ => panic!("{name}: unknown limit {k}"),
                    }
                }
            }
            "absent" => absent.push(PathBuf::from(value)),
            _ => panic!("{name}: unknown header key {key}"),
        }
    }
    assert!(hostile, "{name}: every corpus program says what it tries (# hostile: …)");
    let expect = expect.unwrap_or_else(|| panic!("{name}: no # expect: line"));
    Case { name, program, expect, pattern, limits, absent }
}

/// The bindings every corpus program gets: `tools.echo(x)` answers `x`; `tools.hang(x)` never answers.
fn tools() -> CodeBindingNamespace {
    let echo: BindingFn = Arc::new(|args| Box::pin(async move { Ok(args.unwrap_or(serde_json::Value::Null)) }));
    let hang: BindingFn = Arc::new(|_| Box::pin(std::future::pending()));
    CodeBindingNamespace {
        global: "tools".to_owned(),
        functions: vec![("echo".to_owned(), echo), ("hang".to_owned(), hang)].into(),
        error_class: Some(CodeBindingErrorClass { name: "ToolCallError".to_owned(), member_name_property: "toolName".to_owned() }),
    }
}

async fn run(rt: &PythonRuntime, program: &str) -> CodeRunResult {
    let request = CodeRunRequest { program: program.to_owned(), bindings: vec![tools()], signal: RunSignal::new(), state_owner: None };
    rt.run(request).await.unwrap()
}

fn judge(case: &Case, result: &CodeRunResult) -> Result<(), String> {
    let error = result.error.as_ref();
    let text = error.map_or(String::new(), |e| e.message.clone());
    let kind_ok = match case.expect.as_str() {
        "ok" => error.is_none(),
        "any" => true,
        "any-failure" => error.is_some(),
        kind => error.is_some_and(|e| e.kind.as_str() == kind),
    };
    if !kind_ok {
        return Err(format!("expected {}, got {result:?}", case.expect));
    }
    if let Some(pattern) = &case.pattern {
        if !pattern.is_match(&text) {
            return Err(format!("expected a message matching /{pattern}/, got {text:?}"));
        }
    }
    Ok(())
}

/// The pids of every process whose parent chain reaches `root` (`root` excluded).
fn descendants(root: u32) -> HashSet<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(close) = stat.rfind(')') else { continue };
        let fields: Vec<&str> = stat[close + 1..].split_ascii_whitespace().collect();
        if matches!(fields.first(), Some(&("Z" | "X"))) {
            continue;
        }
        if let Some(ppid) = fields.get(1).and_then(|f| f.parse::<u32>().ok()) {
            parents.push((pid, ppid));
        }
    }
    let mut found: HashSet<u32> = HashSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == parent && found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

fn host_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok()).unwrap()
}

#[allow(unsafe_code)]
fn become_subreaper() {
    // SAFETY: an integer-argument prctl on this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_python_program_is_contained() {
    let base = match PythonRuntime::new(CodeRuntimeLimits::default()) {
        Ok(rt) => rt,
        Err(refusal) => {
            eprintln!("this kernel cannot give the Python boundary; checking the fail-closed refusal instead: {}", refusal.message);
            assert!(refusal.message.contains("Landlock") || refusal.message.contains("seccomp"), "{}", refusal.message);
            assert!(refusal.message.contains("PythonIsolation::Host"), "{}", refusal.message);
            return;
        }
    };
    assert_eq!(base.posture(), PythonIsolation::Contained);
    assert_eq!(CodeRuntime::isolation(&base), "contained-process");
    become_subreaper();
    let me = std::process::id();
    // Warm the fork server so its own processes are known before the corpus runs.
    assert_eq!(run(&base, "return 1").await.value, Some(serde_json::json!(1)));
    containment_support::trim_allocator();
    let rss_before = host_rss_kb();
    let mut failures = Vec::new();
    let cases = corpus();
    assert!(cases.len() >= 25, "the corpus shrank: {}", cases.len());
    for case in &cases {
        let rt = base.with_limits(case.limits).unwrap();
        let started = Instant::now();
        let result = run(&rt, &case.program).await;
        let took = started.elapsed();
        let ceiling = Duration::from_secs_f64(case.limits.max_wall_ms / 1000.0) + GRACE;
        if let Err(why) = judge(case, &result) {
            failures.push(format!("{}: {why}", case.name));
        }
        if took > ceiling {
            failures.push(format!("{}: settled after {took:?}, past its wall ceiling plus grace ({ceiling:?})", case.name));
        }
        for path in &case.absent {
            if path.exists() {
                let _ = std::fs::remove_file(path);
                failures.push(format!("{}: {} was written", case.name, path.display()));
            }
        }
        // What is left: the fork server (our child) and at most its one spare. Anything else — a run's
        // process, its children, an orphan re-parented to us — is a leftover.
        let deadline = Instant::now() + Duration::from_secs(2);
        let leftovers = loop {
            let now = descendants(me);
            let servers: Vec<u32> = now.iter().copied().filter(|pid| parent_of(*pid) == Some(me)).collect();
            let spares = now.iter().filter(|pid| servers.contains(&parent_of(**pid).unwrap_or(0))).count();
            let extra = now.len().saturating_sub(servers.len()).saturating_sub(spares.min(1));
            if (servers.len() <= 1 && spares <= 1 && extra == 0) || Instant::now() > deadline {
                break if servers.len() <= 1 && spares <= 1 && extra == 0 { None } else { Some(now) };
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        if let Some(left) = leftovers {
            failures.push(format!("{}: processes left behind: {left:?}", case.name));
        }
        // The fork server and the next run are unharmed.
        let next = tokio::time::timeout(Duration::from_secs(10), run(&base, "return 2")).await;
        if !matches!(&next, Ok(r) if r.value == Some(serde_json::json!(2))) {
            failures.push(format!("{}: the next run failed or hung: {next:?}", case.name));
        }
    }
    containment_support::trim_allocator();
    let grown = host_rss_kb().saturating_sub(rss_before);
    eprintln!("{} hostile programs; host RSS grew by {grown} kB", cases.len());
    assert!(grown < HOST_RSS_BOUND_KB, "host RSS grew by {grown} kB over the corpus");
    assert!(failures.is_empty(), "{} of {} contained badly:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The host posture is an explicit choice and says so; it runs programs without the boundary.
#[tokio::test]
async fn the_host_posture_is_explicit_and_unguarded() {
    let rt = PythonRuntime::with_isolation("python3", CodeRuntimeLimits::default(), PythonIsolation::Host).unwrap();
    assert_eq!(rt.posture(), PythonIsolation::Host);
    assert_eq!(CodeRuntime::isolation(&rt), "process");
    assert!(rt.readable_paths().is_empty());
    let result = run(&rt, "return len(open('/etc/hostname').read()) >= 0").await;
    assert_eq!(result.value, Some(serde_json::json!(true)), "{result:?}");
}
