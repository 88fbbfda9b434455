//! The layered tool registry: a global layer plus one layer per agent scope. Registration validation
//! (output declaration, schema subset, `timeoutMs`, the reserved `run_code` name, duplicates) with
//! upstream's exact messages and check order; resolution (`get`) and the visible view (`schemas`) with
//! shadowing and agent restriction masks (upstream's exact `restrict` errors); `tools/change` notifications
//! for effective registrations, restrictions and disposals.
//!
//! # Order
//! `schemas(scope)` lists the inherited surface first — global tools in registration order, then each
//! ancestor scope's layer (farthest first) — where a same-named nearer tool replaces the farther one *in
//! its position*; then the scope's own tools, again replacing in place or appending. Registration checks
//! run: DSL `timeoutMs`, DSL parameter compilation, DSL output compilation (the `defineTool` stage); then
//! output presence, output schema subset, `timeoutMs`, reserved name, duplicate (the `register` stage).
//!
//! Spec: REG-001..REG-019, UNK-002, UNK-003, UNK-005, SCOPE-005..SCOPE-013, SCOPE-017.

mod layer;
mod presentation;
mod registration;

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::Value;

pub use self::registration::Registration;
use self::layer::{Layer, ToolEntry};
use crate::definition::{Parameters, ToolDefinition, ToolSchema};
use crate::error::{RegisterError, RegisterErrorKind};
use crate::presentation::ToolMode;
use crate::hooks::{ChangeObserver, FallibleGuardFn, GuardFn, HookGuard, HookList, next_id};
use crate::schema::check::assert_supported_json_schema;
use crate::schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
use crate::scope::ScopeKey;
use crate::value::{dismantle, js_property_order};

/// The reserved Code Mode transport name.
pub const RUN_CODE_NAME: &str = "run_code";

/// A definition as the registry holds it: compiled schemas next to the author's callbacks.
pub(crate) struct RegisteredTool {
    pub(crate) def: ToolDefinition,
    pub(crate) schema: ToolSchema,
    /// The compiled (DSL) or raw output schema, asserted in the subset.
    pub(crate) output_schema: Value,
    /// Whether arguments are validated against `schema.parameters` before the body (DSL tools).
    pub(crate) validates_args: bool,
}

impl Drop for RegisteredTool {
    fn drop(&mut self) {
        // Schemas may be arbitrarily deep; serde_json's own drop recurses.
        dismantle_definition_values(&mut self.def);
        crate::value::dismantle(std::mem::take(&mut self.output_schema));
        if let Some(parameters) = Arc::get_mut(&mut self.schema.parameters) {
            crate::value::dismantle(std::mem::take(parameters));
        }
    }
}

/// Take the (possibly deep) JSON values out of a definition and drop them without recursion.
fn dismantle_definition_values(def: &mut ToolDefinition) {
    match &mut def.parameters {
        Parameters::Dsl(v) | Parameters::Raw(v) => crate::value::dismantle(std::mem::take(v)),
    }
    if let Some(output) = def.output.as_mut() {
        crate::value::dismantle(std::mem::take(&mut output.schema));
    }
}

#[derive(Default)]
pub(crate) struct Layers {
    global: Layer,
    scoped: HashMap<ScopeKey, Layer>,
}

/// The registry state shared by a runtime and its registration handles.
pub(crate) struct Registry {
    layers: RwLock<Layers>,
    pub(crate) changes: Arc<HookList<ChangeObserver>>,
    /// The presentation of scopes that declare none (the `mode` config field).
    default_mode: ToolMode,
    /// The reserved `run_code` transport, outside every layer (none in bare test registries).
    transport: Option<crate::code::transport::CodeTransport>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new(ToolMode::Native)
    }
}

fn timeout_ok(t: Option<f64>) -> bool {
    t.is_none_or(|t| t.is_finite() && t > 0.0)
}

/// Compile and validate one definition (everything but the layer-dependent duplicate check).
fn prepare(mut def: ToolDefinition) -> Result<RegisteredTool, RegisterError> {
    match compile(&mut def) {
        Ok((parameters, output_schema, validates_args)) => {
            let schema = ToolSchema {
                name: def.name.clone(),
                description: def.description.clone(),
                parameters: Arc::new(parameters),
            };
            Ok(RegisteredTool { def, schema, output_schema, validates_args })
        }
        Err(error) => {
            dismantle_definition_values(&mut def);
            Err(error)
        }
    }
}

