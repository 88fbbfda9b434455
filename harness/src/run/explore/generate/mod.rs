//! The explorer's generator (issue 40): proptest strategies for valid scenarios of the registry and
//! pipeline vocabulary (`spec/README.md` § Scenario files), so a disagreement shrinks to a minimal one.
//!
//! A [`Plan`] is what proptest generates and shrinks: small numbers choosing among the vocabulary —
//! agents (none, one, nested, side by side), tool fixtures per layer (some registered later by a step),
//! listeners of every pipeline kind with their decisions and `do` instructions (emits, throws, a listener
//! disposing a registration or adding a guard while a pass runs), and steps (execute with valid or invalid
//! arguments, register, dispose, addHook, restrict, presentAs, get, schemas). [`Plan::scenario`] turns it
//! into a scenario value the loader accepts, resolving every reference (handles, agents) against what
//! exists at that point, so every plan is a valid scenario.
//!
//! Aborts are deterministic through a hold: a dedicated tool `held` whose chosen stage (pre-execute, guard,
//! wrapper, body, post-execute) emits `hold` and waits on gate `g`; the steps start it, `waitFor: hold`,
//! abort it (or not), open the gate and await it. Generated listeners never apply to `held` (a `tools`
//! filter), so nothing generated can stop it before the hold is reached.

use proptest::prelude::*;
use serde_json::{Value, json};

mod build;
mod hold;

/// The tool names steps and fixtures draw from; index 3 is a name nothing registers.
const NAMES: [&str; 4] = ["t1", "t2", "t3", "nope"];
/// The agent configurations: `setup.agents` and the agents they open.
const AGENTS: [&[&str]; 5] = [&[], &["a1"], &["a1", "a2<a1"], &["a1", "a2"], &["a1", "a2<a1", "a3<a2"]];

/// One instruction of a listener's `do` or a body.
#[derive(Debug, Clone)]
pub enum Instr {
    /// `emit: <owner>`.
    Emit,
    /// `throw: <owner> threw`.
    Throw,
    /// `dispose:` one of the setup's handles (a registration disposed while a pass runs).
    Dispose(u8),
    /// `addHook: { guards: { deny } }`: a guard added while a pass runs.
    AddGuard(bool),
    /// `emitSignal: <owner>-signal`: what the code's signal says at that point.
    Signal,
    /// Body only: `deferContext: { text: <owner> context }`.
    Defer,
    /// Body only: `concludeTurn: true`.
    Conclude,
}

/// One listener fixture.
#[derive(Debug, Clone)]
pub struct Hook {
    /// 0 preExecute, 1 guards, 2 execute, 3 postExecute, 4 results, 5 changes.
    pub kind: u8,
    /// Register through an agent's scope (index into the agents, modulo).
    pub agent: Option<u8>,
    /// `tools:` filter over `t1..t3` (bit mask; 0 = no filter).
    pub tools: u8,
    /// `prepend: true`.
    pub prepend: bool,
    /// `do` instructions.
    pub act: Vec<Instr>,
    /// The decision, an index into the kind's list.
    pub decision: u8,
}

/// One tool fixture.
#[derive(Debug, Clone)]
pub struct Tool {
    /// Index into `t1..t3`.
    pub name: u8,
    /// Register through an agent's scope.
    pub agent: Option<u8>,
    /// Registered at session start.
    pub register: bool,
    /// 0 `{text: string required}`, 1 `{}`, 2 `{text: string}` optional.
    pub params: u8,
    /// 0 render text, 1 render json, 2 render throws.
    pub render: u8,
    /// Body instructions before the return.
    pub body: Vec<Instr>,
    /// 0 return a constant, 1 return the `text` argument.
    pub ret: u8,
    /// `finalizeContent`: 0 replace, 1 appendText, 2 keep, 3 throw.
    pub finalize: Option<u8>,
    /// `concurrency`: 0 true, 1 false, 2 throws.
    pub concurrency: Option<u8>,
    /// Registered through the fixture plugin `p1` (a global tool only).
    pub plugin: bool,
    /// UI presenters: 0 `presentCall: fromArguments` and `presentResult: echo`, 1 a `null` call view, 2
    /// `presentResult: fromMeta` with `presentationMeta: fromArguments`.
    pub presenters: Option<u8>,
}

