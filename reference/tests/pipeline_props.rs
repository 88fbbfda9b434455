//! Property: random interleavings of tool registrations and disposals, hook registrations (pre-execute
//! decisions, guards, `tools/execute` wrappers, post-execute listeners), many concurrent `execute` calls,
//! aborts at random points and gate openings keep the pipeline's execution invariants:
//!
//! - every execution returns one result and publishes exactly one `tools/result` observation, equal to it
//!   (PIPE-011);
//! - no result is published while that call's body is still running, and a started body is awaited to
//!   completion, never dropped (PIPE-014, PIPE-016); nothing is left running once all calls complete and
//!   the runtime is dropped;
//! - `ABORTED` only replaces the success of a body that started, `ABORTED_BEFORE_DISPATCH` only when the
//!   body never started, and both only for a cancelled caller (PIPE-013, PIPE-015).
//!
//! Deterministic given the proptest seed: the interleaving runs on a current-thread tokio runtime, and
//! every scheduling point (`yield_now`, gate openings, aborts) is chosen by the strategy, never by timing.
//! Bodies record their own start and end. `PROPTEST_CASES` sets the case count (default 64); failures
//! persist to `proptest-regressions/pipeline_props.txt`.
//!
//! Spec: PIPE-001, PIPE-002..PIPE-004, PIPE-005, PIPE-008, PIPE-010, PIPE-011, PIPE-013..PIPE-016.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_tools::{
    DispatchResult, ErrorCode, HookGuard, OutputDeclaration, Parameters, PostToolDecision, PreToolDecision,
    Registration, ToolDefinition, ToolExecutionInput, ToolExecutionResult, ToolFailure, ToolRuntime, ToolsConfig,
    execute_wrapper_fn, post_execute_fn, pre_execute_fn,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::{JoinHandle, yield_now};
use tokio_util::sync::CancellationToken;

/// Tool names `t0..t2`; index `TOOLS` names a tool that is never registered.
const TOOLS: usize = 3;
const GATES: usize = 4;
const HOOK_SLOTS: usize = 6;
/// Scheduler turns allowed for the settle phase before a call counts as hung.
const SETTLE_TURNS: usize = 20_000;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

#[derive(Clone, Copy, Debug)]
enum Body {
    Return,
    Throw,
    /// Wait for a gate (ignores the signal), then return.
    Gate(usize),
    /// Wait for the run context's signal, then return (`ok`) or throw.
    Signal { ok: bool },
    Yield(u8),
}

#[derive(Clone, Copy, Debug)]
enum Pre {
    Pass,
    Yield(u8),
    Gate(usize),
    Deny,
    /// `ask` without an approval seam: degrades to a denial.
    Ask,
    Throw,
}

#[derive(Clone, Copy, Debug)]
enum Guard {
    Allow,
    DenyTool(usize),
    Throw,
}

#[derive(Clone, Copy, Debug)]
enum Wrap {
    Pass,
    Yield(u8),
    /// A wrapper-authored success, without running the rest of the chain.
    Cached,
    /// Runs the rest of the chain, then throws.
    ThrowAfter,
}

#[derive(Clone, Copy, Debug)]
enum Post {
    Pass,
    Yield(u8),
    Context,
    Block,
}

#[derive(Clone, Copy, Debug)]
enum Hook {
    Pre(Pre),
    Guard(Guard),
    Wrap(Wrap),
    Post(Post),
}

#[derive(Clone, Debug)]
enum Op {
    Start { tool: usize, pre_aborted: bool },
    Yield(u8),
    Open(usize),
    /// Abort the started call at this index (modulo the number started).
    Abort(usize),
    /// (Re-)register the tool in this slot with a new body.
    Register { slot: usize, body: Body },
    Dispose(usize),
    /// Remove the hook in this slot, or install this one if the slot is empty.
    ToggleHook { slot: usize, hook: Hook },
}

#[derive(Clone, Debug)]
struct Scenario {
    tools: Vec<Option<Body>>,
    hooks: Vec<Option<Hook>>,
    ops: Vec<Op>,
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        2 => Just(Body::Return),
        1 => Just(Body::Throw),
        3 => (0..GATES).prop_map(Body::Gate),
        2 => any::<bool>().prop_map(|ok| Body::Signal { ok }),
        2 => (1u8..4).prop_map(Body::Yield),
    ]
}

