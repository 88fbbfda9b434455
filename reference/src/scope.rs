//! [`ScopeKey`]: the identity of an agent scope (upstream's per-agent `Symbol` key), with an optional
//! enclosing scope so layers and listeners can follow the scope chain, the runtime that opened it (if one
//! did, `ToolRuntime::open_scope`) and whether it was disposed; and the effects attached to a scope's
//! disposal (`ScopeEffects`, behind `ToolRuntime::on_scope_dispose`).
//!
//! Spec: REG-004, REG-015, UNK-003, SCOPE-001..SCOPE-004, SCOPE-015, SCOPE-016; CDM-038 (the agent-scope
//! release dsh-codemode attaches), CDM-050 (a known preset scope; no release attached to a disposed scope).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

struct ScopeInner {
    name: String,
    parent: Option<ScopeKey>,
    /// The runtime that opened the scope (`ToolRuntime::open_scope`); 0: made with `new` or `child`.
    origin: u64,
    /// Set when a runtime disposed the scope (under that runtime's `ScopeEffects` lock).
    disposed: AtomicBool,
}

/// An agent scope identity. Equality is identity (like a JavaScript `Symbol`): two keys made with the same
/// name are different scopes; clones are the same scope. Cheap to clone.
#[derive(Clone)]
pub struct ScopeKey(Arc<ScopeInner>);

impl ScopeKey {
    /// A fresh top-level scope; `name` is for diagnostics only. [`ToolRuntime::open_scope`] makes one its
    /// runtime knows, which a plugin can check it was handed ([`ToolRuntime::knows_scope`]).
    ///
    /// [`ToolRuntime::open_scope`]: crate::ToolRuntime::open_scope
    /// [`ToolRuntime::knows_scope`]: crate::ToolRuntime::knows_scope
    pub fn new(name: impl Into<String>) -> Self {
        Self::opened(name, None, 0)
    }

    /// A fresh scope nested in `parent`: it inherits `parent`'s tools (shadowing them) and `parent`'s
    /// listeners observe its calls.
    pub fn child(name: impl Into<String>, parent: &ScopeKey) -> Self {
        Self::opened(name, Some(parent), 0)
    }

    /// A fresh scope opened by the runtime numbered `origin` (0: none).
    pub(crate) fn opened(name: impl Into<String>, parent: Option<&ScopeKey>, origin: u64) -> Self {
        let inner = ScopeInner { name: name.into(), parent: parent.cloned(), origin, disposed: AtomicBool::new(false) };
        Self(Arc::new(inner))
    }

    /// The runtime that opened this scope (0: none did).
    pub(crate) fn origin(&self) -> u64 {
        self.0.origin
    }

    /// Whether a runtime has disposed this scope ([`ToolRuntime::dispose_scope`]). A disposed scope keeps
    /// its identity (a late call may still name it) but has no tools, hooks or disposal effects left.
    ///
    /// [`ToolRuntime::dispose_scope`]: crate::ToolRuntime::dispose_scope
    pub fn is_disposed(&self) -> bool {
        self.0.disposed.load(Ordering::SeqCst)
    }

    /// The diagnostic name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The enclosing scope, if any.
    pub fn parent(&self) -> Option<&ScopeKey> {
        self.0.parent.as_ref()
    }

    /// This scope, then each enclosing scope, nearest first.
    pub fn chain(&self) -> impl Iterator<Item = &ScopeKey> {
        std::iter::successors(Some(self), |k| k.parent())
    }

    /// Whether `self` is `other` or encloses it.
    pub(crate) fn is_self_or_ancestor_of(&self, other: &ScopeKey) -> bool {
        other.chain().any(|k| k == self)
    }
}

impl PartialEq for ScopeKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ScopeKey {}

impl Hash for ScopeKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(state);
    }
}

impl fmt::Debug for ScopeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScopeKey({:?})", self.0.name)
    }
}

/// Effects to run once when a scope is disposed ([`ToolRuntime::on_scope_dispose`]): a plugin's cleanup
/// attached to an agent scope, such as releasing the agent's persistent code environment.
///
/// [`ToolRuntime::on_scope_dispose`]: crate::ToolRuntime::on_scope_dispose
#[derive(Default)]
pub(crate) struct ScopeEffects {
    next: std::sync::atomic::AtomicU64,
    effects: std::sync::Mutex<Vec<Effect>>,
}

/// One attached effect: its id, its scope, what it runs.
type Effect = (u64, ScopeKey, Box<dyn FnOnce() + Send>);

impl ScopeEffects {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Effect>> {
        self.effects.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Attach `effect` to `scope`; the id cancels it. `Err(effect)` when the scope was already disposed:
    /// nothing would ever run it (checked under the lock [`run`](Self::run) marks the scope in).
    pub(crate) fn add(&self, scope: &ScopeKey, effect: Box<dyn FnOnce() + Send>) -> Result<u64, Box<dyn FnOnce() + Send>> {
        let mut effects = self.lock();
        if scope.is_disposed() {
            return Err(effect);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        effects.push((id, scope.clone(), effect));
        Ok(id)
    }

    /// Drop the effect `id` without running it (already run or cancelled: nothing).
    pub(crate) fn cancel(&self, id: u64) {
        let removed: Vec<_> = {
            let mut effects = self.lock();
            let (gone, kept) = std::mem::take(&mut *effects).into_iter().partition(|(other, _, _)| *other == id);
            *effects = kept;
            gone
        };
        drop(removed);
    }

    /// Mark `scope` disposed and run, in attachment order, every effect attached to it (each once; outside
    /// the lock, so an effect may attach or cancel others).
    pub(crate) fn run(&self, scope: &ScopeKey) {
        let due: Vec<_> = {
            let mut effects = self.lock();
            scope.0.disposed.store(true, Ordering::SeqCst);
            let (due, kept) = std::mem::take(&mut *effects).into_iter().partition(|(_, key, _)| key == scope);
            *effects = kept;
            due
        };
        for (_, _, effect) in due {
            effect();
        }
    }
}
