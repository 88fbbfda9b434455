//! The conformance matrix: a Markdown summary of JSON Lines reports, one column per report.
//!
//! `dsh-harness matrix REPORT.jsonl... [--update README.md]` prints the tables, or replaces what lies
//! between `<!-- matrix:begin -->` and `<!-- matrix:end -->` in the given file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dsh_conformance::OutcomeName;
use dsh_conformance::report::ReportLine;

pub mod html;

const BEGIN: &str = "<!-- matrix:begin -->";
const END: &str = "<!-- matrix:end -->";

/// One report, summarised.
#[derive(Debug, Default)]
pub struct Summary {
    /// `implementation name version (subject)`.
    pub title: String,
    /// Whether the footer says every planned trial ran.
    pub complete: bool,
    /// Trials per outcome.
    pub counts: BTreeMap<OutcomeName, usize>,
    /// Per rule area: trials per outcome.
    pub areas: BTreeMap<String, BTreeMap<OutcomeName, usize>>,
    /// The line where the report was cut off (a killed run), if it was.
    pub cut_at: Option<usize>,
}

/// The `matrix` subcommand: the Markdown tables printed or spliced into `update`, and, with `html`, the
/// HTML matrix (`html.rs`) of `reports`, showing changes against `before`.
pub fn main(reports: &[PathBuf], update: Option<&Path>, html: Option<&Path>, before: &[PathBuf]) -> ExitCode {
    if let Some(target) = html {
        if let Err(e) = self::html::write(reports, before, target) {
            eprintln!("dsh-harness matrix --html: {e}");
            return ExitCode::from(2);
        }
        println!("wrote the HTML matrix {}", target.display());
    }
    let mut summaries = Vec::new();
    for path in reports {
        match summarise(path) {
            Ok(summary) => summaries.push(summary),
            Err(e) => {
                eprintln!("dsh-harness matrix: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    let table = render(&summaries);
    let Some(target) = update else {
        print!("{table}");
        return ExitCode::SUCCESS;
    };
    match splice(target, &table) {
        Ok(()) => {
            println!("updated the conformance matrix in {}", target.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dsh-harness matrix: {}: {e}", target.display());
            ExitCode::from(2)
        }
    }
}

/// A report read back: its records, and the line where it was cut off (what a killed run leaves: a last
/// line that is not a whole record).
pub struct ReadBack {
    /// The records, in order.
    pub records: Vec<ReportLine>,
    /// The 1-based line that was cut off, if the last one was.
    pub cut_at: Option<usize>,
}

/// Reads one report, line by line as `ReportLine`s; a last line that does not parse is taken as cut
/// off (`cut_at`), any other is an error naming its line.
pub fn read_back(path: &Path) -> Result<ReadBack, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let lines: Vec<(usize, &str)> = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).collect();
    let mut read = ReadBack { records: Vec::new(), cut_at: None };
    for (k, (index, line)) in lines.iter().enumerate() {
        match ReportLine::parse(line) {
            Ok(record) => read.records.push(record),
            Err(_) if k + 1 == lines.len() && k > 0 => read.cut_at = Some(index + 1),
            Err(e) => return Err(format!("line {}: not a report record: {e}", index + 1)),
        }
    }
    Ok(read)
}

/// A report's column title: `implementation name version (subject)`.
pub fn title(header: &dsh_conformance::report::Header) -> String {
    match &header.implementation {
        Some(i) => format!("{} {} ({})", i.name, i.version, header.subject),
        None => format!("(did not initialize) ({})", header.subject),
    }
}

/// Reads one report (see [`read_back`]) into its summary.
pub fn summarise(path: &Path) -> Result<Summary, String> {
    let read = read_back(path)?;
    let mut summary = Summary { cut_at: read.cut_at, ..Summary::default() };
    for record in read.records {
        match record {
            ReportLine::Header(header) => summary.title = title(&header),
            ReportLine::Trial(trial) => {
                *summary.counts.entry(trial.outcome).or_default() += 1;
                let mut areas: BTreeSet<&str> = trial.rules.iter().map(|r| r.split('-').next().unwrap_or(r)).collect();
                if areas.is_empty() {
                    areas.insert(super::junit::source_area(&trial.file));
                }
                for area in areas {
                    *summary.areas.entry(area.to_owned()).or_default().entry(trial.outcome).or_default() += 1;
                }
            }
            ReportLine::Footer(footer) => summary.complete = footer.complete,
        }
    }
    if summary.title.is_empty() {
        return Err("no header: not a dsh-harness report".into());
    }
    Ok(summary)
}

/// The Markdown tables.
pub fn render(summaries: &[Summary]) -> String {
    let mut out = String::from("| implementation | complete |");
    for outcome in OutcomeName::ALL {
        out.push_str(&format!(" {outcome} |"));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---:|".repeat(OutcomeName::ALL.len()));
    out.push('\n');
    for s in summaries {
        let complete = match s.cut_at {
            Some(line) => format!("**no** (report cut off at line {line})"),
            None if s.complete => "yes".to_owned(),
            None => "**no**".to_owned(),
        };
        out.push_str(&format!("| {} | {complete} |", md(&s.title)));
        for outcome in OutcomeName::ALL {
            out.push_str(&format!(" {} |", s.counts.get(&outcome).copied().unwrap_or(0)));
        }
        out.push('\n');
    }
    let areas: BTreeSet<&String> = summaries.iter().flat_map(|s| s.areas.keys()).collect();
    if !areas.is_empty() {
        out.push_str("\nPer rule area (passed / trials; XFAIL, SKIP and other outcomes in brackets):\n\n| area |");
        for s in summaries {
            out.push_str(&format!(" {} |", md(&s.title)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(summaries.len()));
        out.push('\n');
        for area in areas {
            out.push_str(&format!("| {} |", md(area)));
            for s in summaries {
                out.push_str(&format!(" {} |", cell(s.areas.get(area))));
            }
            out.push('\n');
        }
    }
    out
}

fn cell(counts: Option<&BTreeMap<OutcomeName, usize>>) -> String {
    let Some(counts) = counts else { return "–".into() };
    let total: usize = counts.values().sum();
    let passed = counts.get(&OutcomeName::Pass).copied().unwrap_or(0);
    let others: Vec<String> = counts
        .iter()
        .filter(|(o, _)| **o != OutcomeName::Pass)
        .map(|(o, n)| format!("{n} {o}"))
        .collect();
    if others.is_empty() { format!("{passed}/{total}") } else { format!("{passed}/{total} ({})", others.join(", ")) }
}

/// Text from a report (implementation names, versions, command lines, areas) as inert Markdown table
/// text: no `|` splits a cell, no line break ends the row, no HTML (so no `<!-- matrix:end -->` either)
/// and no emphasis, code span or link comes through; each stays visible as the character it was.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '~' | '!' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn splice(path: &Path, table: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let Some(begin) = text.find(BEGIN) else {
        return Err(format!("no `{BEGIN}` ... `{END}` markers"));
    };
    // The first end marker after the begin marker.
    let Some(end) = text[begin..].find(END).map(|at| begin + at) else {
        return Err(if text.contains(END) { format!("`{END}` comes before `{BEGIN}`") } else { format!("no `{BEGIN}` ... `{END}` markers") });
    };
    let updated = format!("{}{BEGIN}\n{table}{}", &text[..begin], &text[end..]);
    std::fs::write(path, updated).map_err(|e| e.to_string())
}
