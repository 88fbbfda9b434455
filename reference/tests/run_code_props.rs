//! Property: random `run_code` programs of binding calls — random mixes of parallel-safe and exclusive
//! tools, sequential calls, concurrent batches and calls never awaited, bodies that wait for gates (some
//! ignoring their signal), failing bodies — under random caps, random gate openings and a random abort of
//! the transport call, always:
//!
//! - produce exactly one `run_code` result, published once and equal to the returned one;
//! - keep the scheduling contract: dispatch-start records and body starts in submission order, at most
//!   `maxParallelSubCalls` bodies running at once, an exclusive body running alone, sub-call results
//!   (and dispatch records) committed in submission order, each sub-call's records in the order
//!   start record → body start → body end → `tools/result` → dispatch record;
//! - leave no sub-call running once the transport's result is published (every started body ended,
//!   every started sub-call published its result before it).
//!
//! Deterministic given the seed: one current-thread runtime; gate openings, the abort and yields are
//! chosen by the strategy. `PROPTEST_CASES` sets the case count (default 64).
//!
//! Spec: CODE-008, RUN-008, RUN-011..RUN-016, RUN-019.

mod run_code_support;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use dsh_tools::code::CodeDispatchEvent;
use dsh_tools::{OutputDeclaration, Parameters, ScopeKey, ToolDefinition, ToolExecutionInput, ToolMode, ToolRuntime, ToolsConfig};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use run_code_support::Scripted;
use serde_json::{Value, json};
use tokio::sync::watch;

const GATES: usize = 3;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

#[derive(Clone, Debug)]
struct CallSpec {
    exclusive: bool,
    gate: Option<usize>,
    /// Wait for the gate even when cancelled.
    stubborn: bool,
    fail: bool,
}

#[derive(Clone, Debug)]
enum Step {
    Call(CallSpec),
    All(Vec<CallSpec>),
    Forget(CallSpec),
    Log,
}

#[derive(Clone, Debug)]
enum Action {
    Yield(u8),
    Open(usize),
    Abort,
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (any::<bool>(), prop::option::of(0..GATES), any::<bool>(), prop::bool::weighted(0.2))
        .prop_map(|(exclusive, gate, stubborn, fail)| CallSpec { exclusive, gate, stubborn, fail })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => call_spec().prop_map(Step::Call),
        3 => prop::collection::vec(call_spec(), 1..5).prop_map(Step::All),
        1 => call_spec().prop_map(Step::Forget),
        1 => Just(Step::Log),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        4 => (1u8..20).prop_map(Action::Yield),
        3 => (0..GATES).prop_map(Action::Open),
        1 => Just(Action::Abort),
    ]
}

fn call_json(c: &CallSpec) -> Value {
    let name = if c.exclusive { "x" } else { "p" };
    json!({"name": name, "args": {"gate": c.gate, "stubborn": c.stubborn, "fail": c.fail}})
}

fn program(steps: &[Step]) -> Value {
    Value::Array(
        steps
            .iter()
            .map(|s| match s {
                Step::Call(c) => {
                    let j = call_json(c);
                    json!({"call": j["name"], "args": j["args"]})
                }
                Step::All(list) => json!({"all": list.iter().map(call_json).collect::<Vec<_>>()}),
                Step::Forget(c) => json!({"forget": call_json(c)}),
                Step::Log => json!({"log": "line"}),
            })
            .collect(),
    )
}

#[derive(Clone, Debug, PartialEq)]
enum Event {
    DispatchStart(u64),
    BodyStart(u64, bool),
    BodyEnd(u64),
    Result(String),
    Dispatch(u64),
}

type Log = Arc<Mutex<Vec<Event>>>;

fn record(log: &Log, e: Event) {
    log.lock().unwrap_or_else(|p| p.into_inner()).push(e);
}

