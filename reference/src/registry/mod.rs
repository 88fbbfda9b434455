//! The layered tool registry: a global layer plus one layer per agent scope, the registry state shared by
//! a runtime and its registration handles: insertion with the duplicate check, unregistration, scope
//! disposal and `tools/change` notifications for effective registrations, restrictions and disposals.
//!
//! By concern: `compile.rs` (the registration checks and their order), `view.rs` (resolution and the
//! visible view, with their `# Order`), `restrict.rs` (masks), `guards.rs`, `presentation.rs` (per-scope
//! `presentAs` and the collapse-aware resolution), `resolved.rs` (a resolved definition: its output schema and UI presenters, validated
//! softly), `layer.rs` (one scope's contribution),
//! `registration.rs` (the RAII handle). The `run_code` transport is supplied from above through
//! `ReservedTransport`.
//!
//! Spec: REG-001..REG-004, REG-011..REG-014, REG-019, REG-021, REG-022, SCOPE-016, REG-023.

mod compile;
mod guards;
pub(crate) use self::guards::GuardPass;
mod layer;
mod presentation;
pub(crate) use self::presentation::EntryView;
mod resolved;
pub use self::resolved::ResolvedTool;
mod registration;
mod restrict;
mod view;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::Value;

use self::compile::prepare;
use self::layer::{Layer, ToolEntry};
pub use self::registration::Registration;
pub use self::restrict::{RestrictError, ToolFilter};
use crate::definition::{Parameters, ToolDefinition, ToolSchema};
use crate::error::{RegisterError, RegisterErrorKind};
use crate::hooks::{ChangeObserver, HookList, next_id};
use crate::presentation::ToolMode;
use crate::schema::validate::OwnedPlan;
use crate::scope::ScopeKey;

pub use crate::presentation::RUN_CODE_NAME;

/// A definition as the registry holds it: compiled schemas next to the author's callbacks.
pub(crate) struct RegisteredTool {
    pub(crate) def: ToolDefinition,
    pub(crate) schema: ToolSchema,
    /// The compiled (DSL) or raw output schema, asserted in the subset.
    pub(crate) output_schema: Value,
    /// `schema.parameters` compiled once, when arguments are validated against it before the body (DSL
    /// tools); `None` otherwise.
    pub(crate) parameters_plan: Option<OwnedPlan>,
    /// `output_schema` compiled once.
    pub(crate) output_plan: OwnedPlan,
}

impl RegisteredTool {
    /// A checked definition with its schemas compiled for validation; `validates_args` for a tool whose
    /// arguments are validated against `schema.parameters` before its body (DSL tools).
    pub(crate) fn new(def: ToolDefinition, schema: ToolSchema, output_schema: Value, validates_args: bool) -> Self {
        let parameters_plan = validates_args.then(|| OwnedPlan::new(&schema.parameters));
        let output_plan = OwnedPlan::new(&output_schema);
        Self { def, schema, output_schema, parameters_plan, output_plan }
    }

    /// Whether `arguments` pass the definition's own argument validation (always, for a tool whose body
    /// validates nothing before it runs).
    pub(crate) fn admits_arguments(&self, arguments: &Value) -> bool {
        self.parameters_plan.as_ref().is_none_or(|plan| plan.admits(arguments))
    }

    /// The argument violations (`root` empty: the root reads `arguments`); none for a tool without
    /// argument validation.
    pub(crate) fn argument_violations(&self, arguments: &Value) -> Vec<String> {
        self.parameters_plan.as_ref().map(|plan| plan.violations(arguments, "")).unwrap_or_default()
    }
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
    scoped: FastMap<ScopeKey, Layer>,
}

/// The registry's maps, read on every call, hash with foldhash rather than SipHash: their keys are the
/// names and scopes the embedder registered (a caller's name only probes them), so SipHash's resistance
/// to chosen collisions buys nothing here.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The registry state shared by a runtime and its registration handles.
pub(crate) struct Registry {
    layers: RwLock<Layers>,
    /// Bumped whenever the layers are locked for writing: a resolution made at generation `g` still holds
    /// while the generation is `g` (see [`Registry::unchanged_since`]).
    generation: AtomicU64,
    /// How many guards all layers hold, changed under the write lock: a call's guard pass with none to
    /// run ends without taking the read lock.
    guard_count: AtomicUsize,
    /// Process-unique: the key of this registry's global guard table in the per-thread snapshot memory.
    id: u64,
    pub(crate) changes: Arc<HookList<ChangeObserver>>,
    /// The presentation of scopes that declare none (the `mode` config field).
    default_mode: ToolMode,
    /// The reserved `run_code` transport, outside every layer (none in bare test registries).
    transport: Option<Arc<dyn ReservedTransport>>,
}

