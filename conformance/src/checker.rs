//! Runs one scenario against one subject and judges it: `session/open` (session id = scenario id),
//! each step's requests with their `expect`, the `events` steps, then `session/close`, whose leak
//! report must be empty. The same code judges in-process and adapter subjects.
//!
//! Every value received is validated against the protocol schemas first (a violation is
//! `ERROR(adapter)`, never FAIL) and dismantled after use (it may be 100,000 levels deep).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::diff;
use crate::eventlog::EventLog;
use crate::features::applicability;
use crate::json::{self, Deep, dismantle};
use crate::matchers::{self, MatchError, MatchMode};
use crate::messages::MessageValidator;
use crate::outcome::{ErrorKind, Outcome, SkipKind, TrialRecord};
use crate::protocol::{self, Request, RequestBuilder};
use crate::scenario::{Action, Expect, Scenario, Step};
use crate::subject::{Reply, Subject, SubjectError, SubjectInfo};

/// JSON-RPC error code with which `session/open` says the implementation threw while building the
/// setup: the scenario FAILs with the subject's message (any other error is `ERROR(adapter)`).
pub const SETUP_REJECTED: i64 = -32001;

/// How the checker runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// How long one request may go unanswered.
    pub step_timeout: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions { step_timeout: Duration::from_secs(10) }
    }
}

/// `SKIP(not-applicable)` without opening a session when the subject cannot run the scenario, else
/// [`run_scenario`].
pub fn check_trial(subject: &mut dyn Subject, info: &SubjectInfo, scenario: &Scenario, opts: &CheckOptions) -> TrialRecord {
    match applicability(info, scenario) {
        Some(reason) => TrialRecord {
            outcome: Outcome::Skip { kind: SkipKind::NotApplicable, reason },
            transcript: Vec::new(),
            duration: Duration::ZERO,
            restart_needed: false,
        },
        None => run_scenario(subject, scenario, opts),
    }
}

/// Runs the scenario: open, steps, close.
pub fn run_scenario(subject: &mut dyn Subject, scenario: &Scenario, opts: &CheckOptions) -> TrialRecord {
    run_session(subject, &scenario.id, opts, |run| run.open_and_steps(scenario))
}

/// Runs `body` (which opens the session itself) against a fresh transcript, then closes the session
/// `session`, whose leak report must be empty; what stopped the body first is the outcome.
pub(crate) fn run_session(
    subject: &mut dyn Subject,
    session: &str,
    opts: &CheckOptions,
    body: impl FnOnce(&mut Run<'_>) -> Result<(), Stop>,
) -> TrialRecord {
    let started = Instant::now();
    subject.discard_transcript();
    let validator = match MessageValidator::shared() {
        Ok(v) => v,
        Err(message) => {
            return TrialRecord {
                outcome: Outcome::Error { kind: ErrorKind::Harness, message },
                transcript: Vec::new(),
                duration: started.elapsed(),
                restart_needed: false,
            };
        }
    };
    let mut run = Run { subject, opts, validator, log: EventLog::new(session), refused: None };
    let body = body(&mut run);
    let (outcome, restart_needed) = match body {
        // A setup refused as the scenario expects: no session was opened, so none is closed.
        Ok(()) if run.refused.is_some() => (Outcome::Pass, false),
        Ok(()) => match run.close(session) {
            Ok(()) => (Outcome::Pass, false),
            Err(stop) => (stop.outcome, stop.restart),
        },
        Err(stop) if stop.restart => (stop.outcome, true),
        Err(stop) => {
            // Best effort: free the session; a failing close does not hide the first outcome.
            let restart = run.close(session).err().is_some_and(|s| s.restart);
            (stop.outcome, restart)
        }
    };
    // A PASS leaves its transcript with the subject (the caller discards it, or takes it if something it
    // checks afterwards turns the trial into a failure): only failures are worth rendering.
    let transcript = if outcome == Outcome::Pass { Vec::new() } else { run.subject.take_transcript() };
    TrialRecord { outcome, transcript, duration: started.elapsed(), restart_needed }
}

/// Why a run stopped early.
pub(crate) struct Stop {
    outcome: Outcome,
    /// The subject is in an unknown state: do not send `session/close`, restart it.
    restart: bool,
}

impl Stop {
    pub(crate) fn fail(message: String) -> Stop {
        Stop { outcome: Outcome::Fail { message }, restart: false }
    }

    pub(crate) fn error(kind: ErrorKind, message: String) -> Stop {
        Stop { outcome: Outcome::Error { kind, message }, restart: false }
    }
}

/// One session being driven.
pub(crate) struct Run<'a> {
    subject: &'a mut dyn Subject,
    opts: &'a CheckOptions,
    validator: &'static MessageValidator,
    log: EventLog,
    /// The message of the setup-rejected error `session/open` answered, when it did.
    refused: Option<String>,
}

