//! The outcome taxonomy (DESIGN.md § Outcomes and reports): one closed enum shared by the checker, the
//! runner (`dsh-harness`) and the reports, with stable names (`OutcomeName`). XFAIL/XPASS are decided by
//! the runner from an implementation's expectations file; the checker never produces them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Why a trial was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipKind {
    /// The subject lacks a profile, feature or runtime the scenario needs.
    NotApplicable,
    /// The implementation's expectations file skips it.
    Expectation,
    /// A command-line filter left it out.
    Filter,
}

impl SkipKind {
    /// `not-applicable`, `expectation`, `filter`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipKind::NotApplicable => "not-applicable",
            SkipKind::Expectation => "expectation",
            SkipKind::Filter => "filter",
        }
    }
}

/// Who is to blame for an `ERROR`: it judges nobody's implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The adapter broke the protocol (bad message, schema violation, JSON-RPC error, seq gap).
    Adapter,
    /// The harness itself failed.
    Harness,
    /// The scenario file is broken (load error, bad matcher, expectation that cannot apply).
    Scenario,
}

impl ErrorKind {
    /// `adapter`, `harness`, `scenario`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Adapter => "adapter",
            ErrorKind::Harness => "harness",
            ErrorKind::Scenario => "scenario",
        }
    }
}

/// The outcome of one trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every expectation held.
    Pass,
    /// An expectation did not hold.
    Fail {
        /// The step, what differs, and the diff.
        message: String,
    },
    /// Failed as the expectations file says it would.
    XFail {
        /// The entry's reason.
        reason: String,
        /// The failure it matched (the original outcome's detail).
        detail: String,
    },
    /// Passed although the expectations file says it fails: the entry is stale (an error).
    XPass {
        /// The entry's reason.
        reason: String,
    },
    /// Not run.
    Skip {
        /// Why.
        kind: SkipKind,
        /// The reason shown.
        reason: String,
    },
    /// Could not judge the implementation.
    Error {
        /// Whose fault.
        kind: ErrorKind,
        /// What happened.
        message: String,
    },
    /// A request went unanswered past the step timeout.
    Timeout {
        /// The step and method (`step 3 (execute): call/await`).
        step: String,
        /// The last lines the adapter wrote to stderr (empty when none).
        stderr_tail: String,
    },
    /// The adapter exited.
    Crash {
        /// Exit status as text.
        status: String,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
}

/// The outcome names, for counts and expectations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum OutcomeName {
    /// `PASS`.
    Pass,
    /// `FAIL`.
    Fail,
    /// `XFAIL`.
    Xfail,
    /// `XPASS`.
    Xpass,
    /// `SKIP`.
    Skip,
    /// `ERROR`.
    Error,
    /// `TIMEOUT`.
    Timeout,
    /// `CRASH`.
    Crash,
}

impl OutcomeName {
    /// Every name, in report order.
    pub const ALL: [OutcomeName; 8] = [
        OutcomeName::Pass,
        OutcomeName::Fail,
        OutcomeName::Xfail,
        OutcomeName::Xpass,
        OutcomeName::Skip,
        OutcomeName::Error,
        OutcomeName::Timeout,
        OutcomeName::Crash,
    ];

    /// The stable string name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeName::Pass => "PASS",
            OutcomeName::Fail => "FAIL",
            OutcomeName::Xfail => "XFAIL",
            OutcomeName::Xpass => "XPASS",
            OutcomeName::Skip => "SKIP",
            OutcomeName::Error => "ERROR",
            OutcomeName::Timeout => "TIMEOUT",
            OutcomeName::Crash => "CRASH",
        }
    }

    /// Parses a stable string name.
    pub fn parse(name: &str) -> Option<OutcomeName> {
        OutcomeName::ALL.into_iter().find(|n| n.as_str() == name)
    }

    /// Whether a trial with this outcome fails the run: everything but PASS, XFAIL and SKIP.
    pub fn is_unexpected(self) -> bool {
        !matches!(self, OutcomeName::Pass | OutcomeName::Xfail | OutcomeName::Skip)
    }
}

impl std::fmt::Display for OutcomeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Outcome {
    /// The stable name.
    pub fn name(&self) -> OutcomeName {
        match self {
            Outcome::Pass => OutcomeName::Pass,
            Outcome::Fail { .. } => OutcomeName::Fail,
            Outcome::XFail { .. } => OutcomeName::Xfail,
            Outcome::XPass { .. } => OutcomeName::Xpass,
            Outcome::Skip { .. } => OutcomeName::Skip,
            Outcome::Error { .. } => OutcomeName::Error,
            Outcome::Timeout { .. } => OutcomeName::Timeout,
            Outcome::Crash { .. } => OutcomeName::Crash,
        }
    }

    /// The qualified label: `SKIP(not-applicable)`, `ERROR(adapter)`, `PASS`, ...
    pub fn label(&self) -> String {
        match self {
            Outcome::Skip { kind, .. } => format!("SKIP({})", kind.as_str()),
            Outcome::Error { kind, .. } => format!("ERROR({})", kind.as_str()),
            other => other.name().as_str().to_string(),
        }
    }

    /// The human-readable detail (empty for PASS).
    pub fn detail(&self) -> String {
        match self {
            Outcome::Pass => String::new(),
            Outcome::Fail { message } => message.clone(),
            Outcome::XFail { reason, detail } => format!("{reason}\n{detail}"),
            Outcome::XPass { reason } => format!("expected to fail ({reason}) but passed: the expectation is stale"),
            Outcome::Skip { reason, .. } => reason.clone(),
            Outcome::Error { message, .. } => message.clone(),
            Outcome::Timeout { step, stderr_tail } if stderr_tail.is_empty() => format!("no response within the step timeout (--step-timeout): {step}"),
            Outcome::Timeout { step, stderr_tail } => {
                format!("no response within the step timeout (--step-timeout): {step}\nstderr tail:\n{stderr_tail}")
            }
            Outcome::Crash { status, stderr_tail } => format!("adapter exited ({status})\n{stderr_tail}"),
        }
    }

    /// Whether the run can count this trial as good (PASS, XFAIL, SKIP).
    pub fn is_success(&self) -> bool {
        !self.name().is_unexpected()
    }
}

/// The result of running one scenario against one subject.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRecord {
    /// The outcome.
    pub outcome: Outcome,
    /// The protocol lines exchanged (`→ ...`, `← ...`).
    pub transcript: Vec<String>,
    /// Wall time of the trial.
    pub duration: Duration,
    /// The subject crashed, timed out or was left in an unknown state: restart it before the next
    /// scenario.
    pub restart_needed: bool,
}
