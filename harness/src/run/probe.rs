//! `dsh-harness probe FILE.yaml [--adapter CMD]`: one scenario file written on the spot, run against the
//! in-process reference and (when given) an adapter, each transcript printed, then their difference.
//!
//! A probe is a scenario file like those under `spec/scenarios/` (one scenario or a family), with three
//! conveniences for a file written in a hurry: a missing `id`, `level` or `description` is filled in
//! (`probe`, `must`, `probe`), and a missing `rules` cites `PROBE-000`, a rule that exists only here — the
//! filled-in lines go above the file's own, so the file's line numbers in an error are shifted by as many
//! (the message says how many). Whether the adapter's run would be SKIP (a feature it does not declare) is
//! said, and the probe runs anyway. Exit status: 0 when every run passed, 1 when one did not, 2 when the
//! file could not be loaded or an adapter not started.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use dsh_conformance::catalog::Rule;
use dsh_conformance::subject::Subject;
use dsh_conformance::scenario::Level;
use dsh_conformance::{OutcomeName, Scenario};

use super::{pool, suite};

/// The rule a probe without `rules` cites.
pub const PROBE_RULE: &str = "PROBE-000";

/// What `probe` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The scenario file.
    pub file: PathBuf,
    /// The adapter command, if any.
    pub adapter: Option<String>,
    /// The spec directory whose rules a probe may cite.
    pub spec: PathBuf,
    /// Per-request timeout.
    pub step_timeout: Duration,
}

/// The `probe` subcommand, on a large stack (the in-process reference's checks run on one in a run too).
pub fn main(probe: Probe) -> ExitCode {
    let worker = std::thread::Builder::new().stack_size(256 << 20).spawn(move || run(&probe));
    let code = match worker.map(|h| h.join()) {
        Ok(Ok(Ok(text))) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Ok(Err((text, code)))) => {
            print!("{text}");
            ExitCode::from(code)
        }
        _ => {
            eprintln!("dsh-harness probe: the probing thread failed");
            ExitCode::from(2)
        }
    };
    crate::adapter::kill_all();
    code
}