fn hook() -> impl Strategy<Value = Hook> {
    let pre = prop_oneof![
        3 => Just(Pre::Pass),
        2 => (1u8..4).prop_map(Pre::Yield),
        2 => (0..GATES).prop_map(Pre::Gate),
        1 => Just(Pre::Deny),
        1 => Just(Pre::Ask),
        1 => Just(Pre::Throw),
    ];
    let guard = prop_oneof![2 => Just(Guard::Allow), 2 => (0..TOOLS).prop_map(Guard::DenyTool), 1 => Just(Guard::Throw)];
    let wrap = prop_oneof![
        3 => Just(Wrap::Pass),
        3 => (1u8..4).prop_map(Wrap::Yield),
        1 => Just(Wrap::Cached),
        1 => Just(Wrap::ThrowAfter),
    ];
    let post = prop_oneof![3 => Just(Post::Pass), 3 => (1u8..4).prop_map(Post::Yield), 1 => Just(Post::Context), 1 => Just(Post::Block)];
    prop_oneof![
        pre.prop_map(Hook::Pre),
        guard.prop_map(Hook::Guard),
        wrap.prop_map(Hook::Wrap),
        post.prop_map(Hook::Post),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..=TOOLS, prop::bool::weighted(0.1)).prop_map(|(tool, pre_aborted)| Op::Start { tool, pre_aborted }),
        4 => (1u8..4).prop_map(Op::Yield),
        2 => (0..GATES).prop_map(Op::Open),
        2 => (0usize..64).prop_map(Op::Abort),
        1 => (0..TOOLS, body()).prop_map(|(slot, body)| Op::Register { slot, body }),
        1 => (0..TOOLS).prop_map(Op::Dispose),
        2 => (0..HOOK_SLOTS, hook()).prop_map(|(slot, hook)| Op::ToggleHook { slot, hook }),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop::collection::vec(prop::option::weighted(0.8, body()), TOOLS),
        prop::collection::vec(prop::option::weighted(0.4, hook()), HOOK_SLOTS),
        prop::collection::vec(op(), 1..80),
    )
        .prop_map(|(tools, hooks, ops)| Scenario { tools, hooks, ops })
}

/// What one call's body recorded about itself.
#[derive(Default)]
struct BodyLog {
    starts: u32,
    running: bool,
    returned_ok: Option<bool>,
}

/// Shared test state: body logs, live-body count, observations, and violations seen inside callbacks
/// (observer panics are contained by the pipeline, so they are recorded instead).
#[derive(Default)]
struct World {
    bodies: Mutex<HashMap<String, BodyLog>>,
    live: AtomicUsize,
    observed: Mutex<HashMap<String, Vec<Value>>>,
    violations: Mutex<Vec<String>>,
}

impl World {
    fn violate(&self, message: String) {
        self.violations.lock().unwrap_or_else(|p| p.into_inner()).push(message);
    }

    fn body_started(self: &Arc<Self>, call: &str) -> BodyGuard {
        self.live.fetch_add(1, Ordering::SeqCst);
        let mut bodies = self.bodies.lock().unwrap_or_else(|p| p.into_inner());
        let log = bodies.entry(call.to_owned()).or_default();
        log.starts += 1;
        log.running = true;
        BodyGuard { world: Arc::clone(self), call: call.to_owned(), completed: false }
    }

    fn observe(&self, call: &str, result: &ToolExecutionResult) {
        let running = self.bodies.lock().unwrap_or_else(|p| p.into_inner()).get(call).is_some_and(|b| b.running);
        if running {
            self.violate(format!("{call}: result published while its body is still running"));
        }
        self.observed.lock().unwrap_or_else(|p| p.into_inner()).entry(call.to_owned()).or_default().push(result.to_json());
    }
}

/// Held by a running body; records its end. Dropped without `finish`: the body future was dropped early.
struct BodyGuard {
    world: Arc<World>,
    call: String,
    completed: bool,
}

impl BodyGuard {
    fn finish(&mut self, ok: bool) {
        self.completed = true;
        let mut bodies = self.world.bodies.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(log) = bodies.get_mut(&self.call) {
            log.running = false;
            log.returned_ok = Some(ok);
        }
    }
}

