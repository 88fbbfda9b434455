//! One trial: lease a subject, check the scenario (or validation-corpus group, or SDK-corpus case) on a large-stack thread, apply the expectations, record,
//! and tell libtest-mimic.
//!
//! Strays (`dsh_conformance::subject::Stray`: a message of a session already closed) are blamed on the
//! session they carry: on the trial just run when it is that session (its verdict becomes
//! `ERROR(adapter)`), else as one more `ERROR(adapter)` record named `<session> (after close)`, counted in
//! the planned total, so the culprit is named and the innocent trial in flight is not failed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use dsh_conformance::subject::Stray;

use dsh_conformance::corpus_index::{ListedCase, ListedGroup};
use dsh_conformance::subject::{Subject, SubjectInfo};
use dsh_conformance::{OutcomeName, Scenario};
use libtest_mimic::{Completion, Failed};

use super::expectations::{self, Expectations};
use super::pool::Pool;
use super::report::{Report, TrialRecord};
use super::suite;
use super::verdict::Verdict;

/// Stack of the thread each trial runs on: deep values are dropped, cloned and compared recursively.
pub const TRIAL_STACK: usize = 256 << 20;
/// How many transcript lines a failure message shows (the report keeps them all).
const MESSAGE_TRANSCRIPT_LINES: usize = 30;

/// What every trial shares.
pub struct Context {
    /// The subjects.
    pub pool: Pool,
    /// The report and tally.
    pub report: Arc<Report>,
    /// The expectations file (empty when none).
    pub expectations: Expectations,
    /// Per-request timeout.
    pub step_timeout: Duration,
    /// Every trial id → (file, rules), to record a stray against the trial it blames.
    pub index: HashMap<String, (String, Vec<String>)>,
    /// Records added for strays (counted in the planned total).
    pub extra: AtomicUsize,
    /// Names already used by stray records.
    pub stray_names: Mutex<HashMap<String, usize>>,
    /// What the subject declared at start-up (a loaded corpus group may need more than its listing showed).
    pub info: SubjectInfo,
    /// Where busy trials (large corpus items, `heavy` scenarios) run: one long-lived thread per core.
    pub busy: super::schedule::BusyLane,
    /// `--fail-fast`: stop starting trials once one outcome was unexpected.
    pub fail_fast: bool,
    /// Under `--fail-fast`, the first trial whose outcome was unexpected.
    pub stopped_at: OnceLock<String>,
}

impl Context {
    /// Under `--fail-fast` once a trial's outcome was unexpected: what a trial not yet started tells
    /// libtest-mimic instead of running (it is not recorded: the report's footer says the run stopped).
    fn stopped(&self) -> Option<Result<Completion, Failed>> {
        let first = self.stopped_at.get()?;
        Some(Ok(Completion::ignored_with(format!("not run: --fail-fast stopped the run after {first}"))))
    }

    /// Records a settled trial's verdict and, under `--fail-fast`, notes the first unexpected one. That
    /// first one also ends the trials still in flight: every adapter is killed, so their waits end now
    /// instead of at their step budgets (a busy trial's is up to [`MAX_STEP_FACTOR`] × `--step-timeout`:
    /// a mutant that hung a busy trial held a stopped run for six minutes). Returns what to tell
    /// libtest-mimic instead of the verdict when the trial was abandoned.
    fn record(&self, record: &TrialRecord<'_>) -> Option<Result<Completion, Failed>> {
        if self.abandoned(record) {
            let first = self.stopped_at.get().map_or("", String::as_str);
            return Some(Ok(Completion::ignored_with(format!(
                "abandoned: in flight when --fail-fast stopped the run after {first} (its adapter was killed)"
            ))));
        }
        self.record_settled(record);
        None
    }

    /// Records a verdict that no subject produced (a load error, a skip): it is never abandoned, and may
    /// still stop a `--fail-fast` run.
    fn record_settled(&self, record: &TrialRecord<'_>) {
        self.report.record(record);
        if self.fail_fast && record.verdict.outcome.is_unexpected() && self.stopped_at.set(record.id.to_owned()).is_ok() {
            crate::adapter::kill_all();
        }
    }

