//! `setup.codemode`: the dsh-codemode preset plugin applied to the session's runtime, in the scope of the
//! agent `preset` names (or at the host layer), on the code runtime `setup.runtime` mounted. Its warnings
//! become `{type: log}` events under `setup.logs`; it is held under the handle `codemode`, so
//! `dispose: codemode` unloads it. With `executionMode: persistent-in-memory` it runs on a runtime of its
//! own (the mounted language and limits, in that mode), whose live environments `codemode/environments`
//! counts.
//!
//! Spec: CDM-008..CDM-050 (profile dsh-codemode, `spec/rules/codemode.yaml`, `codemode-retention.yaml`).

use std::sync::Arc;

use dsh_codemode::{Codemode, CodemodeConfig};
use dsh_conformance::fixture::{CodemodeExecutionMode, Setup};
use dsh_tools::code::CodeExecutionMode;
use serde_json::{Value, json};

use super::super::deep;
use super::super::rpc::{Failure, SETUP_REJECTED};
use super::{Engine, Guard, Held};

/// The handle the plugin is held under.
pub const HANDLE: &str = "codemode";

impl Engine {
    /// Apply the plugin when the setup asks for it (after the agents opened, before the tools).
    pub(super) fn apply_codemode(&self, setup: &Setup) -> Result<(), Failure> {
        let Some(codemode) = &setup.codemode else { return Ok(()) };
        let code = self
            .runtime
            .code_runtime()
            .ok_or_else(|| Failure::new(SETUP_REJECTED, "setup: codemode needs a code runtime (setup.runtime)".to_owned()))?;
        let preset = match &codemode.preset {
            Some(name) => Some(self.state().agents.get(name).map(|a| a.key.clone()).ok_or_else(|| Failure::unknown("agent", name))?),
            None => None,
        };
        // A persistent mode gets a runtime of its own: the mounted language and limits, keeping one
        // environment per agent.
        let code = match (codemode.execution_mode, setup.runtime) {
            (Some(CodemodeExecutionMode::PersistentInMemory), Some(language)) => super::super::code::backend_in(
                language,
                super::super::code::limits(setup.runtime_limits.as_ref()),
                CodeExecutionMode::PersistentInMemory,
            )?,
            _ => code,
        };
        self.state().codemode_runtime = Some(Arc::clone(&code));
        let mut config = CodemodeConfig::new(code);
        if setup.logs == Some(true) {
            let shared = self.shared.clone();
            config.logger = Some(Arc::new(move |line: &str| {
                shared.emit(deep::object([("type", "log".into()), ("level", "warn".into()), ("message", line.into())]));
            }));
        }
        let plugin = Codemode::apply(&self.runtime, preset.as_ref(), config)
            .map_err(|e| Failure::new(SETUP_REJECTED, format!("setup: {e}")))?;
        self.hold(HANDLE.to_owned(), Held { seq: 0, agent: None, plugin: None, _guard: Guard::Plugin(Box::new(plugin)) });
        Ok(())
    }

    /// `codemode/environments`: the persistent environments the plugin's code runtime holds now.
    pub(super) fn codemode_environments(&self) -> Result<Value, Failure> {
        let runtime = self.state().codemode_runtime.clone();
        let Some(runtime) = runtime else {
            return Err(Failure::params("codemode/environments: the session has no setup.codemode".to_owned()));
        };
        Ok(json!({ "environments": runtime.retained().len() }))
    }
}
