//! Ownership masking: the catalog view of the definitions an agent sees, each classified `native` or
//! `program-only`, and the cache of classifications both the request surface and the direct-call
//! rejection read, so the masked set and the rejected set cannot disagree. The cache holds classes only;
//! every view carries the schemas of the definitions it was built from.
//!
//! Classification (seed 002 `lib/scope.js`): `code_run` is native; the name rule masks `mcp__*`,
//! `code_tools_*` and `code_debug`; with a preset scope label, a name visible in the preset's view
//! (`get(name, preset)`) and not in the global view (`get(name, None)`) is preset-owned and native, and
//! every other name — global-layer tools, preset shadows of global names, agent-layer tools (in neither
//! view) — is masked. Without a label only the name rule applies.
//!
//! Spec: CDM-008..CDM-013, CDM-021, CDM-034, CDM-043.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dsh_tools::definition::ToolSchema;
use dsh_tools::{ScopeKey, ToolRuntime};

use crate::rules::{CODE_RUN_NAME, masked_by_name};

/// How the model reaches a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presentation {
    /// In the request surface: the model calls it directly.
    Native,
    /// Masked: reachable only from inside a `code_run` program.
    ProgramOnly,
}

impl Presentation {
    /// `native` or `program-only`, as the discovery tools report it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::ProgramOnly => "program-only",
        }
    }
}

/// One classified view of an agent's visible definitions, in presentation order.
#[derive(Debug)]
pub struct CatalogView {
    entries: Vec<(ToolSchema, Presentation)>,
}

impl CatalogView {
    /// The request surface: the native entries, in order.
    pub fn surface(&self) -> Vec<ToolSchema> {
        self.entries.iter().filter(|(_, p)| *p == Presentation::Native).map(|(s, _)| s.clone()).collect()
    }

    /// The class of a visible name; `None` for a name the view does not hold.
    pub fn presentation(&self, name: &str) -> Option<Presentation> {
        self.entries.iter().find(|(s, _)| s.name == name).map(|(_, p)| *p)
    }

    /// Whether a direct call to `name` is rejected: a visible, masked name.
    pub fn is_masked(&self, name: &str) -> bool {
        self.presentation(name) == Some(Presentation::ProgramOnly)
    }

    /// Every entry, in presentation order.
    pub fn entries(&self) -> &[(ToolSchema, Presentation)] {
        &self.entries
    }

    /// The masked names, in presentation order.
    pub fn masked(&self) -> Vec<String> {
        self.entries.iter().filter(|(_, p)| *p == Presentation::ProgramOnly).map(|(s, _)| s.name.clone()).collect()
    }
}

/// Classify one name. `preset`: the preset's scope label (`None`: mounted at the host layer). The class
/// depends on the name and the registry's layers only (what [`ViewCache`] caches per name).
pub(crate) fn classify(runtime: &ToolRuntime, preset: Option<&ScopeKey>, name: &str) -> Presentation {
    if name == CODE_RUN_NAME {
        return Presentation::Native;
    }
    if masked_by_name(name) {
        return Presentation::ProgramOnly;
    }
    let Some(preset) = preset else { return Presentation::Native };
    let owned = runtime.get(name, Some(preset)).is_some() && runtime.get(name, None).is_none();
    if owned { Presentation::Native } else { Presentation::ProgramOnly }
}

/// The one cache of classifications, keyed by the visible names in order; cleared on every registry change
/// (a registration can turn a preset tool into a shadow of a global one). Only the classes are cached: a
/// name's class depends on the registry's layers, not on the agent asking, while its schema does — two
/// agents can see the same names with different definitions (a shadow, same-named agent-layer tools), so
/// every view is built from the definitions handed in (CDM-043).
#[derive(Default)]
pub(crate) struct ViewCache {
    classes: Mutex<HashMap<Vec<String>, Arc<[Presentation]>>>,
}

impl ViewCache {
    /// The view of `definitions`: their own schemas, each with its class (computed once per set of
    /// visible names and registry state).
    pub(crate) fn view(&self, runtime: &ToolRuntime, preset: Option<&ScopeKey>, definitions: Vec<ToolSchema>) -> CatalogView {
        let key: Vec<String> = definitions.iter().map(|d| d.name.clone()).collect();
        let cached = self.lock().get(&key).cloned();
        let classes = match cached {
            Some(classes) => classes,
            None => {
                let classes: Arc<[Presentation]> = key.iter().map(|name| classify(runtime, preset, name)).collect();
                self.lock().insert(key, Arc::clone(&classes));
                classes
            }
        };
        CatalogView { entries: definitions.into_iter().zip(classes.iter().copied()).collect() }
    }

    /// Forget every classification.
    pub(crate) fn clear(&self) {
        let old = std::mem::take(&mut *self.lock());
        drop(old);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<String>, Arc<[Presentation]>>> {
        self.classes.lock().unwrap_or_else(|p| p.into_inner())
    }
}
