//! `--update-expectations FILE`: an expectations file rewritten from a run's trial records.
//!
//! The entries are read from the `--expectations` file of the run (else from `FILE` when it exists), kept
//! in their order, and judged against the run: XFAIL keeps its entry untouched, PASS and XPASS drop it, a
//! failure of another outcome than listed gets the new outcome and the placeholder reason (the old one is
//! kept after it, to help write the new one), and a failure with no entry is appended with the placeholder.
//! `SKIP` entries, and entries of trials the run did not select, stay as they are. Load-error trials and
//! `(after close)` records are not trials an entry can name, so they never get one.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use dsh_conformance::OutcomeName;
use dsh_conformance::report::TrialLine;
use serde_json::Value;

use super::PLACEHOLDER;

/// One entry as written.
#[derive(Debug, Clone, PartialEq)]
struct Written {
    id: String,
    outcome: String,
    reason: String,
    issue: Option<String>,
}

/// Rewrites `path` from `trials`, starting from the entries of `current` (else `path` itself, when it
/// exists); returns a one-line summary of what changed.
pub fn rewrite(path: &Path, current: Option<&Path>, trials: &[TrialLine]) -> Result<String, String> {
    let source = current.map(Path::to_path_buf).or_else(|| path.is_file().then(|| path.to_path_buf()));
    let (comments, old) = match &source {
        Some(source) => {
            let text = std::fs::read_to_string(source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
            (leading_comments(&text), entries(&text).map_err(|e| format!("{}: {e}", source.display()))?)
        }
        None => (String::new(), Vec::new()),
    };
    let (text, summary) = updated(&comments, old, trials);
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!("--update-expectations: wrote {}: {summary}", path.display()))
}

/// The new file text and a summary, from the old entries and the run.
fn updated(comments: &str, old: Vec<Written>, trials: &[TrialLine]) -> (String, String) {
    let ran: HashMap<&str, &TrialLine> = trials.iter().filter(|t| nameable(t)).map(|t| (t.id.as_str(), t)).collect();
    let (mut kept, mut changed, mut dropped, mut added) = (0, 0, 0, 0);
    let mut out: Vec<Written> = Vec::new();
    let mut listed = HashSet::new();
    for entry in old {
        listed.insert(entry.id.clone());
        let Some(trial) = ran.get(entry.id.as_str()) else {
            kept += 1;
            out.push(entry);
            continue;
        };
        match trial.outcome {
            OutcomeName::Xfail | OutcomeName::Skip => {
                kept += 1;
                out.push(entry);
            }
            OutcomeName::Pass | OutcomeName::Xpass => dropped += 1,
            outcome => {
                changed += 1;
                let reason = format!("{PLACEHOLDER} (it was listed as {}: {})", entry.outcome, entry.reason);
                out.push(Written { outcome: outcome.to_string(), reason, ..entry });
            }
        }
    }
    for trial in trials.iter().filter(|t| nameable(t) && !listed.contains(&t.id)) {
        if matches!(trial.outcome, OutcomeName::Fail | OutcomeName::Error | OutcomeName::Timeout | OutcomeName::Crash) {
            added += 1;
            out.push(Written { id: trial.id.clone(), outcome: trial.outcome.to_string(), reason: PLACEHOLDER.to_owned(), issue: None });
        }
    }
    let mut text = if comments.is_empty() {
        "# What this implementation does not pass, with reasons (harness/src/run/expectations.rs).\n".to_owned()
    } else {
        comments.to_owned()
    };
    for entry in &out {
        write_entry(&mut text, entry);
    }
    let summary = format!(
        "{} entries ({kept} kept, {changed} with a changed outcome, {added} new, {dropped} dropped as passing); \
         {} placeholder reason(s) to write before the next run",
        out.len(),
        changed + added
    );
    (text, summary)
}

/// Whether an expectations entry can name this record: not a load error, not a stray record.
fn nameable(trial: &TrialLine) -> bool {
    let load_error = trial.rules.is_empty() && trial.outcome == OutcomeName::Error;
    !load_error && !trial.id.ends_with(" (after close)")
}

/// The comment lines at the top of a file, kept as the new file's head.
fn leading_comments(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with('#') {
            out.push_str(line);
            out.push('\n');
        } else if !line.trim().is_empty() {
            break;
        }
    }
    out
}

/// The entries of an expectations file as written (a malformed file is an error: nothing is rewritten).
fn entries(text: &str) -> Result<Vec<Written>, String> {
    let doc = dsh_conformance::yaml::parse(text).map_err(|e| format!("line {}: {}", e.pos.line, e.message))?;
    let items = match doc.value {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        _ => return Err("expected a list of {id, outcome, reason} entries".into()),
    };
    let field = |item: &Value, name: &str| item.get(name).and_then(Value::as_str).map(str::to_owned);
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let missing = |name: &str| format!("entry {}: no `{name}` (fix the file, then update it)", n + 1);
            Ok(Written {
                id: field(item, "id").ok_or_else(|| missing("id"))?,
                outcome: field(item, "outcome").ok_or_else(|| missing("outcome"))?,
                reason: field(item, "reason").unwrap_or_default().trim().to_owned(),
                issue: field(item, "issue"),
            })
        })
        .collect()
}