impl Run<'_> {
    fn open_and_steps(&mut self, scenario: &Scenario) -> Result<(), Stop> {
        if let Some(expected) = &scenario.rejects_setup {
            return self.open_refused(scenario, &expected.message);
        }
        let open = self.send("session/open", protocol::open_request(scenario))?;
        dismantle(open);
        let mut builder = RequestBuilder::new(&scenario.id);
        for (i, step) in scenario.steps.iter().enumerate() {
            let ctx = describe(i, step);
            self.step(&ctx, step, &mut builder)?;
        }
        Ok(())
    }

    /// `rejectsSetup`: `session/open` must answer the setup-rejected error with a matching message.
    fn open_refused(&mut self, scenario: &Scenario, expected: &Value) -> Result<(), Stop> {
        if !scenario.steps.is_empty() {
            return Err(Stop::error(ErrorKind::Scenario, "rejectsSetup: a scenario whose setup is refused has no steps".to_owned()));
        }
        match self.send("session/open", protocol::open_request(scenario)) {
            Ok(open) => {
                dismantle(open);
                Err(Stop::fail("session/open: the setup was accepted; the scenario expects it refused (rejectsSetup)".to_owned()))
            }
            Err(stop) => match self.refused.clone() {
                Some(message) => compare("session/open", "rejectsSetup.message", expected, &Value::String(message), MatchMode::Exact),
                None => Err(stop),
            },
        }
    }

    fn step(&mut self, ctx: &str, step: &Step, builder: &mut RequestBuilder) -> Result<(), Stop> {
        check_expect_keys(ctx, step)?;
        if let Action::Events(expected) = &step.action {
            let actual = self.log.take();
            let expected = crate::unordered::resolve(expected, &actual)
                .map_err(|e| Stop::error(ErrorKind::Scenario, format!("{ctx}: {e}")))?;
            let actual = Deep(Value::Array(actual));
            return compare(ctx, "events", &Value::Array(expected), &actual.0, MatchMode::Exact);
        }
        if let Action::Sleep(ms) = &step.action {
            std::thread::sleep(std::time::Duration::from_millis(*ms));
            return Ok(());
        }
        let (requests, _) = builder.step(step);
        let mut last = None;
        for request in requests {
            if let Some(previous) = last.take() {
                dismantle(previous);
            }
            last = Some(self.send(ctx, request)?);
        }
        let result = Deep(last.unwrap_or(Value::Null));
        judge(ctx, step.expect.as_ref(), &result.0)
    }

    /// Sends one request; validates the events that came with it and its result.
    pub(crate) fn send(&mut self, ctx: &str, request: Request) -> Result<Value, Stop> {
        let reply = self.subject.request(request.method, request.params, self.opts.step_timeout);
        self.settle(ctx, request.method, reply)
    }

    /// [`send`](Self::send), handing the request's params back (see [`Subject::request_keeping`]).
    pub(crate) fn send_keeping(&mut self, ctx: &str, request: Request) -> (Result<Value, Stop>, Value) {
        let (reply, params) = self.subject.request_keeping(request.method, request.params, self.opts.step_timeout);
        (self.settle(ctx, request.method, reply), params)
    }

    /// Validates a reply's events and result.
    fn settle(&mut self, ctx: &str, method: &str, reply: Result<Reply, SubjectError>) -> Result<Value, Stop> {
        let reply = match reply {
            Ok(r) => r,
            Err(SubjectError::Timeout { .. }) => {
                let stderr_tail = self.subject.stderr_tail();
                return Err(Stop { outcome: Outcome::Timeout { step: format!("{ctx}: {method}"), stderr_tail }, restart: true });
            }
            Err(SubjectError::Crash { status, stderr_tail }) => {
                return Err(Stop { outcome: Outcome::Crash { status, stderr_tail }, restart: true });
            }
            Err(SubjectError::Protocol { message }) => {
                let outcome = Outcome::Error { kind: ErrorKind::Adapter, message: format!("{ctx}: {method}: {message}") };
                return Err(Stop { outcome, restart: true });
            }
        };
        let events_ok = self.log.receive(reply.events, self.validator);
        let result = match reply.result {
            Ok(result) => result,
            Err(rpc) => {
                if let Some(data) = rpc.data {
                    dismantle(data);
                }
                events_ok.map_err(|m| Stop::error(ErrorKind::Adapter, format!("{ctx}: {m}")))?;
                if method == "session/open" && rpc.code == SETUP_REJECTED {
                    self.refused = Some(rpc.message.clone());
                    return Err(Stop::fail(format!("the subject rejected the setup: {}", rpc.message)));
                }
                return Err(Stop::error(
                    ErrorKind::Adapter,
                    format!("{ctx}: {method} answered JSON-RPC error {}: {}", rpc.code, rpc.message),
                ));
            }
        };
        let checked = events_ok
            .and_then(|()| self.validator.result(method, &result))
            .and_then(|()| self.log.check_through(method, &result));
        if let Err(m) = checked {
            dismantle(result);
            return Err(Stop::error(ErrorKind::Adapter, format!("{ctx}: {m}")));
        }
        Ok(result)
    }

    /// `session/close`: the leak report must be empty.
    fn close(&mut self, session: &str) -> Result<(), Stop> {
        let result = Deep(self.send("session/close", protocol::close_request(session))?);
        let leaks = result.0.get("leaks");
        let list = |k: &str| -> Vec<String> {
            leaks.and_then(|l| l.get(k)).and_then(Value::as_array).map(|a| a.iter().map(|v| json::write(v, false)).collect()).unwrap_or_default()
        };
        let pending = list("pendingCalls");
        let gates = list("unopenedGates");
        let tasks = leaks.and_then(|l| l.get("liveTasks")).and_then(Value::as_u64).unwrap_or(0);
        if pending.is_empty() && tasks == 0 {
            return Ok(());
        }
        Err(Stop::fail(format!(
            "session/close: the session leaked: pending calls [{}], live tasks {tasks}, gates still awaited [{}]",
            pending.join(", "),
            gates.join(", ")
        )))
    }
}

