//! The registry requests a session's engine serves (`conformance/PROTOCOL.md` § Session requests): registration,
//! hooks, scopes, disposal by handle, lookups, `executionMode`, presenters (`tools/present`), restriction and presentation, prompt
//! assembly and SDK rendering; the `schema/*` requests go on to `schema.rs`. Also what running code asks
//! of the engine (`Host`: the `addHook` and `dispose` instructions).

use dsh_tools::{ExecutionMode, HookGuard, ToolExecutionInput, ToolFilter, ToolMode, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use dsh_conformance::listener::Listener;
use dsh_conformance::scenario::AddHook;

use super::{Engine, Guard, Held};
use crate::refserver::deep;
use crate::refserver::shared::Host;
use crate::refserver::rpc::{Failure, INVALID_STATE, Params};

impl Engine {
    /// Serves a request the engine owns; `None` for an unknown method.
    pub fn handle(&self, method: &str, params: Params<'_>) -> Option<Result<Value, Failure>> {
        let needs_registry = match method {
            "sdk/render" => false,
            "prompt/assemble" => !matches!(params.opt_str("agent"), Ok(None)),
            other => !other.starts_with("schema/"),
        };
        if needs_registry {
            if let Err(refused) = self.require_registry(method) {
                return Some(Err(refused));
            }
        }
        let outcome = match method {
            "approval/unmount" => self.unmount_approval().map(|()| json!({})),
            "registry/dispose" => {
                self.dispose_registry();
                Ok(json!({}))
            }
            "tools/register" => self.tools_register(params),
            "hooks/add" => self.hooks_add(params),
            "scope/open" => params
                .str("agent")
                .and_then(|a| Ok((a, params.opt_str("parent")?)))
                .and_then(|(a, parent)| self.open_agent(a, parent))
                .map(|()| json!({})),
            "scope/drop" => params.str("agent").and_then(|a| self.drop_agent(a)).map(|()| json!({})),
            "plugin/dispose" => params.str("plugin").and_then(|p| self.dispose_plugin(p)).map(|()| json!({})),
            "handle/dispose" => self.dispose(params),
            "tools/get" => self.get(params),
            "tools/schemas" => self.schemas(params),
            "tools/executionMode" => self.execution_mode(params),
            "tools/present" => self.present(params),
            "tools/definition" => self.definition(params),
            "scope/restrict" => self.restrict(params),
            "scope/presentAs" => self.present_as(params),
            "prompt/assemble" => params
                .opt_str("agent")
                .and_then(|agent| self.agent_key(agent))
                .and_then(|scope| crate::refserver::prompt::assemble(&self.prompt, scope.as_ref())),
            "sdk/render" => sdk_render(params),
            "codemode/environments" => self.codemode_environments(),
            _ => return crate::refserver::schema::handle(method, params),
        };
        Some(outcome)
    }

    /// Refuses a request that needs the registry once `registry/dispose` was served: upstream, every
    /// context that injected the disposed service is inactive (REG-027).
    pub(super) fn require_registry(&self, method: &str) -> Result<(), Failure> {
        if self.state().registry_disposed {
            return Err(Failure::new(INVALID_STATE, format!("{method}: the registry of this session is disposed")));
        }
        Ok(())
    }

    /// `registry/dispose`: what disposing upstream's `ToolRuntime` plugin does. The runtime withdraws its
    /// prompt contributions (`ToolRuntime::detach_prompt`), and everything the session registered through
    /// it goes, as the plugins and agent scopes that inject the service are disposed with it (its masks,
    /// hooks, presentations and the setup's prompt contributions included; the subject's own observers
    /// stay, unobservable from here on). REG-027.
    fn dispose_registry(&self) {
        self.runtime.detach_prompt();
        let dropped = {
            let mut state = self.state();
            state.registry_disposed = true;
            let keys: Vec<String> = state.handles.keys().cloned().collect();
            state.disposed.extend(keys);
            let mut dropped: Vec<Held> = state.handles.drain().map(|(_, held)| held).collect();
            dropped.append(&mut state.orphans);
            (dropped, std::mem::take(&mut state.prompt_contributions))
        };
        drop(dropped);
    }

    /// `approval/unmount`: the seam `setup.approval` mounted goes, as disposing upstream's ApprovalService
    /// fiber does; later asks find no seam (APPR-010).
    fn unmount_approval(&self) -> Result<(), Failure> {
        let mounted = self.state().approval.take();
        match mounted {
            Some(guard) => {
                guard.dispose();
                Ok(())
            }
            None => Err(Failure::new(INVALID_STATE, "approval/unmount: no approval seam is mounted (setup.approval)")),
        }
    }

    fn tools_register(&self, params: Params<'_>) -> Result<Value, Failure> {
        let outcome = match self.register(params.str("tool")?, params.opt_str("as")?)? {
            Ok(()) => json!({ "ok": true }),
            Err(e) => {
                let mut threw = json!({ "message": e.message, "name": e.name });
                if let Some(code) = e.code {
                    threw["code"] = Value::String(code);
                }
                if let Some(violations) = e.violations {
                    threw["violations"] = json!(violations);
                }
                json!({ "threw": threw })
            }
        };
        Ok(json!({ "outcome": outcome }))
    }

    fn hooks_add(&self, params: Params<'_>) -> Result<Value, Failure> {
        let alias = params.opt_str("as")?;
        match params.str("kind")? {
            "preExecute" => self.add_pre_execute(&params.parse("listener")?, alias)?,
            "guards" => self.add_guard(&params.parse("listener")?, alias)?,
            "execute" => self.add_execute(&params.parse("listener")?, alias)?,
            "postExecute" => self.add_post_execute(&params.parse("listener")?, alias)?,
            "results" => self.add_results(&params.parse("listener")?, alias)?,
            "changes" => self.add_changes(&params.parse("listener")?, alias)?,
            "dispatchLog" => self.add_dispatch_log(&params.parse("listener")?, alias)?,
            other => return Err(Failure::params(format!("unknown hook kind {other:?}"))),
        }
        Ok(json!({ "outcome": { "ok": true } }))
    }

    /// `tools.restrict` through the agent's scope; the mask is kept under `as` when given, otherwise it
    /// stays until the agent is dropped (upstream's adapter then loses the disposer, not the mask).
    /// `tools.restrict` through the agent's scope. Without an agent it is the plain-context restrict the
    /// reference's API cannot express (`ToolRuntime::restrict` takes a scope by type, SCOPE-017): refused as
    /// unsupported, and `plain-context-restrict` is not declared.
    fn restrict(&self, params: Params<'_>) -> Result<Value, Failure> {
        let Some(agent) = params.opt_str("agent")? else {
            return Err(Failure::unsupported(
                "a plain-context restrict: `ToolRuntime::restrict` takes an agent scope by type (SCOPE-017)",
            ));
        };
        let Some(key) = self.registering_scope(Some(agent))? else {
            return Err(Failure::unknown("agent", agent));
        };
        let filter = ToolFilter { allow: params.opt_parse("allow")?, deny: params.opt_parse("deny")? };
        let outcome = self.runtime.restrict(&key, filter).map_err(|e| e.message);
        self.hold_outcome(outcome, Some(agent), params.opt_str("as")?)
    }

    /// `tools.presentAs` through the agent's scope, or from the plain context when no agent is named
    /// (which upstream rejects; so does the reference). Held under `as`, else until the agent is dropped.
    fn present_as(&self, params: Params<'_>) -> Result<Value, Failure> {
        let agent = params.opt_str("agent")?;
        let scope = self.registering_scope(agent)?;
        let mode_name = params.str("mode")?;
        let mode = ToolMode::parse(mode_name).ok_or_else(|| Failure::params(format!("unknown mode {mode_name:?}")))?;
        let outcome = self.runtime.present_as(scope.as_ref(), mode).map_err(|e| e.message);
        self.hold_outcome(outcome, agent, params.opt_str("as")?)
    }

    /// The protocol outcome of a call that returned a guard or threw an `Error`: the guard is held under
    /// `alias`, else until `agent` is dropped (or the session closes).
    fn hold_outcome(
        &self,
        outcome: Result<HookGuard, String>,
        agent: Option<&str>,
        alias: Option<&str>,
    ) -> Result<Value, Failure> {
        let outcome = match outcome {
            Ok(guard) => {
                let held = Held { seq: 0, agent: agent.map(str::to_owned), plugin: None, _guard: Guard::Hook(guard) };
                match alias {
                    Some(alias) => self.hold(alias.to_owned(), held),
                    None => self.state().orphans.push(held),
                }
                json!({ "ok": true })
            }
            Err(message) => json!({ "threw": { "message": message, "name": "Error" } }),
        };
        Ok(json!({ "outcome": outcome }))
    }

    /// `handle/dispose`: the outcome is what disposing threw (a tool's `tools/change` announcement).
    fn dispose(&self, params: Params<'_>) -> Result<Value, Failure> {
        let outcome = match self.dispose_handle(params.str("handle")?)? {
            Ok(()) => json!({ "ok": true }),
            Err(message) => json!({ "threw": { "message": message, "name": "Error" } }),
        };
        Ok(json!({ "outcome": outcome }))
    }

    /// Disposes what `handle` holds; the inner error is what a tool's disposal announcement threw.
    fn dispose_handle(&self, handle: &str) -> Result<Result<(), String>, Failure> {
        let held = {
            let mut state = self.state();
            match state.handles.remove(handle) {
                Some(held) => {
                    state.disposed.insert(handle.to_owned());
                    held
                }
                // A handle stays valid: its disposer ran already, and running it again changes nothing.
                None if state.disposed.contains(handle) => return Ok(Ok(())),
                None => return Err(Failure::unknown("handle", handle)),
            }
        };
        Ok(held.dispose())
    }

    fn get(&self, params: Params<'_>) -> Result<Value, Failure> {
        let agent = self.agent_key(params.opt_str("agent")?)?;
        let tool = self.runtime.get(params.str("name")?, agent.as_ref());
        Ok(deep::object([("tool", tool.map(|t| t.to_json()).unwrap_or(Value::Null))]))
    }

    fn schemas(&self, params: Params<'_>) -> Result<Value, Failure> {
        let agent = self.agent_key(params.opt_str("agent")?)?;
        // The checked read: upstream's schemas() throws for non-lossless raw parameters (REG-020).
        match self.runtime.try_schemas(agent.as_ref()) {
            Ok(schemas) => {
                let schemas: Vec<Value> = schemas.iter().map(|s| s.to_json()).collect();
                Ok(deep::object([("schemas", Value::Array(schemas))]))
            }
            Err(e) => Ok(json!({ "outcome": { "threw": { "message": e.message, "name": "Error" } } })),
        }
    }

    fn execution_mode(&self, params: Params<'_>) -> Result<Value, Failure> {
        let input = ToolExecutionInput {
            call_id: String::new(),
            name: params.str("name")?.to_owned(),
            arguments: params.get("arguments").map(deep::clone).unwrap_or(Value::Null),
            signal: CancellationToken::new(),
            agent: self.agent_key(params.opt_str("agent")?)?,
            parent: None,
            root_call_id: None,
        };
        let mode = match self.runtime.execution_mode(&input) {
            ExecutionMode::Parallel => "parallel",
            ExecutionMode::Exclusive => "exclusive",
        };
        deep::dismantle(input.arguments);
        Ok(json!({ "mode": mode }))
    }

    /// `tools/definition`: the output schema of what `get(name, agent)` resolves and which optional
    /// members the definition carries.
    fn definition(&self, params: Params<'_>) -> Result<Value, Failure> {
        let agent = self.agent_key(params.opt_str("agent")?)?;
        let Some(tool) = self.runtime.resolve(params.str("name")?, agent.as_ref()) else {
            return Ok(json!({ "definition": null }));
        };
        let def = tool.definition();
        let members = [
            ("presentationMeta", def.output.as_ref().is_some_and(|o| o.presentation_meta.is_some())),
            ("timeoutMs", def.timeout_ms.is_some()),
            ("isConcurrencySafe", def.is_concurrency_safe.is_some()),
            ("finalizeContent", def.finalize_content.is_some()),
            ("presentCall", def.present_call.is_some()),
            ("presentResult", def.present_result.is_some()),
        ];
        let members: Vec<&str> = members.iter().filter(|(_, has)| *has).map(|(name, _)| *name).collect();
        let definition = deep::object([("outputSchema", deep::clone(tool.output_schema())), ("members", json!(members))]);
        Ok(deep::object([("definition", definition)]))
    }

    /// `tools/present`: the presenters of what `get(name, agent)` resolves, asked with the arguments (and
    /// the completed outcome, when sent).
    fn present(&self, params: Params<'_>) -> Result<Value, Failure> {
        let agent = self.agent_key(params.opt_str("agent")?)?;
        let Some(presenters) = self.runtime.resolve(params.str("name")?, agent.as_ref()) else {
            return Ok(json!({ "present": null }));
        };
        let args = params.get("arguments").unwrap_or(&Value::Null);
        let mut methods = Vec::new();
        if presenters.has_present_call() {
            methods.push("presentCall");
        }
        if presenters.has_present_result() {
            methods.push("presentResult");
        }
        let call = presenters.present_call(args).map(|v| v.to_json()).unwrap_or(Value::Null);
        let mut present = deep::object([("methods", json!(methods)), ("call", call)]);
        if let Some(result) = params.get("result") {
            let result: ToolResult = serde_json::from_value(deep::clone(result))
                .map_err(|e| Failure::params(format!("tools/present result: {e}")))?;
            let view = presenters.present_result(args, &result).map(|v| v.to_json()).unwrap_or(Value::Null);
            present["result"] = view;
        }
        Ok(deep::object([("present", present)]))
    }

}

/// `sdk/render`: `dsh_tools::sdk` renders the tool list (upstream `renderToolsSdk` / `renderToolsSdkPy`).
/// A list whose structure the reference cannot read is a `TypeError` outcome with the reference's
/// message (upstream's JavaScript `TypeError` texts are not reproduced).
fn sdk_render(params: Params<'_>) -> Result<Value, Failure> {
    let render: fn(&[dsh_tools::sdk::SdkToolSchema]) -> String = match params.str("language")? {
        "typescript" => dsh_tools::sdk::render_tools_sdk,
        "python" => dsh_tools::sdk::render_tools_sdk_py,
        other => return Err(Failure::params(format!("unknown SDK language {other:?}"))),
    };
    let tools = deep::clone(params.req("tools")?);
    match dsh_tools::sdk::parse_tool_list(tools) {
        Ok(list) => {
            let text = render(&list);
            for tool in list {
                deep::dismantle(tool.parameters);
                if let Some(output) = tool.output {
                    deep::dismantle(output);
                }
            }
            Ok(json!({ "outcome": { "ok": true }, "text": text }))
        }
        Err(e) => Ok(json!({ "outcome": { "threw": { "message": e.to_string(), "name": "TypeError" } } })),
    }
}

/// Running code's registrations (the `addHook` and `dispose` instructions, PIPE-023): the same as the
/// steps, made from inside a listener or a body while the pipeline runs.
impl Host for Engine {
    fn add_hook(&self, hook: &Value) -> Result<(), String> {
        let hook: AddHook = serde_json::from_value(hook.clone()).map_err(|e| format!("addHook: {e}"))?;
        let alias = hook.as_.as_deref();
        let added = match &hook.listener {
            Listener::PreExecute(l) => self.add_pre_execute(l, alias),
            Listener::Guards(l) => self.add_guard(l, alias),
            Listener::Execute(l) => self.add_execute(l, alias),
            Listener::PostExecute(l) => self.add_post_execute(l, alias),
            Listener::Results(l) => self.add_results(l, alias),
            Listener::Changes(l) => self.add_changes(l, alias),
            Listener::DispatchLog(l) => self.add_dispatch_log(l, alias),
        };
        added.map_err(|failure| failure.message)
    }

    fn dispose(&self, handle: &str) -> Result<(), String> {
        self.dispose_handle(handle).map_err(|failure| failure.message)?
    }
}