impl Drop for BodyGuard {
    fn drop(&mut self) {
        if !self.completed {
            self.world.violate(format!("{}: body future dropped before completion", self.call));
            if let Some(log) = self.world.bodies.lock().unwrap_or_else(|p| p.into_inner()).get_mut(&self.call) {
                log.running = false;
            }
        }
        self.world.live.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Gates(Vec<watch::Sender<bool>>);

impl Gates {
    fn new() -> Self {
        Self((0..GATES).map(|_| watch::channel(false).0).collect())
    }

    fn waiter(&self, gate: usize) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.0[gate].subscribe();
        async move {
            let _ = rx.wait_for(|open| *open).await;
        }
    }

    fn open(&self, gate: usize) {
        self.0[gate].send_replace(true);
    }
}

async fn yields(n: u8) {
    for _ in 0..n {
        yield_now().await;
    }
}

fn text(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

fn tool(slot: usize, kind: Body, world: &Arc<World>, gates: &Arc<Gates>) -> ToolDefinition {
    let (world, gates) = (Arc::clone(world), Arc::clone(gates));
    ToolDefinition::new(
        format!("t{slot}"),
        "d",
        Parameters::Dsl(json!({"text": {"type": "string"}})),
        OutputDeclaration {
            schema: json!({"type": "string"}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])),
            presentation_meta: None,
        },
        Arc::new(move |_args, ctx| {
            let mut guard = world.body_started(ctx.call_id());
            let gate = match kind {
                Body::Gate(g) => Some(gates.waiter(g)),
                _ => None,
            };
            Box::pin(async move {
                let out = match kind {
                    Body::Return => Ok(json!("body")),
                    Body::Throw => Err(ToolFailure::message("body threw")),
                    Body::Gate(_) => {
                        if let Some(gate) = gate {
                            gate.await;
                        }
                        Ok(json!("body"))
                    }
                    Body::Signal { ok } => {
                        ctx.signal().cancelled().await;
                        if ok { Ok(json!("body")) } else { Err(ToolFailure::message("body saw the abort")) }
                    }
                    Body::Yield(n) => {
                        yields(n).await;
                        Ok(json!("body"))
                    }
                };
                guard.finish(out.is_ok());
                out
            })
        }),
    )
}

fn install(rt: &ToolRuntime, hook: Hook, gates: &Arc<Gates>) -> HookGuard {
    match hook {
        Hook::Pre(kind) => {
            let gates = Arc::clone(gates);
            rt.on_pre_execute(
                None,
                pre_execute_fn(move |_exec, next| {
                    let gate = match kind {
                        Pre::Gate(g) => Some(gates.waiter(g)),
                        _ => None,
                    };
                    Box::pin(async move {
                        match kind {
                            Pre::Pass => next.run().await,
                            Pre::Yield(n) => {
                                yields(n).await;
                                next.run().await
                            }
                            Pre::Gate(_) => {
                                if let Some(gate) = gate {
                                    gate.await;
                                }
                                next.run().await
                            }
                            Pre::Deny => Ok(PreToolDecision::Deny { reason: "denied".into() }),
                            Pre::Ask => Ok(PreToolDecision::Ask { reason: None }),
                            Pre::Throw => Err(ToolFailure::message("pre-execute threw")),
                        }
                    })
                }),
            )
        }
        Hook::Guard(Guard::Allow) => rt.guard(None, Arc::new(|_| None)),
        Hook::Guard(Guard::DenyTool(t)) => {
            let name = format!("t{t}");
            rt.guard(None, Arc::new(move |exec| (exec.name == name).then(|| "guarded".to_owned())))
        }
        Hook::Guard(Guard::Throw) => rt.guard_fallible(None, Arc::new(|_| Err(ToolFailure::message("guard threw")))),
        Hook::Wrap(kind) => rt.on_execute(
            None,
            execute_wrapper_fn(move |_dexec, next| {
                Box::pin(async move {
                    match kind {
                        Wrap::Pass => next.run().await,
                        Wrap::Yield(n) => {
                            yields(n).await;
                            let outcome = next.run().await;
                            yields(n).await;
                            outcome
                        }
                        Wrap::Cached => Ok(DispatchResult::authored(ToolExecutionResult::Success {
                            value: json!("cached"),
                            content: Vec::new(),
                            meta: None,
                            additional_contexts: Vec::new(),
                            concludes_turn: false,
                        })),
                        Wrap::ThrowAfter => {
                            drop(next.run().await);
                            Err(ToolFailure::message("wrapper threw"))
                        }
                    }
                })
            }),
        ),
        Hook::Post(kind) => rt.on_post_execute(
            None,
            post_execute_fn(move |_exec, _result, next| {
                Box::pin(async move {
                    match kind {
                        Post::Pass => next.run().await,
                        Post::Yield(n) => {
                            yields(n).await;
                            next.run().await
                        }
                        Post::Context => Ok(PostToolDecision::Accept {
                            content: None,
                            value: None,
                            additional_contexts: vec![text("ctx")],
                        }),
                        Post::Block => {
                            Ok(PostToolDecision::Block { feedback: vec![text("blocked")], additional_contexts: Vec::new() })
                        }
                    }
                })
            }),
        ),
    }
}