/// One step.
#[derive(Debug, Clone)]
pub enum Gen {
    /// `execute`: name index, agent, arguments kind, `aborted: true`.
    Execute(u8, Option<u8>, u8, bool),
    /// `register` a fixture (index, modulo), held under a new handle.
    Register(u8),
    /// `dispose` a handle existing at that point (index, modulo).
    Dispose(u8),
    /// `addHook`, held under a new handle.
    AddHook(Hook),
    /// `restrict`: agent, allow mask, deny mask (bit 3: the unknown name).
    Restrict(u8, u8, u8),
    /// `presentAs`: agent, mode (0 code, 1 native, 2 both).
    PresentAs(u8, u8),
    /// `get`: name index, agent.
    Get(u8, Option<u8>),
    /// `schemas`: agent.
    Schemas(Option<u8>),
    /// `executionMode`: name index, agent.
    ExecutionMode(u8, Option<u8>),
    /// `openAgent` a new agent, nested in an open one (index) or a root.
    OpenAgent(Option<u8>),
    /// `dropAgent` an open agent (index).
    DropAgent(u8),
    /// `assemble` the system prompt: agent.
    Assemble(Option<u8>),
    /// `disposePlugin: p1`.
    DisposePlugin,
    /// `present`: name index, agent, with a result.
    Present(u8, Option<u8>, bool),
    /// `definition`: name index, agent.
    Definition(u8, Option<u8>),
    /// `execute run_code` (under a code mode): a program of sequential binding calls, each (name index,
    /// arguments kind); a call that throws is caught and its message kept.
    RunCode(Vec<(u8, u8)>, Option<u8>),
}

/// The abort plan: where `held` waits, how, and what is done to it.
#[derive(Debug, Clone)]
pub struct Hold {
    /// 0 preExecute, 1 wrapper, 2 body, 3 postExecute (a guard's `do` is synchronous upstream: it cannot
    /// wait, so no hold is there; a later listener may still be a guard).
    pub stage: u8,
    /// `waitOrAbort` (else `wait`, which ignores the signal).
    pub or_abort: bool,
    /// Abort before opening the gate: `None` no abort, `Some(None)` without a reason, `Some(Some)` with one.
    pub abort: Option<Option<u8>>,
    /// The decision of the holding listener (kind's list, modulo).
    pub decision: u8,
    /// A later-stage listener on `held`: (stage offset, decision).
    pub later: Option<(u8, u8)>,
    /// Where among the steps the hold's steps go (modulo).
    pub at: u8,
}

/// What proptest generates: a scenario in choices.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Index into [`AGENTS`].
    pub agents: u8,
    /// Tool fixtures.
    pub tools: Vec<Tool>,
    /// Listeners of the setup.
    pub hooks: Vec<Hook>,
    /// Steps.
    pub steps: Vec<Gen>,
    /// The abort plan, if any.
    pub hold: Option<Hold>,
    /// `setup.approval`: 0..3 the four answers, 4 `{ answerer: none }`.
    pub approval: Option<u8>,
    /// `setup.prompt.sections`: (name, order, agent) indexes.
    pub sections: Vec<(u8, u8, Option<u8>)>,
    /// `setup.prompt.toolOrder`, an index into [`TOOL_ORDERS`].
    pub tool_order: Option<u8>,
    /// Code Mode: `setup.mode` 0 `code`, 1 `both`, with `runtime: typescript`; `None`: native, and no
    /// `run_code` step.
    pub code: Option<u8>,
}

/// The section orders: the `-0` against `0` of issue 40, neighbours of dsh-tools' own sections (99, 100).
const ORDERS: [f64; 8] = [0.0, -0.0, 1.0, -1.0, 0.5, 99.0, 100.0, 101.0];
/// The `toolOrder` rows the generator picks from.
const TOOL_ORDERS: [&[&str]; 3] = [&["t2", "<unlisted-tools>", "t1"], &["<unlisted-tools>", "t3"], &["t1", "t2", "t3", "<unlisted-tools>"]];

