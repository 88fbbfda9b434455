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
