//! The harness side of `conformance/PROTOCOL.md`: protocol constants and the requests each step turns
//! into (an `execute` step is `call/start` then `call/await`; an `events` step sends nothing).
//!
//! Default call ids: a call without `callId` gets `call-<n>`, n counting the scenario's call steps
//! (`execute`, `start`) from 1 in step order.

use serde_json::{Map, Value, json};

use crate::scenario::{Action, Call, Scenario, Step};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: &str = "1.0";
/// The suite's name in `initialize`.
pub const SUITE_NAME: &str = "dsh-conformance";
/// The suite's version in `initialize`.
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One request to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The method (`tools/register`, ...).
    pub method: &'static str,
    /// Its params, `session` included.
    pub params: Value,
}

/// `initialize` params.
pub fn initialize_params() -> Value {
    json!({ "protocolVersion": PROTOCOL_VERSION, "suite": { "name": SUITE_NAME, "version": SUITE_VERSION } })
}

/// The major part of a `major.minor` version.
pub fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}

/// `session/open` for a scenario: its `setup` exactly as written (an absent setup is `{}`).
pub fn open_request(scenario: &Scenario) -> Request {
    let setup = scenario.setup.as_ref().and_then(|s| serde_json::to_value(s).ok()).unwrap_or_else(|| json!({}));
    Request { method: "session/open", params: json!({ "session": scenario.id, "setup": setup }) }
}

/// `session/close`.
pub fn close_request(session: &str) -> Request {
    Request { method: "session/close", params: json!({ "session": session }) }
}

/// Turns steps into requests, numbering default call ids.
#[derive(Debug, Clone)]
pub struct RequestBuilder {
    session: String,
    calls: usize,
}

impl RequestBuilder {
    /// A builder for one session.
    pub fn new(session: &str) -> RequestBuilder {
        RequestBuilder { session: session.to_string(), calls: 0 }
    }

    fn params(&self, fields: Vec<(&str, Option<Value>)>) -> Value {
        let mut map = Map::new();
        map.insert("session".into(), Value::String(self.session.clone()));
        for (k, v) in fields {
            if let Some(v) = v {
                map.insert(k.into(), v);
            }
        }
        Value::Object(map)
    }

    fn call_id(&mut self, call: &Call) -> String {
        self.calls += 1;
        call.call_id.clone().unwrap_or_else(|| format!("call-{}", self.calls))
    }

