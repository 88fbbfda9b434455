//! Records of the JSON Lines report (DESIGN.md § Outcomes and reports): a header, one record per trial,
//! a footer with planned vs executed so a truncated run never looks green. One JSON object per line,
//! `type` first, field names in camelCase. `dsh-harness` writes these records and its `matrix` command
//! reads them back through the same types.
//!
//! ```text
//! {"type":"header","schema":1,"suite":{..},"protocolVersion":..,"implementation":{..},"capabilities":{..},"subject":..,"spec":..,"expectations":..,"startedAt":..}
//! {"type":"trial","id":..,"file":..,"rules":[..],"outcome":"FAIL","detail":..,"message":..,"durationMs":..,"expected":{..},"transcript":[..]}
//! {"type":"footer","planned":N,"executed":M,"complete":true,"counts":{"PASS":..,..},"durationMs":..}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::outcome::OutcomeName;
use crate::subject::SubjectInfo;

/// Version of the report format (the header's `schema`).
pub const SCHEMA: u32 = 1;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReportLine {
    /// The first line.
    Header(Header),
    /// One per trial.
    Trial(TrialLine),
    /// The last line; missing when the run died.
    Footer(Footer),
}

/// What ran, against what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// Version of the report format (`SCHEMA`).
    pub schema: u32,
    /// The suite that produced the report.
    pub suite: SuiteInfo,
    /// The protocol version the implementation answered `initialize` with (`null` when it did not).
    pub protocol_version: Option<String>,
    /// The implementation under test (`null` when `initialize` failed: the footer says why).
    pub implementation: Option<Implementation>,
    /// What it declared (`null` when `initialize` failed).
    pub capabilities: Option<Capabilities>,
    /// How it was reached: `in-process`, or `adapter: <command line>`.
    pub subject: String,
    /// The spec directory the scenarios were loaded from.
    pub spec: String,
    /// The expectations file applied, if any (`null` when none).
    pub expectations: Option<String>,
    /// Start time, seconds since the Unix epoch.
    pub started_at: u64,
}

/// The suite's name and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteInfo {
    /// `dsh-conformance`.
    pub name: String,
    /// The `dsh-conformance` crate version.
    pub version: String,
}

/// `implementation` of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Implementation {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Language.
    pub language: String,
}

/// `capabilities` of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Profiles.
    pub profiles: Vec<String>,
    /// Features.
    pub features: Vec<String>,
    /// Code runtimes.
    pub runtimes: Vec<String>,
}

impl Header {
    /// A header for a subject (`None` when it did not initialize); `started_at` (Unix seconds) is supplied
    /// by the caller.
    pub fn new(info: Option<&SubjectInfo>, subject: &str, spec: &str, expectations: Option<&str>, started_at: u64) -> Header {
        Header {
            schema: SCHEMA,
            suite: SuiteInfo {
                name: crate::protocol::SUITE_NAME.to_string(),
                version: crate::protocol::SUITE_VERSION.to_string(),
            },
            protocol_version: info.map(|i| i.protocol_version.clone()),
            implementation: info.map(|info| Implementation {
                name: info.name.clone(),
                version: info.version.clone(),
                language: info.language.clone(),
            }),
            capabilities: info.map(|info| Capabilities {
                profiles: info.profiles.clone(),
                features: info.features.clone(),
                runtimes: info.runtimes.clone(),
            }),
            subject: subject.to_string(),
            spec: spec.to_string(),
            expectations: expectations.map(str::to_string),
            started_at,
        }
    }
}

/// One trial, after the expectations file was applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrialLine {
    /// Scenario id (or the file, for a file that did not load).
    pub id: String,
    /// The scenario file.
    pub file: String,
    /// The rules it checks.
    pub rules: Vec<String>,
    /// `PASS`, `FAIL`, ...
    pub outcome: OutcomeName,
    /// The sub-kind (`null` when none): the SKIP kind (`not-applicable`, `expectation`, `filter`), the
    /// ERROR kind (`adapter`, `harness`, `scenario`), the timed-out step, the crash's exit status, or for
    /// XFAIL the label of the failure that matched (`FAIL`, `ERROR(adapter)`, ...).
    pub detail: Option<String>,
    /// What happened, for people (empty for PASS).
    pub message: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The expectations entry of this id, if it is listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
    /// The protocol lines exchanged (`→ ...`, `← ...`): present for every outcome but PASS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Vec<String>>,
}

/// An expectations-file entry, as recorded with a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// The expected outcome.
    pub outcome: OutcomeName,
    /// Why.
    pub reason: String,
}

impl TrialLine {
    /// Whether the record of a trial with this outcome keeps the transcript: every outcome but PASS.
    pub fn keeps_transcript(outcome: OutcomeName) -> bool {
        outcome != OutcomeName::Pass
    }
}