    /// Under `--fail-fast`, a trial that was in flight when another stopped the run and then settled
    /// unexpectedly: its adapter was killed under it, so its outcome says nothing about the subject. It is
    /// not recorded (the footer counts it as not executed); one that settled as expected still is.
    fn abandoned(&self, record: &TrialRecord<'_>) -> bool {
        self.stopped_at.get().is_some_and(|first| first != record.id) && record.verdict.outcome.is_unexpected()
    }

    /// Records strays that blame sessions other than the trial in flight, one record per session.
    pub fn blame(&self, strays: Vec<Stray>) {
        let mut by_session: Vec<(String, Vec<String>)> = Vec::new();
        for stray in strays {
            let session = stray.session.unwrap_or_else(|| "(no session)".into());
            match by_session.iter_mut().find(|(s, _)| *s == session) {
                Some((_, messages)) => messages.push(stray.message),
                None => by_session.push((session, vec![stray.message])),
            }
        }
        for (session, messages) in by_session {
            let mut name = format!("{session} (after close)");
            if let Ok(mut names) = self.stray_names.lock() {
                let n = names.entry(name.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    name = format!("{name}#{n}");
                }
            }
            let (file, rules) = self.index.get(&session).cloned().unwrap_or_default();
            let message = format!("the adapter sent messages of session {session} after it was closed:\n{}", messages.join("\n"));
            let verdict = Verdict::new(OutcomeName::Error, Some("adapter"), message);
            println!("{name}: {}: {}", verdict.label(), verdict.message);
            self.extra.fetch_add(1, Ordering::SeqCst);
            let record = TrialRecord { id: &name, file: &file, rules: &rules, verdict: &verdict, expected: None, duration: Duration::ZERO };
            self.report.record(&record);
        }
    }
}

/// Runs one scenario (starting at `line` of `file`) as a trial; `busy`: its expected size when it is a
/// busy one (it then runs in the [`super::schedule::BusyLane`]).
pub fn run_scenario(
    ctx: &Arc<Context>,
    id: &str,
    (file, line): (&str, usize),
    rules: &[String],
    scenario: Scenario,
    busy: Option<u64>,
) -> Result<Completion, Failed> {
    if let Some(stopped) = ctx.stopped() {
        return stopped;
    }
    let started = Instant::now();
    let shared = Arc::clone(ctx);
    let session = id.to_owned();
    let verdict = on_big_stack(ctx, busy, move || check(&shared, &session, scenario, busy));
    let entry = ctx.expectations.get(id);
    let verdict = expectations::apply(entry, verdict);
    let record = TrialRecord { id, file, rules, verdict: &verdict, expected: entry, duration: started.elapsed() };
    if let Some(abandoned) = ctx.record(&record) {
        return abandoned;
    }
    to_libtest(&verdict, id, &format!("{file}:{line}"), rules)
}

/// Runs one validation-corpus group as a trial, loading it first when it was only indexed (a problem in
/// it is `ERROR(scenario)`); `busy` as for [`run_scenario`].
pub fn run_group(ctx: &Arc<Context>, group: ListedGroup, busy: Option<u64>) -> Result<Completion, Failed> {
    if let Some(stopped) = ctx.stopped() {
        return stopped;
    }
    let started = Instant::now();
    let (id, file, rules) = (group.id().to_owned(), group.file().to_owned(), group.rules().to_vec());
    let shared = Arc::clone(ctx);
    let verdict = on_big_stack(ctx, busy, move || {
        let group = match group.load() {
            Ok(group) => group,
            Err(message) => return Verdict::new(OutcomeName::Error, Some("scenario"), message),
        };
        // The group is consumed on the trial's large stack: its deep values go into the requests, and what
        // is left is taken apart there.
        leased(&shared, &group.id.clone(), busy, |subject, timeout| suite::check_group(subject, &shared.info, group, timeout))
    });
    let entry = ctx.expectations.get(&id);
    let verdict = expectations::apply(entry, verdict);
    let record = TrialRecord { id: &id, file: &file, rules: &rules, verdict: &verdict, expected: entry, duration: started.elapsed() };
    if let Some(abandoned) = ctx.record(&record) {
        return abandoned;
    }
    to_libtest(&verdict, &id, &file, &rules)
}

