//! Per-scope presentation in the registry: `presentAs` declarations on agent layers, the effective mode of
//! a scope (`modeFor`: the nearest declaration on the scope chain, else the `mode` config field), and the
//! collapse-aware resolution every execution path uses (`resolveExecution`).
//!
//! Spec: CODE-002..CODE-006, CODE-008, CODE-010..CODE-012.

use std::sync::Arc;

use super::{Layers, RegisteredTool, Registry};
use crate::hooks::{HookGuard, next_id};
use crate::presentation::{PresentAsError, ToolMode, collapses};
use crate::scope::ScopeKey;

/// The effective mode of `scope` over already-locked layers.
fn mode_in(layers: &Layers, default: ToolMode, scope: Option<&ScopeKey>) -> ToolMode {
    let Some(scope) = scope else { return default };
    scope
        .chain()
        .find_map(|key| layers.scoped.get(key).and_then(|layer| layer.mode.map(|(_, mode)| mode)))
        .unwrap_or(default)
}

/// What [`Registry::entry_view`] read.
pub(crate) struct EntryView {
    /// The visible definition.
    pub(crate) tool: Option<Arc<RegisteredTool>>,
    /// Whether the call collapses under `code`.
    pub(crate) collapsed: bool,
    /// The registry generation of the read.
    pub(crate) generation: u64,
}

impl Registry {
    /// A registry whose undeclared scopes present in `default_mode`.
    pub(crate) fn new(default_mode: ToolMode) -> Self {
        Self {
            layers: std::sync::RwLock::default(),
            generation: std::sync::atomic::AtomicU64::new(0),
            guard_count: std::sync::atomic::AtomicUsize::new(0),
            id: crate::hooks::next_id(),
            changes: crate::hooks::HookList::new(),
            default_mode,
            transport: None,
        }
    }

    /// The effective mode of `scope` over already-locked layers.
    pub(crate) fn mode_in_layers(&self, layers: &Layers, scope: Option<&ScopeKey>) -> ToolMode {
        mode_in(layers, self.default_mode, scope)
    }

    /// The presentation `scope`'s agent sees: the nearest `presentAs` on its chain, else the config mode.
    pub(crate) fn mode_for(&self, scope: Option<&ScopeKey>) -> ToolMode {
        mode_in(&self.read(), self.default_mode, scope)
    }

    /// The definition that may execute for a call: the visible one, unless the `code` collapse rejects
    /// the call (then none, as for an absent tool).
    pub(crate) fn resolve_execution(&self, name: &str, scope: Option<&ScopeKey>, nested: bool) -> Option<Arc<RegisteredTool>> {
        let layers = self.read();
        let tool = self.lookup(&layers, name, scope)?;
        (!collapses(mode_in(&layers, self.default_mode, scope), name, nested)).then_some(tool)
    }

    /// What execution creation needs, read under one lock: the visible definition, whether the call
    /// collapses (a visible tool under an effective `code`, called model-direct), and the generation the
    /// read saw.
    pub(crate) fn entry_view(&self, name: &str, scope: Option<&ScopeKey>, nested: bool) -> EntryView {
        let layers = self.read();
        let generation = self.generation.load(std::sync::atomic::Ordering::SeqCst);
        let tool = self.lookup(&layers, name, scope);
        let collapsed = tool.is_some() && collapses(mode_in(&layers, self.default_mode, scope), name, nested);
        EntryView { tool, collapsed, generation }
    }

    /// Declare `scope`'s presentation. No scope (upstream: a plain context) and a second declaration in
    /// the same scope fail; the guard (or disposing the scope) withdraws it. Emits `tools/change` on
    /// declaration and on withdrawal.
    pub(crate) fn present_as(self: &Arc<Self>, scope: Option<&ScopeKey>, mode: ToolMode) -> Result<HookGuard, PresentAsError> {
        let Some(scope) = scope else { return Err(PresentAsError::unscoped()) };
        let id = next_id();
        {
            let mut layers = self.write();
            let layer = layers.scoped.entry(scope.clone()).or_default();
            if let Some((_, existing)) = layer.mode {
                return Err(PresentAsError::conflict(mode, existing));
            }
            layer.mode = Some((id, mode));
        }
        if let Err(message) = self.notify_change() {
            // A throwing `tools/change` listener makes `presentAs` throw: the declaration is withdrawn and
            // the withdrawal announced, as a restriction's rollback is (REG-028).
            if self.withdraw_mode(scope, id) {
                let _ = self.notify_change();
            }
            return Err(PresentAsError::change_listener(message));
        }
        let weak = Arc::downgrade(self);
        let scope = scope.clone();
        Ok(HookGuard::new(move || {
            let Some(registry) = weak.upgrade() else { return };
            if registry.withdraw_mode(&scope, id) {
                let _ = registry.notify_change();
            }
        }))
    }

    /// Removes declaration `id` from `scope`'s layer (dropping the layer once empty); whether it was there.
    fn withdraw_mode(&self, scope: &ScopeKey, id: u64) -> bool {
        let mut layers = self.write();
        let Some(layer) = layers.scoped.get_mut(scope) else { return false };
        if layer.mode.is_none_or(|(current, _)| current != id) {
            return false;
        }
        layer.mode = None;
        if layer.is_empty() {
            layers.scoped.remove(scope);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_guard_leaves_a_newer_declaration_and_empty_layers_go() {
        let registry = Arc::new(Registry::default());
        let scope = ScopeKey::new("a");
        let first = registry.present_as(Some(&scope), ToolMode::Code);
        assert!(first.is_ok());
        registry.dispose_scope(&scope);
        assert_eq!(registry.mode_for(Some(&scope)), ToolMode::Native);
        let second = registry.present_as(Some(&scope), ToolMode::Both);
        assert!(second.is_ok());
        drop(first);
        assert_eq!(registry.mode_for(Some(&scope)), ToolMode::Both);
        drop(second);
        assert!(registry.read().scoped.is_empty());
    }

    #[test]
    fn the_nearest_declaration_wins() {
        let registry = Arc::new(Registry::new(ToolMode::Code));
        let parent = ScopeKey::new("p");
        let child = ScopeKey::child("c", &parent);
        let _p = registry.present_as(Some(&parent), ToolMode::Native);
        assert_eq!(registry.mode_for(Some(&child)), ToolMode::Native);
        let _c = registry.present_as(Some(&child), ToolMode::Code);
        assert_eq!(registry.mode_for(Some(&child)), ToolMode::Code);
        assert_eq!(registry.mode_for(Some(&parent)), ToolMode::Native);
        assert_eq!(registry.mode_for(None), ToolMode::Code);
    }
}
