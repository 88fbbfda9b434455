//! [`CodemodeExecutor`]: the preset scope's [`ToolExecutor`]. `describe` is the request surface (the
//! native entries of the catalog view, `code_run` among them); `sections` is the `tools:sdk` Code Mode
//! text; `execute` rejects a model-direct call to a masked tool before dispatch and delegates everything
//! else — program calls, native tools, names registered nowhere — to the native executor.
//!
//! Spec: CDM-001, CDM-013, CDM-016, CDM-018..CDM-023, CDM-025, CDM-045, CDM-047.

use std::sync::Arc;

use dsh_tools::BoxFuture;
use dsh_tools::definition::ToolSchema;
use dsh_tools::prompt::{PromptError, PromptSection, SectionText};
use dsh_tools::code::CodeExecutionMode;
use dsh_tools::sdk::{ProgramState, SdkUsage, renderer_with};
use dsh_tools::{ExecutionMode, ExecutorRoute, NativeExecutor, ToolExecutionInput, ToolExecutionResult, ToolExecutor};

use crate::rules::{CODE_RUN_NAME, rejection};
use crate::shared::Shared;
use crate::view::{Presentation, classify};

/// The name of the section the executor contributes.
pub const SDK_SECTION: &str = "tools:sdk";
/// Its order (rc.8's `tools:sdk` order).
pub const SDK_SECTION_ORDER: f64 = 150.0;
/// The opening of the section's text; the SDK of the program's bindings follows.
pub const CODE_MODE_INSTRUCTIONS: &str = "Some tools are reachable only from code: call `code_run` with a program (`code`, and a one-line `description`). Inside it, every tool declared below is an async function of the `tools` namespace; only what the program returns or logs comes back to you.";

/// How the SDK text describes `code_run`: under its own name (nothing in the preset's prompt names
/// `run_code`, CDM-045), without the image attachment and the call scheduling rc.8's transport makes
/// (program calls run as the program makes them), and saying whether an
/// agent's state survives between runs — the model cannot tell otherwise.
pub fn sdk_usage(mode: CodeExecutionMode) -> SdkUsage<'static> {
    // Only a persistent mode keeps anything; any other mode runs fresh.
    let state = if mode == CodeExecutionMode::PersistentInMemory { ProgramState::Persistent } else { ProgramState::Fresh };
    SdkUsage { transport: CODE_RUN_NAME, attaches_images: false, schedules_calls: false, state }
}

/// The preset's executor (seed 002's `CodemodeExecutor`).
pub struct CodemodeExecutor {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for CodemodeExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodemodeExecutor").field("preset", &self.shared.preset).finish_non_exhaustive()
    }
}

impl CodemodeExecutor {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

impl CodemodeExecutor {
    /// Whether `input` is a direct call to a masked tool: not a program call, and masked in the same cached
    /// classification the request surface came from (CDM-021, CDM-025).
    fn rejects(&self, input: &ToolExecutionInput) -> bool {
        if self.shared.is_program_call(input) {
            return false;
        }
        let Some(runtime) = self.shared.runtime.upgrade() else { return false };
        // A native name (`code_run`, a preset tool) is never rejected, and its class alone says so: the
        // agent's whole view (a copy of every schema it sees) is built only for a name the rules mask,
        // to tell a visible masked tool from a name the agent does not see (issue 39).
        if classify(&runtime, self.shared.preset.as_ref(), &input.name) == Presentation::Native {
            self.shared.warn_host_mount();
            return false;
        }
        self.shared.view_for(&runtime, input.agent.as_ref()).is_masked(&input.name)
    }
}

impl ToolExecutor for CodemodeExecutor {
    fn describe(&self, definitions: Vec<ToolSchema>) -> Vec<ToolSchema> {
        match self.shared.runtime.upgrade() {
            Some(runtime) => self.shared.view(&runtime, definitions).surface(),
            None => definitions,
        }
    }

    fn sections(&self) -> Vec<PromptSection> {
        let shared = Arc::clone(&self.shared);
        vec![PromptSection {
            name: SDK_SECTION.to_owned(),
            order: SDK_SECTION_ORDER,
            text: SectionText::Dynamic(Arc::new(move |context| {
                let Some(runtime) = shared.runtime.upgrade() else { return Ok(String::new()) };
                let language = shared.code_runtime.language().to_owned();
                let render = renderer_with(&language)
                    .ok_or_else(|| PromptError::new(format!("dsh-codemode: no SDK renderer for runtime language \"{language}\"")))?;
                let bindings: Vec<_> =
                    runtime.sdk_schemas(context.scope.as_ref()).into_iter().filter(|s| s.name != CODE_RUN_NAME).collect();
                Ok(format!("{CODE_MODE_INSTRUCTIONS}\n\n{}", render(&sdk_usage(shared.code_runtime.execution_mode()), &bindings)))
            })),
        }]
    }

    /// The calls `execute` delegates unchanged run in a turn's native lanes (a concurrency-safe native
    /// tool keeps its parallel dispatch); a direct call to a masked tool is the executor's to reject — a
    /// rejection runs nothing and depends on no other call, so it may overlap (CDM-047).
    fn route(&self, input: &ToolExecutionInput) -> ExecutorRoute {
        if self.rejects(input) { ExecutorRoute::Own(ExecutionMode::Parallel) } else { ExecutorRoute::Native }
    }

    fn execute(&self, input: ToolExecutionInput, native: NativeExecutor) -> BoxFuture<'static, ToolExecutionResult> {
        if self.rejects(&input) {
            let result = ToolExecutionResult::from_failure(rejection(&input.name));
            return Box::pin(async move { result });
        }
        native.execute(input)
    }
}