fn number(sub_call_id: &str) -> u64 {
    sub_call_id.rsplit(':').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn tool(name: &str, exclusive: bool, log: Log, gates: Arc<Vec<watch::Receiver<bool>>>) -> ToolDefinition {
    let mut def = ToolDefinition::new(
        name,
        "t",
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration { schema: json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(move |args, ctx| {
            let (log, gates) = (Arc::clone(&log), Arc::clone(&gates));
            Box::pin(async move {
                let n = number(ctx.call_id());
                record(&log, Event::BodyStart(n, exclusive));
                if let Some(g) = args.get("gate").and_then(Value::as_u64) {
                    let mut gate = gates[g as usize].clone();
                    if args.get("stubborn") == Some(&json!(true)) {
                        let _ = gate.wait_for(|o| *o).await;
                    } else {
                        tokio::select! {
                            _ = gate.wait_for(|o| *o) => {}
                            _ = ctx.signal().cancelled() => {}
                        }
                    }
                }
                tokio::task::yield_now().await;
                record(&log, Event::BodyEnd(n));
                if args.get("fail") == Some(&json!(true)) {
                    return Err(dsh_tools::ToolFailure::message("failed"));
                }
                Ok(json!(n))
            })
        }),
    );
    if !exclusive {
        def.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    }
    def
}

fn check(steps: Vec<Step>, actions: Vec<Action>, cap: u64, with_agent: bool) -> Result<(), TestCaseError> {
    let log = Log::default();
    let mut config = ToolsConfig::with_mode(ToolMode::Code);
    config.max_parallel_sub_calls = Some(cap as f64);
    let rt = ToolRuntime::new(config);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..GATES).map(|_| watch::channel(false)).unzip();
    let receivers = Arc::new(receivers);
    let _p = rt.register(tool("p", false, Arc::clone(&log), Arc::clone(&receivers)), None);
    let _x = rt.register(tool("x", true, Arc::clone(&log), Arc::clone(&receivers)), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let observed = Arc::new(Mutex::new(Vec::<Value>::new()));
    let _o = {
        let (log, observed) = (Arc::clone(&log), Arc::clone(&observed));
        rt.on_result(Arc::new(move |exec, result| {
            record(&log, Event::Result(exec.call_id.clone()));
            if exec.call_id == "rc" {
                observed.lock().unwrap_or_else(|p| p.into_inner()).push(result.to_json());
            }
        }))
    };
    let _d = {
        let log = Arc::clone(&log);
        rt.on_code_dispatch(Arc::new(move |event| match event {
            CodeDispatchEvent::Start(s) => record(&log, Event::DispatchStart(number(&s.sub_call_id))),
            CodeDispatchEvent::Settled(s) => record(&log, Event::Dispatch(number(&s.call.sub_call_id))),
        }))
    };
    let mut input = ToolExecutionInput::new("rc", "run_code", json!({"code": program(&steps).to_string(), "description": "p"}));
    if with_agent {
        input.agent = Some(ScopeKey::new("agent"));
    }
    let caller = input.signal.clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let result = runtime.block_on(async {
        let task = tokio::spawn({
            let rt = rt.clone();
            async move { rt.execute(input).await }
        });
        for action in &actions {
            match action {
                Action::Yield(n) => {
                    for _ in 0..*n {
                        tokio::task::yield_now().await;
                    }
                }
                Action::Open(g) => {
                    let _ = senders[*g].send(true);
                }
                Action::Abort => caller.cancel(),
            }
        }
        for s in &senders {
            let _ = s.send(true);
        }
        tokio::time::timeout(std::time::Duration::from_secs(20), task).await
    });
    let result = match result {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => return Err(TestCaseError::fail(format!("run_code task failed: {join}"))),
        Err(_) => return Err(TestCaseError::fail("run_code hung")),
    };
    let events = log.lock().unwrap_or_else(|p| p.into_inner()).clone();
    // Exactly one published transport result, equal to the returned one, and last.
    let observed = observed.lock().unwrap_or_else(|p| p.into_inner()).clone();
    prop_assert_eq!(observed.len(), 1);
    prop_assert_eq!(&observed[0], &result.to_json());
    prop_assert_eq!(events.last(), Some(&Event::Result("rc".into())));
    // Per sub-call order, submission order, caps.
    let mut running: BTreeSet<u64> = BTreeSet::new();
    let mut exclusive_running = false;
    let (mut last_start, mut last_body, mut last_commit, mut last_dispatch) = (0, 0, 0, 0);
    let mut stage: HashMap<u64, u8> = HashMap::new();
    for e in &events {
        match e {
            Event::DispatchStart(n) => {
                prop_assert!(*n == last_start + 1, "dispatch starts in order: {:?}", events);
                last_start = *n;
                prop_assert!(with_agent);
                stage.insert(*n, 1);
            }
            Event::BodyStart(n, exclusive) => {
                prop_assert!(*n > last_body, "bodies start in submission order: {:?}", events);
                last_body = *n;
                prop_assert!(!exclusive_running, "a body started beside an exclusive one: {:?}", events);
                if *exclusive {
                    prop_assert!(running.is_empty(), "an exclusive body started beside others: {:?}", events);
                    exclusive_running = true;
                }
                running.insert(*n);
                prop_assert!(running.len() as u64 <= cap, "more than {} bodies at once: {:?}", cap, events);
                if with_agent {
                    prop_assert_eq!(stage.get(n), Some(&1));
                }
                stage.insert(*n, 2);
            }
            Event::BodyEnd(n) => {
                prop_assert!(running.remove(n));
                exclusive_running = false;
                stage.insert(*n, 3);
            }
            Event::Result(id) if id == "rc" => {
                prop_assert!(running.is_empty(), "a body still ran at settlement: {:?}", events);
            }
            Event::Result(id) => {
                let n = number(id);
                prop_assert!(n > last_commit, "commits in submission order: {:?}", events);
                last_commit = n;
                prop_assert!(stage.get(&n).is_none_or(|s| *s == 3 || *s == 1), "result before the body ended: {:?}", events);
                stage.insert(n, 4);
            }
            Event::Dispatch(n) => {
                prop_assert!(*n > last_dispatch);
                last_dispatch = *n;
                prop_assert_eq!(stage.get(n), Some(&4));
                stage.insert(*n, 5);
            }
        }
    }
    // Every started sub-call committed before the transport's result.
    prop_assert!(stage.values().all(|s| *s == 4 || *s == 5), "unfinished sub-calls: {:?}", events);
    if with_agent {
        prop_assert!(stage.values().all(|s| *s == 5));
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..Config::default()
    })]

    #[test]
    fn random_programs_settle_once_in_order(
        steps in prop::collection::vec(step(), 0..8),
        actions in prop::collection::vec(action(), 0..12),
        cap in 1u64..4,
        with_agent in any::<bool>(),
    ) {
        check(steps, actions, cap, with_agent)?;
    }
}
