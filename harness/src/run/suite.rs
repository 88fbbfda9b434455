//! The runner's bridge to `dsh-conformance`: loading the suite, the validation corpus and the SDK corpus,
//! applicability, and checking one scenario, one corpus group or one SDK case.
//!
//! Everything the runner needs from the conformance crate goes through this module, so the rest of the
//! runner does not change when the crate's API does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_conformance::{OutcomeName, Scenario};
use dsh_conformance::checker::{self, CheckOptions};
use dsh_conformance::corpus::{self, Group};
use dsh_conformance::corpus_index::{self, ListedCase, ListedGroup};
use dsh_conformance::outcome::Outcome as CheckOutcome;
use dsh_conformance::sdk_corpus::{self, SdkCase};
use dsh_conformance::subject::{Subject, SubjectError, SubjectInfo};

use super::verdict::Verdict;

/// One scenario to run.
pub struct Planned {
    /// The scenario id (the trial name).
    pub id: String,
    /// The file it came from (display path, `spec/scenarios/...`).
    pub file: String,
    /// The line of the file where it starts.
    pub line: usize,
    /// The rules it cites.
    pub rules: Vec<String>,
    /// The scenario.
    pub scenario: Scenario,
}

/// A file that could not be loaded: one `ERROR(scenario)` trial.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// The file (display path).
    pub file: String,
    /// Every problem in it, one per line, each starting with `file:line:column:`.
    pub message: String,
}

/// Everything loaded from a spec directory and its validation corpus.
#[derive(Default)]
pub struct Suite {
    /// Scenarios in file order.
    pub scenarios: Vec<Planned>,
    /// Validation-corpus groups in file order (one trial each); those of large files are only indexed and
    /// loaded when their trial runs (`dsh_conformance::corpus_index`).
    pub groups: Vec<ListedGroup>,
    /// SDK-corpus cases, one per file and language (one trial each), large files indexed likewise.
    pub sdk: Vec<ListedCase>,
    /// Files that could not be loaded, one entry per file.
    pub errors: Vec<LoadError>,
    /// The rules that loaded.
    pub catalog: dsh_conformance::catalog::Catalog,
}

/// Which of the suite's three sources a run loads: all of them, unless an exact filter names a trial of
/// one (`--exact corpus/validation/...`), as nextest does for each trial it runs in a process of its own
/// (the deep validation corpus alone takes seconds to load in a debug build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sources {
    /// `spec/scenarios` (and the rules, always loaded).
    pub scenarios: bool,
    /// The validation corpus.
    pub validation: bool,
    /// The SDK corpus.
    pub sdk: bool,
}

impl Sources {
    /// Everything.
    pub const ALL: Sources = Sources { scenarios: true, validation: true, sdk: true };

    /// The sources a trial named `filter` can come from when the filter is exact, else all. A load-error
    /// trial is named by its file, which starts the same way as the trials of its source.
    pub fn for_filter(args: &libtest_mimic::Arguments) -> Sources {
        match (&args.filter, args.exact, args.list) {
            (Some(name), true, false) if name.starts_with("corpus/validation/") => Sources { scenarios: false, validation: true, sdk: false },
            (Some(name), true, false) if name.starts_with("corpus/sdk/") => Sources { scenarios: false, validation: false, sdk: true },
            (Some(name), true, false) if !name.starts_with("corpus/") => Sources { scenarios: true, validation: false, sdk: false },
            _ => Sources::ALL,
        }
    }
}

impl Sources {
    /// Whether the trial named `id` comes from a source these load.
    pub fn loads(&self, id: &str) -> bool {
        if id.starts_with("corpus/validation/") {
            self.validation
        } else if id.starts_with("corpus/sdk/") {
            self.sdk
        } else {
            self.scenarios
        }
    }
}

/// The validation corpus next to a spec directory: `<spec>/../corpus/validation`.
pub fn default_corpus(spec: &Path) -> PathBuf {
    spec.parent().unwrap_or(Path::new(".")).join("corpus").join("validation")
}

/// The SDK corpus next to a spec directory: `<spec>/../corpus/sdk`.
pub fn default_sdk_corpus(spec: &Path) -> PathBuf {
    spec.parent().unwrap_or(Path::new(".")).join("corpus").join("sdk")
}

