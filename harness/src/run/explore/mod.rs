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

/// The first change between two observations' lines, names and numbers blanked: the lines one side has
/// and the other lacks where they first part (a longest-common-subsequence diff, so the lines around it,
/// which depend on the rest of the scenario, are not part of it). What makes two disagreements the same.
pub fn signature(a: &Observation, b: &Observation) -> String {
    let (ra, rb) = (a.lines(), b.lines());
    let la: Vec<String> = ra.iter().map(|l| blank(l)).collect();
    let lb: Vec<String> = rb.iter().map(|l| blank(l)).collect();
    let (n, m) = (la.len(), lb.len());
    // lcs[i][j]: the longest common subsequence of la[i..] and lb[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if la[i] == lb[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m && la[i] == lb[j] {
        i += 1;
        j += 1;
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    while (i < n || j < m) && !(i < n && j < m && la[i] == lb[j]) {
        if j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
            removed.push(i);
            i += 1;
        } else {
            added.push(j);
            j += 1;
        }
    }
    // A line answered differently: where in it, rather than all of it (an assembly's line holds every
    // tool, which depends on the rest of the scenario).
    if let ([x], [y]) = (removed.as_slice(), added.as_slice()) {
        let parse = |l: &str| serde_json::from_str::<Value>(l.strip_prefix("event ").unwrap_or(l)).ok().filter(Value::is_object);
        if let (Some(x), Some(y)) = (parse(&ra[*x]), parse(&rb[*y])) {
            if let Some((path, vx, vy)) = first_difference(&x, &y, String::new()) {
                let method = x.get("method").and_then(Value::as_str).unwrap_or("event");
                let short = |v: &Value| blank(&dsh_conformance::json::write(v, false)).chars().take(200).collect::<String>();
                return format!("{method} {}: {} <> {}", blank(&path), short(&vx), short(&vy));
            }
        }
    }
    let change: Vec<String> = removed.iter().map(|&i| format!("- {}", la[i])).chain(added.iter().map(|&j| format!("+ {}", lb[j]))).collect();
    let text = if change.is_empty() { "stopped differently".to_owned() } else { change.join(" / ") };
    text.chars().take(480).collect()
}

/// The first place two values differ (a mapping's keys in `a`'s order, then those only `b` has), with the
/// two values there (`null` for a missing one); `None` when they are equal.
fn first_difference(a: &Value, b: &Value, path: String) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .map(|(k, v)| (k, Some(v), y.get(k)))
            .chain(y.iter().filter(|(k, _)| !x.contains_key(*k)).map(|(k, v)| (k, None, Some(v))))
            .find_map(|(k, vx, vy)| match (vx, vy) {
                (Some(vx), Some(vy)) => first_difference(vx, vy, format!("{path}/{k}")),
                (vx, vy) => Some((format!("{path}/{k}"), vx.cloned().unwrap_or(Value::Null), vy.cloned().unwrap_or(Value::Null))),
            }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (vx, vy))| first_difference(vx, vy, format!("{path}/{i}")))
        }
        _ if a == b => None,
        _ => Some((path, a.clone(), b.clone())),
    }
}

/// `text` with the names the generator numbers blanked to `#`: a word of letters and digits ending in
/// digits (`t1`, `k2`, `dg1`, `a3`) whole, and the digits after a letter and `-` (`call-2`, `explore-7`),
/// and a step's number; error codes and other values stay.
fn blank(text: &str) -> String {
    let text = text.strip_prefix("{\"step\":").map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_digit())).map_or(text.to_owned(), |rest| format!("{{\"step\":#{rest}"));
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let word_start = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if word_start && chars[i].is_ascii_alphabetic() {
            let letters = chars[i..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
            let digits = chars[i + letters..].iter().take_while(|c| c.is_ascii_digit()).count();
            let end = i + letters + digits;
            if digits > 0 && chars.get(end).is_none_or(|c| !c.is_ascii_alphanumeric()) {
                out.push('#');
                i = end;
                continue;
            }
            out.extend(&chars[i..i + letters]);
            i += letters;
            continue;
        }
        let after_name = i > 1 && chars[i - 1] == '-' && chars[i - 2].is_ascii_alphabetic();
        if after_name && chars[i].is_ascii_digit() {
            out.push('#');
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_blanked_and_codes_kept() {
        let obs = |lines: &[&str]| Observation { answers: lines.iter().map(|l| serde_json::json!(l)).collect(), ..Observation::default() };
        // The change, not its context: the same extra line after different ones is one disagreement.
        let (a, b) = (obs(&["alpha", "y", "z"]), obs(&["beta", "y", "extra", "z"]));
        let (c, d) = (obs(&["w", "y", "z"]), obs(&["w", "y", "extra7", "z"]));
        assert_eq!(signature(&a, &b), "- \"alpha\" / + \"beta\"");
        assert_eq!(signature(&c, &d), "+ \"#\"");
        // A line answered differently: the first place in it.
        let line = |text: &str| serde_json::json!({ "step": 3, "method": "prompt/assemble", "result": { "sections": ["a", "b", text], "tools": ["t1"] } });
        let (mut e, mut f) = (obs(&[]), obs(&[]));
        e.answers.push(line("k1 says no"));
        f.answers.push(line("k1 says NO"));
        assert_eq!(signature(&e, &f), "prompt/assemble /result/sections/2: \"# says no\" <> \"# says NO\"");
        assert_eq!(blank(r#"{"step":12,"method":"x","error":{"code":-32000},"t":"t12 call-3 k1 threw dg2 says no, h1x2 k-1"}"#), r##"{"step":#,"method":"x","error":{"code":-32000},"t":"# call-# # threw # says no, h1x2 k-#"}"##);
    }
}
