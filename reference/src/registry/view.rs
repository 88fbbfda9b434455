//! What a scope sees: resolution (`get`: the scope's own layer, else the nearest ancestor's, else the
//! global layer, admitted by every restriction on the chain), the visible view in presentation order
//! (`schemas`), the names `toolOrder` may list, and the reserved `run_code` transport appended to every
//! non-native view.
//!
//! # Order
//! `schemas(scope)` lists the inherited surface first — global tools in registration order, then each
//! ancestor scope's layer (farthest first) — where a same-named nearer tool replaces the farther one *in
//! its position*; then the scope's own tools, again replacing in place or appending; then `run_code`
//! when the scope's mode is `code` or `both`.
//!
//! Spec: REG-015..REG-018, UNK-001..UNK-005, SCOPE-001..SCOPE-005, SCOPE-012, CODE-002, CODE-013, SCOPE-018..SCOPE-020, SCOPE-023.

use std::sync::Arc;

use super::layer::Layer;
use super::{FastMap, Layers, RUN_CODE_NAME, RegisteredTool, Registry};
use crate::definition::ToolSchema;
use crate::presentation::ToolMode;
use crate::scope::ScopeKey;

impl Registry {
    /// The definition `scope` resolves `name` to: its own layer; else the nearest ancestor layer, then the
    /// global layer, provided every restriction on the scope chain admits the name.
    pub(crate) fn resolve(&self, name: &str, scope: Option<&ScopeKey>) -> Option<Arc<RegisteredTool>> {
        self.lookup(&self.read(), name, scope)
    }

    /// `run_code` for a scope whose mode presents it (upstream appends it to every non-native view).
    fn transport_for(&self, layers: &Layers, scope: Option<&ScopeKey>) -> Option<Arc<RegisteredTool>> {
        if self.mode_in_layers(layers, scope) == ToolMode::Native {
            return None;
        }
        self.transport.as_ref().and_then(|t| t.definition())
    }

    /// [`resolve_in`], with the reserved transport for its name.
    pub(crate) fn lookup(&self, layers: &Layers, name: &str, scope: Option<&ScopeKey>) -> Option<Arc<RegisteredTool>> {
        if name == RUN_CODE_NAME {
            return self.transport_for(layers, scope);
        }
        resolve_in(layers, name, scope)
    }

    /// Everything `scope` can see, in presentation order: the admitted inherited surface (global, then
    /// ancestors farthest first, a nearer tool replacing a farther one in place), then the scope's own tools
    /// (replacing in place, or appended).
    pub(crate) fn visible(&self, scope: Option<&ScopeKey>) -> Vec<Arc<RegisteredTool>> {
        let layers = self.read();
        let transport = self.transport_for(&layers, scope);
        let Some(scope) = scope else {
            // The global layer alone: its names are unique, so no shadowing map is needed (with 10,000
            // tools the map was most of a `run_code`'s binding setup).
            return layers.global.ordered().map(|(_, tool)| Arc::clone(tool)).chain(transport).collect();
        };
        let mut out: Vec<(Arc<str>, Arc<RegisteredTool>)> = Vec::new();
        let mut position: FastMap<Arc<str>, usize> = FastMap::default();
        let mut place = |out: &mut Vec<(Arc<str>, Arc<RegisteredTool>)>, name: &Arc<str>, tool: &Arc<RegisteredTool>| {
            match position.get(name) {
                Some(&i) => out[i].1 = Arc::clone(tool),
                None => {
                    position.insert(Arc::clone(name), out.len());
                    out.push((Arc::clone(name), Arc::clone(tool)));
                }
            }
        };
        for (name, tool) in layers.global.ordered() {
            place(&mut out, name, tool);
        }
        let chain: Vec<&ScopeKey> = scope.chain().collect();
        for key in chain.iter().skip(1).rev() {
            if let Some(layer) = layers.scoped.get(*key) {
                for (name, tool) in layer.ordered() {
                    place(&mut out, name, tool);
                }
            }
        }
        let masks: Vec<&Layer> = chain.iter().filter_map(|key| layers.scoped.get(*key)).collect();
        out.retain(|(name, _)| masks.iter().all(|layer| layer.admits(name)));
        let mut position: FastMap<Arc<str>, usize> =
            out.iter().enumerate().map(|(i, (name, _))| (Arc::clone(name), i)).collect();
        if let Some(own) = layers.scoped.get(scope) {
            for (name, tool) in own.ordered() {
                match position.get(name) {
                    Some(&i) => out[i].1 = Arc::clone(tool),
                    None => {
                        position.insert(Arc::clone(name), out.len());
                        out.push((Arc::clone(name), Arc::clone(tool)));
                    }
                }
            }
        }
        out.into_iter().map(|(_, t)| t).chain(transport).collect()
    }

    /// Names `scope` knows before restrictions (upstream `view().knownNames`): global, ancestor and own
    /// layers, sorted and deduplicated. `toolOrder` may list any of them (PROMPT-011).
    pub(crate) fn known_names(&self, scope: Option<&ScopeKey>) -> Vec<String> {
        let layers = self.read();
        let mut names: Vec<String> = layers.global.tools.keys().map(|n| n.to_string()).collect();
        for key in scope.into_iter().flat_map(ScopeKey::chain) {
            if let Some(layer) = layers.scoped.get(key) {
                names.extend(layer.tools.keys().map(|n| n.to_string()));
            }
        }
        names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        names.dedup();
        names
    }

    /// Schemas of everything `scope` can see, in presentation order.
    pub(crate) fn schemas(&self, scope: Option<&ScopeKey>) -> Vec<ToolSchema> {
        self.visible(scope).into_iter().map(|t| t.schema.clone()).collect()
    }
}

/// [`Registry::resolve`] over already-locked layers.
fn resolve_in(layers: &Layers, name: &str, scope: Option<&ScopeKey>) -> Option<Arc<RegisteredTool>> {
    let Some(scope) = scope else {
        return layers.global.tools.get(name).map(|e| Arc::clone(&e.tool));
    };
    if let Some(entry) = layers.scoped.get(scope).and_then(|l| l.tools.get(name)) {
        return Some(Arc::clone(&entry.tool));
    }
    let inherited = scope
        .chain()
        .skip(1)
        .find_map(|key| layers.scoped.get(key).and_then(|l| l.tools.get(name)))
        .or_else(|| layers.global.tools.get(name))?;
    let admitted = scope.chain().all(|key| layers.scoped.get(key).is_none_or(|l| l.admits(name)));
    admitted.then(|| Arc::clone(&inherited.tool))
}