/// The text `probe` prints; `Err` carries the text and the exit status when something did not pass.
pub fn run(probe: &Probe) -> Result<String, (String, u8)> {
    let fail = |message: String| Err((format!("dsh-harness probe: {message}\n"), 2));
    let text = match dsh_conformance::files::read_text(&probe.file) {
        Ok(text) => text,
        Err(e) => return fail(format!("{}: {}", probe.file.display(), e.message)),
    };
    let (text, added) = with_defaults(&text);
    let mut catalog = dsh_conformance::load_suite(&probe.spec).catalog;
    catalog.rules.insert(PROBE_RULE.to_owned(), probe_rule());
    let mut seen = Default::default();
    let scenarios = match dsh_conformance::loader::load_scenarios_text(&probe.file, &text, &catalog, &mut seen) {
        Ok((loaded, duplicates)) if duplicates.is_empty() => loaded,
        Ok((_, errors)) | Err(errors) => {
            let shift = if added > 0 { format!(" (lines counted with the {added} filled-in line(s) above the file's first)") } else { String::new() };
            let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return fail(format!("{} does not load{shift}:\n{}", probe.file.display(), list.join("\n")));
        }
    };
    let mut out = String::new();
    let mut passed = true;
    for loaded in scenarios {
        let scenario = loaded.scenario;
        let _ = writeln!(out, "# probe {} ({}:{})", scenario.id, probe.file.display(), loaded.line);
        let reference = match side(&mut *pool_subject(pool::in_process())?, &scenario, probe.step_timeout) {
            Ok(side) => side,
            Err(e) => return fail(format!("the in-process reference: {e}")),
        };
        passed &= reference.outcome == OutcomeName::Pass;
        print_side(&mut out, "reference (in-process)", &reference);
        let Some(command) = &probe.adapter else { continue };
        let mut subject = match crate::adapter::AdapterSubject::spawn(command, probe.step_timeout) {
            Ok(subject) => subject,
            Err(e) => return fail(format!("--adapter {command}: {}", pool::describe(&e))),
        };
        let adapter = match side(&mut subject, &scenario, probe.step_timeout) {
            Ok(side) => side,
            Err(e) => return fail(format!("--adapter {command}: {e}")),
        };
        passed &= adapter.outcome == OutcomeName::Pass;
        print_side(&mut out, &format!("adapter ({command})"), &adapter);
        let (a, b) = (reference.transcript.join("\n"), adapter.transcript.join("\n"));
        if a == b {
            out.push_str("== difference: none (the transcripts are identical)\n");
        } else {
            let diff = dsh_conformance::diff::unified(&a, &b).replacen("--- expected\n+++ actual\n", "--- reference\n+++ adapter\n", 1);
            let _ = write!(out, "== difference (- reference, + adapter)\n{diff}");
            if !diff.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    if passed { Ok(out) } else { Err((out, 1)) }
}

/// One subject's run of the scenario.
struct Side {
    outcome: OutcomeName,
    label: String,
    message: String,
    skip: Option<String>,
    transcript: Vec<String>,
}

fn pool_subject(factory: pool::Factory) -> Result<Box<dyn Subject>, (String, u8)> {
    factory().map_err(|e| (format!("dsh-harness probe: the in-process reference: {}\n", pool::describe(&e)), 2))
}

/// Initializes `subject`, runs the scenario and takes the whole transcript, whatever the outcome.
fn side(subject: &mut dyn Subject, scenario: &Scenario, step_timeout: Duration) -> Result<Side, String> {
    let info = subject.initialize().map_err(|e| format!("initialize: {}", pool::describe(&e)))?;
    let skip = suite::not_applicable(scenario, &info);
    subject.discard_transcript();
    let (verdict, _) = suite::check(subject, scenario, step_timeout);
    let mut transcript = verdict.transcript.clone();
    transcript.extend(subject.take_transcript());
    let tail = subject.stderr_tail();
    let verdict = suite::with_stderr(verdict, &tail);
    Ok(Side { outcome: verdict.outcome, label: verdict.label(), message: verdict.message, skip, transcript })
}

fn print_side(out: &mut String, name: &str, side: &Side) {
    let _ = writeln!(out, "== {name}: {}", side.label);
    if let Some(reason) = &side.skip {
        let _ = writeln!(out, "(a run would SKIP this here: {reason}; probed anyway)");
    }
    if !side.message.is_empty() {
        let _ = writeln!(out, "{}", side.message.trim_end());
    }
    let _ = writeln!(out, "-- transcript ({} lines)", side.transcript.len());
    for line in &side.transcript {
        let _ = writeln!(out, "{line}");
    }
}

/// `text` with a line for each of `id`, `level`, `description` and `rules` a single scenario lacks, put
/// above its own lines (after a `---` that opens it), and how many lines were added. A family, or text
/// that is not a mapping, is left as it is (the loader says what is wrong).
pub fn with_defaults(text: &str) -> (String, usize) {
    let Ok(doc) = dsh_conformance::yaml::parse(text) else { return (text.to_owned(), 0) };
    let Some(map) = doc.value.as_object() else { return (text.to_owned(), 0) };
    if map.contains_key("scenarios") {
        return (text.to_owned(), 0);
    }
    let defaults = [("id", "probe".to_owned()), ("level", "must".to_owned()), ("description", "probe".to_owned()), ("rules", format!("[{PROBE_RULE}]"))];
    let head: Vec<String> = defaults.iter().filter(|(k, _)| !map.contains_key(*k)).map(|(k, v)| format!("{k}: {v}\n")).collect();
    if head.is_empty() {
        return (text.to_owned(), 0);
    }
    let (start, rest) = match text.split_once('\n') {
        Some((first, rest)) if first.trim_end() == "---" => (format!("{first}\n"), rest),
        _ => (String::new(), text),
    };
    (format!("{start}{}{rest}", head.concat()), head.len())
}

fn probe_rule() -> Rule {
    Rule {
        id: PROBE_RULE.to_owned(),
        area: "PROBE".to_owned(),
        statement: "A probe written on the spot cites no rule.".to_owned(),
        source: "dsh-harness probe".to_owned(),
        level: Level::Must,
        profile: dsh_conformance::scenario::DEFAULT_PROFILE.to_owned(),
        observable: true,
        reason: None,
        notes: None,
        file: Path::new("(probe)").to_path_buf(),
        line: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_header_fields_are_filled_in_above_the_files_lines() {
        let (text, added) = with_defaults("steps: []\n");
        assert_eq!((text.as_str(), added), ("id: probe\nlevel: must\ndescription: probe\nrules: [PROBE-000]\nsteps: []\n", 4));
        let (text, added) = with_defaults("---\nid: mine\nrules: [REG-001]\nsteps: []\n");
        assert_eq!((text.as_str(), added), ("---\nlevel: must\ndescription: probe\nid: mine\nrules: [REG-001]\nsteps: []\n", 2));
        let family = "scenarios:\n  - id: a\n";
        assert_eq!(with_defaults(family), (family.to_owned(), 0));
    }
}
