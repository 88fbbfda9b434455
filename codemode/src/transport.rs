//! The `code_run` transport: a tool registered in the preset (so argument validation, policy and timeouts
//! apply to it as to any tool) whose body runs the program on the configured code runtime. Every tool the
//! calling agent sees except `code_run` is a binding of the program's `tools` namespace; each binding call
//! is a fresh `ToolRuntime::execute` with the sub-call id `<callId>:ptc:<n>` and this execution as its
//! parent — the nested marker the executor reads — so it runs the whole pipeline through the native
//! executor. Only the program's logs and completion value reach the model; program calls write no
//! dispatch log. Each run names its agent's state owner (`retention.rs`): a `persistent-in-memory` code
//! runtime keeps the agent's environment across calls, a `per-call` one runs fresh every call. The names
//! are the plugin's, kept per registry generation and agent (`shared.rs`), and every binding is one
//! dispatcher handed the name, so a run's set-up does not grow with the catalogue
//! (`cargo bench -p dsh-codemode --bench code_run`).
//!
//! Spec: CDM-024, CDM-026..CDM-031, CDM-036, CDM-037, CDM-044.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_tools::code::flavor::{output_spec, parameter_spec, resolve_flavor};
use dsh_tools::code::render::{NO_OUTPUT, render_output_capped};
use dsh_tools::code::{
    CodeBindingErrorClass, CodeBindingNamespace, CodeBindings, CodeRunRequest, DEFAULT_ABORT_REASON, DispatchFn, RunSignal,
};
use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolFailure, ToolRunContext};
use serde_json::{Map, Value, json};

use crate::rules::{CODE_RUN_NAME, NO_OUTPUT_TEXT, PTC_ID_MARKER};
use crate::shared::Shared;

/// The `code_run` definition for `shared`'s code runtime: rc.8's `run_code` arguments (`code`,
/// `description`) and output (`{ logs, result? }`), under the plugin's name.
pub(crate) fn definition(shared: &Arc<Shared>) -> Result<ToolDefinition, String> {
    let flavor = resolve_flavor(Some(shared.code_runtime.language())).map_err(|e| e.message)?;
    // The code runtime's model-text cap (`CodeRuntimeLimits::max_model_text_bytes`) bounds what reaches the model.
    let cap = shared.code_runtime.run_limits().and_then(|limits| limits.max_model_text_bytes);
    let shared = Arc::clone(shared);
    let body: dsh_tools::ToolBody = Arc::new(move |args, ctx| Box::pin(run(Arc::clone(&shared), args, ctx)));
    Ok(ToolDefinition::new(
        CODE_RUN_NAME,
        flavor.summary, // rc.8's description less the image sentence: program calls attach no images
        Parameters::Dsl(parameter_spec(&flavor)),
        OutputDeclaration {
            schema: output_spec(),
            render: Arc::new(move |_, value| {
                let logs: Vec<String> = value["logs"].as_array().into_iter().flatten().filter_map(|l| l.as_str().map(str::to_owned)).collect();
                let text = render_output_capped(&logs, value.get("result"), cap);
                // rc.8's constant names its own transport; this one is `code_run`.
                let text = if text == NO_OUTPUT { NO_OUTPUT_TEXT.to_owned() } else { text };
                Ok(vec![json!({ "type": "text", "text": text })])
            }),
            presentation_meta: None,
        },
        body,
    ))
}

async fn run(shared: Arc<Shared>, args: Arc<Value>, ctx: ToolRunContext) -> Result<Value, ToolFailure> {
    let code = args["code"].as_str().unwrap_or_default().to_owned();
    if args["description"].as_str().unwrap_or_default().trim().is_empty() {
        return Err(ToolFailure::message("invalid description: expected a non-empty string"));
    }
    let Some(runtime) = shared.runtime.upgrade() else { return Err(ToolFailure::message("dsh-codemode: the tool runtime is gone")) };
    let _running = shared.running(ctx.token());
    // Held until the run has settled (CDM-044).
    let lease = shared.retention.owner(&runtime, ctx.agent())?;
    let signal = RunSignal::new();
    let counter = Arc::new(AtomicU64::new(0));
    // The names from the plugin's cache (made once per registry generation and agent), every binding one
    // dispatcher: a run copies no schema and makes no per-tool closure (issue 39).
    let names = shared.binding_names(&runtime, ctx.agent());
    let functions = CodeBindings::dispatch(names, dispatcher(&runtime, &ctx, &signal, &counter));
    let request = CodeRunRequest {
        program: code,
        bindings: vec![CodeBindingNamespace {
            global: "tools".into(),
            functions,
            error_class: Some(CodeBindingErrorClass { name: "ToolCallError".into(), member_name_property: "toolName".into() }),
        }],
        signal: signal.clone(),
        state_owner: lease.as_ref().map(crate::retention::Lease::owner),
    };
    let run = shared.code_runtime.run(request);
    tokio::pin!(run);
    let outcome = tokio::select! {
        outcome = &mut run => outcome,
        () = ctx.signal().cancelled() => {
            // The caller's reason reaches the run, as rc.8's transport relays it (RUN-032): the model
            // reads `code run failed (abort): <reason>`.
            signal.abort(ctx.abort_reason().unwrap_or_else(|| DEFAULT_ABORT_REASON.to_owned()));
            run.await
        }
    };
    // The run is over: abort what its bindings still hold.
    signal.abort("code run settled");
    match outcome {
        Err(misuse) => Err(ToolFailure::message(misuse.message)),
        Ok(result) => result.into_transport_value_capped(shared.code_runtime.run_limits().and_then(|l| l.max_model_text_bytes)),
    }
}

/// Every binding: a nested call of the named tool through the facade, so the executor sees it and delegates it.
fn dispatcher(runtime: &dsh_tools::ToolRuntime, ctx: &ToolRunContext, signal: &RunSignal, counter: &Arc<AtomicU64>) -> DispatchFn {
    let runtime = runtime.downgrade();
    let (ctx, signal, counter) = (ctx.clone(), signal.clone(), Arc::clone(counter));
    Arc::new(move |name: &str, argument: Option<Value>| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let input = ToolExecutionInput {
            call_id: format!("{}{PTC_ID_MARKER}{n}", ctx.call_id()),
            name: name.to_owned(),
            arguments: argument.unwrap_or_else(|| Value::Object(Map::new())),
            signal: signal.token().child_token(),
            agent: ctx.agent().cloned(),
            parent: Some(ctx.token()),
            root_call_id: Some(ctx.root_call_id().to_owned()),
        };
        let runtime = runtime.clone();
        Box::pin(async move {
            let Some(runtime) = runtime.upgrade() else { return Err("dsh-codemode: the tool runtime is gone".to_owned()) };
            match runtime.execute(input).await {
                dsh_tools::ToolExecutionResult::Success { value, .. } => Ok(value),
                dsh_tools::ToolExecutionResult::Failure { error, .. } => Err(error.message),
            }
        })
    })
}