    /// The requests of one step, in order (none for `events`). Also returns the call id an
    /// `execute`/`start` step used.
    pub fn step(&mut self, step: &Step) -> (Vec<Request>, Option<String>) {
        let s = |v: &String| Some(Value::String(v.clone()));
        let so = |v: &Option<String>| v.as_ref().map(|v| Value::String(v.clone()));
        let strings = |v: &Option<Vec<String>>| v.as_ref().map(|v| Value::Array(v.iter().cloned().map(Value::String).collect()));
        let one = |method, params| (vec![Request { method, params }], None);
        match &step.action {
            Action::Register(r) => one("tools/register", self.params(vec![("tool", s(&r.tool)), ("as", so(&r.as_))])),
            Action::Dispose(h) => one("handle/dispose", self.params(vec![("handle", s(h))])),
            Action::AddHook(h) => one(
                "hooks/add",
                self.params(vec![
                    ("kind", Some(Value::String(h.listener.kind().into()))),
                    ("listener", Some(h.listener.body_json())),
                    ("as", so(&h.as_)),
                ]),
            ),
            Action::Restrict(r) => one(
                "scope/restrict",
                self.params(vec![("agent", so(&r.agent)), ("allow", strings(&r.allow)), ("deny", strings(&r.deny)), ("as", so(&r.as_))]),
            ),
            Action::PresentAs(p) => {
                one("scope/presentAs", self.params(vec![("agent", so(&p.agent)), ("mode", s(&p.mode)), ("as", so(&p.as_))]))
            }
            Action::OpenAgent(a) => one(
                "scope/open",
                self.params(vec![
                    ("agent", Some(Value::String(a.name().to_owned()))),
                    ("parent", a.parent().map(|p| Value::String(p.to_owned()))),
                ]),
            ),
            Action::DropAgent(a) => one("scope/drop", self.params(vec![("agent", s(a))])),
            Action::DisposePlugin(p) => one("plugin/dispose", self.params(vec![("plugin", s(p))])),
            Action::DisposeRegistry(_) => one("registry/dispose", self.params(vec![])),
            Action::UnmountApproval(_) => one("approval/unmount", self.params(vec![])),
            Action::Get(g) => one("tools/get", self.params(vec![("name", s(&g.name)), ("agent", so(&g.agent))])),
            Action::Schemas(a) => one("tools/schemas", self.params(vec![("agent", so(&a.agent))])),
            Action::ExecutionMode(e) => one(
                "tools/executionMode",
                self.params(vec![("name", s(&e.name)), ("arguments", Some(e.arguments.clone())), ("agent", so(&e.agent))]),
            ),
            Action::Present(p) => one(
                "tools/present",
                self.params(vec![
                    ("name", s(&p.name)),
                    ("arguments", Some(p.arguments.clone())),
                    ("agent", so(&p.agent)),
                    ("result", p.result.clone()),
                ]),
            ),
            Action::Definition(g) => one("tools/definition", self.params(vec![("name", s(&g.name)), ("agent", so(&g.agent))])),
            Action::Execute(call) => {
                let (start, id) = self.start(call);
                let wait = Request { method: "call/await", params: self.params(vec![("callId", Some(Value::String(id.clone())))]) };
                (vec![start, wait], Some(id))
            }
            Action::Start(call) => {
                let (start, id) = self.start(call);
                (vec![start], Some(id))
            }
            Action::Await(id) => one("call/await", self.params(vec![("callId", s(id))])),
            Action::Abort(a) => one("call/abort", self.params(vec![("callId", s(&a.call_id)), ("reason", a.reason.clone())])),
            Action::OpenGate(g) => one("gate/open", self.params(vec![("gate", s(g))])),
            Action::WaitFor(label) => one("events/waitFor", self.params(vec![("label", s(label))])),
            Action::Events(_) | Action::Sleep(_) => (Vec::new(), None),
            Action::Assemble(a) => one("prompt/assemble", self.params(vec![("agent", so(&a.agent))])),
            Action::RenderSdk(r) => one(
                "sdk/render",
                self.params(vec![("language", s(&r.language)), ("tools", Some(Value::Array(r.tools.clone())))]),
            ),
            Action::Environments(_) => one("codemode/environments", self.params(vec![])),
        }
    }

    fn start(&mut self, call: &Call) -> (Request, String) {
        let id = self.call_id(call);
        let params = self.params(vec![
            ("callId", Some(Value::String(id.clone()))),
            ("name", Some(Value::String(call.name.clone()))),
            ("arguments", Some(call.arguments.clone())),
            ("agent", call.agent.clone().map(Value::String)),
            ("parent", call.parent.clone().map(Value::String)),
            ("rootCallId", call.root_call_id.clone().map(Value::String)),
            ("aborted", call.aborted.map(Value::Bool)),
        ]);
        (Request { method: "call/start", params }, id)
    }
}

/// Parses a `Subject`-independent `initialize` result into its parts (after schema validation).
pub fn subject_info(result: &Value) -> Option<crate::subject::SubjectInfo> {
    let s = |p: &str| result.pointer(p).and_then(Value::as_str).map(str::to_string);
    let list = |p: &str| -> Option<Vec<String>> {
        result.pointer(p)?.as_array()?.iter().map(|v| v.as_str().map(str::to_string)).collect()
    };
    Some(crate::subject::SubjectInfo {
        protocol_version: s("/protocolVersion")?,
        name: s("/implementation/name")?,
        version: s("/implementation/version")?,
        language: s("/implementation/language")?,
        profiles: list("/capabilities/profiles")?,
        features: list("/capabilities/features")?,
        runtimes: list("/capabilities/runtimes")?,
    })
}
