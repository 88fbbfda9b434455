//! The HTML matrix in a real browser: `dsh-harness matrix --html` over JSON Lines reports, opened in
//! headless Chromium (`--dump-dom`, so the filter script has run), with checks on the rendered DOM: every
//! implementation has a column, every trial a row, a filter in the URL fragment hides the rows it should
//! and shows the others, a permalink (`#t=<id>`) shows exactly its trial, and the diff against earlier
//! reports lists what changed.
//!
//! The reports are two small synthetic ones, unless `DSH_MATRIX_REPORTS` names real ones (space-separated;
//! `.ci/run` passes the three CI reports). Without a `chromium` on PATH the test is skipped with a printed
//! reason — except under `CI=true`, where a missing browser fails it (`.ci/run` installs one).

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::{Value, json};

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// The DOM Chromium renders for `page` (a file) with URL fragment `fragment`.
fn rendered(browser: &Path, dir: &Path, page: &Path, fragment: &str) -> String {
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}#{fragment}", page.display()))
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed:\n{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn report(path: &Path, name: &str, trials: &[(&str, &str, &str)]) {
    let mut lines = vec![json!({"type": "header", "schema": 1, "suite": {"name": "dsh-conformance", "version": "0.1.0"},
        "protocolVersion": "1.0", "implementation": {"name": name, "version": "1", "language": "x"},
        "capabilities": {"profiles": ["dsh-tools-0.1"], "features": [], "runtimes": []},
        "subject": "in-process", "spec": "spec", "expectations": null, "startedAt": 0})];
    for (id, rule, outcome) in trials {
        lines.push(json!({"type": "trial", "id": id, "file": "spec/scenarios/x.yaml", "rules": [rule], "outcome": outcome,
            "detail": null, "message": if *outcome == "PASS" { "" } else { "why <it> failed" }, "durationMs": 1}));
    }
    lines.push(json!({"type": "footer", "planned": trials.len(), "executed": trials.len(), "complete": true, "counts": {}, "durationMs": 1}));
    std::fs::write(path, lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n") + "\n").unwrap();
}

/// The `(id, outcomes)` of every trial row, and whether it is hidden.
fn rows(dom: &str) -> Vec<(String, String, bool)> {
    dom.split("<tr class=\"trial\"").skip(1).map(|row| {
        let head = &row[..row.find('>').unwrap()];
        let attr = |name: &str| {
            let at = head.find(&format!("{name}=\"")).map(|i| i + name.len() + 2).unwrap_or(0);
            head[at..].split('"').next().unwrap_or("").to_owned()
        };
        (attr("data-id"), attr("data-outcomes"), head.contains(" hidden=\"\""))
    }).collect()
}

#[test]
fn the_html_matrix_renders_and_filters_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but no chromium on PATH: .ci/run installs it");
        eprintln!("skipped: no chromium on PATH (apt-get install chromium; CI=true makes this a failure)");
        return;
    };
    let dir = temp_dir("html-matrix");
    let given = std::env::var("DSH_MATRIX_REPORTS").ok().filter(|s| !s.trim().is_empty());
    let (reports, before): (Vec<PathBuf>, Vec<PathBuf>) = match &given {
        Some(list) => (list.split_whitespace().map(PathBuf::from).collect(), Vec::new()),
        None => {
            let (a, b, old) = (dir.join("a.jsonl"), dir.join("b.jsonl"), dir.join("b-old.jsonl"));
            report(&a, "alpha", &[("reg-one", "REG-001", "PASS"), ("reg-two", "REG-002", "PASS"), ("pipe-one", "PIPE-001", "PASS")]);
            report(&b, "beta", &[("reg-one", "REG-001", "FAIL"), ("reg-two", "REG-002", "PASS"), ("pipe-one", "PIPE-001", "SKIP")]);
            report(&old, "beta", &[("reg-one", "REG-001", "PASS"), ("reg-two", "REG-002", "PASS"), ("pipe-one", "PIPE-001", "SKIP")]);
            (vec![a.clone(), b], vec![a, old])
        }
    };
    let page = dir.join("matrix.html");
    let mut args = vec!["matrix".to_owned(), "--html".into(), page.display().to_string()];
    args.extend(reports.iter().map(|p| p.display().to_string()));
    if !before.is_empty() {
        args.push("--before".into());
        args.extend(before.iter().map(|p| p.display().to_string()));
    }
    let out = harness(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<link"), "the page must be self-contained");

    // Every implementation is a column; every trial of every report a row.
    let dom = rendered(&browser, &dir, &page, "");
    let mut ids = BTreeSet::new();
    for path in &reports {
        let r = read_report(path);
        let i = &r.header["implementation"];
        let title = format!("{} {} ({})", i["name"].as_str().unwrap(), i["version"].as_str().unwrap(), r.header["subject"].as_str().unwrap());
        let title = title.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        assert!(dom.contains(&format!("<th class=\"impl\">{title}</th>")), "no column for {title}");
        ids.extend(r.trials.keys().cloned());
    }
    let all = rows(&dom);
    assert_eq!(all.iter().map(|r| r.0.clone()).collect::<BTreeSet<_>>(), ids, "one row per trial");
    assert!(all.iter().all(|r| !r.2), "nothing is hidden without a filter");

    // A filter hides every row without that outcome, and only those.
    let outcome = if given.is_some() { "SKIP" } else { "FAIL" };
    let filtered = rows(&rendered(&browser, &dir, &page, &format!("outcome={outcome}")));
    let shown: Vec<&(String, String, bool)> = filtered.iter().filter(|r| !r.2).collect();
    assert!(!shown.is_empty() && shown.len() < filtered.len(), "the {outcome} filter shows {} of {} rows", shown.len(), filtered.len());
    for (id, outcomes, hidden) in &filtered {
        assert_eq!(*hidden, !outcomes.contains(&format!(" {outcome} ")), "{id} ({outcomes}) under outcome={outcome}");
    }
    // A permalink shows exactly its trial.
    let target = all[all.len() / 2].0.clone();
    let one = rows(&rendered(&browser, &dir, &page, &format!("t={target}")));
    assert_eq!(one.iter().filter(|r| !r.2).map(|r| r.0.clone()).collect::<Vec<_>>(), vec![target.clone()]);
    if given.is_none() {
        assert!(dom.contains("Changes against the earlier reports (1)") && dom.contains("reg-one: beta 1 (in-process): PASS → FAIL"), "{dom}");
        let changed = rows(&rendered(&browser, &dir, &page, "changed=1"));
        assert_eq!(changed.iter().filter(|r| !r.2).map(|r| r.0.as_str()).collect::<Vec<_>>(), vec!["reg-one"]);
    }
    if let Ok(shot) = std::env::var("DSH_MATRIX_SCREENSHOT") {
        let status = Command::new(&browser)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,900"])
            .arg(format!("--user-data-dir={}", dir.join("profile").display()))
            .arg(format!("--screenshot={shot}"))
            .arg(format!("file://{}#area=REG", page.display()))
            .output()
            .unwrap();
        assert!(status.status.success(), "{}", text(&status));
    }
}