fn write_entry(out: &mut String, entry: &Written) {
    let _ = writeln!(out, "- id: {}", quoted(&entry.id));
    let _ = writeln!(out, "  outcome: {}", entry.outcome);
    // Folded only when every character stands for itself in a block scalar: no line break of any kind
    // (YAML 1.1 counts U+0085, U+2028, U+2029), no BOM, no control character, no tab, single spaces.
    let foldable = !entry.reason.is_empty()
        && entry.reason.chars().all(|c| c != '\t' && plain(c))
        && !entry.reason.contains("  ")
        && entry.reason.trim() == entry.reason
        && !entry.reason.starts_with('#');
    if foldable {
        // A folded scalar joins its lines with one space: wrapping at single spaces reads back exactly.
        out.push_str("  reason: >-\n");
        let mut line = String::new();
        for word in entry.reason.split(' ') {
            if !line.is_empty() && line.len() + 1 + word.len() > 100 {
                let _ = writeln!(out, "    {line}");
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        let _ = writeln!(out, "    {line}");
    } else {
        let _ = writeln!(out, "  reason: {}", quoted(&entry.reason));
    }
    if let Some(issue) = &entry.issue {
        let _ = writeln!(out, "  issue: {}", quoted(issue));
    }
}

/// A YAML double-quoted scalar: every character that is not [`plain`] is escaped (`\uXXXX`,
/// `\UXXXXXXXX`), so a reader sees exactly `s` — JSON's escaping leaves U+0085, U+2028, U+2029, U+FEFF,
/// DEL and the C1 controls raw, which a YAML reader folds or refuses.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if plain(c) => out.push(c),
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

/// Whether `c` is a printable YAML character that is not a line break or a BOM (a tab is written as is).
fn plain(c: char) -> bool {
    matches!(c, '\t' | ' '..='~') || (c >= '\u{A0}' && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::expectations::Expectations;

    fn trial(id: &str, outcome: OutcomeName) -> TrialLine {
        TrialLine {
            id: id.into(),
            file: "f".into(),
            rules: vec!["REG-001".into()],
            outcome,
            detail: None,
            message: String::new(),
            duration_ms: 0,
            expected: None,
            transcript: None,
        }
    }

    #[test]
    fn kept_reasons_read_back_and_placeholders_fail_the_next_load() {
        let long = "a reason long enough to be folded over more than one line of the rewritten file, word after word after word, until it wraps";
        let old = format!(
            "# head\n- id: a\n  outcome: FAIL\n  reason: {long}\n  issue: \"#12\"\n- id: b\n  outcome: FAIL\n  reason: gone\n\
             - id: c\n  outcome: CRASH\n  reason: was a crash\n- id: z\n  outcome: SKIP\n  reason: not selected\n"
        );
        let trials = vec![
            trial("a", OutcomeName::Xfail),
            trial("b", OutcomeName::Xpass),
            trial("c", OutcomeName::Timeout),
            trial("d", OutcomeName::Fail),
            trial("e", OutcomeName::Pass),
            TrialLine { rules: vec![], ..trial("spec/scenarios/broken.yaml", OutcomeName::Error) },
        ];
        let (text, summary) = updated(&leading_comments(&old), entries(&old).unwrap_or_default(), &trials);
        assert!(summary.starts_with("4 entries (2 kept, 1 with a changed outcome, 1 new, 1 dropped"), "{summary}");
        assert!(text.starts_with("# head\n- id: \"a\"\n  outcome: FAIL\n  reason: >-\n"), "{text}");
        let known: HashSet<&str> = ["a", "b", "c", "d", "e", "z"].into_iter().collect();
        let (loaded, problems) = Expectations::parse(&text, |id| known.contains(id));
        assert_eq!(loaded.get("a").map(|e| e.reason.clone()), Some(format!("{long} (#12)")), "{text}");
        assert_eq!(loaded.get("z").map(|e| e.outcome), Some(OutcomeName::Skip));
        let failing: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(failing.len(), 2, "{failing:?}\n{text}");
        assert!(failing.iter().all(|m| m.contains("placeholder")), "{failing:?}");
        assert!(text.contains("(it was listed as CRASH: was a crash)"), "{text}");
        assert!(!text.contains("broken.yaml") && !text.contains("id: \"b\"") && !text.contains("id: \"e\""), "{text}");
    }
}
