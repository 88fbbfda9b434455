//! Containment of hostile TypeScript programs (issue 35): every program under `tests/hostile/typescript/`
//! runs through `run_code` on the real QuickJS runtime (which runs in this process), and for each the test
//! checks that the host survives, that the call settles within the program's wall ceiling plus
//! [`GRACE_MS`] with the expected failure, that the text handed to the model stays within
//! `max_model_text_bytes` when the program sets it, and that this process's peak resident memory grows by
//! less than the program's stated bound (its heap cap plus a constant).
//!
//! Header of each program (the Python corpus uses the same keys behind `#`):
//! ```text
//! // hostile: <one line: what it tries>
//! // expect: <kind>[: <regex on the failure message>]
//! // limits: wall_ms=2000 compute_ms=1000 heap_mb=64 output_bytes=<n> model_text_bytes=<n>   (all optional)
//! // rss_mb: 200                                                                               (optional)
//! ```
//! Kinds are `CodeRunErrorKind`'s spellings (`exception`, `timeout`, `worker-exit`, `abort`,
//! `output-limit`, `invalid-output`), plus `ok` (the run completed), `budget` (one of the budget endings:
//! `timeout`, `worker-exit`, `output-limit`) and `any-failure`. The regex is matched against the failure's
//! message (the text after `code run failed (<kind>): `, without the captured output). Defaults:
//! [`DEFAULT_LIMITS`], and a bound of the heap cap plus [`DEFAULT_RSS_OVER_HEAP_MB`]; the corpus states its
//! bounds as the heap cap plus 64 MiB, plus the output ledger (64 MiB) for the programs that fill it,
//! and tighter where the program leaves nothing pending (`clear_timeout_churn`, `awaited_call_stream`: a
//! fresh engine's few MiB, so a few bytes kept per iteration pass it) or bounded in number
//! (`starved_intervals`: what its timers are charged plus 8 MiB).
//!
//! Peak memory is read from `/proc/self/status` (`VmHWM`, reset before each program through
//! `/proc/self/clear_refs`, after glibc's `malloc_trim` returned what earlier programs freed); the programs
//! run one at a time in one test function, since tests running in
//! parallel share the process's memory. One at a time includes the runs their callers no longer wait for: a
//! program answered by the wall backstop while its thread is in a step the engine cannot interrupt (the
//! `huge_return` programs' 80 MB `repeat`) is abandoned and works on (`code/typescript/pool.rs`), so each
//! program is measured only once `abandoned_runs()` is zero (under load such a thread outlived several
//! later programs, and its allocations were counted as theirs: `set_interval_flood` read +147 MiB). The programs use two tools: `x` (answers `{}` at once) and `hang`
//! (answers when its call is aborted).
//!
//! Spec: RUN-027 (busy budget), RUN-028 (wall ceiling), RUN-029 (output ledger), RUN-031 (heap cap).

#![cfg(feature = "typescript")]
#![allow(clippy::unwrap_used)]

mod containment_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::{OutputDeclaration, Parameters, ScopeKey, ToolDefinition, ToolExecutionInput, ToolExecutionResult, ToolMode, ToolRuntime, ToolsConfig};
use regex::Regex;
use serde_json::{Value, json};

/// How long after its wall ceiling a run may settle.
const GRACE_MS: u64 = 500;
/// Limits of a program whose header names none: `wall_ms`, `compute_ms`, `heap_mb`.
const DEFAULT_LIMITS: (f64, f64, u64) = (2_000.0, 1_000.0, 64);
/// The bound on peak resident growth of a program whose header names none, in MiB beyond its heap cap.
const DEFAULT_RSS_OVER_HEAP_MB: u64 = 64;
/// The longest marker `max_model_text_bytes` appends to a cut text.
const MARKER_ROOM: usize = 128;

/// One program of the corpus and what its header says.
struct Case {
    name: String,
    source: String,
    kind: String,
    pattern: Option<Regex>,
    limits: CodeRuntimeLimits,
    rss_mb: u64,
}

fn header<'a>(source: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("// {key}:");
    source.lines().take_while(|l| l.starts_with("//")).find_map(|l| l.strip_prefix(prefix.as_str())).map(str::trim)
}