/// The last line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Footer {
    /// Trials planned (selected to run).
    pub planned: usize,
    /// Trials that produced a record.
    pub executed: usize,
    /// Whether every planned trial was executed and the run was not cut short.
    pub complete: bool,
    /// Why the run stopped before its trials were all executed (`initialize` failed, a protocol version
    /// mismatch, nothing planned, an interruption by SIGINT or SIGTERM); absent for a run that went through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// Trials per outcome, in `OutcomeName::ALL` order; outcomes that did not occur are left out.
    pub counts: BTreeMap<OutcomeName, usize>,
    /// Wall time of the whole run in milliseconds.
    pub duration_ms: u64,
}

impl Footer {
    /// The footer for a tally; `executed` is the sum of `counts` (zero counts are dropped).
    pub fn new(planned: usize, mut counts: BTreeMap<OutcomeName, usize>, duration_ms: u64) -> Footer {
        counts.retain(|_, n| *n > 0);
        let executed = counts.values().sum();
        Footer { planned, executed, complete: executed == planned, aborted: None, counts, duration_ms }
    }

    /// The footer of a run cut short for `reason`: never complete.
    pub fn aborted(planned: usize, counts: BTreeMap<OutcomeName, usize>, duration_ms: u64, reason: String) -> Footer {
        Footer { complete: false, aborted: Some(reason), ..Footer::new(planned, counts, duration_ms) }
    }
}

impl ReportLine {
    /// One report line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"type\":\"error\",\"message\":{:?}}}", e.to_string()))
    }

    /// Parses one report line.
    pub fn parse(line: &str) -> Result<ReportLine, serde_json::Error> {
        serde_json::from_str(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_stable_shapes() {
        let t = TrialLine {
            id: "a".into(),
            file: "spec/scenarios/a.yaml".into(),
            rules: vec!["REG-001".into()],
            outcome: OutcomeName::Xfail,
            detail: Some("ERROR(adapter)".into()),
            message: "expected: known\nbad".into(),
            duration_ms: 3,
            expected: Some(Expected { outcome: OutcomeName::Error, reason: "known".into() }),
            transcript: Some(vec!["→ x".into()]),
        };
        let line = ReportLine::Trial(t.clone()).to_line();
        assert_eq!(
            line,
            r#"{"type":"trial","id":"a","file":"spec/scenarios/a.yaml","rules":["REG-001"],"outcome":"XFAIL","detail":"ERROR(adapter)","message":"expected: known\nbad","durationMs":3,"expected":{"outcome":"ERROR","reason":"known"},"transcript":["→ x"]}"#
        );
        assert_eq!(ReportLine::parse(&line).expect("parse"), ReportLine::Trial(t));

        let pass = TrialLine {
            id: "b".into(),
            file: "f".into(),
            rules: vec![],
            outcome: OutcomeName::Pass,
            detail: None,
            message: String::new(),
            duration_ms: 0,
            expected: None,
            transcript: None,
        };
        let line = ReportLine::Trial(pass.clone()).to_line();
        assert_eq!(
            line,
            r#"{"type":"trial","id":"b","file":"f","rules":[],"outcome":"PASS","detail":null,"message":"","durationMs":0}"#
        );
        assert_eq!(ReportLine::parse(&line).expect("parse"), ReportLine::Trial(pass));

        let counts = BTreeMap::from([(OutcomeName::Skip, 1), (OutcomeName::Pass, 2), (OutcomeName::Crash, 0)]);
        let footer = ReportLine::Footer(Footer::new(4, counts, 7));
        assert_eq!(
            footer.to_line(),
            r#"{"type":"footer","planned":4,"executed":3,"complete":false,"counts":{"PASS":2,"SKIP":1},"durationMs":7}"#
        );
        assert_eq!(ReportLine::parse(&footer.to_line()).expect("parse"), footer);
    }

    #[test]
    fn header_round_trips() {
        let info = SubjectInfo {
            protocol_version: "1.0".into(),
            name: "x".into(),
            version: "1".into(),
            language: "rust".into(),
            profiles: vec!["p".into()],
            features: vec![],
            runtimes: vec![],
        };
        let header = ReportLine::Header(Header::new(Some(&info), "in-process", "spec", None, 5));
        let line = header.to_line();
        assert!(line.starts_with(r#"{"type":"header","schema":1,"suite":{"name":"dsh-conformance","version":"#), "{line}");
        assert!(line.ends_with(r#","subject":"in-process","spec":"spec","expectations":null,"startedAt":5}"#), "{line}");
        assert_eq!(ReportLine::parse(&line).expect("parse"), header);
        assert!(ReportLine::parse(r#"{"type":"nope"}"#).is_err());
    }
}
