//! `dsh-harness explore --against CMD [--base CMD] [--cases N] [--seed S] [--out DIR]` (issue 40):
//! differential exploration. Generated scenarios ([`generate`]) run on two subjects — the reference
//! in-process (or `--base`'s adapter) and `--against`'s adapter — with no expectations; their observations
//! ([`observe`]) are compared, and a disagreement is shrunk by proptest to a minimal scenario, printed,
//! and written out with `--against`'s answers as its expectations ([`emit`]), ready for review.
//!
//! proptest's `TestRunner` drives the cases from a seed, so a run is reproducible. A runner stops at its
//! first failure; the explorer then records the minimal case's signature (its first differing line, names
//! and numbers blanked) as known, and starts a new runner on the cases left. A case that disagrees only in
//! a known way counts as a repeat of it and passes, so each distinct disagreement is shrunk once.

pub mod emit;
pub mod generate;
pub mod observe;
pub mod signature;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::Value;

use dsh_conformance::Scenario;
use dsh_conformance::subject::{Subject, SubjectInfo};

use super::pool;
use observe::Observation;
use signature::signature;

/// What `explore` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Explore {
    /// The adapter whose answers are compared with the base's (`--against`).
    pub against: String,
    /// The base subject's adapter; `None`: the reference in-process.
    pub base: Option<String>,
    /// Cases to generate.
    pub cases: u32,
    /// The seed of the first runner.
    pub seed: u64,
    /// Where the minimal scenarios are written (default: a directory under the system's temp dir).
    pub out: Option<PathBuf>,
    /// Shrink steps per disagreement, at most.
    pub max_shrink: u32,
    /// Per-request timeout.
    pub step_timeout: Duration,
    /// The share of cases under a code mode with `run_code` programs (`--code-mode SHARE`, default 0).
    pub code_mode: f64,
}

/// The usage line of `explore`.
pub const USAGE: &str = "dsh-harness explore --against CMD [--base CMD] [--cases N] [--seed S] [--out DIR] [--max-shrink N] [--step-timeout SECS] [--code-mode SHARE]";

/// Parses `explore`'s arguments (those after the word `explore`).
pub fn parse(args: &[String]) -> Result<Explore, String> {
    let mut e = Explore { against: String::new(), base: None, cases: 256, seed: 0, out: None, max_shrink: 400, step_timeout: Duration::from_secs(10), code_mode: 0.0 };
    let mut it = args.iter();
    let number = |flag: &str, v: Option<&String>| -> Result<u64, String> {
        let v = v.ok_or(format!("{flag} needs a number"))?;
        v.parse().map_err(|_| format!("{flag}: `{v}` is not a number"))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--against" => e.against = it.next().ok_or("--against needs a command")?.clone(),
            "--base" => e.base = Some(it.next().ok_or("--base needs a command")?.clone()),
            "--cases" => e.cases = u32::try_from(number("--cases", it.next())?).map_err(|_| "--cases: too many")?,
            "--seed" => e.seed = number("--seed", it.next())?,
            "--max-shrink" => e.max_shrink = u32::try_from(number("--max-shrink", it.next())?).map_err(|_| "--max-shrink: too many")?,
            "--out" => e.out = Some(PathBuf::from(it.next().ok_or("--out needs a directory")?)),
            "--code-mode" => {
                let v = it.next().ok_or("--code-mode needs a share (0..1)")?;
                e.code_mode = v.parse().ok().filter(|x: &f64| (0.0..=1.0).contains(x)).ok_or(format!("--code-mode: `{v}` is not a share (0..1)"))?;
            }
            "--step-timeout" => e.step_timeout = Duration::from_secs(number("--step-timeout", it.next())?),
            a => return Err(format!("explore: unexpected argument `{a}` (usage: {USAGE})")),
        }
    }
    if e.against.is_empty() {
        return Err(format!("explore needs --against CMD (usage: {USAGE})"));
    }
    Ok(e)
}

