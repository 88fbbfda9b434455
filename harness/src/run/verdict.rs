//! The outcome of one trial as the runner records it: the taxonomy of `DESIGN.md` § Outcomes and reports,
//! after the expectations file has been applied (XFAIL, XPASS).

use std::fmt;

/// The closed set of outcomes. Every consumer of a report must know all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// Every expectation held.
    Pass,
    /// An expectation did not hold.
    Fail,
    /// Failed as the expectations file says (passes the run).
    Xfail,
    /// Listed in the expectations file but passed: the entry is stale (fails the run).
    Xpass,
    /// Not run: not applicable, skipped by expectation, or filtered.
    Skip,
    /// The trial could not judge the implementation: adapter, harness or scenario at fault.
    Error,
    /// A step got no answer in time.
    Timeout,
    /// The adapter process exited.
    Crash,
}

impl Outcome {
    /// All outcomes, in report order.
    pub const ALL: [Outcome; 8] = [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Xfail,
        Outcome::Xpass,
        Outcome::Skip,
        Outcome::Error,
        Outcome::Timeout,
        Outcome::Crash,
    ];

    /// The upper-case name used in reports and expectations files.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::Xfail => "XFAIL",
            Outcome::Xpass => "XPASS",
            Outcome::Skip => "SKIP",
            Outcome::Error => "ERROR",
            Outcome::Timeout => "TIMEOUT",
            Outcome::Crash => "CRASH",
        }
    }

    /// Parses an upper-case name.
    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == text)
    }

    /// Whether this outcome fails the run.
    pub fn is_unexpected(self) -> bool {
        !matches!(self, Outcome::Pass | Outcome::Xfail | Outcome::Skip)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What checking one scenario produced, before expectations are applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The outcome.
    pub outcome: Outcome,
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
    pub fn new(outcome: Outcome, detail: Option<&str>, message: impl Into<String>) -> Self {
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