/// The registration checks in upstream order; yields the parameter schema, the output schema and whether
/// arguments are validated.
fn compile(def: &mut ToolDefinition) -> Result<(Value, Value, bool), RegisterError> {
    let name = def.name.clone();
    let Some(output) = def.output.as_mut() else {
        return Err(RegisterError::new(
            RegisterErrorKind::MissingOutput,
            "TypeError",
            format!("tool \"{name}\" must declare output {{ schema, render, presentationMeta? }}"),
        ));
    };
    js_property_order(&mut output.schema);
    // Compiled DSL schemas, built before the register-stage checks below (as `defineTool` runs first).
    let compiled = match &mut def.parameters {
        Parameters::Dsl(spec) => {
            // The `defineTool` stage.
            if !timeout_ok(def.timeout_ms) {
                return Err(RegisterError::new(
                    RegisterErrorKind::InvalidTimeout,
                    "Error",
                    format!("defineTool({name}): timeoutMs must be a positive finite number"),
                ));
            }
            js_property_order(spec);
            let parameters = parameter_spec_to_json_schema(spec).map_err(RegisterError::schema)?;
            match value_spec_to_json_schema(&output.schema) {
                Ok(output_schema) => Some((parameters, output_schema)),
                Err(error) => {
                    dismantle(parameters);
                    return Err(RegisterError::schema(error));
                }
            }
        }
        Parameters::Raw(schema) => {
            js_property_order(schema);
            assert_supported_json_schema(&output.schema).map_err(RegisterError::schema)?;
            None
        }
    };
    let rejected = |compiled: Option<(Value, Value)>, error: RegisterError| {
        if let Some((parameters, output_schema)) = compiled {
            dismantle(parameters);
            dismantle(output_schema);
        }
        Err(error)
    };
    if !timeout_ok(def.timeout_ms) {
        return rejected(
            compiled,
            RegisterError::new(
                RegisterErrorKind::InvalidTimeout,
                "TypeError",
                format!("tool \"{name}\" timeoutMs must be a positive finite number"),
            ),
        );
    }
    if name == RUN_CODE_NAME {
        return rejected(
            compiled,
            RegisterError::new(
                RegisterErrorKind::ReservedName,
                "Error",
                format!(
                    "tool name \"{RUN_CODE_NAME}\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed"
                ),
            ),
        );
    }
    Ok(match compiled {
        Some((parameters, output_schema)) => (parameters, output_schema, true),
        None => {
            let parameters = match &def.parameters {
                Parameters::Raw(schema) | Parameters::Dsl(schema) => crate::value::deep_clone(schema),
            };
            let output_schema = def.output.as_ref().map(|o| crate::value::deep_clone(&o.schema)).unwrap_or_default();
            (parameters, output_schema, false)
        }
    })
}

