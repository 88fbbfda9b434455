//! Records of the JSON Lines report: a header, one record per trial, a footer with planned vs executed
//! so a truncated run never looks green. One JSON object per line, `type` first.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::outcome::{Outcome, OutcomeName};
use crate::subject::SubjectInfo;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReportLine {
    /// The first line.
    Header(Header),
    /// One per trial.
    Trial(TrialLine),
    /// The last line.
    Footer(Footer),
}

/// What ran, against what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The suite's version (`dsh-conformance` crate version).
    pub suite_version: String,
    /// The protocol version spoken.
    pub protocol_version: String,
    /// The implementation under test.
    pub implementation: Implementation,
    /// What it declared.
    pub capabilities: Capabilities,
    /// Start time, RFC 3339 (UTC).
    pub started: String,
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
    /// A header for a subject; `started` is supplied by the caller (this crate has no clock
    /// formatting).
    pub fn new(info: &SubjectInfo, started: String) -> Header {
        Header {
            suite_version: crate::protocol::SUITE_VERSION.to_string(),
            protocol_version: info.protocol_version.clone(),
            implementation: Implementation {
                name: info.name.clone(),
                version: info.version.clone(),
                language: info.language.clone(),
            },
            capabilities: Capabilities {
                profiles: info.profiles.clone(),
                features: info.features.clone(),
                runtimes: info.runtimes.clone(),
            },
            started,
        }
    }
}

/// One trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialLine {
    /// Scenario id (or the file, for a file that did not load).
    pub id: String,
    /// The scenario file.
    pub file: String,
    /// The rules it checks.
    pub rules: Vec<String>,
    /// `PASS`, `FAIL`, ...
    pub outcome: OutcomeName,
    /// `not-applicable` / `adapter` / ... for SKIP and ERROR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The outcome's detail (empty for PASS).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The protocol transcript, for trials that did not succeed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<String>,
}

impl TrialLine {
    /// A record from an outcome; the transcript is kept only when the outcome is not a success.
    pub fn new(id: &str, file: &str, rules: &[String], outcome: &Outcome, duration_ms: u64, transcript: Vec<String>) -> TrialLine {
        let kind = match outcome {
            Outcome::Skip { kind, .. } => Some(kind.as_str().to_string()),
            Outcome::Error { kind, .. } => Some(kind.as_str().to_string()),
            _ => None,
        };
        TrialLine {
            id: id.to_string(),
            file: file.to_string(),
            rules: rules.to_vec(),
            outcome: outcome.name(),
            kind,
            detail: outcome.detail(),
            duration_ms,
            transcript: if outcome.is_success() { Vec::new() } else { transcript },
        }
    }
}

/// The last line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Footer {
    /// Trials planned.
    pub planned: usize,
    /// Trials that produced a record.
    pub executed: usize,
    /// Whether every planned trial was executed.
    pub complete: bool,
    /// Trials per outcome name (every name present, zeros included).
    pub counts: BTreeMap<OutcomeName, usize>,
}

impl Footer {
    /// Counts the trial lines.
    pub fn from_trials<'a>(planned: usize, trials: impl IntoIterator<Item = &'a TrialLine>) -> Footer {
        let mut counts: BTreeMap<OutcomeName, usize> = OutcomeName::ALL.into_iter().map(|n| (n, 0)).collect();
        let mut executed = 0;
        for t in trials {
            executed += 1;
            *counts.entry(t.outcome).or_default() += 1;
        }
        Footer { planned, executed, complete: executed == planned, counts }
    }
}

impl ReportLine {
    /// One report line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"type\":\"error\",\"message\":{:?}}}", e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::ErrorKind;

    #[test]
    fn lines_have_stable_shapes() {
        let t = TrialLine::new(
            "a",
            "spec/scenarios/a.yaml",
            &["REG-001".into()],
            &Outcome::Error { kind: ErrorKind::Adapter, message: "bad".into() },
            3,
            vec!["→ x".into()],
        );
        let line = ReportLine::Trial(t.clone()).to_line();
        assert_eq!(
            line,
            r#"{"type":"trial","id":"a","file":"spec/scenarios/a.yaml","rules":["REG-001"],"outcome":"ERROR","kind":"adapter","detail":"bad","duration_ms":3,"transcript":["→ x"]}"#
        );
        let back: ReportLine = serde_json::from_str(&line).expect("parse");
        assert_eq!(back, ReportLine::Trial(t.clone()));
        let footer = ReportLine::Footer(Footer::from_trials(2, [&t])).to_line();
        assert_eq!(
            footer,
            r#"{"type":"footer","planned":2,"executed":1,"complete":false,"counts":{"PASS":0,"FAIL":0,"XFAIL":0,"XPASS":0,"SKIP":0,"ERROR":1,"TIMEOUT":0,"CRASH":0}}"#
        );
    }
}
