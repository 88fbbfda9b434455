//! The explorer's scenario builder (issue 40): [`Plan::scenario`](super::Plan::scenario) resolves a plan's
//! choices against what exists at each point (agents open, handles held, fixtures declared) into a
//! scenario value the loader accepts.

use serde_json::{Value, json};

use super::hold::{held_tool, hold_listeners, hold_steps};
use super::{AGENTS, Gen, Hook, Instr, NAMES, ORDERS, Plan, TOOL_ORDERS, decision, kind_key, names};

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
    /// `disposePlugin: p1` was a step already (a disposed plugin stays disposed).
    plugin_disposed: bool,
    /// A tool fixture names plugin `p1`.
    plugin_named: bool,
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
        let mut b = Build { agents, handles: Vec::new(), setup_handles: Vec::new(), fixtures: Vec::new(), counter: 0, hold: self.hold.is_some(), opened: 0, plugin_disposed: false, plugin_named: false };
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
            let mut output = json!({ "schema": { "type": "string" }, "render": render });
            if t.presenters.is_some_and(|p| p % 3 == 2) {
                output["presentationMeta"] = json!({ "fromArguments": true });
            }
            map.insert("output".into(), output);
            if t.plugin && map.get("agent").is_none() {
                map.insert("plugin".into(), json!("p1"));
                b.plugin_named = true;
            }
            match t.presenters.map(|p| p % 3) {
                Some(0) => {
                    map.insert("presentCall".into(), json!({ "fromArguments": true }));
                    map.insert("presentResult".into(), json!({ "echo": true }));
                }
                Some(1) => {
                    map.insert("presentCall".into(), json!({ "view": null }));
                }
                Some(_) => {
                    map.insert("presentResult".into(), json!({ "fromMeta": true }));
                }
                None => {}
            }
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
            // Only a plugin some fixture names exists (PROTOCOL.md `plugin/dispose`).
            Gen::DisposePlugin if !self.plugin_disposed && self.plugin_named => {
                self.plugin_disposed = true;
                json!({ "disposePlugin": "p1" })
            }
            Gen::DisposePlugin => return None,
            Gen::Present(n, agent, with_result) => {
                let mut p = json!({ "name": NAMES[usize::from(*n) % 4], "arguments": { "text": "hi" } });
                if let Some(agent) = self.agent(*agent) {
                    p["agent"] = json!(agent);
                }
                if *with_result {
                    // The meta is a card view: `fromMeta` hands it to the UI as one (spec/README.md § Presenters).
                    let meta = json!({ "card": "generic", "title": "meta view" });
                    p["result"] = json!({ "content": [{ "type": "text", "text": "shown" }], "isError": false, "meta": meta });
                }
                json!({ "present": p })
            }
            Gen::Definition(n, agent) => {
                let mut d = json!({ "name": NAMES[usize::from(*n) % 4] });
                if let Some(agent) = self.agent(*agent) {
                    d["agent"] = json!(agent);
                }
                json!({ "definition": d })
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