impl Registry {
    fn read(&self) -> RwLockReadGuard<'_, Layers> {
        self.layers.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Layers> {
        self.layers.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Emit `tools/change` (outside every lock); observer panics are contained.
    fn notify_change(&self) {
        self.changes.for_each(|observer| {
            let _ = crate::pipeline::contain(|| observer());
        });
    }

    /// Dispose everything a scope registered in its own layer (tools, guards, restrictions), as disposing
    /// the agent's fiber does upstream: one change notification per removed tool or restriction.
    pub(crate) fn dispose_scope(&self, scope: &ScopeKey) {
        let removed = self.write().scoped.remove(scope);
        if let Some(layer) = removed {
            let count = layer.tools.len() + layer.restrictions.len() + usize::from(layer.mode.is_some());
            drop(layer);
            for _ in 0..count {
                self.notify_change();
            }
        }
    }

    /// Validate and insert; the returned handle unregisters.
    pub(crate) fn register(
        self: &Arc<Self>,
        def: ToolDefinition,
        scope: Option<&ScopeKey>,
    ) -> Result<Registration, RegisterError> {
        let tool = Arc::new(prepare(def)?);
        let name: Arc<str> = Arc::from(tool.def.name.as_str());
        let id = next_id();
        {
            let mut layers = self.write();
            let layer = match scope {
                None => &mut layers.global,
                Some(key) => layers.scoped.entry(key.clone()).or_default(),
            };
            if layer.tools.contains_key(&name) {
                let message = match scope {
                    None => format!(
                        "tool \"{name}\" is already registered (for a per-agent variant, register through that agent's `agent.ctx` instead)"
                    ),
                    Some(_) => format!("tool \"{name}\" is already registered in this scope"),
                };
                let empty = layer.is_empty();
                if let (Some(key), true) = (scope, empty) {
                    layers.scoped.remove(key);
                }
                return Err(RegisterError::new(RegisterErrorKind::Duplicate, "Error", message));
            }
            layer.tools.insert(Arc::clone(&name), ToolEntry { id, tool });
            layer.order.insert(id, Arc::clone(&name));
        }
        self.notify_change();
        Ok(Registration { registry: Arc::downgrade(self), scope: scope.cloned(), name, id, active: true })
    }

    pub(crate) fn unregister(&self, scope: Option<&ScopeKey>, name: &str, id: u64) {
        // Take the entry out under the lock; drop it after releasing it.
        let removed;
        {
            let mut layers = self.write();
            let layer = match scope {
                None => Some(&mut layers.global),
                Some(key) => layers.scoped.get_mut(key),
            };
            let Some(layer) = layer else { return };
            removed = match layer.tools.get(name) {
                Some(entry) if entry.id == id => Some(Arc::clone(&entry.tool)),
                _ => None,
            };
            layer.remove_tool(name, id);
            let empty = layer.is_empty();
            if let (Some(key), true) = (scope, empty) {
                layers.scoped.remove(key);
            }
        }
        if removed.is_some() {
            drop(removed);
            self.notify_change();
        }
    }

    /// Add a guard to a layer.
    pub(crate) fn add_guard(self: &Arc<Self>, scope: Option<&ScopeKey>, guard: GuardFn) -> HookGuard {
        self.add_fallible_guard(scope, Arc::new(move |exec| Ok(guard(exec))))
    }

    /// Add a guard that may throw to a layer.
    pub(crate) fn add_fallible_guard(self: &Arc<Self>, scope: Option<&ScopeKey>, guard: FallibleGuardFn) -> HookGuard {
        let id = next_id();
        {
            let mut layers = self.write();
            let layer = match scope {
                None => &mut layers.global,
                Some(key) => layers.scoped.entry(key.clone()).or_default(),
            };
            layer.guards.push((id, guard));
        }
        let weak = Arc::downgrade(self);
        let scope = scope.cloned();
        HookGuard::new(move || {
            let Some(registry) = weak.upgrade() else { return };
            let mut layers = registry.write();
            let layer = match &scope {
                None => Some(&mut layers.global),
                Some(key) => layers.scoped.get_mut(key),
            };
            let Some(layer) = layer else { return };
            layer.guards.retain(|(g, _)| *g != id);
            let empty = layer.is_empty();
            if let (Some(key), true) = (&scope, empty) {
                layers.scoped.remove(key);
            }
        })
    }

    /// The live guards a call of `agent` must pass: global first, then the scope chain farthest first.
    pub(crate) fn guards_for(&self, agent: Option<&ScopeKey>) -> Vec<FallibleGuardFn> {
        let layers = self.read();
        let mut out: Vec<FallibleGuardFn> = layers.global.guards.iter().map(|(_, g)| Arc::clone(g)).collect();
        if let Some(agent) = agent {
            let chain: Vec<&ScopeKey> = agent.chain().collect();
            for key in chain.into_iter().rev() {
                if let Some(layer) = layers.scoped.get(key) {
                    out.extend(layer.guards.iter().map(|(_, g)| Arc::clone(g)));
                }
            }
        }
        out
    }

    /// The definition `scope` resolves `name` to: its own layer; else the nearest ancestor layer, then the
    /// global layer, provided every restriction on the scope chain admits the name.
    pub(crate) fn resolve(&self, name: &str, scope: Option<&ScopeKey>) -> Option<Arc<RegisteredTool>> {
        self.lookup(&self.read(), name, scope)
    }

    /// Install the `run_code` transport.
    pub(crate) fn with_transport(mut self, transport: crate::code::transport::CodeTransport) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The transport's definition as the mounted runtime's language presents it.
    pub(crate) fn transport_definition(&self) -> Result<Option<Arc<RegisteredTool>>, crate::code::flavor::FlavorError> {
        self.transport.as_ref().map(|t| t.definition()).transpose()
    }

    /// `run_code` for a scope whose mode presents it (upstream appends it to every non-native view).
    fn transport_for(&self, layers: &Layers, scope: Option<&ScopeKey>) -> Option<Arc<RegisteredTool>> {
        if self.mode_in_layers(layers, scope) == ToolMode::Native {
            return None;
        }
        self.transport.as_ref().and_then(|t| t.definition().ok())
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
        let mut out: Vec<(Arc<str>, Arc<RegisteredTool>)> = Vec::new();
        let mut position: HashMap<Arc<str>, usize> = HashMap::new();
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
        let transport = self.transport_for(&layers, scope);
        let Some(scope) = scope else { return out.into_iter().map(|(_, t)| t).chain(transport).collect() };
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
        let mut position: HashMap<Arc<str>, usize> =
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
        self.notify_change();
        let weak = Arc::downgrade(self);
        let scope = scope.clone();
        Ok(HookGuard::new(move || {
            let Some(registry) = weak.upgrade() else { return };
            let removed = {
                let mut layers = registry.write();
                let Some(layer) = layers.scoped.get_mut(&scope) else { return };
                let before = layer.restrictions.len();
                layer.restrictions.retain(|(r, _)| *r != id);
                let removed = layer.restrictions.len() != before;
                if layer.is_empty() {
                    layers.scoped.remove(&scope);
                }
                removed
            };
            if removed {
                registry.notify_change();
            }
        }))
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
    fn admits(&self, name: &str) -> bool {
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
    use crate::definition::OutputDeclaration;
    use serde_json::json;

    fn def(name: &str) -> ToolDefinition {
        ToolDefinition::new(
            name,
            "d",
            Parameters::Raw(json!({"type":"object"})),
            OutputDeclaration { schema: json!({"type":"null"}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })),
        )
    }

    #[test]
    fn dropping_a_registration_unregisters_only_itself() {
        let registry = Arc::new(Registry::default());
        let first = registry.register(def("a"), None);
        assert!(first.is_ok());
        drop(first);
        assert!(registry.resolve("a", None).is_none());
        let second = registry.register(def("a"), None);
        assert!(second.is_ok());
        // A stale handle for the same name must not remove the newer registration.
        registry.unregister(None, "a", 0);
        assert!(registry.resolve("a", None).is_some());
        if let Ok(handle) = second {
            handle.dispose();
        }
        assert!(registry.visible(None).is_empty());
    }

    #[test]
    fn empty_scoped_layers_are_removed() {
        let registry = Arc::new(Registry::default());
        let scope = ScopeKey::new("agent");
        let handle = registry.register(def("a"), Some(&scope));
        let duplicate = registry.register(def("a"), Some(&scope));
        assert!(duplicate.is_err());
        drop(handle);
        assert!(registry.read().scoped.is_empty());
        let guard = registry.add_guard(Some(&scope), Arc::new(|_| None));
        assert_eq!(registry.read().scoped.len(), 1);
        drop(guard);
        assert!(registry.read().scoped.is_empty());
    }

    #[test]
    fn shadowing_keeps_the_global_position() {
        let registry = Arc::new(Registry::default());
        let scope = ScopeKey::new("agent");
        let _a = registry.register(def("a"), None);
        let _b = registry.register(def("b"), None);
        let _local = registry.register(def("local"), Some(&scope));
        let _a2 = registry.register(def("a"), Some(&scope));
        let names: Vec<String> = registry.visible(Some(&scope)).iter().map(|t| t.def.name.clone()).collect();
        assert_eq!(names, ["a", "b", "local"]);
        let resolved = registry.resolve("a", Some(&scope));
        let local_a = registry.read().scoped.get(&scope).and_then(|l| l.tools.get("a").map(|e| Arc::clone(&e.tool)));
        assert!(matches!((resolved, local_a), (Some(x), Some(y)) if Arc::ptr_eq(&x, &y)));
    }

    #[test]
    fn change_notifications_follow_effective_changes_only() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let registry = Arc::new(Registry::default());
        let count = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        let _observer = registry.changes.add(None, Arc::new(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        }));
        let first = registry.register(def("a"), None);
        assert!(registry.register(def("a"), None).is_err());
        let _guard = registry.add_guard(None, Arc::new(|_| None));
        assert_eq!(count.load(Ordering::SeqCst), 1);
        drop(first);
        registry.unregister(None, "a", 0);
        assert_eq!(count.load(Ordering::SeqCst), 2);
        let scope = ScopeKey::new("agent");
        let _x = registry.register(def("x"), Some(&scope));
        let _y = registry.register(def("y"), Some(&scope));
        registry.dispose_scope(&scope);
        assert_eq!(count.load(Ordering::SeqCst), 6);
        assert!(registry.resolve("x", Some(&scope)).is_none());
    }
}
