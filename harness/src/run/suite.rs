//! The runner's bridge to `dsh-conformance`: loading the suite, applicability, and checking one scenario.
//!
//! Everything the runner needs from the conformance crate goes through this module, so the rest of the
//! runner does not change when the crate's API does.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_conformance::Scenario;
use dsh_conformance::scenario::Family;
use dsh_conformance::subject::{Subject, SubjectError, SubjectInfo};
use serde_json::{Value, json};

use super::outcome::{Outcome, Verdict};

/// One scenario to run.
pub struct Planned {
    /// The scenario id (the trial name).
    pub id: String,
    /// The file it came from, relative to the spec directory.
    pub file: String,
    /// The rules it cites.
    pub rules: Vec<String>,
    /// The scenario.
    pub scenario: Scenario,
}

/// A file that could not be loaded: one `ERROR(scenario)` trial.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// The file, relative to the spec directory.
    pub file: String,
    /// What is wrong, starting with `file:line:column` when known.
    pub message: String,
}

/// Everything loaded from a spec directory.
#[derive(Default)]
pub struct Suite {
    /// Scenarios in file order.
    pub scenarios: Vec<Planned>,
    /// Files (or scenarios) that could not be loaded.
    pub errors: Vec<LoadError>,
    /// Every rule id of the catalog.
    pub rule_ids: BTreeSet<String>,
}

/// Loads `rules/*.yaml` and `scenarios/**/*.yaml` under `spec`.
pub fn load(spec: &Path) -> Suite {
    let mut suite = Suite::default();
    for path in yaml_files(&spec.join("rules")) {
        let file = relative(spec, &path);
        match std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|text| rule_ids(&text)) {
            Ok(ids) => suite.rule_ids.extend(ids),
            Err(message) => suite.errors.push(LoadError { message: format!("{file}:{message}"), file }),
        }
    }
    let mut seen = HashSet::new();
    for path in yaml_files(&spec.join("scenarios")) {
        let file = relative(spec, &path);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                suite.errors.push(LoadError { message: format!("{file}: {e}"), file });
                continue;
            }
        };
        let scenarios = match parse_scenarios(&text) {
            Ok(scenarios) => scenarios,
            Err(message) => {
                suite.errors.push(LoadError { message: format!("{file}:{message}"), file });
                continue;
            }
        };
        for scenario in scenarios {
            let at = line_of(&text, &scenario.id);
            if !seen.insert(scenario.id.clone()) {
                let message = format!("{file}:{at}: duplicate scenario id `{}`", scenario.id);
                suite.errors.push(LoadError { file: file.clone(), message });
                continue;
            }
            let unknown: Vec<&String> = scenario.rules.iter().filter(|r| !suite.rule_ids.contains(*r)).collect();
            if let Some(rule) = unknown.first() {
                let line = line_of(&text, rule);
                let message =
                    format!("{file}:{line}: scenario `{}` cites unknown rule `{rule}` (rules are in spec/rules/)", scenario.id);
                suite.errors.push(LoadError { file: file.clone(), message });
                continue;
            }
            if scenario.rules.is_empty() {
                let message = format!("{file}:{at}: scenario `{}` cites no rule", scenario.id);
                suite.errors.push(LoadError { file: file.clone(), message });
                continue;
            }
            let (id, rules) = (scenario.id.clone(), scenario.rules.clone());
            suite.scenarios.push(Planned { id, file: file.clone(), rules, scenario });
        }
    }
    suite
}

/// Why the subject cannot run this scenario (`SKIP(not-applicable)`), if it cannot.
pub fn not_applicable(scenario: &Scenario, info: &SubjectInfo) -> Option<String> {
    let profile = scenario.profile();
    if !info.profiles.iter().any(|p| p == profile) {
        return Some(format!("profile `{profile}` not supported by {}", info.name));
    }
    let missing: Vec<&String> = scenario
        .requires
        .iter()
        .flatten()
        .filter(|f| !info.features.contains(f))
        .collect();
    if missing.is_empty() {
        None
    } else {
        Some(format!("needs {missing:?}, which {} does not declare", info.name))
    }
}

/// Runs one scenario against a subject.
pub fn check(subject: &mut dyn Subject, scenario: &Scenario, step_timeout: Duration) -> Verdict {
    // Interim until the conformance crate's checker lands: open and close the session only.
    let setup = serde_json::to_value(&scenario.setup).unwrap_or(Value::Null);
    let steps = [
        ("session/open", json!({ "session": scenario.id, "setup": setup })),
        ("session/close", json!({ "session": scenario.id })),
    ];
    let mut leaks = Value::Null;
    for (index, (method, params)) in steps.into_iter().enumerate() {
        match subject.request(method, params, step_timeout) {
            Ok(reply) => match reply.result {
                Ok(result) => leaks = result.get("leaks").cloned().unwrap_or(Value::Null),
                Err(e) => {
                    let msg = format!("`{method}` answered with JSON-RPC error {}: {}", e.code, e.message);
                    return Verdict::new(Outcome::Error, Some("adapter"), msg);
                }
            },
            Err(e) => return subject_error(e, &format!("step {index} ({method})")),
        }
    }
    if !scenario.steps.is_empty() {
        return Verdict::new(Outcome::Error, Some("harness"), "the scenario checker has not landed in dsh-conformance yet");
    }
    let clean = json!({ "pendingCalls": [], "unopenedGates": [], "liveTasks": 0 });
    if leaks == clean {
        Verdict::new(Outcome::Pass, None, "")
    } else {
        Verdict::new(Outcome::Fail, None, format!("session/close reported leaks: {leaks}"))
    }
}

/// The verdict for a request that got no well-formed reply.
pub fn subject_error(error: SubjectError, step: &str) -> Verdict {
    match error {
        SubjectError::Timeout { method, waited } => Verdict::new(
            Outcome::Timeout,
            Some(step),
            format!("{step}: `{method}` got no answer within {:.1} s", waited.as_secs_f64()),
        ),
        SubjectError::Crash { status, stderr_tail } => Verdict::new(
            Outcome::Crash,
            Some(&status),
            format!("crashed ({status}) at {step}; stderr tail:\n{stderr_tail}"),
        ),
        SubjectError::Protocol { message } => {
            Verdict::new(Outcome::Error, Some("adapter"), format!("{step}: {message}"))
        }
    }
}

fn rule_ids(text: &str) -> Result<Vec<String>, String> {
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| yaml_error(&e))?;
    let rules = doc.get("rules").and_then(serde_yaml::Value::as_sequence).ok_or(" no `rules:` list")?;
    Ok(rules.iter().filter_map(|r| r.get("id")?.as_str().map(str::to_owned)).collect())
}

fn parse_scenarios(text: &str) -> Result<Vec<Scenario>, String> {
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| yaml_error(&e))?;
    if doc.get("scenarios").is_some() {
        let family: Family = serde_yaml::from_str(text).map_err(|e| yaml_error(&e))?;
        Ok(family.scenarios)
    } else {
        let scenario: Scenario = serde_yaml::from_str(text).map_err(|e| yaml_error(&e))?;
        Ok(vec![scenario])
    }
}

/// `line:column: message` of a YAML error (the caller puts the file in front).
fn yaml_error(e: &serde_yaml::Error) -> String {
    match e.location() {
        Some(at) => format!("{}:{}: {e}", at.line(), at.column()),
        None => format!(" {e}"),
    }
}

/// The first line mentioning `needle` (1-based), or 1.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).map_or(1, |i| i + 1)
}

fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).display().to_string()
}

/// `.yaml`/`.yml` files under `dir`, recursively, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
