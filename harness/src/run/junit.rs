//! JUnit XML (`--junit FILE`): the run's trial records as the XML CI systems show natively.
//!
//! One `<testsuite>` per rule area (the area prefix of a trial's first rule; a trial citing none is filed
//! by its source: `SDK` for the SDK corpus, `SCHEMA` for the validation corpus, `load` otherwise), one `<testcase>` per trial: `classname` the area, `name` the trial id, the rule ids and the file
//! as `<property>`s. `FAIL` and `XPASS` are `<failure>`, `ERROR`, `TIMEOUT` and `CRASH` are `<error>`,
//! `SKIP` is `<skipped>` with its reason; `PASS` and `XFAIL` (an expected failure) are passing cases, XFAIL
//! keeping its message in `<system-out>`. The transcript of anything but a PASS goes in `<system-out>`.
//! Characters XML 1.0 cannot carry (control characters other than tab, newline, carriage return) are
//! written as `\u{..}` escapes, so one odd adapter byte never makes the whole file unreadable.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use dsh_conformance::OutcomeName;
use dsh_conformance::report::{Footer, TrialLine};

/// The rule area of a trial: the prefix of its first rule id (`REG-004` → `REG`); without rules, the area
/// of its source: the SDK corpus is `SDK` (spec/rules/sdk.yaml), the validation corpus `SCHEMA`, anything
/// else (a file that did not load, an expectations-file problem) `load`.
pub fn area(trial: &TrialLine) -> String {
    match trial.rules.first() {
        Some(rule) => rule.split('-').next().unwrap_or(rule).to_owned(),
        None => source_area(&trial.file).to_owned(),
    }
}

/// The area of a trial that cites no rule, by the file it comes from (display paths: `corpus_index`).
pub fn source_area(file: &str) -> &'static str {
    if file.starts_with("corpus/sdk/") {
        "SDK"
    } else if file.starts_with("corpus/validation/") {
        "SCHEMA"
    } else {
        "load"
    }
}

