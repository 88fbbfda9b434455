//! dsh-codemode: the Code Mode preset of seed 002 on dsh-tools' public API. Applied in a preset scope, it
//! masks from the model every tool the preset does not own (global-layer and agent-layer tools, preset
//! shadows of global names) and every `mcp__*`, `code_tools_*` and `code_debug` tool, and gives the model
//! `code_run` instead: a program whose `tools` namespace reaches every visible tool, each call through the
//! whole pipeline. Masking is presentation only — it lives in the preset's
//! [`ToolExecutor`](dsh_tools::ToolExecutor), never in the registry — and a model-direct call to a masked
//! tool is rejected before dispatch with a hint naming `code_run`.
//!
//! ```
//! use std::sync::Arc;
//! use dsh_codemode::{Codemode, CodemodeConfig};
//! use dsh_tools::code::CodeRuntimeLimits;
//! use dsh_tools::code::typescript::TypeScriptRuntime;
//! use dsh_tools::{PromptConfig, ScopeKey, SystemPrompt, ToolRuntime, ToolsConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let prompt = SystemPrompt::new(PromptConfig::default())?;
//! let runtime = ToolRuntime::try_with_prompt(ToolsConfig::default(), &prompt)?;
//! let preset = runtime.open_scope("codemode", None); // a scope the runtime knows (CDM-050)
//! let code = Arc::new(TypeScriptRuntime::new(CodeRuntimeLimits::default())?);
//! let plugin = Codemode::apply(&runtime, Some(&preset), CodemodeConfig::new(code))?;
//! let agent = ScopeKey::child("agent", &preset);
//! let names: Vec<String> = prompt.assemble(Some(&agent))?.tools.into_iter().map(|t| t.name).collect();
//! assert_eq!(names, ["code_run"]); // the discovery tools are masked by name
//! plugin.unload();
//! # Ok(())
//! # }
//! ```
//!
//! Modules: `rules` (names, the name rule, texts), `view` (classification and the one view cache),
//! `shared` (what executor and tools share), `executor` (the preset's executor), `transport`
//! (`code_run`), `retention` (state owners and their releases), `discovery` (the four discovery tools),
//! `plugin` (apply and unload).
//!
//! Spec: CDM-008..CDM-050 (see `spec/rules/codemode.yaml`, `spec/rules/codemode-retention.yaml`).

mod discovery;
pub mod executor;
mod plugin;
mod retention;
pub mod rules;
mod shared;
mod transport;
pub mod view;

pub use executor::CodemodeExecutor;
pub use plugin::{ApplyError, Codemode, CodemodeConfig};
pub use view::{CatalogView, Presentation};
