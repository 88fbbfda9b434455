//! Helpers shared by the harness's own tests: fake spec directories, fake adapters, running the built
//! `dsh-harness` binary and reading its JSON Lines report.

#![allow(dead_code, missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A fresh directory under cargo's per-target temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("harness-selftest").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Writes `files` (relative path → content) under `dir`.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// The rule catalog of every fake spec: one rule, `T-001`.
pub const RULES: &str = "area: T\ntitle: Test\nprofile: dsh-tools-0.1\nrules:\n  - id: T-001\n    statement: A test rule.\n    source: tests\n    level: must\n";

/// A scenario file with no steps (session/open then session/close).
pub fn scenario(id: &str) -> String {
    format!("id: {id}\nrules: [T-001]\nlevel: must\ndescription: Fake scenario {id}.\nsteps: []\n")
}

/// A fake adapter in Python. Its behaviour at `session/open` depends on the session (scenario) id:
/// `garbage-*` prints a non-JSON line, `crash-*` writes to stderr and exits 3, `hang-*` never answers,
/// `invalid-*` answers with a result that breaks the protocol schema,
/// anything else is answered correctly. `FAKE_PROTOCOL` overrides the protocol version it declares.
pub const FAKE_ADAPTER: &str = r#"
import json, os, sys
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
def answer(req, result):
    send({"jsonrpc": "2.0", "id": req["id"], "result": result})
for line in sys.stdin:
    req = json.loads(line)
    method, params = req.get("method"), req.get("params") or {}
    session = params.get("session", "")
    if method == "initialize":
        answer(req, {"protocolVersion": os.environ.get("FAKE_PROTOCOL", "1.0"),
                     "implementation": {"name": "fake", "version": "0.0.1", "language": "python"},
                     "capabilities": {"profiles": ["dsh-tools-0.1"], "features": [], "runtimes": []}})
    elif method == "session/open":
        if session.startswith("garbage"):
            sys.stdout.write("this is not a protocol message\n"); sys.stdout.flush()
        elif session.startswith("crash"):
            sys.stderr.write("boom: crashing on purpose in " + session + "\n"); sys.stderr.flush()
            sys.exit(3)
        elif session.startswith("hang"):
            continue
        elif session.startswith("invalid"):
            answer(req, {"eventsThrough": "not a number"})
        else:
            answer(req, {"eventsThrough": 0})
    elif method == "session/close":
        answer(req, {"eventsThrough": 0, "leaks": {"pendingCalls": [], "unopenedGates": [], "liveTasks": 0}})
    else:
        send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "unknown method " + str(method)}})
"#;

/// Writes the fake adapter into `dir` and returns its command line.
pub fn fake_adapter(dir: &Path) -> String {
    let path = dir.join("fake_adapter.py");
    std::fs::write(&path, FAKE_ADAPTER).expect("write fake adapter");
    format!("python3 -u '{}'", path.display())
}

/// Runs the built harness with `args`.
pub fn harness(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-harness"));
    command.args(args);
    for (k, v) in envs {
        command.env(k, v);
    }
    command.output().expect("run dsh-harness")
}

/// The JSON Lines report: header, trial records by id, footer.
pub struct Report {
    pub header: Value,
    pub trials: BTreeMap<String, Value>,
    pub footer: Option<Value>,
}

pub fn read_report(path: &Path) -> Report {
    let text = std::fs::read_to_string(path).expect("report written");
    let mut report = Report { header: Value::Null, trials: BTreeMap::new(), footer: None };
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("report line is JSON");
        match record["type"].as_str() {
            Some("header") => report.header = record,
            Some("trial") => {
                let id = record["id"].as_str().expect("trial id").to_owned();
                assert!(report.trials.insert(id.clone(), record).is_none(), "two records for {id}");
            }
            Some("footer") => report.footer = Some(record),
            other => panic!("unexpected record type {other:?}"),
        }
    }
    report
}