/// The reserved `run_code` transport as the registry sees it: one definition kept outside every layer
/// (so `restrict` cannot remove it and no scope can shadow it), supplied by the code layer above — the
/// registry never imports that layer.
pub(crate) trait ReservedTransport: Send + Sync {
    /// The definition as presented right now, or `None` when it cannot be presented (the mounted code
    /// runtime's language has no `run_code` flavor).
    fn definition(&self) -> Option<Arc<RegisteredTool>>;
}

impl Default for Registry {
    fn default() -> Self {
        Self::new(ToolMode::Native)
    }
}

impl Registry {
    fn read(&self) -> RwLockReadGuard<'_, Layers> {
        self.layers.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Layers> {
        let layers = self.layers.write().unwrap_or_else(|p| p.into_inner());
        // Under the write lock, before any change is made: a reader that sees the old generation afterwards
        // is ordered before this writer.
        self.generation.fetch_add(1, Ordering::SeqCst);
        layers
    }

    /// The current generation: what [`unchanged_since`](Self::unchanged_since) compares against, for a
    /// cache of something derived from the layers (the prompt's SDK text).
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Whether no layer was locked for writing since a read that saw `generation` (so what that read
    /// resolved — outside the reserved `run_code` name, whose definition follows the mounted code runtime —
    /// is what a resolution now would give).
    pub(crate) fn unchanged_since(&self, generation: u64) -> bool {
        self.generation.load(Ordering::SeqCst) == generation
    }

    /// Emit `tools/change` (outside every lock). An observer that panics — a thrown error, in upstream's
    /// terms — stops the emission, as a throwing listener stops cordis' `emit`; its message is returned
    /// for the caller that can fail ([`Registry::register`]), and ignored by the others.
    fn notify_change(&self) -> Result<(), String> {
        let mut failure = None;
        self.changes.for_each(|observer| {
            if failure.is_none() {
                failure = crate::callback::contain(|| observer()).err();
            }
        });
        failure.map_or(Ok(()), Err)
    }

    /// Dispose everything a scope registered in its own layer (tools, guards, restrictions), as disposing
    /// the agent's fiber does upstream: one change notification per removed tool or restriction.
    pub(crate) fn dispose_scope(&self, scope: &ScopeKey) {
        let removed = {
            let mut layers = self.write();
            let removed = layers.scoped.remove(scope);
            if let Some(layer) = &removed {
                self.guard_count.fetch_sub(layer.guards.entries.len(), Ordering::SeqCst);
            }
            removed
        };
        if let Some(layer) = removed {
            let count = layer.tools.len() + layer.restrictions.len() + usize::from(layer.mode.is_some());
            drop(layer);
            for _ in 0..count {
                let _ = self.notify_change();
            }
        }
    }

    /// Install the `run_code` transport.
    pub(crate) fn with_transport(mut self, transport: Arc<dyn ReservedTransport>) -> Self {
        self.transport = Some(transport);
        self
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
        if let Err(message) = self.notify_change() {
            // A throwing `tools/change` listener makes `register` throw: the entry is rolled back, so the
            // name can be registered again later, and the rollback is announced in turn (upstream's
            // `ScopedLayers.effect` undoes through the disposer it yielded, which notifies; a second
            // throw there is lost, the first is what `register` throws) (REG-022).
            drop(self.take_entry(scope, &name, id));
            let _ = self.notify_change();
            return Err(RegisterError::new(RegisterErrorKind::ChangeListener, "Error", message));
        }
        Ok(Registration { registry: Arc::downgrade(self), scope: scope.cloned(), name, id, active: true })
    }

    /// Take registration `id` of `name` out of its layer (removing an emptied scope layer); the caller
    /// drops it after the lock is released.
    fn take_entry(&self, scope: Option<&ScopeKey>, name: &str, id: u64) -> Option<Arc<RegisteredTool>> {
        let mut layers = self.write();
        let layer = match scope {
            None => Some(&mut layers.global),
            Some(key) => layers.scoped.get_mut(key),
        }?;
        let removed = match layer.tools.get(name) {
            Some(entry) if entry.id == id => Some(Arc::clone(&entry.tool)),
            _ => None,
        };
        layer.remove_tool(name, id);
        let empty = layer.is_empty();
        if let (Some(key), true) = (scope, empty) {
            layers.scoped.remove(key);
        }
        removed
    }

    /// Remove exactly the entry `id` and announce it; `Err` is what a throwing `tools/change` listener
    /// threw (the entry stays removed, as upstream's undo runs before its notification, REG-025).
    pub(crate) fn unregister(&self, scope: Option<&ScopeKey>, name: &str, id: u64) -> Result<(), String> {
        let removed = self.take_entry(scope, name, id);
        if removed.is_some() {
            drop(removed);
            return self.notify_change();
        }
        Ok(())
    }

}

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