struct CallRec {
    id: String,
    signal: CancellationToken,
    aborted: bool,
    pre_aborted: bool,
    handle: JoinHandle<ToolExecutionResult>,
}

/// Run the scenario's interleaving; returns each call with its returned result (`None`: the task panicked
/// or hung).
async fn drive(s: &Scenario, world: &Arc<World>, gates: &Arc<Gates>) -> Vec<(CallRec, Option<ToolExecutionResult>)> {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let sink = Arc::clone(world);
    let _observer = rt.on_result(Arc::new(move |exec, result| sink.observe(&exec.call_id, result)));
    let register = |slot: usize, body: Body| -> Option<Registration> {
        match rt.register(tool(slot, body, world, gates), None) {
            Ok(registration) => Some(registration),
            Err(e) => {
                world.violate(format!("registering t{slot}: {e:?}"));
                None
            }
        }
    };
    let mut tools: Vec<Option<Registration>> =
        s.tools.iter().enumerate().map(|(slot, body)| body.and_then(|body| register(slot, body))).collect();
    let mut hooks: Vec<Option<HookGuard>> = s.hooks.iter().map(|h| h.map(|h| install(&rt, h, gates))).collect();
    let mut calls: Vec<CallRec> = Vec::new();
    for op in &s.ops {
        match *op {
            Op::Start { tool, pre_aborted } => {
                let id = format!("c{}", calls.len());
                let name = if tool < TOOLS { format!("t{tool}") } else { "nope".to_owned() };
                let signal = CancellationToken::new();
                if pre_aborted {
                    signal.cancel();
                }
                let mut input = ToolExecutionInput::new(id.clone(), name, json!({"text": "x"}));
                input.signal = signal.clone();
                let rt = rt.clone();
                let handle = tokio::spawn(async move { rt.execute(input).await });
                calls.push(CallRec { id, signal, aborted: pre_aborted, pre_aborted, handle });
            }
            Op::Yield(n) => yields(n).await,
            Op::Open(g) => gates.open(g),
            Op::Abort(k) => {
                if !calls.is_empty() {
                    let len = calls.len();
                    let call = &mut calls[k % len];
                    call.signal.cancel();
                    call.aborted = true;
                }
            }
            Op::Register { slot, body } => {
                drop(tools[slot].take());
                tools[slot] = register(slot, body);
            }
            Op::Dispose(slot) => drop(tools[slot].take()),
            Op::ToggleHook { slot, hook } => {
                hooks[slot] = match hooks[slot].take() {
                    Some(installed) => {
                        drop(installed);
                        None
                    }
                    None => Some(install(&rt, hook, gates)),
                };
            }
        }
    }
    // Settle: open every gate; let gated work finish; then abort whatever still waits for its signal.
    for g in 0..GATES {
        gates.open(g);
    }
    let mut aborted_rest = false;
    for turn in 0..SETTLE_TURNS {
        if calls.iter().all(|c| c.handle.is_finished()) {
            break;
        }
        if turn == 200 && !aborted_rest {
            aborted_rest = true;
            for call in calls.iter_mut().filter(|c| !c.handle.is_finished()) {
                call.signal.cancel();
                call.aborted = true;
            }
        }
        yield_now().await;
    }
    let mut out = Vec::with_capacity(calls.len());
    for mut call in calls {
        let result = if call.handle.is_finished() {
            (&mut call.handle).await.ok()
        } else {
            world.violate(format!("{}: still pending after every gate opened and every signal fired", call.id));
            call.handle.abort();
            None
        };
        out.push((call, result));
    }
    drop(hooks);
    drop(tools);
    out
}