/// `step 3 (execute {"name":"echo",...})`, shortened.
fn describe(index: usize, step: &Step) -> String {
    let arg = serde_json::to_value(&step.action)
        .ok()
        .and_then(|v| v.get(step.action.key()).map(|a| json::write(a, false)))
        .unwrap_or_default();
    let arg = if arg.chars().count() > 80 { format!("{}…", arg.chars().take(80).collect::<String>()) } else { arg };
    format!("step {} ({} {arg})", index + 1, step.action.key())
}

/// The `expect` keys each action can be judged on; anything else is a broken scenario.
fn allowed_keys(action: &Action) -> &'static [&'static str] {
    match action {
        Action::Register(_) | Action::AddHook(_) | Action::Restrict(_) | Action::PresentAs(_) | Action::Dispose(_) => {
            &["ok", "threw"]
        }
        Action::Get(_) => &["tool"],
        Action::Schemas(_) => &["ok", "threw", "schemas", "names"],
        Action::ExecutionMode(_) => &["mode"],
        Action::Present(_) => &["present"],
        Action::Definition(_) => &["definition"],
        Action::Execute(_) | Action::Await(_) => &["result", "resultIncludes"],
        Action::Assemble(_) => &["ok", "threw", "sections", "tools"],
        Action::RenderSdk(_) => &["ok", "threw", "text"],
        Action::Environments(_) => &["environments"],
        _ => &[],
    }
}

fn check_expect_keys(ctx: &str, step: &Step) -> Result<(), Stop> {
    let Some(expect) = &step.expect else { return Ok(()) };
    let allowed = allowed_keys(&step.action);
    if let Ok(Value::Object(map)) = serde_json::to_value(expect) {
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(Stop::error(
                    ErrorKind::Scenario,
                    format!("{ctx}: expect.{key} does not apply to a {} step (it takes: {})", step.action.key(), allowed.join(", ")),
                ));
            }
        }
    }
    if expect.ok == Some(false) {
        return Err(Stop::error(ErrorKind::Scenario, format!("{ctx}: `ok: false` is not an expectation; use `threw`")));
    }
    if expect.ok.is_some() && expect.threw.is_some() {
        return Err(Stop::error(ErrorKind::Scenario, format!("{ctx}: `ok` and `threw` together")));
    }
    Ok(())
}

