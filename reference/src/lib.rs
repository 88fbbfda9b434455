//! dsh-tools: a tool registry and execution pipeline for LLM agents. Register tools (typed Rust
//! functions, or JSON-Schema definitions), show the model their schemas, and run the calls the model
//! makes through one pipeline: policy hooks, guards, wrappers around the body, output checks,
//! post-processing and a result log. In **Code Mode** the model instead writes a short TypeScript or
//! Python program that calls the tools, and the crate runs it in a code runtime whose containment is stated
//! exactly in [the posture table of `code`](code#what-a-program-can-reach): the Python runtime confines each
//! run (Landlock, seccomp, no capabilities) and refuses to start where the kernel cannot; the TypeScript
//! runtime has no file, network or process API and runs inside the host process.
//!
//! The behaviour follows the TypeScript package `@deepseek-ai/dsh-tools@0.1.0-rc.8`, checked by this
//! workspace's conformance suite.
//!
//! # Quickstart: one model turn
//!
//! An agent loop shows the model its tools, gets back a turn of tool calls, runs them, and answers each
//! call with its result. [`turn::TurnExecutor`] runs a turn: the calls are checked by policy in model
//! order, concurrency-safe calls overlap, every other call runs alone, and one result per call comes back
//! in model order. [`provider`] converts to and from the chat APIs' shapes (OpenAI and Anthropic).
//!
//! ```
//! use dsh_tools::provider::{ImageSource, openai};
//! use dsh_tools::turn::TurnExecutor;
//! use dsh_tools::typed::{JsonSchema, TypedTool};
//! use dsh_tools::{ToolRuntime, ToolsConfig};
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct WeatherArgs {
//!     /// City name, e.g. "Oslo".
//!     city: String,
//! }
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Weather {
//!     city: String,
//!     celsius: f64,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let rt = ToolRuntime::new(ToolsConfig::default());
//!     let weather = TypedTool::new("weather", "Current temperature in a city", |args: WeatherArgs, _ctx| async move {
//!         Ok(Weather { city: args.city, celsius: 21.5 })
//!     })
//!     .concurrency_safe(true) // read-only: its calls may overlap
//!     .build()?;
//!     let _weather = rt.register(weather, None)?; // dropping the registration unregisters the tool
//!
//!     // The request's `tools`, in OpenAI's shape.
//!     let tools = openai::tools(&rt.schemas(None));
//!     assert_eq!(serde_json::to_value(&tools)?[0]["function"]["name"], "weather");
//!
//!     // The model answered with two tool calls.
//!     let message = json!({ "role": "assistant", "content": null, "tool_calls": [
//!         { "id": "call_1", "type": "function", "function": { "name": "weather", "arguments": "{\"city\":\"Oslo\"}" } },
//!         { "id": "call_2", "type": "function", "function": { "name": "weather", "arguments": "{}" } },
//!     ]});
//!     let calls = openai::parse_tool_calls(&message)?;
//!     let turn = TurnExecutor::new(&rt).execute(calls).await;
//!
//!     // One tool message per call, in model order; a bad call is a result the model can correct.
//!     let answers = openai::tool_messages(&turn.results, &ImageSource::from_attachment);
//!     assert_eq!(answers[0]["content"], r#"{"city":"Oslo","celsius":21.5}"#);
//!     assert_eq!(answers[1]["content"], r#"Error: invalid arguments: missing required property "city""#);
//!     Ok(())
//! }
//! ```
//!
//! One call on its own is [`ToolRuntime::execute`]:
//!
//! ```
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{ToolExecutionInput, ToolRuntime};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = ToolRuntime::new(Default::default());
//! let _ping = rt.register(tool("ping", "Answer pong", |_: Empty, _| async move { Ok("pong") })?, None)?;
//! let result = rt.execute(ToolExecutionInput::new("call-1", "ping", serde_json::json!({}))).await;
//! assert_eq!(result.text(), "pong"); // what goes back to the model
//! # Ok(()) }
//! ```
//!
//! More complete programs are in `reference/examples/`: `agent_loop` (a whole loop over a scripted
//! model: OpenAI-format calls, turns, a policy, one call cancelled mid-turn), `native_step` (hooks, a
//! denial, a guard, a wrapper, a turn, an abort), `code_mode_typescript` and `code_mode_python`.
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `typed` | yes | [`typed::TypedTool`]: serde arguments and outputs, schemas derived with `schemars` |
//! | `typescript` | yes | [`code::typescript::TypeScriptRuntime`] (QuickJS, embedded) |
//! | `python` | yes | [`code::python::PythonRuntime`] (a fresh `python3` process per run, forked from a fork server) |
//!
//! An agent that only uses native tools can build with `default-features = false, features = ["typed"]`,
//! which leaves out both code runtimes and most of the build.
//!
//! # The pipeline
//!
//! Every [`ToolRuntime::execute`] returns exactly one [`ToolExecutionResult`]: failures are results the
//! model reads (`Error: <message>`), never Rust errors or panics. A call passes these stages in order:
//!
//! ```text
//! execute(input)
//!   │ entry: freeze the arguments ─────────────────────────── already cancelled? → ABORTED_BEFORE_DISPATCH
//!   ▼
//! tools/pre-execute listeners  Allow | Deny | Ask (→ approval seam) ─── Deny → denial result
//!   ▼
//! guards (global, then the calling agent's) ──────────────────────── Some(reason) → denial result
//!   ▼
//! tools/execute wrappers, around ┐
//!   ▼                            │ timing, retries, caching: `next.run()` runs the rest
//! body stage:                    │
//!   resolve the tool ────────────┼─────────────────────────────── gone → UNKNOWN_TOOL
//!   check DSL arguments ─────────┼─────────────────────────────── INVALID_ARGS
//!   run the body to completion   │
//!   check + render the output ───┘─────────────────────────────── INVALID_TOOL_OUTPUT
//!   ▼
//! deferred contexts attached; the signal was cancelled? a success becomes ABORTED
//!   ▼
//! tools/post-execute listeners  accept | replace content or value | block
//!   ▼
//! finalize_content → tools/result observers (once) → the result
//! ```
//!
//! Hooks are registered on the [`ToolRuntime`] and return a [`HookGuard`]: dropping it removes the
//! hook. Each kind has a `*_fn` constructor taking a closure: [`pre_execute_fn`], [`guard_fn`],
//! [`fallible_guard_fn`], [`execute_wrapper_fn`], [`post_execute_fn`], [`result_observer_fn`],
//! [`change_observer_fn`]. Pass `None` as the scope for a global hook, or an agent's [`ScopeKey`] for
//! a hook that sees only that agent's calls.
//!
//! A policy that denies one tool:
//!
//! ```
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{PreToolDecision, ToolExecutionInput, ToolRuntime, pre_execute_fn};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Sql { query: String }
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = ToolRuntime::new(Default::default());
//! let _sql = rt.register(tool("sql", "Run a query", |q: Sql, _| async move { Ok(q.query) })?, None)?;
//! let _policy = rt.on_pre_execute(None, pre_execute_fn(|exec, next| Box::pin(async move {
//!     if exec.arguments["query"].as_str().is_some_and(|q| q.contains("DROP")) {
//!         return Ok(PreToolDecision::deny("DDL is not allowed"));
//!     }
//!     next.run().await
//! })));
//! let result = rt.execute(ToolExecutionInput::new("c1", "sql", serde_json::json!({ "query": "DROP TABLE t" }))).await;
//! assert_eq!(result.text(), "Error: DDL is not allowed");
//! # Ok(()) }
//! ```
//!
//! A wrapper around every body, and a guard:
//!
//! ```
//! use std::time::Instant;
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{ToolExecutionInput, ToolRuntime, execute_wrapper_fn, guard_fn};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = ToolRuntime::new(Default::default());
//! let _ping = rt.register(tool("ping", "Answer pong", |_: Empty, _| async move { Ok("pong") })?, None)?;
//! let _timing = rt.on_execute(None, execute_wrapper_fn(|exec, next| Box::pin(async move {
//!     let started = Instant::now();
//!     let outcome = next.run().await;
//!     println!("{} took {:?}", exec.execution().name, started.elapsed());
//!     outcome
//! })));
//! let _guard = rt.guard(None, guard_fn(|exec| (exec.call_id == "blocked").then(|| "not now".to_owned())));
//! let ok = rt.execute(ToolExecutionInput::new("c1", "ping", serde_json::json!({}))).await;
//! let denied = rt.execute(ToolExecutionInput::new("blocked", "ping", serde_json::json!({}))).await;
//! assert_eq!((ok.text().as_str(), denied.text().as_str()), ("pong", "Error: not now"));
//! # Ok(()) }
//! ```
//!
//! Tools and hooks can belong to one agent: register them with `Some(&scope)` for a [`ScopeKey`], and
//! make that agent's calls with [`ToolExecutionInput::with_agent`]. A scoped tool shadows a global one
//! of the same name for that agent only:
//!
//! ```
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{ScopeKey, ToolExecutionInput, ToolRuntime};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = ToolRuntime::new(Default::default());
//! let reviewer = ScopeKey::new("reviewer");
//! let _global = rt.register(tool("whoami", "Name the caller", |_: Empty, _| async move { Ok("main agent") })?, None)?;
//! let _scoped = rt.register(tool("whoami", "Name the caller", |_: Empty, _| async move { Ok("reviewer") })?, Some(&reviewer))?;
//! let main = rt.execute(ToolExecutionInput::new("c1", "whoami", serde_json::json!({}))).await;
//! let sub = rt.execute(ToolExecutionInput::new("c2", "whoami", serde_json::json!({})).with_agent(&reviewer)).await;
//! assert_eq!((main.text().as_str(), sub.text().as_str()), ("main agent", "reviewer"));
//! # Ok(()) }
//! ```
//!
//! # Cancellation
//!
//! Every call has a signal, a [`CancellationToken`] ([`ToolExecutionInput::with_signal`]); cancel it to
//! abort the call. Cancellation is cooperative: a body that has started runs until it returns, and the
//! call then resolves to `ABORTED` if the body succeeded, or to the body's own failure. A body says "I
//! stopped because I was cancelled" with [`ToolFailure::aborted`] — typed bodies wrap their work in
//! [`typed::ToolContext::until_cancelled`] (or call [`typed::ToolContext::check_cancelled`]) and return it
//! with `?` — which is the same coded `ABORTED` result. To stop calls with a deadline or a user's Esc,
//! cancel the signal (a child token of a turn-wide token aborts with the turn) rather than dropping the
//! `execute` future. A body that ignores its signal is listed by [`ToolRuntime::in_flight`], can be
//! dropped with [`ToolRuntime::abandon`], and is dropped at the body ceiling in any case
//! ([`ToolRuntime::set_body_ceiling`], 15 minutes by default: `TOOL_TIMEOUT`).
//!
//! ```
//! use std::time::Duration;
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{CancellationToken, ErrorCode, ToolExecutionInput, ToolRuntime};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = ToolRuntime::new(Default::default());
//! let wait = tool("wait", "Wait until cancelled", |_: Empty, ctx| async move {
//!     ctx.cancelled().await;
//!     Ok("stopped")
//! })?;
//! let _wait = rt.register(wait, None)?;
//! let turn = CancellationToken::new();
//! let call = rt.execute(ToolExecutionInput::new("c1", "wait", serde_json::json!({})).with_signal(turn.child_token()));
//! let (result, ()) = tokio::join!(call, async {
//!     tokio::time::sleep(Duration::from_millis(10)).await;
//!     turn.cancel();
//! });
//! assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED));
//! # Ok(()) }
//! ```
//!
//! # Tools without the typed builder
//!
//! A [`ToolDefinition`] takes its parameters as a small declaration language ([`Parameters::Dsl`]:
//! checked before the body runs) or a raw JSON Schema ([`Parameters::Raw`]: shown as is, the tool checks
//! its own input), an [`OutputDeclaration`] (output schema and a render to content blocks) and a body on
//! [`serde_json::Value`]s:
//!
//! ```
//! use std::sync::Arc;
//! use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolRuntime, content};
//! use serde_json::json;
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let echo = ToolDefinition::new(
//!     "echo",
//!     "Repeat the text",
//!     Parameters::Dsl(json!({ "text": { "type": "string", "required": true } })),
//!     OutputDeclaration {
//!         schema: json!({ "type": "string" }),
//!         render: Arc::new(|_args, value| Ok(vec![content::text(value.as_str().unwrap_or_default())])),
//!         presentation_meta: None,
//!     },
//!     Arc::new(|args, _ctx| Box::pin(async move { Ok(args["text"].clone()) })),
//! )
//! .with_timeout(std::time::Duration::from_secs(5))
//! .concurrency_safe(true);
//! let rt = ToolRuntime::new(Default::default());
//! let _echo = rt.register(echo, None)?;
//! let result = rt.execute(ToolExecutionInput::new("c1", "echo", json!({ "text": "hi" }))).await;
//! assert_eq!(result.text(), "hi");
//! let bad = rt.execute(ToolExecutionInput::new("c2", "echo", json!({}))).await;
//! assert_eq!(bad.text(), r#"Error: invalid arguments: missing required property "text""#);
//! # Ok(()) }
//! ```
//!
//! # Code Mode
//!
//! With [`ToolMode::Code`], the model is shown one tool, `run_code`, and a system-prompt section with a
//! TypeScript (or Python) SDK generated from the registered tools' schemas. Its program calls
//! `tools.<name>(args)`; each call runs through the same pipeline as a native call, hooks included.
//! Mount a runtime with [`ToolRuntime::mount_code_runtime`]; build the runtime with
//! [`ToolRuntime::try_with_prompt`] so the prompt gets the SDK section.
//!
//! ```
//! use std::sync::Arc;
//! use dsh_tools::code::{CodeRuntimeLimits, typescript::TypeScriptRuntime};
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{PromptConfig, SystemPrompt, ToolExecutionInput, ToolMode, ToolRuntime, ToolsConfig};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Pair { a: f64, b: f64 }
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let prompt = SystemPrompt::new(PromptConfig::default())?;
//! let rt = ToolRuntime::try_with_prompt(ToolsConfig::with_mode(ToolMode::Code), &prompt)?;
//! let _ts = rt.mount_code_runtime(Arc::new(TypeScriptRuntime::new(CodeRuntimeLimits::default())?));
//! let _add = rt.register(tool("add", "Add two numbers", |p: Pair, _| async move { Ok(p.a + p.b) })?, None)?;
//!
//! let shown = prompt.assemble(None)?;
//! assert_eq!(shown.tools.len(), 1); // only `run_code`
//! assert!(shown.render().contains("add: {")); // the SDK section lists `tools.add`
//!
//! let program = "const [x, y] = await Promise.all([tools.add({ a: 1, b: 2 }), tools.add({ a: 3, b: 4 })]); return x + y;";
//! let call = ToolExecutionInput::new("c1", "run_code", serde_json::json!({ "code": program, "description": "Add twice" }));
//! assert_eq!(rt.execute(call).await.text(), "10");
//! # Ok(()) }
//! ```
//!
//! # Model Experience
//!
//! What the model sees, and how to make it useful:
//!
//! - **Native mode**: [`ToolRuntime::schemas`] gives each visible tool's name, description and parameter
//!   schema; [`provider::openai::tools`] and [`provider::anthropic::tools`] put them in each chat API's
//!   shape. Typed tools get their descriptions from doc comments on the argument fields.
//! - **Results are text**: the model reads the content blocks ([`ToolExecutionResult::text`]). A failure
//!   reads `Error: <message>`; argument errors name the path (`invalid arguments: missing required
//!   property "city"`, `"limit" is greater than the maximum of 20`), so the model can correct its call. A typed tool's default content is its output as
//!   compact JSON (a string output as itself); give [`typed::TypedTool::render`] for prose.
//! - **Code Mode SDK**: the SDK declares each tool's argument and return types from its schemas. Outside
//!   the supported schema subset a type degrades to `unknown` (TypeScript) / `Any` (Python); typed tools
//!   lower their derived schemas into the subset, dropping keywords it cannot carry (`format`,
//!   `minimum`, …; [`typed::TypedTool::build_with_changes`] lists them). Typed and MCP tools still
//!   enforce them ([`schema::arguments`]), but the model learns them only from a failed call: put
//!   such constraints in the description too. Objects are open (`& Record<string, JsonValue>`) unless the type has
//!   `#[serde(deny_unknown_fields)]`.
//! - **Concurrency**: the SDK tells the model that independent calls may overlap, but only calls of
//!   tools marked concurrency-safe do; every other call runs alone.
//!
//! # Known Limitations
//!
//! - `ToolDefinition::timeout_ms` is a declaration: the pipeline does not enforce it; a `tools/execute`
//!   wrapper that reads it does ([`wrappers::TimeoutPolicy`]). Every body is bounded by the body ceiling
//!   regardless (15 minutes by default, [`ToolRuntime::set_body_ceiling`]).
//! - Cancellation is cooperative: an aborted call returns when its body does (or at the body ceiling),
//!   and a body's own failure is kept — only a success, or [`ToolFailure::aborted`], becomes `ABORTED`.
//! - [`ToolRuntime::execute`] runs one call with no scheduling; a model turn's calls are scheduled by
//!   [`turn::TurnExecutor`] (policy in model order, concurrency-safe calls overlapping, the others alone).
//!   Overlapping `execute` calls yourself skips that contract.
//! - Rust futures are lazy: a wrapper's inner call starts when it first polls `next.run()`, and each
//!   wrapper's `next` runs at most once.
//! - A hand-written [`Parameters::Raw`] definition's arguments are not checked (the registry never checks
//!   raw parameters, as upstream); typed and MCP tools check theirs in their bodies, and a raw body can
//!   do the same with [`schema::arguments::ArgumentCheck`]. That check enforces what lowering removed from
//!   the model's schema, so the model learns such a constraint from a failed call unless the description
//!   states it.
//! - [`provider`] covers OpenAI Chat Completions and Anthropic Messages only (not OpenAI's Responses API);
//!   a tool message cannot hold images in Chat Completions, so they follow in a user message.
//! - Values `serde_json` cannot hold (undefined, `NaN`, BigInt) cannot be expressed; `-0` is rejected as
//!   an argument or output.
//! - Code Mode with thousands of tools: the prompt's SDK text is cached per registry generation; after a
//!   change the TypeScript text is joined from members kept per registered tool (only new tools are
//!   rendered), but the Python text is rendered whole (its class names are allocated across tools). A
//!   `run_code` reads its binding names from a cache per agent scope and generation and both runtimes make
//!   a binding on first use, so a trivial TypeScript run costs the same at 10 or 10,000 tools; the Python
//!   runtime still sends every name to its run's process, which parses them (about 2 ms at 10,000 names).
//! - Code Mode: a sub-call's image content reaches the model as a deferred user message, not in the
//!   program's result; the Python runtime runs each program in a fresh process forked from a pre-started
//!   interpreter (about a millisecond; the runtime's first run pays the interpreter's start-up, tens of
//!   milliseconds), and the forked runs of one runtime share CPython's string-hash secret.
//!
//! # Layout
//!
//! Modules are layered, each importing only from the layers below it — bottom first: `value`, `scope`,
//! `callback`, `presentation`, `content`, `views`; `error`, `execution`; `result`, `schema`, `sdk`;
//! `definition`; `typed`, `mcp`, `provider`; `hooks`, `approval`; `registry`, `prompt`; `executor`; the
//! pipeline; `code`; `contribution`; `runtime` (the facade); `wrappers`, `turn`, `bodies`. The re-exports below are for users of the crate; the modules themselves never import
//! through them.

pub mod approval;
pub mod bodies;
mod callback;
pub mod code;
pub mod content;
pub mod contribution;
pub mod definition;
pub mod error;
pub mod execution;
pub mod executor;
pub mod hooks;
pub mod mcp;
mod pipeline;
pub mod presentation;
pub mod prompt;
pub mod provider;
pub mod registry;
pub mod result;
pub mod runtime;
pub mod schema;
pub mod sdk;
pub mod turn;
pub mod scope;
#[cfg(feature = "typed")]
pub mod typed;
pub mod value;
pub mod views;
pub mod wrappers;

pub use definition::{
    BoxFuture, ConcurrencyClassifier, FinalizeContentFn, OutputDeclaration, Parameters, PresentCallFn,
    PresentResultFn, PresentationMetaFn, RenderFn, ToolBody, ToolDefinition, ToolSchema,
};
pub use error::{ErrorCode, ErrorInfo, JsonSchemaError, RegisterError, RegisterErrorKind, SchemasError, SchemasErrorKind, ToolFailure};
pub use executor::{ExecutorRoute, NativeExecutor, SetExecutorError, SetExecutorErrorKind, ToolExecutor};
pub use execution::{ExecutionMode, ExecutionToken, ToolExecution, ToolExecutionInput, ToolRunContext};
pub use approval::{ApprovalOutcome, ApprovalRequest, ApprovalSeam};
pub use hooks::{
    ChangeObserver, FallibleGuardFn, GuardFn, HookGuard, Next, PostExecuteListener, PostExecuteOutcome, PostNext, PostToolDecision, PreExecuteListener,
    PreExecuteOutcome, PreToolDecision, ResultObserver, LogSink, SessionAppendObserver, SessionEntry, post_execute_fn, pre_execute_fn,
};
pub use hooks::{change_observer_fn, fallible_guard_fn, guard_fn, result_observer_fn};
pub use tokio_util::sync::CancellationToken;
pub use pipeline::inflight::InFlightBody;
pub use pipeline::result::ObserverFailureLog;
pub use pipeline::dispatch::{
    DispatchExecution, DispatchResult, ExecuteNext, ExecuteOutcome, ExecuteWrapper, execute_wrapper_fn,
};
pub use registry::{RUN_CODE_NAME, Registration, RestrictError, ToolFilter, ResolvedTool};
pub use views::{ToolCallView, ToolResult, ToolResultView};
pub use result::{ToolError, ToolExecutionResult};
pub use presentation::{ConfigError, PresentAsError, PresentAsErrorKind, ToolMode};
pub use prompt::{PromptAssembly, PromptConfig, PromptError, SystemPrompt};
pub use runtime::{ToolRuntime, ToolsConfig, WeakToolRuntime};
pub use schema::check::{assert_object_json_schema, assert_supported_json_schema};
pub use schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
pub use schema::validate::validate_json_schema_value;
pub use scope::ScopeKey;

/// The crate README's program, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
