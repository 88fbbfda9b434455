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
    let extras = (proptest::option::weighted(0.2, 0u8..4), proptest::option::weighted(0.15, 0u8..3));
    (0u8..3, proptest::option::weighted(0.3, 0u8..3), proptest::bool::weighted(0.8), 0u8..3, prop_oneof![4 => Just(0u8), 1 => 1u8..3], body, 0u8..2, extras)
        .prop_map(|(name, agent, register, params, render, body, ret, (finalize, concurrency))| Tool {
            name,
            agent,
            register,
            params,
            render,
            body,
            ret,
            finalize,
            concurrency,
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

/// What [`Plan::scenario`] tracks while it resolves references.
struct Build {
    agents: Vec<(String, Option<String>)>,
    /// Handles a step may dispose, in the order they came to exist.
    handles: Vec<String>,
    /// Handles `do` instructions may dispose: the setup's.
    setup_handles: Vec<String>,
    /// Tool fixture handles (for `register`).
    fixtures: Vec<String>,
    counter: usize,
    hold: bool,
    /// Agents opened by steps so far.
    opened: usize,
}

impl Build {
    fn agent(&self, pick: Option<u8>) -> Option<String> {
        let pick = pick?;
        if self.agents.is_empty() {
            return None;
        }
        Some(self.agents[usize::from(pick) % self.agents.len()].0.clone())
    }

    fn next(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    fn instrs(&mut self, list: &[Instr], owner: &str) -> Vec<Value> {
        list.iter()
            .filter_map(|i| match i {
                Instr::Emit => Some(json!({ "emit": owner })),
                Instr::Throw => Some(json!({ "throw": format!("{owner} threw") })),
                Instr::Dispose(k) if !self.setup_handles.is_empty() => {
                    Some(json!({ "dispose": self.setup_handles[usize::from(*k) % self.setup_handles.len()] }))
                }
                Instr::Dispose(_) => None,
                Instr::AddGuard(deny) => {
                    let id = self.next("dg");
                    let deny = if *deny { json!(format!("{id} says no")) } else { Value::Null };
                    Some(json!({ "addHook": { "guards": { "id": id, "tools": ["t1", "t2", "t3"], "deny": deny } } }))
                }
                Instr::Signal => Some(json!({ "emitSignal": format!("{owner}-signal") })),
                Instr::Defer => Some(json!({ "deferContext": { "text": format!("{owner} context") } })),
                Instr::Conclude => Some(json!({ "concludeTurn": true })),
            })
            .collect()
    }

    /// A listener fixture; under a hold, one without a filter gets `t1..t3` (never `held`).
    fn listener(&mut self, hook: &Hook, id: &str) -> Value {
        let mut map = serde_json::Map::new();
        map.insert("id".into(), json!(id));
        if let Some(agent) = self.agent(hook.agent) {
            map.insert("agent".into(), json!(agent));
        }
        let kind = hook.kind % 6;
        if kind != 5 {
            let mask = if hook.tools & 7 == 0 && self.hold { 7 } else { hook.tools & 7 };
            if mask != 0 {
                map.insert("tools".into(), Value::Array(names(mask, 3)));
            }
        }
        // Guards take no `prepend` (upstream's `ctx.tools.guard()` has no such option).
        if hook.prepend && kind != 1 {
            map.insert("prepend".into(), json!(true));
        }
        // A `changes` listener's `do` is synchronous and runs inside registrations: emits and throws only.
        let act: Vec<Instr> = if kind == 5 {
            hook.act.iter().filter(|i| matches!(i, Instr::Emit | Instr::Throw)).cloned().collect()
        } else {
            hook.act.iter().filter(|i| !matches!(i, Instr::Defer | Instr::Conclude)).cloned().collect()
        };
        let act = self.instrs(&act, id);
        if !act.is_empty() {
            map.insert("do".into(), Value::Array(act));
        }
        if let Some((field, value)) = decision(kind, hook.decision, id) {
            map.insert(field.into(), value);
        }
        Value::Object(map)
    }
}

impl Plan {
    /// The scenario value (`id`, `level`, `description`, `rules`, `setup`, `steps`) this plan stands for.
    pub fn scenario(&self, id: &str, rule: &str) -> Value {
        let agents: Vec<(String, Option<String>)> = AGENTS[usize::from(self.agents) % AGENTS.len()]
            .iter()
            .map(|a| match a.split_once('<') {
                Some((name, parent)) => (name.to_owned(), Some(parent.to_owned())),
                None => ((*a).to_owned(), None),
            })
            .collect();
        let mut b = Build { agents, handles: Vec::new(), setup_handles: Vec::new(), fixtures: Vec::new(), counter: 0, hold: self.hold.is_some(), opened: 0 };
        let mut setup = serde_json::Map::new();
        if !b.agents.is_empty() {
            let list = b.agents.iter().map(|(n, p)| match p {
                Some(p) => json!({ "name": n, "parent": p }),
                None => json!(n),
            });
            setup.insert("agents".into(), Value::Array(list.collect()));
        }
        // Handles first (a `do` may dispose any of the setup's), then the fixtures.
        let mut layers: Vec<(String, Option<String>)> = Vec::new();
        let mut tool_meta = Vec::new();
        for (i, t) in self.tools.iter().enumerate() {
            let name = NAMES[usize::from(t.name) % 3].to_owned();
            let agent = b.agent(t.agent);
            let handle = format!("h{}", i + 1);
            // A second fixture of one name in one layer waits for a `register` step (which then throws).
            let register = t.register && !layers.contains(&(name.clone(), agent.clone()));
            if register {
                layers.push((name.clone(), agent.clone()));
                b.setup_handles.push(handle.clone());
            }
            b.fixtures.push(handle.clone());
            tool_meta.push((name, agent, handle, register));
        }
        let hook_ids: Vec<String> = (1..=self.hooks.len()).map(|i| format!("k{i}")).collect();
        b.setup_handles.extend(hook_ids.iter().cloned());
        b.handles = b.setup_handles.clone();
        let mut tools = Vec::new();
        for (t, (name, agent, handle, register)) in self.tools.iter().zip(tool_meta) {
            let params = match t.params % 3 {
                0 => json!({ "text": { "type": "string", "required": true } }),
                1 => json!({}),
                _ => json!({ "text": { "type": "string" } }),
            };
            let render = match t.render % 3 {
                0 => json!("text"),
                1 => json!("json"),
                _ => json!({ "throw": format!("{handle} render threw") }),
            };
            let mut body = b.instrs(&t.body, &handle);
            // Only a required argument is returned: a missing one is `undefined` upstream, which a Rust
            // body cannot return (spec/README.md § Instructions, `returnArgument`).
            body.push(if t.ret == 1 && t.params % 3 == 0 { json!({ "returnArgument": "text" }) } else { json!({ "return": format!("{handle} value") }) });
            let mut map = serde_json::Map::new();
            map.insert("name".into(), json!(name));
            if handle != name {
                map.insert("handle".into(), json!(handle));
            }
            if let Some(agent) = agent {
                map.insert("agent".into(), json!(agent));
            }
            if !register {
                map.insert("register".into(), json!(false));
            }
            map.insert("parameters".into(), params);
            map.insert("output".into(), json!({ "schema": { "type": "string" }, "render": render }));
            if let Some(c) = t.concurrency {
                map.insert("concurrency".into(), [json!(true), json!(false), json!("throws")][usize::from(c % 3)].clone());
            }
            if let Some(f) = t.finalize {
                let text = format!("{handle} final");
                let fin = match f % 4 {
                    0 => json!({ "replace": [{ "type": "text", "text": text }] }),
                    1 => json!({ "appendText": text }),
                    2 => json!({ "keep": true }),
                    _ => json!({ "throw": format!("{handle} finalize threw") }),
                };
                map.insert("finalizeContent".into(), fin);
            }
            map.insert("body".into(), Value::Array(body));
            tools.push(Value::Object(map));
        }
        let mut hooks = serde_json::Map::new();
        if let Some(hold) = &self.hold {
            tools.push(held_tool(hold));
            for (kind, listener) in hold_listeners(hold) {
                push(&mut hooks, &kind, listener);
            }
        }
        for (hook, id) in self.hooks.iter().zip(&hook_ids) {
            let listener = b.listener(hook, id);
            push(&mut hooks, kind_key(hook.kind), listener);
        }
        setup.insert("tools".into(), Value::Array(tools));
        if let Some(answer) = self.approval {
            let approval = match answer % 5 {
                4 => json!({ "answerer": "none" }),
                a => {
                    let answer = ["allowed-once", "rejected", "cancelled", "unavailable"][usize::from(a)];
                    json!({ "answer": answer })
                }
            };
            setup.insert("approval".into(), approval);
        }
        if !hooks.is_empty() {
            setup.insert("hooks".into(), Value::Object(hooks));
        }
        let mut prompt = serde_json::Map::new();
        let mut seen = Vec::new();
        let mut sections = Vec::new();
        for (name, order, agent) in &self.sections {
            let name = format!("guide:s{}", name % 3 + 1);
            let agent = b.agent(*agent);
            // One name per scope: a second would be a duplicate, and the setup rejected.
            if seen.contains(&(name.clone(), agent.clone())) {
                continue;
            }
            seen.push((name.clone(), agent.clone()));
            let mut section = json!({ "name": name, "order": ORDERS[usize::from(order % 8)], "text": format!("{name} text") });
            if let Some(agent) = agent {
                section["agent"] = json!(agent);
            }
            sections.push(section);
        }
        if !sections.is_empty() {
            prompt.insert("sections".into(), Value::Array(sections));
        }
        if let Some(order) = self.tool_order {
            prompt.insert("toolOrder".into(), json!(TOOL_ORDERS[usize::from(order % 3)]));
        }
        if !prompt.is_empty() {
            setup.insert("prompt".into(), Value::Object(prompt));
        }
        if let Some(mode) = self.code {
            setup.insert("mode".into(), json!(["code", "both"][usize::from(mode % 2)]));
            setup.insert("runtime".into(), json!("typescript"));
        }
        let code = self.code.is_some();
        let mut steps: Vec<Value> = Vec::new();
        let hold_at = self.hold.as_ref().map(|h| usize::from(h.at) % (self.steps.len() + 1));
        for (i, s) in self.steps.iter().enumerate() {
            if hold_at == Some(i) {
                steps.extend(self.hold.as_ref().map(hold_steps).unwrap_or_default());
            }
            if matches!(s, Gen::RunCode(..)) && !code {
                continue;
            }
            if let Some(step) = b.step(s) {
                steps.push(step);
            }
        }
        if hold_at == Some(self.steps.len()) {
            steps.extend(self.hold.as_ref().map(hold_steps).unwrap_or_default());
        }
        json!({
            "id": id,
            "rules": [rule],
            "level": "must",
            "description": "generated by dsh-harness explore",
            "setup": Value::Object(setup),
            "steps": steps,
        })
    }
}

impl Build {
    fn step(&mut self, s: &Gen) -> Option<Value> {
        Some(match s {
            Gen::Execute(n, agent, args, aborted) => {
                let arguments = match args % 4 {
                    0 => json!({ "text": "hi" }),
                    1 => json!({}),
                    2 => json!({ "text": 1 }),
                    _ => json!({ "text": "hi", "extra": true }),
                };
                let mut call = json!({ "name": NAMES[usize::from(*n) % 4], "arguments": arguments });
                if let Some(agent) = self.agent(*agent) {
                    call["agent"] = json!(agent);
                }
                if *aborted {
                    call["aborted"] = json!(true);
                }
                json!({ "execute": call })
            }
            Gen::Register(k) => {
                let tool = self.fixtures[usize::from(*k) % self.fixtures.len()].clone();
                let alias = self.next("r");
                self.handles.push(alias.clone());
                json!({ "register": { "tool": tool, "as": alias } })
            }
            Gen::Dispose(k) if !self.handles.is_empty() => json!({ "dispose": self.handles[usize::from(*k) % self.handles.len()] }),
            Gen::Dispose(_) => return None,
            Gen::AddHook(hook) => {
                // `x`, not the setup's `k`: a step's listener never takes a setup listener's handle.
                let id = self.next("x");
                let listener = self.listener(hook, &id);
                self.handles.push(id);
                json!({ "addHook": { kind_key(hook.kind): listener } })
            }
            Gen::Restrict(agent, allow, deny) => {
                let agent = self.agent(Some(*agent))?;
                let alias = self.next("m");
                self.handles.push(alias.clone());
                let mut r = json!({ "agent": agent, "as": alias });
                if allow & 1 != 0 {
                    r["allow"] = Value::Array(names(allow >> 1, 4));
                }
                if deny & 1 != 0 || allow & 1 == 0 {
                    r["deny"] = Value::Array(names(deny >> 1, 4));
                }
                json!({ "restrict": r })
            }
            Gen::PresentAs(agent, mode) => {
                let agent = self.agent(Some(*agent))?;
                let alias = self.next("p");
                self.handles.push(alias.clone());
                let mode = ["code", "native", "both"][usize::from(*mode % 3)];
                json!({ "presentAs": { "agent": agent, "mode": mode, "as": alias } })
            }
            Gen::Get(n, agent) => {
                let mut g = json!({ "name": NAMES[usize::from(*n) % 4] });
                if let Some(agent) = self.agent(*agent) {
                    g["agent"] = json!(agent);
                }
                json!({ "get": g })
            }
            Gen::Schemas(agent) => match self.agent(*agent) {
                Some(agent) => json!({ "schemas": { "agent": agent } }),
                None => json!({ "schemas": {} }),
            },
            Gen::ExecutionMode(n, agent) => {
                let mut e = json!({ "name": NAMES[usize::from(*n) % 4], "arguments": { "text": "hi" } });
                if let Some(agent) = self.agent(*agent) {
                    e["agent"] = json!(agent);
                }
                json!({ "executionMode": e })
            }
            Gen::OpenAgent(parent) => {
                let name = format!("a{}", 4 + self.opened);
                self.opened += 1;
                let step = match self.agent(*parent) {
                    Some(parent) => json!({ "openAgent": { "name": name, "parent": parent } }),
                    None => json!({ "openAgent": name }),
                };
                self.agents.push((name, None));
                step
            }
            Gen::DropAgent(k) if !self.agents.is_empty() => {
                let (name, _) = self.agents.remove(usize::from(*k) % self.agents.len());
                json!({ "dropAgent": name })
            }
            Gen::DropAgent(_) => return None,
            Gen::RunCode(calls, agent) => {
                let mut code = String::from("const out = [];\n");
                for (n, args) in calls {
                    let arguments = ["{ text: \"hi\" }", "{}", "{ text: 1 }", "{ text: \"hi\", extra: true }"][usize::from(args % 4)];
                    let name = NAMES[usize::from(*n) % 4];
                    code.push_str(&format!(
                        "try {{ out.push(typeof tools.{name} === \"function\" ? await tools.{name}({arguments}) : \"unbound\"); }} catch (e) {{ out.push(\"threw: \" + (e instanceof Error ? e.message : String(e))); }}\n"
                    ));
                }
                code.push_str("return out;");
                let mut call = json!({ "name": "run_code", "arguments": { "description": "generated", "code": code } });
                if let Some(agent) = self.agent(*agent) {
                    call["agent"] = json!(agent);
                }
                json!({ "execute": call })
            }
            Gen::Assemble(agent) => match self.agent(*agent) {
                Some(agent) => json!({ "assemble": { "agent": agent } }),
                None => json!({ "assemble": {} }),
            },
        })
    }
}

/// Appends `listener` to the `kind` list of `hooks`.
fn push(hooks: &mut serde_json::Map<String, Value>, kind: &str, listener: Value) {
    if let Some(list) = hooks.entry(kind).or_insert_with(|| json!([])).as_array_mut() {
        list.push(listener);
    }
}

/// The hold's instructions: `emit: hold`, then wait on gate `g`.
fn hold_instrs(hold: &Hold) -> Vec<Value> {
    let wait = if hold.or_abort { json!({ "waitOrAbort": "g" }) } else { json!({ "wait": "g" }) };
    vec![json!({ "emit": "hold" }), wait]
}

fn held_tool(hold: &Hold) -> Value {
    let mut body = vec![json!({ "emit": "held-body" })];
    if hold.stage % 4 == 2 {
        body = hold_instrs(hold);
        body.push(json!({ "emitSignal": "held-signal" }));
    }
    body.push(json!({ "return": "held value" }));
    json!({ "name": "held", "parameters": {}, "output": { "schema": { "type": "string" }, "render": "text" }, "body": body })
}

/// The listeners on `held`: the holding one (unless the body holds) and an optional later one.
fn hold_listeners(hold: &Hold) -> Vec<(String, Value)> {
    // Stage to listener kind (stages of `later`: 0 pre, 1 guard, 2 wrapper, 3 body, 4 post).
    let kind_of = |stage: u8| match stage {
        0 => Some(0u8),
        1 => Some(1),
        2 => Some(2),
        3 => None,
        _ => Some(3),
    };
    // The hold's stage on the scale of `later`'s.
    let held_at = [0u8, 2, 3, 4][usize::from(hold.stage % 4)];
    let mut out = Vec::new();
    if let Some(kind) = kind_of(held_at) {
        let mut map = serde_json::Map::new();
        map.insert("id".into(), json!("hold"));
        map.insert("tools".into(), json!(["held"]));
        map.insert("do".into(), Value::Array(hold_instrs(hold)));
        if let Some((field, value)) = decision(kind, hold.decision, "hold") {
            map.insert(field.into(), value);
        }
        out.push((kind_key(kind).to_owned(), Value::Object(map)));
    }
    if let Some((offset, pick)) = hold.later {
        let stage = (held_at + offset).min(4);
        if let Some(kind) = kind_of(stage).filter(|_| stage != held_at) {
            let mut map = serde_json::Map::new();
            map.insert("id".into(), json!("later"));
            map.insert("tools".into(), json!(["held"]));
            map.insert("do".into(), json!([{ "emitSignal": "later" }]));
            if let Some((field, value)) = decision(kind, pick, "later") {
                map.insert(field.into(), value);
            }
            out.push((kind_key(kind).to_owned(), Value::Object(map)));
        }
    }
    out
}

/// The hold's steps: start `held`, wait until it holds, abort it (or not), open the gate, await it.
fn hold_steps(hold: &Hold) -> Vec<Value> {
    let mut steps = vec![json!({ "start": { "callId": "held-call", "name": "held", "arguments": {} } }), json!({ "waitFor": "hold" })];
    match hold.abort {
        None => {}
        Some(None) => steps.push(json!({ "abort": { "callId": "held-call" } })),
        Some(Some(r)) => {
            let reason = ["stop", "user cancelled"][usize::from(r % 2)];
            steps.push(json!({ "abort": { "callId": "held-call", "reason": reason } }));
        }
    }
    steps.push(json!({ "openGate": "g" }));
    steps.push(json!({ "await": "held-call" }));
    steps
}