/// Compares a step's result with its `expect`.
fn judge(ctx: &str, expect: Option<&Expect>, result: &Value) -> Result<(), Stop> {
    let default = Expect::default();
    let expect = expect.unwrap_or(&default);
    let field = |k: &str| result.get(k).unwrap_or(&Value::Null);
    // An expected throw needs an outcome: a result without one (an older adapter's `handle/dispose`) returned.
    if result.get("outcome").is_some() || expect.threw.is_some() {
        judge_outcome(ctx, expect, field("outcome"))?;
    }
    let checks: [(&str, Option<&Value>, MatchMode); 9] = [
        ("result", expect.result.as_ref(), MatchMode::Exact),
        ("result", expect.result_includes.as_ref(), MatchMode::Includes),
        ("tool", expect.tool.as_ref(), MatchMode::Exact),
        ("present", expect.present.as_ref(), MatchMode::Exact),
        ("definition", expect.definition.as_ref(), MatchMode::Exact),
        ("sections", expect.sections.as_ref(), MatchMode::Exact),
        ("tools", expect.tools.as_ref(), MatchMode::Exact),
        ("text", expect.text.as_ref(), MatchMode::Exact),
        ("environments", expect.environments.as_ref(), MatchMode::Exact),
    ];
    for (key, expected, mode) in checks {
        if let Some(expected) = expected {
            compare(ctx, key, expected, field(key), mode)?;
        }
    }
    if let Some(schemas) = &expect.schemas {
        compare(ctx, "schemas", &Value::Array(schemas.clone()), field("schemas"), MatchMode::Exact)?;
    }
    if let Some(names) = &expect.names {
        let actual: Vec<Value> = field("schemas")
            .as_array()
            .map(|a| a.iter().map(|s| s.get("name").cloned().unwrap_or(Value::Null)).collect())
            .unwrap_or_default();
        compare(ctx, "names", &Value::Array(names.clone()), &Value::Array(actual), MatchMode::Exact)?;
    }
    if let Some(mode) = expect.mode {
        compare(ctx, "mode", &Value::String(mode.as_str().into()), field("mode"), MatchMode::Exact)?;
    }
    Ok(())
}

/// `ok` (the default) or `threw` against `{ ok: true }` / `{ threw: { message, name?, code?, violations? } }`:
/// the message always, the other fields when the expectation names them.
fn judge_outcome(ctx: &str, expect: &Expect, outcome: &Value) -> Result<(), Stop> {
    let threw = outcome.get("threw");
    match (&expect.threw, threw) {
        (None, None) => Ok(()),
        (None, Some(t)) => Err(Stop::fail(format!(
            "{ctx}: expected it to return, it threw: {}",
            json::write(t, false)
        ))),
        (Some(e), None) => Err(Stop::fail(format!(
            "{ctx}: expected it to throw {}, it returned",
            json::write(&e.message, false)
        ))),
        (Some(e), Some(t)) => {
            compare(ctx, "threw.message", &e.message, t.get("message").unwrap_or(&Value::Null), MatchMode::Exact)?;
            for (field, expected) in [("name", &e.name), ("code", &e.code), ("violations", &e.violations)] {
                if let Some(expected) = expected {
                    let what = format!("threw.{field}");
                    compare(ctx, &what, expected, t.get(field).unwrap_or(&Value::Null), MatchMode::Exact)?;
                }
            }
            Ok(())
        }
    }
}

/// One comparison; a mismatch is FAIL with the path and a diff, a broken matcher ERROR(scenario).
pub(crate) fn compare(ctx: &str, what: &str, expected: &Value, actual: &Value, mode: MatchMode) -> Result<(), Stop> {
    match matchers::check(expected, actual, mode) {
        Ok(()) => Ok(()),
        Err(MatchError::BadMatcher { path, message }) => {
            Err(Stop::error(ErrorKind::Scenario, format!("{ctx}: expect {what} at {path}: {message}")))
        }
        Err(MatchError::Mismatch { path, what: difference }) => {
            let (e, a) = matchers::display_pair(expected, actual, mode);
            let path = path.replacen('$', what, 1);
            Err(Stop::fail(format!("{ctx}: {path}: {difference}\n{}", diff::unified(&e, &a))))
        }
    }
}
