//! [`ScopeKey`]: the identity of an agent scope (upstream's per-agent `Symbol` key), with an optional
//! enclosing scope so layers and listeners can follow the scope chain.
//!
//! Spec: REG-004, REG-015, UNK-003, SCOPE-001..SCOPE-004, SCOPE-015, SCOPE-016.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

struct ScopeInner {
    name: String,
    parent: Option<ScopeKey>,
}

/// An agent scope identity. Equality is identity (like a JavaScript `Symbol`): two keys made with the same
/// name are different scopes; clones are the same scope. Cheap to clone.
#[derive(Clone)]
pub struct ScopeKey(Arc<ScopeInner>);

impl ScopeKey {
    /// A fresh top-level scope; `name` is for diagnostics only.
    pub fn new(name: impl Into<String>) -> Self {
        Self(Arc::new(ScopeInner { name: name.into(), parent: None }))
    }

    /// A fresh scope nested in `parent`: it inherits `parent`'s tools (shadowing them) and `parent`'s
    /// listeners observe its calls.
    pub fn child(name: impl Into<String>, parent: &ScopeKey) -> Self {
        Self(Arc::new(ScopeInner { name: name.into(), parent: Some(parent.clone()) }))
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