/// Runs one SDK-corpus case as a trial, loading it first when it was only indexed (a problem in it is
/// `ERROR(scenario)`); `busy` as for [`run_scenario`].
pub fn run_sdk(ctx: &Arc<Context>, case: ListedCase, busy: Option<u64>) -> Result<Completion, Failed> {
    if let Some(stopped) = ctx.stopped() {
        return stopped;
    }
    let started = Instant::now();
    let (id, file, rules) = (case.id().to_owned(), case.file().to_owned(), case.rules().to_vec());
    let shared = Arc::clone(ctx);
    let verdict = on_big_stack(ctx, busy, move || {
        let case = match case.load() {
            Ok(case) => case,
            Err(message) => return Verdict::new(OutcomeName::Error, Some("scenario"), message),
        };
        leased(&shared, &case.id.clone(), busy, |subject, timeout| suite::check_sdk(subject, case, timeout))
    });
    let entry = ctx.expectations.get(&id);
    let verdict = expectations::apply(entry, verdict);
    let record = TrialRecord { id: &id, file: &file, rules: &rules, verdict: &verdict, expected: entry, duration: started.elapsed() };
    if let Some(abandoned) = ctx.record(&record) {
        return abandoned;
    }
    to_libtest(&verdict, &id, &file, &rules)
}

/// Records a verdict decided without running anything (load errors, skips) and tells libtest-mimic.
pub fn settle(ctx: &Context, id: &str, file: &str, rules: &[String], verdict: &Verdict) -> Result<Completion, Failed> {
    let entry = ctx.expectations.get(id);
    let record = TrialRecord { id, file, rules, verdict, expected: entry, duration: Duration::ZERO };
    ctx.record_settled(&record);
    to_libtest(verdict, id, file, rules)
}

fn check(ctx: &Context, session: &str, scenario: Scenario, busy: Option<u64>) -> Verdict {
    leased(ctx, session, busy, |subject, timeout| {
        let checked = suite::check(subject, &scenario, timeout);
        // Scenarios may hold deep values: take them apart here, on the trial's large stack.
        drop(scenario);
        checked
    })
}

/// One more `--step-timeout` per this many bytes a busy trial moves (a deep corpus item, a `heavy`
/// scenario counted as [`super::schedule::HEAVY_BYTES`]): upstream took 5–30 s a step on the deep items
/// on a loaded machine, and its 64 MiB output trial once ran past 30 s.
pub const BYTES_PER_EXTRA_STEP: u64 = 2 << 20;
/// The most `--step-timeout`s one step of a busy trial gets.
pub const MAX_STEP_FACTOR: f64 = 12.0;

/// The per-request budget of a trial: `--step-timeout`, scaled for a busy trial of `busy` bytes by
/// `1 + bytes / BYTES_PER_EXTRA_STEP`, at most [`MAX_STEP_FACTOR`] times.
pub fn step_budget(step_timeout: Duration, busy: Option<u64>) -> Duration {
    match busy {
        Some(bytes) => step_timeout.mul_f64((1.0 + bytes as f64 / BYTES_PER_EXTRA_STEP as f64).min(MAX_STEP_FACTOR)),
        None => step_timeout,
    }
}