/// Loads and checks `rules/*.yaml` and `scenarios/**/*.yaml` under `spec` (`dsh_conformance::load_suite`),
/// and lists the validation corpus in `corpus` and the SDK corpus in `sdk` (`dsh_conformance::corpus_index`:
/// small files loaded, large ones indexed); a missing corpus directory has no trials, and so has a source
/// `sources` leaves out.
pub fn load(spec: &Path, corpus: &Path, sdk: &Path, sources: Sources) -> Suite {
    let mut loaded = dsh_conformance::load_suite(spec);
    if !sources.scenarios {
        loaded.scenarios.clear();
        // Scenario files' display paths start with the spec directory's name (`loader::load_suite`).
        let scenarios = PathBuf::from(spec.file_name().unwrap_or_default()).join("scenarios");
        loaded.errors.retain(|e| !e.file.starts_with(&scenarios));
    }
    let (groups, validation_errors) = if sources.validation {
        corpus_index::index_validation_corpus(corpus, "corpus/validation", Some(&loaded.catalog))
    } else {
        Default::default()
    };
    let (sdk, sdk_errors) =
        if sources.sdk { corpus_index::index_sdk_corpus(sdk, "corpus/sdk", Some(&loaded.catalog)) } else { Default::default() };
    let mut errors: Vec<LoadError> = loaded
        .errors_by_file()
        .into_iter()
        .map(|(file, errors)| LoadError {
            file: file.display().to_string(),
            message: errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"),
        })
        .collect();
    let mut by_file: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for e in validation_errors.iter().chain(&sdk_errors) {
        by_file.entry(e.file.display().to_string()).or_default().push(e.to_string());
    }
    errors.extend(by_file.into_iter().map(|(file, m)| LoadError { file, message: m.join("\n") }));
    let catalog = std::mem::take(&mut loaded.catalog);
    let scenarios = loaded
        .scenarios
        .into_iter()
        .map(|l| Planned {
            id: l.scenario.id.clone(),
            file: l.file.display().to_string(),
            line: l.line,
            rules: l.scenario.rules.clone(),
            scenario: l.scenario,
        })
        .collect();
    Suite { scenarios, groups, sdk, errors, catalog }
}

/// Why the subject cannot run this scenario (`SKIP(not-applicable)`), if it cannot: a profile or a feature
/// (declared or inferred from the steps) the subject does not declare.
pub fn not_applicable(scenario: &Scenario, info: &SubjectInfo) -> Option<String> {
    dsh_conformance::features::applicability(info, scenario)
}

/// Runs one scenario against a subject (`dsh_conformance::checker::run_scenario`). The second value says
/// whether the subject must be restarted before it serves again.
pub fn check(subject: &mut dyn Subject, scenario: &Scenario, step_timeout: Duration) -> (Verdict, bool) {
    let record = checker::run_scenario(subject, scenario, &CheckOptions { step_timeout });
    let mut verdict = from_outcome(&record.outcome);
    verdict.transcript = record.transcript;
    (verdict, record.restart_needed)
}

/// Runs one validation-corpus group against a subject (`dsh_conformance::corpus::check_group`: SKIP when
/// the loaded group needs what the subject lacks); the second value says whether the subject must be
/// restarted.
pub fn check_group(subject: &mut dyn Subject, info: &SubjectInfo, group: Group, step_timeout: Duration) -> (Verdict, bool) {
    let record = corpus::check_group(subject, info, group, &CheckOptions { step_timeout });
    let mut verdict = from_outcome(&record.outcome);
    verdict.transcript = record.transcript;
    (verdict, record.restart_needed)
}

/// Runs one SDK-corpus case against a subject (`dsh_conformance::sdk_corpus::run_case`); the second value
/// says whether the subject must be restarted.
pub fn check_sdk(subject: &mut dyn Subject, case: SdkCase, step_timeout: Duration) -> (Verdict, bool) {
    let record = sdk_corpus::run_case(subject, case, &CheckOptions { step_timeout });
    let mut verdict = from_outcome(&record.outcome);
    verdict.transcript = record.transcript;
    (verdict, record.restart_needed)
}

/// The runner's verdict for a checker outcome: its name, its sub-kind (the SKIP or ERROR kind, the
/// timed-out step, the exit status) and its detail as the message.
fn from_outcome(outcome: &CheckOutcome) -> Verdict {
    let detail = match outcome {
        CheckOutcome::Skip { kind, .. } => Some(kind.as_str()),
        CheckOutcome::Error { kind, .. } => Some(kind.as_str()),
        CheckOutcome::Timeout { step, .. } => Some(step.as_str()),
        CheckOutcome::Crash { status, .. } => Some(status.as_str()),
        CheckOutcome::Pass | CheckOutcome::Fail { .. } | CheckOutcome::XFail { .. } | CheckOutcome::XPass { .. } => None,
    };
    Verdict::new(outcome.name(), detail, outcome.detail())
}

/// `verdict` with the subject's stderr tail after its message, unless it is a CRASH (which shows it) or
/// the message holds it already.
pub fn with_stderr(mut verdict: Verdict, stderr_tail: &str) -> Verdict {
    if !stderr_tail.is_empty() && verdict.outcome != OutcomeName::Crash && !verdict.message.contains(stderr_tail) {
        verdict.message = format!("{}\nstderr tail:\n{stderr_tail}", verdict.message);
    }
    verdict
}

/// The verdict for a request that got no well-formed reply.
pub fn subject_error(error: SubjectError, step: &str) -> Verdict {
    match error {
        SubjectError::Timeout { method, waited } => Verdict::new(
            OutcomeName::Timeout,
            Some(step),
            format!("{step}: `{method}` got no answer within {:.1} s (--step-timeout)", waited.as_secs_f64()),
        ),
        SubjectError::Crash { status, stderr_tail } => Verdict::new(
            OutcomeName::Crash,
            Some(&status),
            format!("crashed ({status}) at {step}; stderr tail:\n{stderr_tail}"),
        ),
        SubjectError::Protocol { message } => {
            Verdict::new(OutcomeName::Error, Some("adapter"), format!("{step}: {message}"))
        }
    }
}