impl Report {
    pub fn outcome(&self, id: &str) -> &str {
        self.trials.get(id).and_then(|t| t["outcome"].as_str()).unwrap_or_else(|| panic!("no record for {id}"))
    }
    pub fn message(&self, id: &str) -> &str {
        self.trials[id]["message"].as_str().unwrap_or("")
    }
    pub fn outcomes(&self) -> BTreeMap<String, String> {
        self.trials.iter().map(|(id, t)| (id.clone(), t["outcome"].as_str().unwrap_or("?").to_owned())).collect()
    }
    /// `OUTCOME(detail)` per trial.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.trials
            .iter()
            .map(|(id, t)| {
                let outcome = t["outcome"].as_str().unwrap_or("?");
                let label = match t["detail"].as_str() {
                    Some(detail) => format!("{outcome}({detail})"),
                    None => outcome.to_owned(),
                };
                (id.clone(), label)
            })
            .collect()
    }
}

pub fn text(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The hostile fake adapter (`common/hostile.py`): faults picked by a word in the session id.
pub const HOSTILE_ADAPTER: &str = include_str!("hostile.py");

/// Writes the hostile adapter into `dir` and returns its command line; its marker files go to `dir`.
pub fn hostile_adapter(dir: &Path) -> String {
    let path = dir.join("hostile.py");
    std::fs::write(&path, HOSTILE_ADAPTER).expect("write hostile adapter");
    format!("FAKE_DIR='{}' python3 -u '{}'", dir.display(), path.display())
}

/// A finished run of the harness under a time limit, with its peak resident memory.
pub struct Bounded {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Highest VmRSS seen while it ran, in KiB.
    pub peak_rss_kib: u64,
    pub stdout_len: u64,
}

impl Bounded {
    pub fn log(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// Runs the built harness with `args`, killing it (and failing the test) if it runs longer than `limit`.
pub fn harness_bounded(dir: &Path, args: &[&str], envs: &[(&str, &str)], limit: std::time::Duration) -> Bounded {
    harness_driven(dir, args, envs, limit, |_| {})
}

/// Like [`harness_bounded`], calling `drive(pid)` every 20 ms while the harness runs.
pub fn harness_driven(
    dir: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    limit: std::time::Duration,
    mut drive: impl FnMut(u32),
) -> Bounded {
    let out = dir.join("harness.stdout");
    let err = dir.join("harness.stderr");
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-harness"));
    command.args(args).stdout(std::fs::File::create(&out).expect("stdout file")).stderr(std::fs::File::create(&err).expect("stderr file"));
    for (k, v) in envs {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("spawn dsh-harness");
    let started = std::time::Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        peak = peak.max(rss_kib(child.id()));
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the harness ran longer than {limit:?} (hung): {}", std::fs::read_to_string(&out).unwrap_or_default());
        }
        drive(child.id());
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stdout_len = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let read = |p: &Path| {
        let bytes = std::fs::read(p).unwrap_or_default();
        String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 20)]).into_owned()
    };
    Bounded { status, stdout: read(&out), stderr: read(&err), peak_rss_kib: peak, stdout_len }
}

/// VmRSS of a process in KiB (0 when unknown).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Whether a process is alive (running, not a zombie).
pub fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
    matches!(state, Some(s) if s != "Z" && s != "X")
}

/// Pids listed one a line in a file written by the hostile adapter.
pub fn pids(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// A fake spec dir under `dir` with the test catalog and `scenarios` (file name → text).
pub fn spec_with(dir: &Path, scenarios: &[(&str, String)]) -> PathBuf {
    let spec = dir.join("spec");
    write_files(&spec, &[("rules/t.yaml", RULES)]);
    for (file, text) in scenarios {
        write_files(&spec, &[(&format!("scenarios/t/{file}"), text.as_str())]);
    }
    spec
}

/// At most 3000 bytes of `text`, for assertion messages.
pub fn short(text: &str) -> String {
    let mut cut = text.len().min(3000);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text[..cut].to_owned()
}

/// Runs the built harness with `args` in the working directory `cwd` (its adapters inherit it).
pub fn harness_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dsh-harness")).args(args).current_dir(cwd).output().expect("run dsh-harness")
}
