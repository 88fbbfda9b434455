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

/// Reads one report, line by line as `ReportLine`s.
pub fn summarise(path: &Path) -> Result<Summary, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut summary = Summary::default();
    for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let record = ReportLine::parse(line).map_err(|e| format!("line {}: not a report record: {e}", index + 1))?;
        match record {
            ReportLine::Header(header) => {
                summary.title = match &header.implementation {
                    Some(i) => format!("{} {} ({})", i.name, i.version, header.subject),
                    None => format!("(did not initialize) ({})", header.subject),
                };
            }
            ReportLine::Trial(trial) => {
                *summary.counts.entry(trial.outcome).or_default() += 1;
                let areas: BTreeSet<&str> = trial.rules.iter().map(|r| r.split('-').next().unwrap_or(r)).collect();
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
        out.push_str(&format!("| {} | {} |", s.title, if s.complete { "yes" } else { "**no**" }));
        for outcome in OutcomeName::ALL {
            out.push_str(&format!(" {} |", s.counts.get(&outcome).copied().unwrap_or(0)));
        }
        out.push('\n');
    }
    let areas: BTreeSet<&String> = summaries.iter().flat_map(|s| s.areas.keys()).collect();
    if !areas.is_empty() {
        out.push_str("\nPer rule area (passed / trials; XFAIL, SKIP and other outcomes in brackets):\n\n| area |");
        for s in summaries {
            out.push_str(&format!(" {} |", s.title));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(summaries.len()));
        out.push('\n');
        for area in areas {
            out.push_str(&format!("| {area} |"));
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

fn splice(path: &Path, table: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        return Err(format!("no `{BEGIN}` ... `{END}` markers"));
    };
    if end < begin {
        return Err(format!("`{END}` comes before `{BEGIN}`"));
    }
    let updated = format!("{}{BEGIN}\n{table}{}", &text[..begin], &text[end..]);
    std::fs::write(path, updated).map_err(|e| e.to_string())
}
