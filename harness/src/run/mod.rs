//! The conformance runner: one libtest-mimic trial per scenario, per validation-corpus group and per
//! SDK-corpus file and language (plus one per file that failed to load),
//! expectations applied strictly, a JSON Lines report, a summary line, and an exit status that is 0
//! exactly when no outcome was unexpected.
//!
//! # Order
//! 1. Install the SIGINT/SIGTERM handler (`interrupt.rs`); create (truncate) the report, so no stale report
//!    survives; a report that cannot be created is exit status 2.
//! 2. Check that every named path exists (`--spec`, an explicit `--corpus`, `--sdk-corpus`,
//!    `--expectations`): one that does not is exit status 2, with a report footer saying why.
//! 3. Load the spec; files with errors become trials.
//! 4. Start one subject and `initialize` it: a failure or a protocol major-version mismatch ends the run
//!    at once with one message (exit status 2) and a report footer saying why.
//! 5. Load the expectations; problems in the file become trials.
//! 6. Build the trials; skips are static, so `--list --ignored` shows them. Load errors are never
//!    filtered away: those a filter would drop are recorded anyway. A run that plans nothing is exit 2.
//! 7. Run them; after a CRASH, TIMEOUT or ERROR(adapter) the subject is restarted before it serves again.
//! 8. End the subjects (strays they still send are blamed), kill what they left behind, footer, skip
//!    reasons, summary line. Under `--fail-fast` a trial starting after an unexpected outcome does not run,
//!    the trials in flight are abandoned (`trial::Context::record` kills every adapter and records nothing
//!    for them), and the footer says where the run stopped (the upstream mutant instrument, `tools/upstream-mutants/`).

pub mod capabilities;
pub mod cli;
pub mod expectations;
pub mod explain;
pub mod explore;
pub mod interrupt;
pub mod junit;
pub mod matrix;
pub mod pool;
pub mod probe;
pub mod report;
pub mod schedule;
pub mod suite;
pub mod trial;
pub mod verdict;

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use dsh_conformance::OutcomeName;
use dsh_conformance::corpus_index::ListedGroup;
use dsh_conformance::protocol::major;
use dsh_conformance::subject::{SubjectError, SubjectInfo};
use libtest_mimic::Trial;

use self::cli::RunOptions;
use self::expectations::Expectations;
use self::pool::{Factory, Pool};
use self::report::Report;
use self::trial::Context;
use self::verdict::Verdict;

/// The protocol version the harness speaks.
pub use crate::adapter::PROTOCOL_VERSION;