/// The JUnit document of `trials`, named after `implementation`; `footer` (when the run ended with one)
/// adds whether the run was complete as a property of every suite.
pub fn render(implementation: &str, trials: &[TrialLine], footer: Option<&Footer>) -> String {
    let mut areas: BTreeMap<String, Vec<&TrialLine>> = BTreeMap::new();
    for trial in trials {
        areas.entry(area(trial)).or_default().push(trial);
    }
    let count = |list: &[&TrialLine], outcomes: &[OutcomeName]| list.iter().filter(|t| outcomes.contains(&t.outcome)).count();
    let failures = [OutcomeName::Fail, OutcomeName::Xpass];
    let errors = [OutcomeName::Error, OutcomeName::Timeout, OutcomeName::Crash];
    let all: Vec<&TrialLine> = trials.iter().collect();
    let seconds = |ms: u64| format!("{:.3}", ms as f64 / 1000.0);
    let total_ms: u64 = trials.iter().map(|t| t.duration_ms).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        r#"<testsuites name="{}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{}">"#,
        attr(&format!("dsh-conformance: {implementation}")),
        all.len(),
        count(&all, &failures),
        count(&all, &errors),
        count(&all, &[OutcomeName::Skip]),
        seconds(total_ms)
    );
    for (area, list) in &areas {
        let ms: u64 = list.iter().map(|t| t.duration_ms).sum();
        let _ = writeln!(
            out,
            r#"  <testsuite name="{}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{}">"#,
            attr(area),
            list.len(),
            count(list, &failures),
            count(list, &errors),
            count(list, &[OutcomeName::Skip]),
            seconds(ms)
        );
        out.push_str("    <properties>\n");
        let _ = writeln!(out, r#"      <property name="implementation" value="{}"/>"#, attr(implementation));
        if let Some(footer) = footer {
            let complete = if footer.complete { "true".to_owned() } else { format!("false: {}", footer.aborted.as_deref().unwrap_or("not every planned trial ran")) };
            let _ = writeln!(out, r#"      <property name="complete" value="{}"/>"#, attr(&complete));
        }
        out.push_str("    </properties>\n");
        for trial in list {
            testcase(&mut out, area, trial);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn testcase(out: &mut String, area: &str, trial: &TrialLine) {
    let _ = writeln!(
        out,
        r#"    <testcase classname="{}" name="{}" file="{}" time="{:.3}">"#,
        attr(area),
        attr(&trial.id),
        attr(&trial.file),
        trial.duration_ms as f64 / 1000.0
    );
    out.push_str("      <properties>\n");
    for rule in &trial.rules {
        let _ = writeln!(out, r#"        <property name="rule" value="{}"/>"#, attr(rule));
    }
    let _ = writeln!(out, r#"        <property name="outcome" value="{}"/>"#, attr(&label(trial)));
    if let Some(expected) = &trial.expected {
        let _ = writeln!(out, r#"        <property name="expected" value="{}: {}"/>"#, expected.outcome, attr(&expected.reason));
    }
    out.push_str("      </properties>\n");
    let first_line = trial.message.lines().next().unwrap_or("");
    let element = match trial.outcome {
        OutcomeName::Fail | OutcomeName::Xpass => Some("failure"),
        OutcomeName::Error | OutcomeName::Timeout | OutcomeName::Crash => Some("error"),
        _ => None,
    };
    if let Some(element) = element {
        let _ = writeln!(
            out,
            r#"      <{element} type="{}" message="{}">{}</{element}>"#,
            attr(&label(trial)),
            attr(first_line),
            text(&trial.message)
        );
    } else if trial.outcome == OutcomeName::Skip {
        let _ = writeln!(out, r#"      <skipped message="{}"/>"#, attr(&format!("{}: {}", label(trial), trial.message)));
    }
    let mut system_out = String::new();
    if trial.outcome == OutcomeName::Xfail {
        system_out.push_str(&format!("{}: {}\n", label(trial), trial.message));
    }
    if let Some(transcript) = trial.transcript.as_ref().filter(|t| !t.is_empty()) {
        system_out.push_str("transcript:\n");
        for line in transcript {
            system_out.push_str(line);
            system_out.push('\n');
        }
    }
    if !system_out.is_empty() {
        let _ = writeln!(out, "      <system-out>{}</system-out>", text(&system_out));
    }
    out.push_str("    </testcase>\n");
}

fn label(trial: &TrialLine) -> String {
    match &trial.detail {
        Some(d) => format!("{}({d})", trial.outcome),
        None => trial.outcome.to_string(),
    }
}

/// Text content: `&`, `<`, `>` escaped, characters XML cannot carry spelled out.
fn text(s: &str) -> String {
    escape(s, false)
}

/// An attribute value: as `text`, plus quotes, and newlines and tabs kept as character references.
fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(id: &str, rules: &[&str], outcome: OutcomeName, message: &str) -> TrialLine {
        TrialLine {
            id: id.into(),
            file: "spec/scenarios/x.yaml".into(),
            rules: rules.iter().map(|r| (*r).to_owned()).collect(),
            outcome,
            detail: None,
            message: message.into(),
            duration_ms: 12,
            expected: None,
            transcript: (outcome != OutcomeName::Pass).then(|| vec!["→ {\"a\":\"<b>\"}".to_owned()]),
        }
    }

    #[test]
    fn each_outcome_maps_to_its_element_and_text_is_escaped() {
        let trials = vec![
            trial("a", &["REG-001", "REG-002"], OutcomeName::Pass, ""),
            trial("b", &["REG-003"], OutcomeName::Fail, "got <x> & \"y\"\nsecond\u{1}"),
            trial("c", &["PIPE-001"], OutcomeName::Timeout, "no answer"),
            trial("d", &["PIPE-002"], OutcomeName::Skip, "needs code-mode"),
            trial("e", &[], OutcomeName::Error, "bad file"),
        ];
        let xml = render("x 1", &trials, None);
        assert_eq!(xml.matches("<testcase ").count(), 5, "{xml}");
        assert!(xml.contains(r#"<testsuite name="REG" tests="2" failures="1" errors="0" skipped="0""#), "{xml}");
        assert!(xml.contains(r#"<testsuite name="load" tests="1" failures="0" errors="1""#), "{xml}");
        assert!(xml.contains(r#"<property name="rule" value="REG-002"/>"#), "{xml}");
        assert!(xml.contains(r#"<failure type="FAIL" message="got &lt;x&gt; &amp; &quot;y&quot;">got &lt;x&gt; &amp; "y""#), "{xml}");
        assert!(xml.contains("second\\u{1}</failure>"), "{xml}");
        assert!(xml.contains(r#"<error type="TIMEOUT" message="no answer">"#), "{xml}");
        assert!(xml.contains(r#"<skipped message="SKIP: needs code-mode"/>"#), "{xml}");
        assert!(xml.contains("<system-out>transcript:\n→ {\"a\":\"&lt;b&gt;\"}\n</system-out>"), "{xml}");
        assert!(xml.contains(r#"<testsuites name="dsh-conformance: x 1" tests="5" failures="1" errors="2" skipped="1""#), "{xml}");
    }

    /// Issue 36: an SDK-corpus trial cites no rule and used to be filed under `load`, beside files that
    /// did not load.
    #[test]
    fn a_trial_citing_no_rule_is_filed_by_its_source() {
        let mut sdk = trial("corpus/sdk/empty#python", &[], OutcomeName::Pass, "");
        sdk.file = "corpus/sdk/empty.json".into();
        let mut group = trial("corpus/validation/x#g", &[], OutcomeName::Pass, "");
        group.file = "corpus/validation/x.json".into();
        let broken = trial("spec/scenarios/x.yaml", &[], OutcomeName::Error, "bad file");
        assert_eq!([area(&sdk), area(&group), area(&broken)], ["SDK", "SCHEMA", "load"]);
        let xml = render("x 1", &[sdk, broken], None);
        assert!(xml.contains(r#"<testcase classname="SDK" name="corpus/sdk/empty#python""#), "{xml}");
    }
}