fn instr() -> impl Strategy<Value = Instr> {
    prop_oneof![
        4 => Just(Instr::Emit),
        1 => Just(Instr::Throw),
        1 => any::<u8>().prop_map(Instr::Dispose),
        1 => any::<bool>().prop_map(Instr::AddGuard),
        1 => Just(Instr::Signal),
    ]
}

fn hook() -> impl Strategy<Value = Hook> {
    (0u8..6, proptest::option::weighted(0.3, 0u8..3), prop_oneof![2 => Just(0u8), 1 => 1u8..8], proptest::bool::weighted(0.15), proptest::collection::vec(instr(), 0..3), any::<u8>())
        .prop_map(|(kind, agent, tools, prepend, act, decision)| Hook { kind, agent, tools, prepend, act, decision })
}

fn tool() -> impl Strategy<Value = Tool> {
    let body = proptest::collection::vec(
        prop_oneof![
            3 => Just(Instr::Emit),
            1 => Just(Instr::Throw),
            1 => any::<u8>().prop_map(Instr::Dispose),
            1 => Just(Instr::Signal),
            1 => Just(Instr::Defer),
            1 => Just(Instr::Conclude),
        ],
        0..3,
    );
    let extras = (
        proptest::option::weighted(0.2, 0u8..4),
        proptest::option::weighted(0.15, 0u8..3),
        proptest::bool::weighted(0.15),
        proptest::option::weighted(0.2, 0u8..3),
    );
    (0u8..3, proptest::option::weighted(0.3, 0u8..3), proptest::bool::weighted(0.8), 0u8..3, prop_oneof![4 => Just(0u8), 1 => 1u8..3], body, 0u8..2, extras)
        .prop_map(|(name, agent, register, params, render, body, ret, (finalize, concurrency, plugin, presenters))| Tool {
            name,
            agent,
            register,
            params,
            render,
            body,
            ret,
            finalize,
            concurrency,
            plugin,
            presenters,
        })
}

fn step() -> impl Strategy<Value = Gen> {
    let agent = || proptest::option::weighted(0.4, 0u8..3);
    prop_oneof![
        6 => (0u8..4, agent(), prop_oneof![3 => Just(0u8), 1 => 1u8..4], proptest::bool::weighted(0.1)).prop_map(|(n, a, args, ab)| Gen::Execute(n, a, args, ab)),
        1 => any::<u8>().prop_map(Gen::Register),
        2 => any::<u8>().prop_map(Gen::Dispose),
        2 => hook().prop_map(Gen::AddHook),
        2 => (0u8..3, 0u8..16, 0u8..16).prop_map(|(a, al, de)| Gen::Restrict(a, al, de)),
        1 => (0u8..3, 0u8..3).prop_map(|(a, m)| Gen::PresentAs(a, m)),
        1 => (0u8..4, agent()).prop_map(|(n, a)| Gen::Get(n, a)),
        1 => agent().prop_map(Gen::Schemas),
        1 => (0u8..4, agent()).prop_map(|(n, a)| Gen::ExecutionMode(n, a)),
        1 => agent().prop_map(Gen::OpenAgent),
        1 => (0u8..3).prop_map(Gen::DropAgent),
        2 => agent().prop_map(Gen::Assemble),
        1 => Just(Gen::DisposePlugin),
        1 => (0u8..4, agent(), any::<bool>()).prop_map(|(n, a, r)| Gen::Present(n, a, r)),
        1 => (0u8..4, agent()).prop_map(|(n, a)| Gen::Definition(n, a)),
        3 => (proptest::collection::vec((0u8..4, prop_oneof![3 => Just(0u8), 1 => 1u8..4]), 1..4), agent()).prop_map(|(calls, a)| Gen::RunCode(calls, a)),
    ]
}

fn hold() -> impl Strategy<Value = Hold> {
    let abort = proptest::option::weighted(0.7, proptest::option::weighted(0.5, 0u8..2));
    (0u8..4, any::<bool>(), abort, any::<u8>(), proptest::option::weighted(0.4, (1u8..4, any::<u8>())), any::<u8>())
        .prop_map(|(stage, or_abort, abort, decision, later, at)| Hold { stage, or_abort, abort, decision, later, at })
}