/// Runs the suite against the subjects `factory` makes; `subject` describes them for the report.
pub fn run(mut opts: RunOptions, factory: Factory, subject: &str) -> ExitCode {
    let started = Instant::now();
    if let Err(e) = interrupt::install() {
        eprintln!("dsh-harness: cannot install the SIGINT/SIGTERM handler: {e}");
        return ExitCode::from(2);
    }
    let listing = opts.libtest.list;
    let report = match Report::create(if listing { None } else { opts.report.as_deref() }) {
        Ok(report) => Arc::new(report),
        Err(e) => {
            let path = opts.report.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            eprintln!("dsh-harness: cannot write the report {path}: {e}; nothing was run");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &opts.junit {
        report.set_junit(path, subject);
    }
    if opts.update_expectations.is_some() {
        report.keep_trials();
    }
    interrupt::watch(&report, 0, started);
    if let Err(e) = check_paths(&opts) {
        report.header(None, subject, &opts.spec, opts.expectations.as_deref());
        report.abort(0, started.elapsed(), &format!("{e}; nothing was run"));
        eprintln!("dsh-harness: {e}; nothing was run");
        return ExitCode::from(2);
    }
    let corpus = opts.corpus.clone().unwrap_or_else(|| suite::default_corpus(&opts.spec));
    let sdk = opts.sdk_corpus.clone().unwrap_or_else(|| suite::default_sdk_corpus(&opts.spec));
    let sources = suite::Sources::for_filter(&opts.libtest);
    let suite = suite::load(&opts.spec, &corpus, &sdk, sources);
    let loaded = suite.scenarios.len() + suite.groups.len() + suite.sdk.len() + suite.errors.len();
    interrupt::watch(&report, loaded, started);
    let stop = |info: Option<&SubjectInfo>, reason: String| {
        report.header(info, subject, &opts.spec, opts.expectations.as_deref());
        report.abort(loaded, started.elapsed(), &reason);
        eprintln!("dsh-harness: {reason}");
        ExitCode::from(2)
    };
    // A subject that panics while starting is as broken as one that crashes.
    let start = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Pool::start(factory)));
    let start = start.unwrap_or_else(|_| {
        Err((SubjectError::Crash { status: "panicked during initialize".into(), stderr_tail: String::new() }, String::new()))
    });
    let (pool, info) = match start {
        Ok(started) => started,
        Err((e, stderr_tail)) => {
            let verdict = suite::with_stderr(suite::subject_error(e, "initialize"), &stderr_tail);
            return stop(None, format!("{subject} failed to initialize, nothing was run: {}", verdict.message));
        }
    };
    if major(&info.protocol_version) != major(PROTOCOL_VERSION) {
        let reason = format!(
            "protocol version mismatch, nothing was run: the harness speaks {PROTOCOL_VERSION}, {} {} \
             answered initialize with {}",
            info.name, info.version, info.protocol_version
        );
        return stop(Some(&info), reason);
    }
    let known: HashSet<&str> =
        suite.scenarios.iter().map(|s| s.id.as_str()).chain(suite.groups.iter().map(|g| g.id())).chain(suite.sdk.iter().map(|c| c.id())).collect();
    let (expectations, problems) = match &opts.expectations {
        // An entry of a source an exact filter left unloaded cannot be checked here: the full run checks it.
        Some(path) => Expectations::load(path, |id| known.contains(id) || !sources.loads(id)),
        None => (Expectations::default(), Vec::new()),
    };
    report.header(Some(&info), subject, &opts.spec, opts.expectations.as_deref());
    if let Some(path) = &opts.junit {
        report.set_junit(path, &format!("{} {} ({subject})", info.name, info.version));
    }
    if !listing {
        for warning in capabilities::warnings(&info) {
            eprintln!("dsh-harness: warning: {warning}");
        }
    }
    if report.write_failed() {
        // Nothing can be recorded: say so before anything runs (the error was printed by the report).
        return ExitCode::from(2);
    }
    if !opts.threads_given {
        opts.libtest.test_threads = Some(if subject.starts_with("adapter") {
            // One adapter process serves one session at a time: each thread leases its own (see `pool`).
            schedule::adapter_processes()
        } else {
            // In-process trials that wait hold a thread, not a core (see `schedule`).
            schedule::in_process_threads()
        });
    }
    let implementation = format!("{} {}", info.name, info.version);
    let index = suite
        .scenarios
        .iter()
        .map(|s| (s.id.clone(), (s.file.clone(), s.rules.clone())))
        .chain(suite.groups.iter().map(|g| (g.id().to_owned(), (g.file().to_owned(), g.rules().to_vec()))))
        .chain(suite.sdk.iter().map(|c| (c.id().to_owned(), (c.file().to_owned(), c.rules().to_vec()))))
        .collect();
    let ctx = Arc::new(Context {
        pool,
        report: Arc::clone(&report),
        expectations,
        step_timeout: opts.step_timeout,
        index,
        extra: Default::default(),
        stray_names: Default::default(),
        info: info.clone(),
        busy: schedule::BusyLane::per_core(trial::TRIAL_STACK),
        fail_fast: opts.fail_fast,
        stopped_at: Default::default(),
    });

    let mut trials = Vec::new();
    // Parallel to `trials`: what each is expected to cost, for the start order (`schedule`).
    let mut costs: Vec<schedule::Cost> = Vec::new();
    let mut prerecorded: Vec<(String, String, Vec<String>, Verdict)> = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut unique = |name: String| {
        let n = names.entry(name.clone()).or_default();
        *n += 1;
        if *n == 1 { name } else { format!("{name}#{n}") }
    };
    // Load errors: never filtered away (see below), so kept here besides their trials.
    let mut load_errors: Vec<(String, String, Verdict)> = Vec::new();
    for error in suite.errors {
        let name = unique(error.file.clone());
        let verdict = Verdict::new(OutcomeName::Error, Some("scenario"), error.message);
        load_errors.push((name, error.file, verdict));
    }
    if let Some(path) = &opts.expectations {
        for problem in problems {
            let file = path.display().to_string();
            let name = unique(format!("{file}:{}", problem.line));
            let message = format!("expectations file {file}:{}: {}", problem.line, problem.message);
            load_errors.push((name, file, Verdict::new(OutcomeName::Error, Some("harness"), message)));
        }
    }
    for (name, file, verdict) in &load_errors {
        let (c, name, file, verdict) = (Arc::clone(&ctx), name.clone(), file.clone(), verdict.clone());
        trials.push(Trial::test(name.clone(), move || trial::settle(&c, &name, &file, &[], &verdict).map(|_| ())));
        costs.push(schedule::Cost::Quick);
    }
    for planned in suite.scenarios {
        let skip = skip_of(&ctx.expectations, &planned.id, || suite::not_applicable(&planned.scenario, &info));
        let c = Arc::clone(&ctx);
        let (id, file, rules) = (planned.id.clone(), planned.file.clone(), planned.rules.clone());
        let line = planned.line;
        let cost = if skip.is_some() { schedule::Cost::Quick } else { schedule::scenario_cost(&planned.scenario) };
        costs.push(cost);
        let busy = busy_size(cost);
        let trial = match skip {
            Some((kind, reason)) => {
                let verdict = Verdict::new(OutcomeName::Skip, Some(kind), reason);
                prerecorded.push((id.clone(), file.clone(), rules.clone(), verdict.clone()));
                Trial::ignorable_test(unique(id.clone()), move || trial::settle(&c, &id, &file, &rules, &verdict))
                    .with_ignored_flag(true)
            }
            None => {
                let scenario = planned.scenario;
                Trial::ignorable_test(unique(id.clone()), move || {
                    trial::run_scenario(&c, &id, (&file, line), &rules, scenario, busy)
                })
            }
        };
        trials.push(trial);
    }
    let group_skip = dsh_conformance::corpus::applicability(&info);
    for group in suite.groups {
        let skip = skip_of(&ctx.expectations, group.id(), || group_skip.clone());
        let cost = match (&skip, group.deferred()) {
            (None, Some(deferred)) => schedule::Cost::Busy(deferred.bytes()),
            _ => schedule::Cost::Quick,
        };
        costs.push(cost);
        let busy = busy_size(cost);
        let c = Arc::clone(&ctx);
        let name = unique(group.id().to_owned());
        let trial = match skip {
            Some((kind, reason)) => {
                let verdict = Verdict::new(OutcomeName::Skip, Some(kind), reason);
                let (id, file, rules) = (group.id().to_owned(), group.file().to_owned(), group.rules().to_vec());
                prerecorded.push((id.clone(), file.clone(), rules.clone(), verdict.clone()));
                // Deep groups are taken apart on a large stack even when skipped (deferred ones hold nothing).
                if let ListedGroup::Loaded(_) = group {
                    let _ = std::thread::Builder::new().stack_size(256 << 20).spawn(move || drop(group)).map(|h| h.join());
                }
                Trial::ignorable_test(name, move || trial::settle(&c, &id, &file, &rules, &verdict)).with_ignored_flag(true)
            }
            None => Trial::ignorable_test(name, move || trial::run_group(&c, group, busy)),
        };
        trials.push(trial);
    }
    let sdk_skip = dsh_conformance::sdk_corpus::applicability(&info);
    for case in suite.sdk {
        let skip = skip_of(&ctx.expectations, case.id(), || sdk_skip.clone());
        let cost = match (&skip, case.deferred()) {
            (None, Some(deferred)) => schedule::Cost::Busy(deferred.bytes()),
            _ => schedule::Cost::Quick,
        };
        costs.push(cost);
        let busy = busy_size(cost);
        let c = Arc::clone(&ctx);
        let name = unique(case.id().to_owned());
        let trial = match skip {
            Some((kind, reason)) => {
                let verdict = Verdict::new(OutcomeName::Skip, Some(kind), reason);
                let (id, file, rules) = (case.id().to_owned(), case.file().to_owned(), case.rules().to_vec());
                prerecorded.push((id.clone(), file.clone(), rules.clone(), verdict.clone()));
                Trial::ignorable_test(name, move || trial::settle(&c, &id, &file, &rules, &verdict)).with_ignored_flag(true)
            }
            None => Trial::ignorable_test(name, move || trial::run_sdk(&c, case, busy)),
        };
        trials.push(trial);
    }

    let args = &opts.libtest;
    let filtered_errors: Vec<&(String, String, Verdict)> = {
        let kept: HashSet<&str> = trials.iter().filter(|t| !args.is_filtered_out(t)).map(Trial::name).collect();
        load_errors.iter().filter(|(name, ..)| !kept.contains(name.as_str())).collect()
    };
    let planned = trials.iter().filter(|t| !args.is_filtered_out(t)).count() + filtered_errors.len();
    interrupt::watch(&report, planned, started);
    if planned == 0 && !listing {
        let reason = format!(
            "nothing to run: 0 trials planned ({} loaded from {}; a filter may match none)",
            loaded,
            opts.spec.display()
        );
        report.abort(0, started.elapsed(), &reason);
        eprintln!("dsh-harness: {reason}");
        return ExitCode::from(2);
    }
    if !listing && !filtered_errors.is_empty() {
        // A filter never hides a broken file: record its error anyway, and show it.
        println!("load errors (recorded whatever the filter):");
        for (name, file, verdict) in &filtered_errors {
            let _ = trial::settle(&ctx, name, file, &[], verdict);
            println!("    {name}: {}: {}", verdict.label(), verdict.message);
        }
        println!();
    }
    let mut skipped = Vec::new();
    if !listing && !args.ignored && !args.include_ignored {
        // Static skips are not run by libtest: record them here, so the report counts them.
        let selected: HashSet<&str> =
            trials.iter().filter(|t| !args.is_filtered_out(t) && t.has_ignored_flag()).map(Trial::name).collect();
        for (id, file, rules, verdict) in &prerecorded {
            if selected.contains(id.as_str()) {
                let _ = trial::settle(&ctx, id, file, rules, verdict);
                skipped.push((id.as_str(), verdict));
            }
        }
    }
    let trials = if listing { trials } else { schedule::reorder(trials, &costs) };
    let conclusion = libtest_mimic::run(args, trials);
    interrupt::hold_if_interrupted();
    if listing {
        return conclusion.exit_code();
    }
    if !skipped.is_empty() {
        println!("{}", capabilities::skip_summary(&skipped));
    }
    // Whatever the adapters still send is blamed on the session it names.
    ctx.blame(ctx.pool.finish(FINISH_WAIT.min(opts.step_timeout)));
    // And whatever an adapter left behind that was re-parented to the harness (`adapter/reaper.rs`).
    crate::adapter::kill_all();
    let planned = planned + ctx.extra.load(Ordering::SeqCst);
    if let Some(first) = ctx.stopped_at.get() {
        let executed: usize = ctx.report.counts().values().sum();
        let reason = format!(
            "stopped by --fail-fast after the first unexpected outcome, {first}: {executed} of {planned} planned trials executed"
        );
        ctx.report.abort(planned, started.elapsed(), &reason);
        println!("dsh-harness: {reason}");
    } else {
        ctx.report.footer(planned, started.elapsed());
    }
    if let Some(xfails) = ctx.report.xfail_summary() {
        println!("{xfails}");
    }
    println!("{}", ctx.report.summary(planned, &implementation));
    if let Some(path) = &opts.update_expectations {
        match expectations::rewrite(path, opts.expectations.as_deref(), &ctx.report.kept_trials()) {
            Ok(summary) => println!("{summary}"),
            Err(e) => {
                eprintln!("dsh-harness: --update-expectations: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let executed: usize = ctx.report.counts().values().sum();
    let unexpected = ctx.report.counts().iter().any(|(o, n)| o.is_unexpected() && *n > 0);
    if conclusion.has_failed() || unexpected || executed != planned || ctx.report.write_failed() {
        ExitCode::from(101)
    } else {
        ExitCode::SUCCESS
    }
}


/// A busy trial's expected size, the [`schedule::BusyLane`]'s priority; `None` for the others.
fn busy_size(cost: schedule::Cost) -> Option<u64> {
    if let schedule::Cost::Busy(bytes) = cost { Some(bytes) } else { None }
}

/// How long the adapters get at the end of the run to exit once their stdin is closed.
const FINISH_WAIT: Duration = Duration::from_secs(1);

/// Every path named on the command line must exist: a typo never runs an empty suite.
fn check_paths(opts: &RunOptions) -> Result<(), String> {
    let dir = |flag: &str, path: &std::path::Path| {
        if path.is_dir() { Ok(()) } else { Err(format!("{flag} {}: no such directory", path.display())) }
    };
    dir("--spec", &opts.spec)?;
    if let Some(corpus) = &opts.corpus {
        dir("--corpus", corpus)?;
    }
    if let Some(sdk) = &opts.sdk_corpus {
        dir("--sdk-corpus", sdk)?;
    }
    if let Some(path) = &opts.expectations {
        if !path.is_file() {
            return Err(format!("--expectations {}: no such file", path.display()));
        }
    }
    Ok(())
}

/// Why a trial is skipped before it runs, with the skip's kind: listed as `SKIP` in the expectations file
/// (`expectation`), else whatever `not_applicable` says the subject lacks (`not-applicable`).
fn skip_of(
    expectations: &Expectations,
    id: &str,
    not_applicable: impl FnOnce() -> Option<String>,
) -> Option<(&'static str, String)> {
    match expectations.get(id) {
        Some(entry) if entry.outcome == OutcomeName::Skip => Some(("expectation", entry.reason.clone())),
        _ => not_applicable().map(|reason| ("not-applicable", reason)),
    }
}