fn load(path: &Path) -> Case {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let source = std::fs::read_to_string(path).unwrap();
    assert!(header(&source, "hostile").is_some_and(|h| !h.is_empty()), "{name}: no `// hostile:` line");
    let expect = header(&source, "expect").unwrap_or_else(|| panic!("{name}: no `// expect:` line"));
    let (kind, pattern) = match expect.split_once(':') {
        Some((kind, pattern)) => (kind.trim().to_owned(), Some(Regex::new(pattern.trim()).unwrap())),
        None => (expect.to_owned(), None),
    };
    const KINDS: &[&str] =
        &["ok", "exception", "timeout", "budget", "worker-exit", "abort", "output-limit", "invalid-output", "any-failure"];
    assert!(KINDS.contains(&kind.as_str()), "{name}: unknown kind {kind}");
    let (wall, compute, heap) = DEFAULT_LIMITS;
    let mut limits = CodeRuntimeLimits::default()
        .with_max_wall(Duration::from_secs_f64(wall / 1000.0))
        .with_compute(Duration::from_secs_f64(compute / 1000.0))
        .with_max_heap_bytes(heap << 20);
    for pair in header(&source, "limits").unwrap_or_default().split_whitespace() {
        let (key, value) = pair.split_once('=').unwrap_or_else(|| panic!("{name}: bad limit {pair}"));
        let n: u64 = value.parse().unwrap_or_else(|_| panic!("{name}: bad limit {pair}"));
        #[allow(clippy::cast_precision_loss)]
        match key {
            "wall_ms" => limits = limits.with_max_wall(Duration::from_millis(n)),
            "compute_ms" => limits = limits.with_compute(Duration::from_millis(n)),
            "heap_mb" => limits = limits.with_max_heap_bytes(n << 20),
            "output_bytes" => limits = limits.with_max_output_bytes(n),
            "model_text_bytes" => limits = limits.with_max_model_text(n),
            other => panic!("{name}: unknown limit {other}"),
        }
    }
    let rss_mb = header(&source, "rss_mb").map_or((limits.max_heap_bytes >> 20) + DEFAULT_RSS_OVER_HEAP_MB, |v| v.parse().unwrap());
    Case { name, source, kind, pattern, limits, rss_mb }
}

fn corpus() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/typescript");
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "ts")).collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

