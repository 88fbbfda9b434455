//! dsh-tools: the reference implementation of the tool registry and execution pipeline of the dsh agent
//! harness (behaviour of upstream `@deepseek-ai/dsh-tools@0.1.0-rc.8`: native mode, and Code Mode —
//! modes, `presentAs`, the `code` executor collapse, the `run_code` transport with TypeScript and Python
//! runtimes, the SDK renderers and the prompt contribution).
//!
//! Entry point: [`ToolRuntime`]. Failures are values ([`ToolExecutionResult`]); registrations and hooks
//! are RAII guards ([`Registration`], [`HookGuard`]).
//!
//! Modules are layered, each importing only from the layers below it — bottom first: `value`, `scope`,
//! `callback`, `presentation`; `error`, `execution`; `result`, `schema`, `sdk`; `definition`; `hooks`,
//! `approval`; `registry`, `prompt`; the pipeline; `code`; `contribution`; `runtime` (the facade). The
//! re-exports below are for users of the crate; the modules themselves never import through them.
//!
//! Spec: the areas REG, UNK, ARG, OUT, PIPE and CODE (each module cites its rule ids).

pub mod approval;
mod callback;
pub mod code;
pub mod contribution;
pub mod definition;
pub mod error;
pub mod execution;
pub mod hooks;
pub mod mcp;
mod pipeline;
pub mod presentation;
pub mod prompt;
pub mod registry;
pub mod result;
pub mod runtime;
pub mod schema;
pub mod sdk;
pub mod turn;
pub mod scope;
pub mod value;
pub mod wrappers;

pub use definition::{
    BoxFuture, ConcurrencyClassifier, FinalizeContentFn, OutputDeclaration, Parameters, PresentationMetaFn,
    RenderFn, ToolBody, ToolDefinition, ToolSchema,
};
pub use error::{ErrorCode, ErrorInfo, JsonSchemaError, RegisterError, RegisterErrorKind, ToolFailure};
pub use execution::{ExecutionMode, ExecutionToken, ToolExecution, ToolExecutionInput, ToolRunContext};
pub use approval::{ApprovalOutcome, ApprovalRequest, ApprovalSeam};
pub use hooks::{
    ChangeObserver, FallibleGuardFn, GuardFn, HookGuard, Next, PostExecuteListener, PostExecuteOutcome, PostNext, PostToolDecision, PreExecuteListener,
    PreExecuteOutcome, PreToolDecision, ResultObserver, post_execute_fn, pre_execute_fn,
};
pub use pipeline::dispatch::{
    DispatchExecution, DispatchResult, ExecuteNext, ExecuteOutcome, ExecuteWrapper, execute_wrapper_fn,
};
pub use registry::{RUN_CODE_NAME, Registration, RestrictError, ToolFilter};
pub use result::{ToolError, ToolExecutionResult};
pub use presentation::{ConfigError, PresentAsError, PresentAsErrorKind, ToolMode};
pub use prompt::{PromptAssembly, PromptConfig, PromptError, SystemPrompt};
pub use runtime::{ToolRuntime, ToolsConfig};
pub use schema::check::assert_supported_json_schema;
pub use schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
pub use schema::validate::validate_json_schema_value;
pub use scope::ScopeKey;
