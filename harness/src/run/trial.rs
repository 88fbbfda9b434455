//! One trial: lease a subject, check the scenario (or validation-corpus group, or SDK-corpus case) on a large-stack thread, apply the expectations, record,
//! and tell libtest-mimic.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_conformance::corpus::Group;
use dsh_conformance::sdk_corpus::SdkCase;
use dsh_conformance::subject::Subject;
use dsh_conformance::{OutcomeName, Scenario};
use libtest_mimic::{Completion, Failed};

use super::expectations::{self, Expectations};
use super::pool::Pool;
use super::report::{Report, TrialRecord};
use super::suite;
use super::verdict::Verdict;

/// Stack of the thread each trial runs on: deep values are dropped, cloned and compared recursively.
const TRIAL_STACK: usize = 256 << 20;
/// How many transcript lines a failure message shows (the report keeps them all).
const MESSAGE_TRANSCRIPT_LINES: usize = 30;

/// What every trial shares.
pub struct Context {
    /// The subjects.
    pub pool: Pool,
    /// The report and tally.
    pub report: Report,
    /// The expectations file (empty when none).
    pub expectations: Expectations,
    /// Per-request timeout.
    pub step_timeout: Duration,
}

/// Runs one scenario as a trial.
pub fn run_scenario(ctx: &Arc<Context>, id: &str, file: &str, rules: &[String], scenario: Scenario) -> Result<Completion, Failed> {
    let started = Instant::now();
    let shared = Arc::clone(ctx);
    let verdict = on_big_stack(move || check(&shared, scenario));
    let entry = ctx.expectations.get(id);
    let verdict = expectations::apply(entry, verdict);
    let record = TrialRecord { id, file, rules, verdict: &verdict, expected: entry, duration: started.elapsed() };
    ctx.report.record(&record);
    to_libtest(&verdict)
}

/// Runs one validation-corpus group as a trial.
pub fn run_group(ctx: &Arc<Context>, group: Group) -> Result<Completion, Failed> {
    let started = Instant::now();
    let (id, file, rules) = (group.id.clone(), group.file.clone(), group.rules.clone());
    let shared = Arc::clone(ctx);
    let verdict = on_big_stack(move || {
        leased(&shared, |subject, timeout| {
            let checked = suite::check_group(subject, &group, timeout);
            // Groups may hold deep values: take them apart here, on the trial's large stack.
            drop(group);
            checked
        })
    });
    let entry = ctx.expectations.get(&id);
    let verdict = expectations::apply(entry, verdict);
    let record = TrialRecord { id: &id, file: &file, rules: &rules, verdict: &verdict, expected: entry, duration: started.elapsed() };
    ctx.report.record(&record);
    to_libtest(&verdict)
}

/// Runs one SDK-corpus case as a trial.
pub fn run_sdk(ctx: &Arc<Context>, case: SdkCase) -> Result<Completion, Failed> {
    let started = Instant::now();
    let (id, file, rules) = (case.id.clone(), case.file.clone(), case.rules.clone());
    let shared = Arc::clone(ctx);
    let verdict = on_big_stack(move || leased(&shared, |subject, timeout| suite::check_sdk(subject, &case, timeout)));
    let entry = ctx.expectations.get(&id);
    let verdict = expectations::apply(entry, verdict);
    let record = TrialRecord { id: &id, file: &file, rules: &rules, verdict: &verdict, expected: entry, duration: started.elapsed() };
    ctx.report.record(&record);
    to_libtest(&verdict)
}

/// Records a verdict decided without running anything (load errors, skips) and tells libtest-mimic.
pub fn settle(ctx: &Context, id: &str, file: &str, rules: &[String], verdict: &Verdict) -> Result<Completion, Failed> {
    let entry = ctx.expectations.get(id);
    let record = TrialRecord { id, file, rules, verdict, expected: entry, duration: Duration::ZERO };
    ctx.report.record(&record);
    to_libtest(verdict)
}

fn check(ctx: &Context, scenario: Scenario) -> Verdict {
    leased(ctx, |subject, timeout| {
        let checked = suite::check(subject, &scenario, timeout);
        // Scenarios may hold deep values: take them apart here, on the trial's large stack.
        drop(scenario);
        checked
    })
}

/// Leases a subject, runs `f` on it, and gives it back (to be restarted when `f` says so or the outcome
/// left it in an unknown state).
fn leased(ctx: &Context, f: impl FnOnce(&mut dyn Subject, Duration) -> (Verdict, bool)) -> Verdict {
    let mut lease = match ctx.pool.lease() {
        Ok(lease) => lease,
        Err(e) => return suite::subject_error(e, "initialize (adapter restart)"),
    };
    let _stale = lease.subject.take_transcript();
    let (mut verdict, restart) = f(&mut *lease.subject, ctx.step_timeout);
    let transcript = lease.subject.take_transcript();
    if verdict.transcript.is_empty() {
        verdict.transcript = transcript;
    }
    lease.needs_restart = restart
        || matches!(verdict.outcome, OutcomeName::Crash | OutcomeName::Timeout)
        || (verdict.outcome == OutcomeName::Error && verdict.detail.as_deref() == Some("adapter"));
    ctx.pool.give_back(lease);
    verdict
}

/// Runs `f` on a thread with a large stack; a panic becomes `ERROR(harness)`.
fn on_big_stack(f: impl FnOnce() -> Verdict + Send + 'static) -> Verdict {
    let spawned = std::thread::Builder::new().name("trial".into()).stack_size(TRIAL_STACK).spawn(f);
    let joined = match spawned {
        Ok(handle) => handle.join(),
        Err(e) => return Verdict::new(OutcomeName::Error, Some("harness"), format!("cannot start a trial thread: {e}")),
    };
    joined.unwrap_or_else(|panic| {
        let text = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "(no message)".into());
        Verdict::new(OutcomeName::Error, Some("harness"), format!("the harness panicked: {text}"))
    })
}

fn to_libtest(verdict: &Verdict) -> Result<Completion, Failed> {
    match verdict.outcome {
        OutcomeName::Pass | OutcomeName::Xfail => Ok(Completion::Completed),
        OutcomeName::Skip => Ok(Completion::ignored_with(verdict.label() + ": " + &verdict.message)),
        _ => {
            let mut text = format!("{}: {}", verdict.label(), verdict.message);
            if !verdict.transcript.is_empty() {
                let skip = verdict.transcript.len().saturating_sub(MESSAGE_TRANSCRIPT_LINES);
                text.push_str("\ntranscript");
                if skip > 0 {
                    text.push_str(&format!(" (last {MESSAGE_TRANSCRIPT_LINES} lines; the report has all)"));
                }
                text.push(':');
                for line in &verdict.transcript[skip..] {
                    text.push_str("\n  ");
                    text.push_str(line);
                }
            }
            Err(text.into())
        }
    }
}
