//! What the runner decided for one trial: an outcome name of the taxonomy (`dsh_conformance::OutcomeName`,
//! `DESIGN.md` § Outcomes and reports) with its sub-kind, message and transcript, before and after the
//! expectations file has been applied (XFAIL, XPASS). It becomes one `dsh_conformance::TrialLine`.

use dsh_conformance::OutcomeName;

/// What checking one scenario produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The outcome.
    pub outcome: OutcomeName,
    /// The sub-kind: skip reason kind, error origin (`adapter`, `harness`, `scenario`), the timed-out step,
    /// or the crash's exit status.
    pub detail: Option<String>,
    /// What happened, for people (empty for PASS).
    pub message: String,
    /// The protocol lines exchanged (kept in the report for anything but PASS).
    pub transcript: Vec<String>,
}

impl Verdict {
    /// A verdict with no transcript.
    pub fn new(outcome: OutcomeName, detail: Option<&str>, message: impl Into<String>) -> Self {
        Verdict { outcome, detail: detail.map(str::to_owned), message: message.into(), transcript: Vec::new() }
    }

    /// `OUTCOME(detail)` as shown to people.
    pub fn label(&self) -> String {
        match &self.detail {
            Some(d) => format!("{}({d})", self.outcome),
            None => self.outcome.to_string(),
        }
    }
}