/// A `/proc/self/status` field in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Hand the memory the allocator kept from earlier programs back to the kernel, so that a program's
/// growth is not hidden by reuse of what an earlier one left, then reset the peak (`VmHWM`) to the
/// current resident size; whether the kernel allowed the reset.
fn reset_peak() -> bool {
    containment_support::trim_allocator();
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The longest an abandoned run may take to finish before the next program is measured.
const SETTLE_LIMIT: Duration = Duration::from_secs(120);

/// Wait until no run is abandoned (an earlier program's thread still working after its caller was
/// answered); how long that took.
fn settle_abandoned() -> Duration {
    let started = Instant::now();
    while dsh_tools::code::typescript::abandoned_runs() > 0 {
        assert!(started.elapsed() < SETTLE_LIMIT, "abandoned runs still working after {SETTLE_LIMIT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    started.elapsed()
}

fn tool(name: &str, hang: bool) -> ToolDefinition {
    let mut def = ToolDefinition::new(
        name,
        "a tool for hostile programs",
        Parameters::Dsl(json!({})),
        OutputDeclaration { schema: json!({"type": "object", "additionalProperties": true}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(move |_, ctx| {
            Box::pin(async move {
                if hang {
                    ctx.signal().cancelled().await;
                }
                Ok(json!({}))
            })
        }),
    );
    def.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    def
}

/// The failure kind and message (before any captured output) of a failed `run_code` text.
fn parse_failure(text: &str) -> Option<(String, String)> {
    let rest = text.strip_prefix("code run failed (")?;
    let (kind, rest) = rest.split_once("): ")?;
    let message = rest.split("\nCaptured output:\n").next().unwrap_or_default();
    Some((kind.to_owned(), message.to_owned()))
}

struct Observed {
    elapsed: Duration,
    kind: String,
    message: String,
    text_bytes: usize,
}

fn run_case(tokio: &tokio::runtime::Runtime, case: &Case) -> Observed {
    let rt = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    let _x = rt.register(tool("x", false), None).unwrap();
    let _hang = rt.register(tool("hang", true), None).unwrap();
    let runtime = TypeScriptRuntime::new(case.limits).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let _mounted = rt.mount_code_runtime(Arc::new(runtime));
    let mut input = ToolExecutionInput::new("hostile", "run_code", json!({"code": case.source, "description": case.name}));
    input.agent = Some(ScopeKey::new("agent"));
    let started = Instant::now();
    let result = tokio.block_on(async move { tokio::spawn(async move { rt.execute(input).await }).await.unwrap() });
    let elapsed = started.elapsed();
    let text: String =
        result.content().iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("");
    let (kind, message) = match &result {
        ToolExecutionResult::Success { .. } => ("ok".to_owned(), String::new()),
        ToolExecutionResult::Failure { error, .. } => {
            parse_failure(&error.message).unwrap_or_else(|| panic!("{}: not a code-run failure: {:.300}", case.name, error.message))
        }
    };
    let text_bytes = match &result {
        ToolExecutionResult::Failure { error, .. } => text.len().max(error.message.len()),
        ToolExecutionResult::Success { .. } => text.len(),
    };
    drop(result);
    Observed { elapsed, kind, message, text_bytes }
}

fn kind_matches(expected: &str, kind: &str) -> bool {
    match expected {
        "any-failure" => kind != "ok",
        "budget" => matches!(kind, "timeout" | "worker-exit" | "output-limit"),
        other => other == kind,
    }
}

#[test]
fn every_hostile_program_is_contained() {
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // Warm up (the run thread, the prelude's bytecode, the bridge's first sub-call) so the first
    // program's figures are its own.
    let warm = Case {
        name: "warm-up".into(),
        source: "await tools.x({}); return 1;".into(),
        kind: "ok".into(),
        pattern: None,
        limits: CodeRuntimeLimits::default(),
        rss_mb: 0,
    };
    assert_eq!(run_case(&tokio, &warm).kind, "ok");
    let mut cases = corpus();
    assert!(cases.len() >= 13, "the corpus shrank to {} programs", cases.len());
    // `DSH_HOSTILE=<part of a name>[,<part>...]` runs only the matching programs, in corpus order (for
    // investigating one, or one after another).
    if let Ok(only) = std::env::var("DSH_HOSTILE") {
        cases.retain(|c| only.split(',').any(|part| c.name.contains(part)));
    }
    let mut failures = Vec::new();
    for case in &cases {
        // A run answered by the wall backstop may still be working on its thread (`pool.rs`: abandoned
        // runs); the next program's growth is its own only once they finished.
        let settled = settle_abandoned();
        let peak_resets = reset_peak();
        let before = status_kib("VmRSS:");
        // The host's tokio runtime stays responsive while the program runs: a ticker on it keeps ticking.
        let ticks = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let ticker = {
            let ticks = Arc::clone(&ticks);
            tokio.spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
        };
        let observed = run_case(&tokio, case);
        ticker.abort();
        let peak = if peak_resets { status_kib("VmHWM:") } else { status_kib("VmRSS:") };
        let grown_mb = peak.saturating_sub(before) / 1024;
        let wall = Duration::from_secs_f64(case.limits.max_wall_ms / 1000.0);
        eprintln!(
            "{:<36} {:<13} {:>6} ms  peak +{:>5} MiB (bound {:>4})  text {:>9} B  ticks {:>4}  settled {:>5} ms  {:.80}",
            case.name,
            observed.kind,
            observed.elapsed.as_millis(),
            grown_mb,
            case.rss_mb,
            observed.text_bytes,
            ticks.load(std::sync::atomic::Ordering::Relaxed),
            settled.as_millis(),
            observed.message.replace('\n', " | ")
        );
        let mut problems = Vec::new();
        if !kind_matches(&case.kind, &observed.kind) {
            problems.push(format!("ended as {} ({:.200}), expected {}", observed.kind, observed.message, case.kind));
        }
        if let Some(pattern) = &case.pattern {
            if !pattern.is_match(&observed.message) {
                problems.push(format!("message {:.200} does not match /{pattern}/", observed.message));
            }
        }
        if observed.elapsed > wall + Duration::from_millis(GRACE_MS) {
            problems.push(format!("settled after {:?}, ceiling {wall:?} + {GRACE_MS} ms", observed.elapsed));
        }
        if grown_mb > case.rss_mb {
            problems.push(format!("peak resident memory grew by {grown_mb} MiB, bound {} MiB", case.rss_mb));
        }
        if let Some(cap) = case.limits.max_model_text_bytes {
            let cap = usize::try_from(cap).unwrap();
            if observed.text_bytes > cap + MARKER_ROOM {
                problems.push(format!("the model's text is {} bytes, cap {cap}", observed.text_bytes));
            }
        }
        if ticks.load(std::sync::atomic::Ordering::Relaxed) == 0 && observed.elapsed > Duration::from_millis(200) {
            problems.push("the host's tokio runtime did not tick while the program ran".to_owned());
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "hostile programs not contained:\n{}", failures.join("\n"));
}
