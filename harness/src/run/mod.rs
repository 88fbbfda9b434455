//! The conformance runner: one libtest-mimic trial per scenario, per validation-corpus group and per
//! SDK-corpus file and language (plus one per file that failed to load),
//! expectations applied strictly, a JSON Lines report, a summary line, and an exit status that is 0
//! exactly when no outcome was unexpected.
//!
//! # Order
//! 1. Load the spec; files with errors become trials.
//! 2. Start one subject and `initialize` it: a failure or a protocol major-version mismatch ends the run
//!    at once with one message (exit status 2).
//! 3. Load the expectations; problems in the file become trials.
//! 4. Build the trials; skips are static, so `--list --ignored` shows them.
//! 5. Run them; after a CRASH, TIMEOUT or ERROR(adapter) the subject is restarted before it serves again.
//! 6. Footer, skip reasons, summary line.

pub mod cli;
pub mod expectations;
pub mod matrix;
pub mod pool;
pub mod report;
pub mod suite;
pub mod trial;
pub mod verdict;

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use dsh_conformance::OutcomeName;
use dsh_conformance::protocol::major;
use dsh_conformance::subject::SubjectError;
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
    let corpus = opts.corpus.clone().unwrap_or_else(|| suite::default_corpus(&opts.spec));
    let sdk = opts.sdk_corpus.clone().unwrap_or_else(|| suite::default_sdk_corpus(&opts.spec));
    let suite = suite::load(&opts.spec, &corpus, &sdk);
    if suite.scenarios.is_empty() && suite.errors.is_empty() {
        eprintln!("dsh-harness: warning: no scenarios under {}", opts.spec.display());
    }
    // A subject that panics while starting is as broken as one that crashes.
    let start = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Pool::start(factory)));
    let start = start.unwrap_or_else(|_| {
        Err(SubjectError::Crash { status: "panicked during initialize".into(), stderr_tail: String::new() })
    });
    let (pool, info) = match start {
        Ok(started) => started,
        Err(e) => {
            let verdict = suite::subject_error(e, "initialize");
            eprintln!("dsh-harness: {subject} failed to initialize, nothing was run: {}", verdict.message);
            return ExitCode::from(2);
        }
    };
    if major(&info.protocol_version) != major(PROTOCOL_VERSION) {
        eprintln!(
            "dsh-harness: protocol version mismatch, nothing was run: the harness speaks {PROTOCOL_VERSION}, {} {} \
             answered initialize with {}",
            info.name, info.version, info.protocol_version
        );
        return ExitCode::from(2);
    }
    let known: HashSet<&str> =
        suite.scenarios.iter().map(|s| s.id.as_str()).chain(suite.groups.iter().map(|g| g.id.as_str())).chain(suite.sdk.iter().map(|c| c.id.as_str())).collect();
    let (expectations, problems) = match &opts.expectations {
        Some(path) => Expectations::load(path, &known),
        None => (Expectations::default(), Vec::new()),
    };
    let listing = opts.libtest.list;
    let report = match Report::create(if listing { None } else { opts.report.as_deref() }) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("dsh-harness: cannot write the report: {e}");
            return ExitCode::from(2);
        }
    };
    report.header(&info, subject, &opts.spec, opts.expectations.as_deref());
    if subject.starts_with("adapter") && !opts.threads_given {
        // One adapter process serves one session at a time; more threads would only start more processes.
        opts.libtest.test_threads = Some(1);
    }
    let implementation = format!("{} {}", info.name, info.version);
    let ctx = Arc::new(Context { pool, report, expectations, step_timeout: opts.step_timeout });

    let mut trials = Vec::new();
    let mut prerecorded: Vec<(String, String, Vec<String>, Verdict)> = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut unique = |name: String| {
        let n = names.entry(name.clone()).or_default();
        *n += 1;
        if *n == 1 { name } else { format!("{name}#{n}") }
    };
    for error in suite.errors {
        let name = unique(error.file.clone());
        let verdict = Verdict::new(OutcomeName::Error, Some("scenario"), error.message);
        let (c, file) = (Arc::clone(&ctx), error.file);
        trials.push(Trial::test(name.clone(), move || {
            trial::settle(&c, &name, &file, &[], &verdict).map(|_| ())
        }));
    }
    if let Some(path) = &opts.expectations {
        for problem in problems {
            let file = path.display().to_string();
            let name = unique(format!("{file}:{}", problem.line));
            let message = format!("expectations file {file}:{}: {}", problem.line, problem.message);
            let verdict = Verdict::new(OutcomeName::Error, Some("harness"), message);
            let c = Arc::clone(&ctx);
            trials.push(Trial::test(name.clone(), move || trial::settle(&c, &name, &file, &[], &verdict).map(|_| ())));
        }
    }
    for planned in suite.scenarios {
        let skip = skip_of(&ctx.expectations, &planned.id, || suite::not_applicable(&planned.scenario, &info));
        let c = Arc::clone(&ctx);
        let (id, file, rules) = (planned.id.clone(), planned.file.clone(), planned.rules.clone());
        let trial = match skip {
            Some((kind, reason)) => {
                let verdict = Verdict::new(OutcomeName::Skip, Some(kind), reason);
                prerecorded.push((id.clone(), file.clone(), rules.clone(), verdict.clone()));
                Trial::ignorable_test(unique(id.clone()), move || trial::settle(&c, &id, &file, &rules, &verdict))
                    .with_ignored_flag(true)
            }
            None => {
                let scenario = planned.scenario;
                Trial::ignorable_test(unique(id.clone()), move || trial::run_scenario(&c, &id, &file, &rules, scenario))
            }
        };
        trials.push(trial);
    }
    let group_skip = dsh_conformance::corpus::applicability(&info);
    for group in suite.groups {
        let skip = skip_of(&ctx.expectations, &group.id, || group_skip.clone());
        let c = Arc::clone(&ctx);
        let name = unique(group.id.clone());
        let trial = match skip {
            Some((kind, reason)) => {
                let verdict = Verdict::new(OutcomeName::Skip, Some(kind), reason);
                let (id, file, rules) = (group.id.clone(), group.file.clone(), group.rules.clone());
                prerecorded.push((id.clone(), file.clone(), rules.clone(), verdict.clone()));
                // Deep groups are taken apart on a large stack even when skipped.
                let _ = std::thread::Builder::new().stack_size(256 << 20).spawn(move || drop(group)).map(|h| h.join());
                Trial::ignorable_test(name, move || trial::settle(&c, &id, &file, &rules, &verdict)).with_ignored_flag(true)
            }
            None => Trial::ignorable_test(name, move || trial::run_group(&c, group)),
        };
        trials.push(trial);
    }
    let sdk_skip = dsh_conformance::sdk_corpus::applicability(&info);
    for case in suite.sdk {
        let skip = skip_of(&ctx.expectations, &case.id, || sdk_skip.clone());
        let c = Arc::clone(&ctx);
        let name = unique(case.id.clone());
        let trial = match skip {
            Some((kind, reason)) => {
                let verdict = Verdict::new(OutcomeName::Skip, Some(kind), reason);
                let (id, file, rules) = (case.id.clone(), case.file.clone(), case.rules.clone());
                prerecorded.push((id.clone(), file.clone(), rules.clone(), verdict.clone()));
                Trial::ignorable_test(name, move || trial::settle(&c, &id, &file, &rules, &verdict)).with_ignored_flag(true)
            }
            None => Trial::ignorable_test(name, move || trial::run_sdk(&c, case)),
        };
        trials.push(trial);
    }

    let args = &opts.libtest;
    let planned = trials.iter().filter(|t| !args.is_filtered_out(t)).count();
    let mut skipped = Vec::new();
    if !listing && !args.ignored && !args.include_ignored {
        // Static skips are not run by libtest: record them here, so the report counts them.
        let selected: HashSet<&str> =
            trials.iter().filter(|t| !args.is_filtered_out(t) && t.has_ignored_flag()).map(Trial::name).collect();
        for (id, file, rules, verdict) in &prerecorded {
            if selected.contains(id.as_str()) {
                let _ = trial::settle(&ctx, id, file, rules, verdict);
                skipped.push(format!("    {id}: {}: {}", verdict.label(), verdict.message));
            }
        }
    }
    let conclusion = libtest_mimic::run(args, trials);
    if listing {
        return conclusion.exit_code();
    }
    if !skipped.is_empty() {
        println!("skipped (not run):\n{}\n", skipped.join("\n"));
    }
    ctx.report.footer(planned, started.elapsed());
    println!("{}", ctx.report.summary(planned, &implementation));
    let executed: usize = ctx.report.counts().values().sum();
    let unexpected = ctx.report.counts().iter().any(|(o, n)| o.is_unexpected() && *n > 0);
    if conclusion.has_failed() || unexpected || executed != planned || ctx.report.write_failed() {
        ExitCode::from(101)
    } else {
        ExitCode::SUCCESS
    }
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
