//! `dsh-harness explain ID`: what one trial checks, for someone going from a failing trial to its source —
//! the file and line, its rules with their statements and notes, and its setup and steps (a corpus group:
//! its description and tests; an SDK case: its language and tool count).
//!
//! The trials that are not checks are explained too, since their failure header suggests `explain` as
//! well: a file that did not load (its id is the file: every problem in it), and a problem of the
//! expectations file (its id is `FILE:LINE`: the problem as the file reads now, and the entry at that line).
//! A `#N` suffix (`unique` names repeated ids so) is ignored.
//!
//! Values are printed as compact JSON cut to [`SHOWN`] bytes each; the whole command runs on a large
//! stack because corpus values nest 100,000 levels deep.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use dsh_conformance::catalog::Catalog;

use super::suite;

/// Longest JSON text shown for one value.
const SHOWN: usize = 1_500;

/// The `explain` subcommand: prints the trial, or says that no trial has this id (exit status 2).
pub fn main(id: &str, spec: &Path) -> ExitCode {
    let (id, spec) = (id.to_owned(), spec.to_owned());
    let worker = std::thread::Builder::new().stack_size(256 << 20).spawn(move || explain(&id, &spec));
    match worker.map(|h| h.join()) {
        Ok(Ok(Ok(text))) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Ok(Err(e))) => {
            eprintln!("dsh-harness explain: {e}");
            ExitCode::from(2)
        }
        _ => {
            eprintln!("dsh-harness explain: the explaining thread failed");
            ExitCode::from(2)
        }
    }
}

/// The text `explain` prints for `id`, or why there is none.
pub fn explain(id: &str, spec: &Path) -> Result<String, String> {
    if !spec.is_dir() {
        return Err(format!("--spec {}: no such directory", spec.display()));
    }
    let mut loaded = suite::load(spec, &suite::default_corpus(spec), &suite::default_sdk_corpus(spec), suite::Sources::ALL);
    let mut out = String::new();
    if let Some(p) = loaded.scenarios.iter().find(|p| p.id == id) {
        let s = &p.scenario;
        let _ = writeln!(out, "{id}\n  at {}:{}\n  level {}, profile {}", p.file, p.line, s.level.as_str(), s.profile());
        let _ = writeln!(out, "  {}", s.description.trim());
        let needs = dsh_conformance::features::required_features(s);
        if !needs.is_empty() {
            let _ = writeln!(out, "  needs: {}", needs.into_iter().collect::<Vec<_>>().join(", "));
        }
        rules(&mut out, &p.rules, &loaded.catalog);
        if let Some(setup) = &s.setup {
            let _ = writeln!(out, "setup:\n  {}", json(setup));
        }
        let _ = writeln!(out, "steps:");
        for (n, step) in s.steps.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", n + 1, json(step));
        }
    } else if let Some(at) = loaded.groups.iter().position(|g| g.id() == id) {
        let g = loaded.groups.swap_remove(at).load()?;
        let _ = writeln!(out, "{id}\n  in {} (validation corpus: one session, schema/* requests)\n  {}", g.file, g.description.trim());
        rules(&mut out, &g.rules, &loaded.catalog);
        let input = match &g.input {
            dsh_conformance::corpus::Input::Raw(schema) => format!("schema/check + schema/validate of {}", deep(schema)),
            dsh_conformance::corpus::Input::Dsl { kind, .. } => format!("schema/compile of a `{kind}` DSL spec"),
            dsh_conformance::corpus::Input::Register { name, .. } => {
                format!("tool fixture {name:?} registered at session start, then tools/schemas and tools/get")
            }
        };
        let _ = writeln!(out, "input: {input}");
        if let Some(unsupported) = &g.unsupported {
            let _ = writeln!(out, "expected to be refused with: {}", unsupported.message);
        }
        let _ = writeln!(out, "tests:");
        for (n, t) in g.tests.iter().enumerate() {
            let verdict = if t.violations.is_empty() { "valid".to_owned() } else { t.violations.join("; ") };
            let _ = writeln!(out, "  {}. {} → {verdict}\n     value: {}", n + 1, t.description.trim(), deep(&t.data));
        }
    } else if let Some(at) = loaded.sdk.iter().position(|c| c.id() == id) {
        let c = loaded.sdk.swap_remove(at).load()?;
        let _ = writeln!(out, "{id}\n  in {} (SDK corpus: sdk/render, language {})", c.file, c.language);
        rules(&mut out, &c.rules, &loaded.catalog);
        let _ = writeln!(out, "tools: {}\nexpected text ({} lines):\n{}", deep(&c.tools), c.expected.lines().count(), cut(&c.expected));
    } else if let Some(text) = not_a_check(id, &loaded) {
        out = text;
    } else {
        let near: Vec<&str> = loaded
            .scenarios
            .iter()
            .map(|p| p.id.as_str())
            .chain(loaded.groups.iter().map(|g| g.id()))
            .chain(loaded.sdk.iter().map(|c| c.id()))
            .filter(|t| t.contains(id) || id.contains(*t))
            .take(10)
            .collect();
        let hint = if near.is_empty() { String::from(" (`dsh-harness --list` lists every trial)") } else { format!("; ids containing it: {}", near.join(", ")) };
        return Err(format!("no trial has the id `{id}` in {}{hint}", spec.display()));
    }
    Ok(out)
}

