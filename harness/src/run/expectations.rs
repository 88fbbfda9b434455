//! The expectations file of one implementation: which scenarios fail, how, and why.
//!
//! ```yaml
//! - id: reg-duplicate-global-name-throws
//!   outcome: FAIL          # FAIL | ERROR | TIMEOUT | CRASH | SKIP
//!   reason: upstream keeps the second registration (issue #12)
//! ```
//! Strict both ways: an unlisted failure fails the run; a listed scenario that passes is XPASS and fails
//! the run; a listed failure with a different outcome fails the run; an unknown id, a duplicate id, a
//! missing reason or an unknown outcome is an error. `SKIP` entries are not run at all. Each entry is
//! checked on its own: a bad entry is a problem at its own line (an unknown field at the field's line)
//! and every other entry still applies.
//!
//! `--update-expectations FILE` rewrites a file from a run (`rewrite`): an entry whose outcome happened
//! again keeps its reason (and `issue`), a trial that passed loses its entry, a new or changed failure gets
//! the reason [`PLACEHOLDER`], which is a problem when the file is next loaded, so nobody forgets to say
//! why. Entries of trials the run did not select (a filter) are kept as they were.

use std::collections::HashMap;
use std::path::Path;

use dsh_conformance::OutcomeName;
use serde::Deserialize;

use super::verdict::Verdict;

mod rewrite;
pub use rewrite::rewrite;

/// One entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The expected outcome.
    pub outcome: OutcomeName,
    /// Why (required).
    pub reason: String,
}

/// A loaded expectations file.
#[derive(Debug, Default)]
pub struct Expectations {
    entries: HashMap<String, Entry>,
}

/// A problem in the expectations file, at a line.
#[derive(Debug, Clone)]
pub struct Problem {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The reason `--update-expectations` gives a new entry; loading a file that still has it is a problem.
pub const PLACEHOLDER: &str = "TODO(update-expectations): say why this fails";

/// The fields of an entry.
const FIELDS: [&str; 4] = ["id", "outcome", "reason", "issue"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    id: String,
    outcome: String,
    reason: Option<String>,
    issue: Option<String>,
}

impl Expectations {
    /// Loads `path`, checking every id with `known` (whether the suite has a trial of that id).
    pub fn load(path: &Path, known: impl Fn(&str) -> bool) -> (Expectations, Vec<Problem>) {
        match dsh_conformance::files::read_text(path) {
            Ok(text) => Expectations::parse(&text, known),
            Err(e) => (Expectations::default(), vec![Problem { line: e.line, message: e.message }]),
        }
    }

    /// Parses the text of an expectations file, checking every id with `known` (whether the suite has a
    /// trial of that id).
    pub fn parse(text: &str, known: impl Fn(&str) -> bool) -> (Expectations, Vec<Problem>) {
        let mut problems = Vec::new();
        let doc = match dsh_conformance::yaml::parse(text) {
            Ok(doc) => doc,
            Err(e) => return (Expectations::default(), vec![Problem { line: e.pos.line, message: e.message }]),
        };
        let positions = doc.positions;
        let items = match doc.value {
            serde_json::Value::Array(items) => items,
            serde_json::Value::Null => Vec::new(),
            _ => {
                let message = "expected a list of {id, outcome, reason} entries".to_owned();
                return (Expectations::default(), vec![Problem { line: positions.node("").value.line, message }]);
            }
        };
        let mut entries = HashMap::new();
        for (index, item) in items.into_iter().enumerate() {
            let at = format!("/{index}");
            let line = positions.node(&at).value.line;
            let mut problem = |line: usize, message: String| problems.push(Problem { line, message });
            if let Some(map) = item.as_object() {
                let unknown: Vec<&String> = map.keys().filter(|k| !FIELDS.contains(&k.as_str())).collect();
                if let Some(key) = unknown.first() {
                    let mut pointer = at.clone();
                    dsh_conformance::yaml::push_pointer(&mut pointer, key);
                    let fields = FIELDS.join(", ");
                    problem(positions.field(&pointer).line, format!("entry {}: unknown field `{key}` (an entry has {fields})", index + 1));
                    continue;
                }
            }
            let entry: RawEntry = match serde_json::from_value(item) {
                Ok(entry) => entry,
                Err(e) => {
                    problem(line, format!("entry {}: expected {{id, outcome, reason}}: {e}", index + 1));
                    continue;
                }
            };
            let outcome = match OutcomeName::parse(&entry.outcome) {
                Some(o @ (OutcomeName::Fail | OutcomeName::Error | OutcomeName::Timeout | OutcomeName::Crash | OutcomeName::Skip)) => o,
                _ => {
                    problem(line, format!("`{}`: outcome `{}` is not one of FAIL, ERROR, TIMEOUT, CRASH, SKIP", entry.id, entry.outcome));
                    continue;
                }
            };
            let reason = match entry.reason.map(|r| r.trim().to_owned()) {
                Some(r) if r.starts_with(PLACEHOLDER) => {
                    problem(line, format!("`{}`: the reason is still the placeholder --update-expectations wrote: say why it fails", entry.id));
                    continue;
                }
                Some(r) if !r.is_empty() => r,
                _ => {
                    problem(line, format!("`{}`: every entry needs a `reason`", entry.id));
                    continue;
                }
            };
            if !known(entry.id.as_str()) {
                problem(line, format!("unknown scenario id `{}` (stale entry, or a typo?)", entry.id));
                continue;
            }
            if entries.contains_key(&entry.id) {
                problem(line, format!("`{}` is listed twice", entry.id));
                continue;
            }
            let reason = match entry.issue {
                Some(issue) => format!("{reason} ({issue})"),
                None => reason,
            };
            entries.insert(entry.id, Entry { outcome, reason });
        }
        (Expectations { entries }, problems)
    }

    /// The entry for a scenario id.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.get(id)
    }
}

/// Applies the entry (if any) to a scenario's verdict.
pub fn apply(entry: Option<&Entry>, mut verdict: Verdict) -> Verdict {
    let Some(entry) = entry else { return verdict };
    let label = verdict.label();
    match verdict.outcome {
        OutcomeName::Pass => {
            verdict.outcome = OutcomeName::Xpass;
            verdict.detail = None;
            verdict.message = format!(
                "listed as {} ({}) but passed: the entry is stale, remove it from the expectations file",
                entry.outcome, entry.reason
            );
        }
        OutcomeName::Skip => {}
        outcome if outcome == entry.outcome => {
            verdict.outcome = OutcomeName::Xfail;
            verdict.detail = Some(label);
            verdict.message = format!("expected: {}\n{}", entry.reason, verdict.message);
        }
        _ => {
            verdict.message = format!("listed as {} ({}), but got {label}: {}", entry.outcome, entry.reason, verdict.message);
        }
    }
    verdict
}