/// The strategy of the explorer's plans, without Code Mode.
pub fn plans() -> impl Strategy<Value = Plan> {
    plans_with(0.0)
}

/// The strategy of the explorer's plans; `code` is the share of them under a code mode with a TypeScript
/// runtime and `run_code` steps (slow on a debug build of the reference: about a second a program).
pub fn plans_with(code: f64) -> impl Strategy<Value = Plan> {
    (
        0u8..5,
        proptest::collection::vec(tool(), 1..5),
        proptest::collection::vec(hook(), 0..5),
        proptest::collection::vec(step(), 1..9),
        proptest::option::weighted(0.35, hold()),
        proptest::option::weighted(0.3, 0u8..5),
        proptest::collection::vec((0u8..3, 0u8..8, proptest::option::weighted(0.3, 0u8..3)), 0..3),
        proptest::option::weighted(0.2, 0u8..3),
        // Not `option::weighted`, which refuses a probability of 0: a draw above `1 - code` (shrinking
        // draws toward 0, so toward no code mode).
        (0.0..1.0f64, 0u8..2).prop_map(move |(draw, mode)| (draw > 1.0 - code).then_some(mode)),
    )
        .prop_map(|(agents, tools, hooks, steps, hold, approval, sections, tool_order, code)| Plan {
            agents,
            tools,
            hooks,
            steps,
            hold,
            approval,
            sections,
            tool_order,
            code,
        })
}

/// Bits of `mask` over `names` (the fourth, when allowed, is the unknown name).
fn names(mask: u8, count: usize) -> Vec<Value> {
    (0..count).filter(|i| mask & (1 << i) != 0).map(|i| json!(NAMES[i])).collect()
}

/// A listener kind's key in `hooks` and `addHook`.
fn kind_key(kind: u8) -> &'static str {
    ["preExecute", "guards", "execute", "postExecute", "results", "changes"][usize::from(kind % 6)]
}

/// The decision field and value of a listener of `kind`.
fn decision(kind: u8, pick: u8, id: &str) -> Option<(&'static str, Value)> {
    let list: Vec<Value> = match kind % 6 {
        0 => vec![
            json!("next"),
            json!("allow"),
            json!({ "deny": format!("{id} denies") }),
            json!({ "ask": format!("{id} asks") }),
            json!({ "ask": null }),
            json!({ "throw": format!("{id} threw") }),
            json!({ "afterNext": "next" }),
            json!({ "afterNext": { "deny": format!("{id} denies after") } }),
        ],
        1 => vec![Value::Null, json!(format!("{id} says no")), json!("")],
        2 => vec![
            json!("next"),
            json!({ "fail": format!("{id} failed") }),
            json!({ "returnValue": format!("{id} value") }),
            json!({ "afterNext": [{ "emit": format!("{id}:after") }] }),
            json!({ "replaceSignal": { "aborted": true } }),
            json!({ "returnResult": { "result": { "isError": true, "error": { "message": format!("{id} result"), "code": "W", "name": "X" }, "content": [{ "type": "text", "text": format!("{id} content") }] } } }),
            json!({ "returnResult": { "afterNext": true, "result": { "isError": false, "value": format!("{id} value"), "content": [{ "type": "text", "text": format!("{id} value") }] } } }),
        ],
        3 => vec![
            json!("next"),
            json!("accept"),
            json!({ "accept": { "content": [{ "type": "text", "text": format!("{id} content") }] } }),
            json!({ "block": { "feedback": [{ "type": "text", "text": format!("{id} blocks") }] } }),
            json!({ "throw": format!("{id} threw") }),
        ],
        _ => return None,
    };
    let field = match kind % 6 {
        0 | 3 => "decide",
        1 => "deny",
        _ => "around",
    };
    let n = list.len();
    Some((field, list.into_iter().nth(usize::from(pick) % n).unwrap_or(Value::Null)))
}
