//! `dsh-harness matrix` over reports holding hostile adapter text (a `|`, raw HTML, the end marker in the
//! implementation name) and over a report a killed run left (its last line cut).

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// A report of one passing trial by the hostile adapter declaring `name`.
fn report_named(dir: &Path, name: &str) -> PathBuf {
    let spec = spec_with(dir, &[("1.yaml", scenario("a-ok"))]);
    let adapter = hostile_adapter(dir);
    let report = dir.join("report.jsonl");
    let out = harness(&["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report.to_str().unwrap()], &[("FAKE_NAME", name)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    report
}

/// The cells of a Markdown table row: split at `|` not escaped with a backslash.
fn cells(row: &str) -> usize {
    let mut n = 0;
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => n += 1,
            _ => escaped = false,
        }
    }
    n
}

#[test]
fn a_pipe_in_the_name_stays_in_its_cell() {
    let dir = temp_dir("matrix-pipe");
    let report = report_named(&dir, "evil | 1 | 2 | 3");
    let out = harness(&["matrix", report.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<&str> = table.lines().take_while(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(rows.iter().all(|r| cells(r) == cells(rows[0])), "a row with more cells than the header:\n{table}");
    assert!(table.contains("evil \\| 1"), "{table}");
}

#[test]
fn raw_html_in_the_name_is_shown_not_rendered() {
    let dir = temp_dir("matrix-html");
    let report = report_named(&dir, "<img src=x onerror=alert(1)><b>bold</b>");
    let out = harness(&["matrix", report.to_str().unwrap()], &[]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!table.contains('<') && !table.contains('>'), "raw HTML in the table:\n{table}");
    assert!(table.contains("&lt;img src=x onerror=alert(1)&gt;"), "{table}");
}

#[test]
fn the_end_marker_in_the_name_does_not_add_a_table_per_update() {
    let dir = temp_dir("matrix-marker");
    let report = report_named(&dir, "x <!-- matrix:end --> y");
    let readme = dir.join("README.md");
    std::fs::write(&readme, "# x\n<!-- matrix:begin -->\nold\n<!-- matrix:end -->\ntail\n").unwrap();
    let update = || {
        let out = harness(&["matrix", report.to_str().unwrap(), "--update", readme.to_str().unwrap()], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        std::fs::read_to_string(&readme).unwrap()
    };
    let first = update();
    let second = update();
    assert_eq!(first, second, "a second --update changed the file");
    assert_eq!(first.matches("<!-- matrix:end -->").count(), 1, "{first}");
    assert_eq!(first.matches("| implementation |").count(), 1, "{first}");
    assert!(first.ends_with("<!-- matrix:end -->\ntail\n"), "{first}");
}

#[test]
fn a_report_whose_last_line_was_cut_is_rendered_as_incomplete() {
    let dir = temp_dir("matrix-cut");
    let report = report_named(&dir, "hostile");
    let text_ = std::fs::read_to_string(&report).unwrap();
    let lines = text_.lines().count();
    // What a run killed while writing its footer leaves: half a line, no newline.
    let cut = &text_[..text_.len() - text_.lines().last().unwrap().len() / 2 - 1];
    std::fs::write(&report, cut).unwrap();
    let out = harness(&["matrix", report.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(table.contains(&format!("| **no** (report cut off at line {lines}) |")), "{table}");
    assert!(table.contains("| T | 1/1 |"), "the trials that are there are counted: {table}");
    // A line cut in the middle of the report is still an error naming it.
    let broken = text_.replacen("\n", "\n{\"type\": \n", 1);
    std::fs::write(&report, broken).unwrap();
    let out = harness(&["matrix", report.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("line 2: not a report record"), "{}", text(&out));
}