/// One distinct disagreement, shrunk.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Its signature (what dedupes it).
    pub signature: String,
    /// The minimal scenario with `--against`'s answers as expectations, as YAML.
    pub yaml: String,
    /// Where it was written.
    pub file: Option<PathBuf>,
    /// The difference of the two observations (`-` base, `+` against).
    pub diff: String,
    /// Generated cases that showed it again after it was found.
    pub repeats: u64,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Summary {
    /// Cases generated and run on both subjects.
    pub cases: u64,
    /// Runs made while shrinking.
    pub shrink_runs: u64,
    /// Cases one subject could not run (a feature it does not declare).
    pub skipped: u64,
    /// The distinct disagreements, in the order found.
    pub findings: Vec<Finding>,
    /// Minimal cases that agreed when run again (timing-dependent: not written).
    pub flaky: Vec<String>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Summary {
    /// The closing line.
    pub fn line(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        let rate = if secs > 0.0 { self.cases as f64 / secs } else { 0.0 };
        let repeats: u64 = self.findings.iter().map(|f| f.repeats).sum();
        format!(
            "explore: {} cases ({} skipped) and {} shrink runs in {secs:.1} s ({rate:.1} cases/s): {} disagreement(s), {repeats} repeat(s) of them, {} not reproduced",
            self.cases, self.skipped, self.shrink_runs, self.findings.len(), self.flaky.len()
        )
    }
}

/// The two subjects and the run's bookkeeping, shared with proptest's test closure.
struct State {
    base: Box<dyn Subject>,
    base_info: SubjectInfo,
    against: Box<dyn Subject>,
    against_info: SubjectInfo,
    next_id: u64,
    shrinking: bool,
    generated: u64,
    known: BTreeMap<String, u64>,
}

impl State {
    /// Runs `plan` on both subjects: `None` when one cannot run it, else both observations and the scenario value.
    fn run(&mut self, plan: &generate::Plan, timeout: Duration) -> Result<Option<(Observation, Observation, Value)>, String> {
        self.next_id += 1;
        let value = plan.scenario(&format!("explore-{}", self.next_id), super::probe::PROBE_RULE);
        let scenario: Scenario = serde_json::from_value(value.clone()).map_err(|e| format!("the generator made an invalid scenario: {e}"))?;
        if dsh_conformance::applicability(&self.base_info, &scenario).is_some() || dsh_conformance::applicability(&self.against_info, &scenario).is_some() {
            return Ok(None);
        }
        let a = observe::observe(&mut *self.base, &scenario, timeout);
        let b = observe::observe(&mut *self.against, &scenario, timeout);
        Ok(Some((a, b, value)))
    }
}

impl State {
    /// Whether `plan` shows a disagreement not known yet.
    fn fails(&mut self, plan: &generate::Plan, timeout: Duration) -> Result<bool, String> {
        Ok(self.run(plan, timeout)?.is_some_and(|(a, b, _)| !a.agrees(&b) && !self.known.contains_key(&signature(&a, &b))))
    }

    /// proptest's shrinking deletes each element once, in one pass: an element that was needed when its
    /// turn came stays even when a later deletion made it useless. This pass deletes single elements
    /// (listeners, steps, tools, the hold, the approval) again until none can go.
    fn minimize(&mut self, mut plan: generate::Plan, timeout: Duration) -> Result<generate::Plan, String> {
        loop {
            let mut candidates = Vec::new();
            for i in 0..plan.hooks.len() {
                let mut c = plan.clone();
                c.hooks.remove(i);
                candidates.push(c);
            }
            for i in 0..plan.steps.len() {
                let mut c = plan.clone();
                c.steps.remove(i);
                candidates.push(c);
            }
            for i in (0..plan.tools.len()).filter(|_| plan.tools.len() > 1) {
                let mut c = plan.clone();
                c.tools.remove(i);
                candidates.push(c);
            }
            if plan.hold.is_some() {
                candidates.push(generate::Plan { hold: None, ..plan.clone() });
            }
            if plan.approval.is_some() {
                candidates.push(generate::Plan { approval: None, ..plan.clone() });
            }
            if plan.code.is_some() {
                candidates.push(generate::Plan { code: None, ..plan.clone() });
            }
            if plan.tool_order.is_some() {
                candidates.push(generate::Plan { tool_order: None, ..plan.clone() });
            }
            for i in 0..plan.sections.len() {
                let mut c = plan.clone();
                c.sections.remove(i);
                candidates.push(c);
            }
            let mut smaller = None;
            for candidate in candidates {
                if self.fails(&candidate, timeout)? {
                    smaller = Some(candidate);
                    break;
                }
            }
            match smaller {
                Some(candidate) => plan = candidate,
                None => return Ok(plan),
            }
        }
    }
}

fn seed_bytes(seed: u64, round: u64) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&round.to_le_bytes());
    bytes[16..].copy_from_slice(b"dsh-explore-seed");
    bytes
}

fn start(command: Option<&str>, timeout: Duration) -> Result<(Box<dyn Subject>, SubjectInfo), String> {
    let mut subject: Box<dyn Subject> = match command {
        Some(command) => Box::new(crate::adapter::AdapterSubject::spawn(command, timeout).map_err(|e| format!("{command}: {}", pool::describe(&e)))?),
        None => pool::in_process()().map_err(|e| format!("the in-process reference: {}", pool::describe(&e)))?,
    };
    let info = subject.initialize().map_err(|e| format!("{}: initialize: {}", command.unwrap_or("the in-process reference"), pool::describe(&e)))?;
    Ok((subject, info))
}