/// Leases a subject, runs `f` (the trial of `session`, `busy` bytes large when busy) on it with the
/// trial's [`step_budget`], and gives it back (to be restarted when `f` says so or the outcome left it in
/// an unknown state).
fn leased(ctx: &Context, session: &str, busy: Option<u64>, f: impl FnOnce(&mut dyn Subject, Duration) -> (Verdict, bool)) -> Verdict {
    let mut lease = match ctx.pool.lease() {
        Ok(lease) => lease,
        Err((e, stderr_tail)) => return suite::with_stderr(suite::subject_error(e, "initialize (adapter restart)"), &stderr_tail),
    };
    lease.subject.discard_transcript();
    ctx.blame(lease.subject.take_strays());
    let budget = step_budget(ctx.step_timeout, busy);
    let (mut verdict, restart) = f(&mut *lease.subject, budget);
    if verdict.outcome == OutcomeName::Timeout && budget > ctx.step_timeout {
        let (factor, mib) = (budget.as_secs_f64() / ctx.step_timeout.as_secs_f64(), busy.unwrap_or(0) as f64 / f64::from(1 << 20));
        verdict.message.push_str(&format!("\n(this trial moves {mib:.1} MiB: its budget is --step-timeout ×{factor:.1})"));
    }
    let (mine, others): (Vec<Stray>, Vec<Stray>) =
        lease.subject.take_strays().into_iter().partition(|s| s.session.as_deref() == Some(session));
    ctx.blame(others);
    if !mine.is_empty() {
        let messages = mine.into_iter().map(|s| s.message).collect::<Vec<_>>().join("\n");
        match verdict.outcome {
            OutcomeName::Pass | OutcomeName::Fail => {
                let earlier =
                    if verdict.outcome == OutcomeName::Pass { String::new() } else { format!("\n(before that: FAIL: {})", verdict.message) };
                verdict.outcome = OutcomeName::Error;
                verdict.detail = Some("adapter".into());
                verdict.message = format!("{messages}{earlier}");
            }
            _ => verdict.message = format!("{}\n{messages}", verdict.message),
        }
    }
    // Only what is not a PASS keeps its transcript (reports drop a PASS's): rendering the rest is waste.
    if verdict.outcome == OutcomeName::Pass || !verdict.transcript.is_empty() {
        lease.subject.discard_transcript();
    } else {
        verdict.transcript = lease.subject.take_transcript();
    }
    lease.needs_restart = restart
        || matches!(verdict.outcome, OutcomeName::Crash | OutcomeName::Timeout)
        || (verdict.outcome == OutcomeName::Error && verdict.detail.as_deref() == Some("adapter"));
    ctx.pool.give_back(lease);
    verdict
}

/// Runs `f` on a thread with a large stack: a busy trial (`busy`: its expected size) in the context's
/// [`super::schedule::BusyLane`], any other on a thread of its own. A panic becomes `ERROR(harness)`.
fn on_big_stack(ctx: &Context, busy: Option<u64>, f: impl FnOnce() -> Verdict + Send + 'static) -> Verdict {
    use super::schedule::{Unrun, panic_text};
    let ran = match busy {
        Some(size) => ctx.busy.run(size, f),
        None => match std::thread::Builder::new().name("trial".into()).stack_size(TRIAL_STACK).spawn(f) {
            Ok(handle) => handle.join().map_err(|panic| Unrun::Panicked(panic_text(panic))),
            Err(e) => Err(Unrun::NoThread(e.to_string())),
        },
    };
    ran.unwrap_or_else(|unrun| Verdict::new(OutcomeName::Error, Some("harness"), unrun.to_string()))
}

/// What libtest-mimic shows: a failure starts with a header naming where the trial is (`location`: the
/// file, with the line for a scenario), its rules and the command that explains it.
fn to_libtest(verdict: &Verdict, id: &str, location: &str, rules: &[String]) -> Result<Completion, Failed> {
    match verdict.outcome {
        OutcomeName::Pass | OutcomeName::Xfail => Ok(Completion::Completed),
        OutcomeName::Skip => Ok(Completion::ignored_with(verdict.label() + ": " + &verdict.message)),
        _ => {
            let rules = if rules.is_empty() { "none".to_owned() } else { rules.join(", ") };
            let mut text = format!(
                "{} at {location}; rules: {rules} (details: dsh-harness explain '{id}')\n{}",
                verdict.label(),
                verdict.message
            );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_trials_get_a_budget_that_grows_with_their_size_up_to_a_cap() {
        let step = Duration::from_secs(10);
        assert_eq!(step_budget(step, None), step);
        assert_eq!(step_budget(step, Some(0)), step);
        assert_eq!(step_budget(step, Some(7 << 20)), Duration::from_secs(45), "a 7 MiB deep item: 4.5 steps");
        assert_eq!(step_budget(step, Some(super::super::schedule::HEAVY_BYTES)), Duration::from_secs(120), "the 64 MiB log: the cap");
        assert_eq!(step_budget(Duration::from_secs(30), Some(1 << 30)), Duration::from_secs(360), "the cap scales with --step-timeout");
    }
}