    /// `{"type":"array","items":…}` around a string, `depth` levels deep, built without recursion.
    fn deep_array_schema(depth: usize) -> Value {
        let mut schema = json!({"type": "string"});
        for _ in 0..depth {
            schema = json!({"type": "array", "items": schema});
        }
        schema
    }

    /// A registered tool's schemas (the definition's, the projected parameters, the output schema) are taken
    /// apart without recursion when it goes: registered on a large stack, 1,000 levels then drop on a
    /// 64 KiB one (a recursive drop overflows it and aborts the test binary).
    #[test]
    fn a_deep_registered_tool_drops_on_a_small_stack() {
        let register = || {
            let registry = Arc::new(Registry::default());
            let parameters = json!({"type": "object", "properties": {"n": deep_array_schema(1_000)}});
            let output = OutputDeclaration { schema: deep_array_schema(1_000), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None };
            let deep = ToolDefinition::new("deep", "d", Parameters::Raw(parameters), output, Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })));
            let handle = registry.register(deep, None).ok();
            (registry, handle)
        };
        let registered = std::thread::Builder::new().stack_size(256 << 20).spawn(register).map(|t| t.join());
        let Ok(Ok((registry, Some(handle)))) = registered else { panic!("the deep tool did not register") };
        let release = move || {
            drop(handle);
            let gone = registry.resolve("deep", None).is_none();
            drop(registry);
            gone
        };
        let joined = std::thread::Builder::new().stack_size(64 << 10).spawn(release).map(|t| t.join());
        assert!(matches!(joined, Ok(Ok(true))));
    }

    #[test]
    fn a_forgotten_registration_stays_registered() {
        let registry = Arc::new(Registry::default());
        let handle = registry.register(def("kept"), None);
        let Ok(handle) = handle else { panic!("registered") };
        handle.forget();
        assert!(registry.resolve("kept", None).is_some());
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
        let _ = registry.unregister(None, "a", 0);
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
    fn the_guard_count_follows_every_addition_and_removal() {
        let registry = Arc::new(Registry::default());
        let count = |r: &Registry| r.guard_count.load(Ordering::SeqCst);
        let scope = ScopeKey::new("agent");
        let global = registry.add_guard(None, Arc::new(|_| None));
        let scoped = [registry.add_guard(Some(&scope), Arc::new(|_| None)), registry.add_guard(Some(&scope), Arc::new(|_| None))];
        assert_eq!(count(&registry), 3);
        // Disposing the scope drops its layer with both guards; their handles then find nothing to remove.
        registry.dispose_scope(&scope);
        assert_eq!(count(&registry), 1);
        drop(scoped);
        assert_eq!(count(&registry), 1);
        drop(global);
        assert_eq!(count(&registry), 0);
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
    fn a_panicking_change_observer_rolls_the_registration_back() {
        let registry = Arc::new(Registry::default());
        let observer = registry.changes.add(None, Arc::new(|| panic!("observer failed")));
        let scope = ScopeKey::new("agent");
        for layer in [None, Some(&scope)] {
            let rejected = registry.register(def("a"), layer);
            assert!(matches!(&rejected, Err(e) if e.kind == RegisterErrorKind::ChangeListener && e.message == "observer failed"));
            assert!(registry.resolve("a", layer).is_none());
        }
        assert!(registry.read().scoped.is_empty());
        drop(observer);
        assert!(registry.register(def("a"), None).is_ok());
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
        let _ = registry.unregister(None, "a", 0);
        assert_eq!(count.load(Ordering::SeqCst), 2);
        let scope = ScopeKey::new("agent");
        let _x = registry.register(def("x"), Some(&scope));
        let _y = registry.register(def("y"), Some(&scope));
        registry.dispose_scope(&scope);
        assert_eq!(count.load(Ordering::SeqCst), 6);
        assert!(registry.resolve("x", Some(&scope)).is_none());
    }
}