/// Runs the exploration; `print` gets each finding's text as it is found.
pub fn run(opts: &Explore, print: &mut dyn FnMut(&str)) -> Result<Summary, String> {
    let started = Instant::now();
    let (base, base_info) = start(opts.base.as_deref(), opts.step_timeout)?;
    let (against, against_info) = start(Some(&opts.against), opts.step_timeout)?;
    let state = RefCell::new(State { base, base_info, against, against_info, next_id: 0, shrinking: false, generated: 0, known: BTreeMap::new() });
    let skipped = RefCell::new(0u64);
    let mut summary = Summary::default();
    let out_dir = opts.out.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("dsh-explore-{}", opts.seed)));
    let base_name = opts.base.clone().unwrap_or_else(|| "the reference (in-process)".to_owned());
    let mut remaining = u64::from(opts.cases);
    let mut round = 0u64;
    while remaining > 0 {
        let config = Config {
            cases: u32::try_from(remaining).unwrap_or(u32::MAX),
            failure_persistence: None,
            max_shrink_iters: opts.max_shrink,
            max_global_rejects: u32::MAX,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(opts.seed, round)));
        {
            let mut st = state.borrow_mut();
            st.shrinking = false;
            st.generated = 0;
        }
        let outcome = runner.run(&generate::plans_with(opts.code_mode), |plan| {
            let mut st = state.borrow_mut();
            let shrinking = st.shrinking;
            if !shrinking {
                st.generated += 1;
            }
            let Some((a, b, _)) = st.run(&plan, opts.step_timeout).map_err(TestCaseError::fail)? else {
                if !shrinking {
                    *skipped.borrow_mut() += 1;
                }
                return Ok(());
            };
            if a.agrees(&b) {
                return Ok(());
            }
            let sig = signature(&a, &b);
            if let Some(count) = st.known.get_mut(&sig) {
                if !shrinking {
                    *count += 1;
                }
                return Ok(());
            }
            st.shrinking = true;
            Err(TestCaseError::fail(sig))
        });
        let generated = state.borrow().generated;
        summary.cases += generated;
        remaining = remaining.saturating_sub(generated);
        round += 1;
        let plan = match outcome {
            Ok(()) => break,
            Err(TestError::Abort(why)) => return Err(format!("explore stopped: {why}")),
            Err(TestError::Fail(why, _)) if why.message().starts_with("the generator") => return Err(why.message().to_owned()),
            Err(TestError::Fail(_, plan)) => plan,
        };
        let mut st = state.borrow_mut();
        let plan = st.minimize(plan, opts.step_timeout)?;
        let Some((a, b, value)) = st.run(&plan, opts.step_timeout)? else { continue };
        if a.agrees(&b) {
            summary.flaky.push(format!("{plan:?}"));
            continue;
        }
        let sig = signature(&a, &b);
        st.known.insert(sig.clone(), 0);
        let diff = dsh_conformance::diff::unified(&a.lines().join("\n"), &b.lines().join("\n")).replacen("--- expected\n+++ actual\n", "--- base\n+++ against\n", 1);
        let n = summary.findings.len() + 1;
        let mut scenario = emit::with_expectations(&value, &b);
        scenario["id"] = Value::String(format!("explore-{}-{n}", opts.seed));
        scenario["description"] = Value::String(format!("found by dsh-harness explore --seed {}: review, name, cite the rules", opts.seed));
        let header = format!(
            "# dsh-harness explore --seed {} finding {n}: the expectations are the answers of {}.\n# {base_name} answered otherwise:\n{}",
            opts.seed,
            opts.against,
            diff.lines().map(|l| format!("#   {l}\n")).collect::<String>()
        );
        let yaml = format!("{header}{}", emit::to_yaml(&scenario));
        let file = out_dir.join(format!("explore-{}-{n}.yaml", opts.seed));
        let written = std::fs::create_dir_all(&out_dir).and_then(|()| std::fs::write(&file, &yaml)).is_ok();
        let mut text = String::new();
        let _ = writeln!(text, "== disagreement {n} (after {} cases): {sig}", summary.cases);
        let _ = writeln!(text, "{}", if written { format!("written: {}", file.display()) } else { format!("could not write {}", file.display()) });
        let _ = write!(text, "{diff}{}", if diff.ends_with('\n') { "" } else { "\n" });
        print(&text);
        summary.findings.push(Finding { signature: sig, yaml, file: written.then_some(file), diff, repeats: 0 });
    }
    let st = state.into_inner();
    for finding in &mut summary.findings {
        finding.repeats = st.known.get(&finding.signature).copied().unwrap_or(0);
    }
    summary.skipped = skipped.into_inner();
    // Every run but the generated cases and the one rerun of each minimal case.
    summary.shrink_runs = st.next_id.saturating_sub(summary.cases + (summary.findings.len() + summary.flaky.len()) as u64);
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// The `explore` subcommand, on a large stack (the in-process reference's checks run on one in a run too).
/// Exit status: 0 when the subjects agreed on every case, 1 when they did not, 2 when nothing could run.
pub fn main(opts: Explore) -> ExitCode {
    let worker = std::thread::Builder::new().stack_size(256 << 20).spawn(move || {
        let result = run(&opts, &mut |text| print!("{text}"));
        result.map(|s| {
            println!("{}", s.line());
            s.findings.is_empty()
        })
    });
    let code = match worker.map(|h| h.join()) {
        Ok(Ok(Ok(true))) => ExitCode::SUCCESS,
        Ok(Ok(Ok(false))) => ExitCode::from(1),
        Ok(Ok(Err(e))) => {
            eprintln!("dsh-harness explore: {e}");
            ExitCode::from(2)
        }
        _ => {
            eprintln!("dsh-harness explore: the exploring thread failed");
            ExitCode::from(2)
        }
    };
    crate::adapter::kill_all();
    code
}
