//! [`Registration`]: the RAII handle of one registered tool.
//!
//! Spec: REG-001, REG-012, REG-013, REG-025.

use std::sync::{Arc, Weak};

use super::Registry;
use crate::scope::ScopeKey;

/// Keeps a tool registered; dropping it (or [`dispose`](Registration::dispose)) unregisters exactly this
/// registration (a later same-name registration in the layer is untouched).
#[must_use = "dropping the registration unregisters the tool immediately"]
pub struct Registration {
    pub(crate) registry: Weak<Registry>,
    pub(crate) scope: Option<ScopeKey>,
    pub(crate) name: Arc<str>,
    pub(crate) id: u64,
    pub(crate) active: bool,
}

impl Registration {
    /// The registered name.
    ///
    /// ```
    /// use dsh_tools::ToolRuntime;
    /// use dsh_tools::typed::{JsonSchema, tool};
    /// # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let rt = ToolRuntime::new(Default::default());
    /// let ping = rt.register(tool("ping", "Answer pong", |_: Empty, _| async move { Ok("pong") })?, None)?;
    /// assert_eq!(ping.name(), "ping");
    /// # Ok(()) }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Unregister now.
    pub fn dispose(mut self) {
        let _ = self.release();
    }

    /// Unregister now, reporting what a throwing `tools/change` listener threw while the removal was
    /// announced (upstream's disposer throws it). The tool is removed either way, and the name can be
    /// registered again.
    pub fn try_dispose(mut self) -> Result<(), String> {
        self.release()
    }

    /// Keep the tool registered for the rest of the runtime's life.
    pub fn forget(mut self) {
        self.active = false;
    }

    fn release(&mut self) -> Result<(), String> {
        if !std::mem::take(&mut self.active) {
            return Ok(());
        }
        match self.registry.upgrade() {
            Some(registry) => registry.unregister(self.scope.as_ref(), &self.name, self.id),
            None => Ok(()),
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration").field("name", &self.name).field("scope", &self.scope).finish()
    }
}