/// A trial that checks nothing: a file that did not load, or a problem of an expectations file.
fn not_a_check(id: &str, loaded: &suite::Suite) -> Option<String> {
    let name = match id.rsplit_once('#') {
        Some((name, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => id,
    };
    let errors: Vec<&suite::LoadError> = loaded.errors.iter().filter(|e| e.file == name).collect();
    if !errors.is_empty() {
        let mut out = format!("{id}\n  {name} did not load (ERROR(scenario)): none of its trials ran\nproblems:\n");
        for e in errors {
            for line in e.message.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        return Some(out);
    }
    let (path, line) = name.rsplit_once(':')?;
    let line: usize = line.parse().ok()?;
    let text = std::fs::read_to_string(path).ok()?;
    let known: std::collections::HashSet<&str> = loaded
        .scenarios
        .iter()
        .map(|p| p.id.as_str())
        .chain(loaded.groups.iter().map(|g| g.id()))
        .chain(loaded.sdk.iter().map(|c| c.id()))
        .collect();
    let (_, problems) = super::expectations::Expectations::parse(&text, |t| known.contains(t));
    let mut out = format!("{id}\n  a problem of the expectations file {path} at line {line} (ERROR(harness)): that entry does not apply, the others do\n");
    let here: Vec<_> = problems.iter().filter(|p| p.line == line).collect();
    if here.is_empty() {
        out.push_str("problem: none at this line as the file reads now (edited since the run?)\n");
    }
    for p in here {
        let _ = writeln!(out, "problem: {}", p.message);
        if let Some(unknown) = p.message.strip_prefix("unknown scenario id `").and_then(|m| m.split('`').next()) {
            let near: Vec<&str> = known.iter().copied().filter(|t| t.contains(unknown) || unknown.contains(*t)).take(10).collect();
            if !near.is_empty() {
                let _ = writeln!(out, "  ids containing it: {}", near.join(", "));
            }
        }
    }
    let lines: Vec<&str> = text.lines().collect();
    // The entry holding the line: from the `-` that starts it to the next one.
    let start = (0..line.min(lines.len())).rev().find(|&i| lines[i].starts_with('-')).unwrap_or(line.saturating_sub(1));
    let end = (start + 1..lines.len()).find(|&i| lines[i].starts_with('-')).unwrap_or(lines.len()).min(start + 20);
    let _ = writeln!(out, "entry ({path}:{}):", start + 1);
    for (n, text) in lines.iter().enumerate().take(end).skip(start) {
        let _ = writeln!(out, "  {:>4} | {text}", n + 1);
    }
    Some(out)
}

fn rules(out: &mut String, ids: &[String], catalog: &Catalog) {
    if ids.is_empty() {
        let _ = writeln!(out, "rules: (none cited)");
    } else {
        let _ = writeln!(out, "rules:");
    }
    for id in ids {
        match catalog.get(id) {
            Some(rule) => {
                let _ = writeln!(out, "  {id} ({}, {}:{}): {}", rule.level.as_str(), rule.file.display(), rule.line, rule.statement.trim());
                if let Some(notes) = &rule.notes {
                    let _ = writeln!(out, "    notes: {}", notes.trim());
                }
                let _ = writeln!(out, "    source: {}", rule.source.trim());
            }
            None => {
                let _ = writeln!(out, "  {id}: (not in the catalog)");
            }
        }
    }
}

fn json(value: &impl serde::Serialize) -> String {
    cut(&serde_json::to_string(value).unwrap_or_else(|e| format!("(cannot show: {e})")))
}

/// A value that may nest 100,000 levels, written without recursion.
fn deep(value: &dsh_conformance::json::Deep) -> String {
    cut(&dsh_conformance::json::write(&value.0, false))
}

fn cut(text: &str) -> String {
    if text.len() <= SHOWN {
        return text.to_owned();
    }
    let mut end = SHOWN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}
