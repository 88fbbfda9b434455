//! Restriction masks (upstream `tools.restrict`): an agent scope's [`ToolFilter`] over the tools it
//! inherits, with upstream's exact rejections (an empty filter, the reserved transport, unknown names with
//! the known list); masks intersect, and dropping the guard lifts one. Under a preset scope this is the hard
//! delete seed 002 gives as the reason the codemode preset masks with its executor instead (CDM-042).
//!
//! Spec: SCOPE-005..SCOPE-013, SCOPE-017, REG-023, REG-025, CDM-042.

use std::sync::Arc;

use super::{RUN_CODE_NAME, Registry};
use crate::hooks::{HookGuard, next_id};
use crate::scope::ScopeKey;

impl Registry {
    /// Names a scope inherits before restrictions (global and ancestor layers, not its own).
    fn restrictable_names(&self, scope: &ScopeKey) -> Vec<Arc<str>> {
        let layers = self.read();
        let mut names: Vec<Arc<str>> = layers.global.tools.keys().cloned().collect();
        for key in scope.chain().skip(1) {
            if let Some(layer) = layers.scoped.get(key) {
                names.extend(layer.tools.keys().cloned());
            }
        }
        names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        names.dedup();
        names
    }

    /// Add a restriction mask to a scope's layer.
    pub(crate) fn restrict(self: &Arc<Self>, scope: &ScopeKey, filter: ToolFilter) -> Result<HookGuard, RestrictError> {
        if filter.allow.is_none() && filter.deny.is_none() {
            return Err(RestrictError::new(
                "tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)",
            ));
        }
        let named: Vec<&String> = filter.allow.iter().flatten().chain(filter.deny.iter().flatten()).collect();
        if named.iter().any(|n| n.as_str() == RUN_CODE_NAME) {
            return Err(RestrictError::new(format!(
                "tools.restrict() cannot name reserved Code Mode presentation transport \"{RUN_CODE_NAME}\"; restrict end-capability tools instead"
            )));
        }
        let known = self.restrictable_names(scope);
        let unknown: Vec<&&String> = named.iter().filter(|n| !known.iter().any(|k| &**k == n.as_str())).collect();
        if !unknown.is_empty() {
            let listed: Vec<String> = unknown.iter().map(|n| format!("\"{n}\"")).collect();
            let known_list = if known.is_empty() {
                "(none)".to_owned()
            } else {
                known.iter().map(|k| &**k).collect::<Vec<&str>>().join(", ")
            };
            return Err(RestrictError::new(format!(
                "tools.restrict() names unknown global tool{} {}; known global tools: {known_list}",
                if unknown.len() > 1 { "s" } else { "" },
                listed.join(", ")
            )));
        }
        let id = next_id();
        {
            let mut layers = self.write();
            layers.scoped.entry(scope.clone()).or_default().restrictions.push((id, Arc::new(filter)));
        }
        if let Err(message) = self.notify_change() {
            // A throwing `tools/change` listener makes `restrict` throw: the mask is rolled back and the
            // rollback announced (REG-025), as a registration's is (REG-022).
            if self.lift(scope, id) {
                let _ = self.notify_change();
            }
            return Err(RestrictError::new(message));
        }
        let weak = Arc::downgrade(self);
        let scope = scope.clone();
        Ok(HookGuard::new(move || {
            let Some(registry) = weak.upgrade() else { return };
            if registry.lift(&scope, id) {
                let _ = registry.notify_change();
            }
        }))
    }

    /// Removes mask `id` from `scope`'s layer (dropping the layer once empty); whether it was there.
    fn lift(&self, scope: &ScopeKey, id: u64) -> bool {
        let mut layers = self.write();
        let Some(layer) = layers.scoped.get_mut(scope) else { return false };
        let before = layer.restrictions.len();
        layer.restrictions.retain(|(r, _)| *r != id);
        let removed = layer.restrictions.len() != before;
        if layer.is_empty() {
            layers.scoped.remove(scope);
        }
        removed
    }
}

/// An agent-scoped mask over inherited (global and ancestor) tools. `allow` keeps only the named tools
/// (and excludes later names); `deny` removes the named ones (and admits later names).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// Keep only these inherited tools.
    pub allow: Option<Vec<String>>,
    /// Remove these inherited tools.
    pub deny: Option<Vec<String>>,
}

impl ToolFilter {
    pub(crate) fn admits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.iter().any(|n| n == name))
            && self.deny.as_ref().is_none_or(|d| d.iter().all(|n| n != name))
    }
}

/// A rejected restriction, with upstream's exact message (an `Error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestrictError {
    /// Upstream's message.
    pub message: String,
}

impl RestrictError {
    fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

impl std::fmt::Display for RestrictError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RestrictError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// An embedder printing the error (`{e}`, `to_string()`) reads upstream's message, as the protocol does.
    #[test]
    fn a_restrict_error_displays_its_message() {
        let registry = Arc::new(Registry::default());
        let refused = registry.restrict(&ScopeKey::new("a"), ToolFilter::default());
        let Err(e) = refused else { panic!("an empty filter is refused") };
        assert!(e.message.starts_with("tools.restrict({}) is a no-op"));
        assert_eq!(e.to_string(), e.message);
    }
}