fn run(s: &Scenario) -> Result<(), TestCaseError> {
    let world = Arc::new(World::default());
    let gates = Arc::new(Gates::new());
    let tokio = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| TestCaseError::fail(format!("tokio runtime: {e}")))?;
    let calls = tokio.block_on(drive(s, &world, &gates));
    let live_after_calls = world.live.load(Ordering::SeqCst);
    drop(tokio);
    let live_after_drop = world.live.load(Ordering::SeqCst);

    let mut problems = std::mem::take(&mut *world.violations.lock().unwrap_or_else(|p| p.into_inner()));
    if live_after_calls != 0 || live_after_drop != 0 {
        problems.push(format!("live bodies: {live_after_calls} after all calls, {live_after_drop} after runtime drop"));
    }
    let observed = std::mem::take(&mut *world.observed.lock().unwrap_or_else(|p| p.into_inner()));
    let bodies = world.bodies.lock().unwrap_or_else(|p| p.into_inner());
    for (call, result) in &calls {
        let id = &call.id;
        let Some(result) = result else {
            problems.push(format!("{id}: no returned result (panicked or hung)"));
            continue;
        };
        let returned = result.to_json();
        match observed.get(id).map(Vec::as_slice) {
            Some([seen]) if *seen == returned => {}
            Some([seen]) => problems.push(format!("{id}: observed {seen} but returned {returned}")),
            other => problems.push(format!("{id}: {} tools/result observations", other.map_or(0, <[Value]>::len))),
        }
        let log = bodies.get(id);
        let starts = log.map_or(0, |b| b.starts);
        let returned_ok = log.and_then(|b| b.returned_ok);
        if starts > 1 {
            problems.push(format!("{id}: body started {starts} times"));
        }
        if log.is_some_and(|b| b.running) {
            problems.push(format!("{id}: body still running after the call returned"));
        }
        let code = result.error_code();
        if code == Some(&ErrorCode::ABORTED) && !(call.aborted && starts == 1 && returned_ok == Some(true)) {
            problems.push(format!(
                "{id}: ABORTED with aborted={} starts={starts} body_ok={returned_ok:?}",
                call.aborted
            ));
        }
        if code == Some(&ErrorCode::ABORTED_BEFORE_DISPATCH) && !(call.aborted && starts == 0) {
            problems.push(format!("{id}: ABORTED_BEFORE_DISPATCH with aborted={} starts={starts}", call.aborted));
        }
        if call.pre_aborted && (code != Some(&ErrorCode::ABORTED_BEFORE_DISPATCH) || starts != 0) {
            problems.push(format!("{id}: pre-aborted call returned {returned} (starts={starts})"));
        }
        if let ToolExecutionResult::Success { value, .. } = result {
            if *value == json!("body") && returned_ok != Some(true) {
                problems.push(format!("{id}: success with the body's value but body_ok={returned_ok:?}"));
            }
        }
    }
    for id in observed.keys() {
        if !calls.iter().any(|(c, _)| &c.id == id) {
            problems.push(format!("{id}: observed but never started"));
        }
    }
    prop_assert!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/pipeline_props.txt"))),
        ..Config::default()
    })]

    #[test]
    fn random_interleavings_keep_the_execution_invariants(s in scenario()) {
        run(&s)?;
    }
}

/// A fixed interleaving exercising every abort point, so the invariants are checked even at
/// `PROPTEST_CASES=0`.
#[test]
fn a_fixed_interleaving_keeps_the_invariants() {
    let scenario = Scenario {
        tools: vec![Some(Body::Gate(0)), Some(Body::Signal { ok: true }), Some(Body::Return)],
        hooks: vec![Some(Hook::Pre(Pre::Yield(2))), Some(Hook::Wrap(Wrap::Yield(1))), Some(Hook::Post(Post::Yield(1))), None, None, None],
        ops: vec![
            Op::Start { tool: 0, pre_aborted: false },
            Op::Start { tool: 1, pre_aborted: false },
            Op::Start { tool: 2, pre_aborted: false },
            Op::Start { tool: 2, pre_aborted: true },
            Op::Yield(1),
            Op::Abort(2),
            Op::Yield(3),
            Op::Abort(0),
            Op::Abort(1),
            Op::Dispose(0),
            Op::Open(0),
            Op::Yield(3),
        ],
    };
    if let Err(e) = run(&scenario) {
        panic!("{e}");
    }
}
