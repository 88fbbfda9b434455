//! `--update-expectations` writes what reads back identical: a proptest over arbitrary ids, reasons and
//! issues (line breaks of every kind, BOMs, control characters, quotes, `#`), written through
//! `run::expectations::rewrite` and read back both as YAML and by the expectations loader.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use dsh_conformance::OutcomeName;
use dsh_conformance::report::TrialLine;
use dsh_harness::run::expectations::{Expectations, PLACEHOLDER, rewrite};
use proptest::prelude::*;

fn trial(id: &str, outcome: OutcomeName) -> TrialLine {
    TrialLine {
        id: id.into(),
        file: "f".into(),
        rules: vec!["T-001".into()],
        outcome,
        detail: None,
        message: String::new(),
        duration_ms: 0,
        expected: None,
        transcript: None,
    }
}

/// Strings mixing the characters YAML treats specially with arbitrary ones.
fn nasty() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        "\r", "\n", "\r\n", "\u{FEFF}", "\u{85}", "\u{2028}", "\u{2029}", "\t", " ", "  ", "#", ": ", "\"", "'", "\\", "\0", "\u{7F}",
        "\u{9F}", "\u{FFFE}", "é", "😀", "- ", "|", ">", "a", "word",
    ]);
    let piece = prop_oneof![special.prop_map(str::to_owned), any::<String>(), "[a-z ]{0,12}"];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

/// A YAML double-quoted scalar in printable ASCII.
fn ascii(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match u32::from(c) {
            0x22 | 0x5C => out.extend(['\\', c]),
            0x20..=0x7E => out.push(c),
            n @ 0..=0xFFFF => out.push_str(&format!("\\u{n:04X}")),
            n => out.push_str(&format!("\\U{n:08X}")),
        }
    }
    out + "\""
}

/// The entries of the rewritten file as plain YAML sees them: (id, outcome, reason, issue).
fn read_back(text: &str) -> Vec<(String, String, String, Option<String>)> {
    let items: Vec<serde_yaml::Mapping> = serde_yaml::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    let field = |m: &serde_yaml::Mapping, k: &str| m.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    items.iter().map(|m| (field(m, "id").unwrap(), field(m, "outcome").unwrap(), field(m, "reason").unwrap(), field(m, "issue"))).collect()
}

fn roundtrip(id: &str, reason: &str, issue: Option<&str>, outcome: OutcomeName) {
    // A directory per call: the two tests run on parallel threads and once read each other's files.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::temp_dir(&format!("expectations-roundtrip-{n}"));
    let old = dir.join("old.yaml");
    let new = dir.join("new.yaml");
    // The old file spells every character outside printable ASCII as an escape (serde_yaml's emitter
    // writes U+2028 raw in a single-quoted scalar, which its own reader takes back differently).
    let mut old_text = format!("- id: {}\n  outcome: FAIL\n  reason: {}\n", ascii(id), ascii(reason));
    if let Some(issue) = issue {
        old_text.push_str(&format!("  issue: {}\n", ascii(issue)));
    }
    std::fs::write(&old, old_text).unwrap();
    rewrite(&new, Some(&old), &[trial(id, outcome)]).unwrap();
    let text = std::fs::read_to_string(&new).unwrap();
    let reason = reason.trim();
    let expected = match outcome {
        OutcomeName::Xfail => reason.to_owned(),
        _ => format!("{PLACEHOLDER} (it was listed as FAIL: {reason})"),
    };
    let got = read_back(&text);
    assert_eq!(got, vec![(id.to_owned(), if outcome == OutcomeName::Xfail { "FAIL" } else { "ERROR" }.to_owned(), expected.clone(), issue.map(str::to_owned))], "{text}");
    // The loader keeps the file: no YAML error discards it.
    let (loaded, problems) = Expectations::parse(&text, |_| true);
    if outcome == OutcomeName::Xfail && !reason.is_empty() && !reason.starts_with(PLACEHOLDER) {
        assert!(problems.is_empty(), "{problems:?}\n{text}");
        let want = match issue {
            Some(issue) => format!("{reason} ({issue})"),
            None => reason.to_owned(),
        };
        assert_eq!(loaded.get(id).map(|e| e.reason.clone()), Some(want), "{text}");
    } else {
        assert_eq!(problems.len(), 1, "only the placeholder or the empty reason: {problems:?}\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reason_with_a_carriage_return_or_a_bom_reads_back() {
    for reason in ["one\rtwo", "a \u{FEFF}b", "next\u{85}line", "sep\u{2028}arated", "del\u{7F}"] {
        roundtrip("s-1", reason, None, OutcomeName::Xfail);
        roundtrip("s-1", reason, Some("#1\r"), OutcomeName::Error);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn whatever_is_written_reads_back_identical(id in nasty().prop_filter("an id", |s| !s.is_empty()), reason in nasty(), issue in prop::option::of(nasty()), changed in any::<bool>()) {
        roundtrip(&id, &reason, issue.as_deref(), if changed { OutcomeName::Error } else { OutcomeName::Xfail });
    }
}

