//! A namespace's bindings as the runtimes receive them ([`CodeBindings`]): the names in declaration order
//! ([`BindingNames`], shareable across runs) and how a call of one of them starts — one function per name,
//! or one dispatcher handed the name. A host whose names change rarely (the `run_code` bridge: they change
//! with the registry's generation) builds the names once and each run's bindings in constant time; the
//! runtimes make a binding's function only when the program reaches it (issue 39: with 10,000 tools a
//! trivial run had spent almost all its time making 10,000 bindings it never called).
//!
//! A name declared twice keeps its first position and the last declaration's binding (a JavaScript
//! record's semantics, which the Python runtime follows); the TypeScript runtime's namespace defines each
//! declaration in turn, as before.
//!
//! Spec: RUN-004 (one binding per declared name, in declaration order).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::BindingFn;
use crate::callback::BoxFuture;

/// One dispatcher for a whole namespace: receives the binding's name and the program's argument, as a
/// [`BindingFn`] receives its argument.
pub type DispatchFn = Arc<dyn Fn(&str, Option<Value>) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// The names of a namespace's bindings, in declaration order, with what the runtimes look up by name
/// (built once: share one `Arc<BindingNames>` across runs while the names stay the same).
pub struct BindingNames {
    names: Vec<String>,
    /// Each distinct name's first and last positions.
    positions: HashMap<String, (usize, usize)>,
    /// Rendered once for the runtime that ships the names to its program's process (the Python boot frame).
    rendered: OnceLock<String>,
    /// Unique within the process, never reused: what a runtime holding these names elsewhere (the Python
    /// fork server's names table) knows them by.
    id: u64,
}

/// The next [`BindingNames::id`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl BindingNames {
    /// The names `names`, in this order.
    pub fn new(names: Vec<String>) -> Self {
        let mut positions: HashMap<String, (usize, usize)> = HashMap::with_capacity(names.len());
        for (position, name) in names.iter().enumerate() {
            positions.entry(name.clone()).and_modify(|(_, last)| *last = position).or_insert((position, position));
        }
        Self { names, positions, rendered: OnceLock::new(), id: NEXT_ID.fetch_add(1, Ordering::Relaxed) }
    }

    /// The names in declaration order (duplicates included).
    pub fn as_slice(&self) -> &[String] {
        &self.names
    }

    /// How many names were declared (duplicates included).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether none was declared.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The first position of `name`, if declared.
    pub fn first(&self, name: &str) -> Option<usize> {
        self.positions.get(name).map(|&(first, _)| first)
    }

    /// The last position of `name` (the declaration whose binding is called), if declared.
    pub fn last(&self, name: &str) -> Option<usize> {
        self.positions.get(name).map(|&(_, last)| last)
    }

    /// The distinct names, in first-declaration order.
    pub fn distinct(&self) -> impl Iterator<Item = &str> {
        self.names.iter().enumerate().filter(|(i, name)| self.first(name) == Some(*i)).map(|(_, name)| name.as_str())
    }

    /// This set's identity: unique among the sets this process made, so a copy of the names held under it
    /// is never taken for another set's (two sets with the same names have different ids).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// How many distinct names there are.
    pub(crate) fn distinct_len(&self) -> usize {
        self.positions.len()
    }

    /// `render(self)`, computed on the first call and kept (a runtime's per-names encoding).
    pub(crate) fn rendered(&self, render: impl FnOnce(&Self) -> String) -> &str {
        self.rendered.get_or_init(|| render(self))
    }
}

impl fmt::Debug for BindingNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.names).finish()
    }
}

/// How a call starts.
#[derive(Clone)]
enum Calls {
    /// One function per declared position.
    Each(Arc<[BindingFn]>),
    /// One dispatcher for every name.
    Dispatch(DispatchFn),
}

/// A namespace's bindings: its names and how each is called. Cloning shares them.
#[derive(Clone)]
pub struct CodeBindings {
    names: Arc<BindingNames>,
    calls: Calls,
}

impl CodeBindings {
    /// `(name, binding)` pairs in declaration order.
    pub fn new(functions: Vec<(String, BindingFn)>) -> Self {
        let (names, functions): (Vec<String>, Vec<BindingFn>) = functions.into_iter().unzip();
        Self { names: Arc::new(BindingNames::new(names)), calls: Calls::Each(functions.into()) }
    }

    /// Every name of `names` called through `dispatch`: building this costs the same whatever the number
    /// of names.
    pub fn dispatch(names: Arc<BindingNames>, dispatch: DispatchFn) -> Self {
        Self { names, calls: Calls::Dispatch(dispatch) }
    }

    /// The names.
    pub fn names(&self) -> &Arc<BindingNames> {
        &self.names
    }

    /// How many bindings were declared (duplicates included).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether none was declared.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The binding declared at `position` (a dispatcher's is made here, one small allocation).
    pub fn binding(&self, position: usize) -> Option<BindingFn> {
        let name = self.names.names.get(position)?;
        Some(match &self.calls {
            Calls::Each(functions) => Arc::clone(functions.get(position)?),
            Calls::Dispatch(dispatch) => {
                let (dispatch, name) = (Arc::clone(dispatch), name.clone());
                Arc::new(move |argument| dispatch(&name, argument))
            }
        })
    }

    /// The binding a call of `name` reaches (its last declaration), if declared.
    pub fn get(&self, name: &str) -> Option<BindingFn> {
        self.binding(self.names.last(name)?)
    }

    /// `(name, binding)` in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, BindingFn)> {
        self.names.names.iter().enumerate().filter_map(|(i, name)| Some((name.as_str(), self.binding(i)?)))
    }
}

impl From<Vec<(String, BindingFn)>> for CodeBindings {
    fn from(functions: Vec<(String, BindingFn)>) -> Self {
        Self::new(functions)
    }
}

impl FromIterator<(String, BindingFn)> for CodeBindings {
    fn from_iter<I: IntoIterator<Item = (String, BindingFn)>>(iter: I) -> Self {
        Self::new(iter.into_iter().collect())
    }
}

impl Default for CodeBindings {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl fmt::Debug for CodeBindings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.names, f)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{BindingNames, CodeBindings, DispatchFn};
    use crate::code::BindingFn;

    fn constant(v: i64) -> BindingFn {
        Arc::new(move |_| Box::pin(async move { Ok(json!(v)) }))
    }

    #[test]
    fn a_duplicate_keeps_its_first_position_and_its_last_binding() {
        let bindings = CodeBindings::new(vec![("a".into(), constant(1)), ("b".into(), constant(2)), ("a".into(), constant(3))]);
        assert_eq!(bindings.names().distinct().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(bindings.names().first("a"), Some(0));
        let value = futures_util::FutureExt::now_or_never(bindings.get("a").unwrap()(None)).unwrap().unwrap();
        assert_eq!(value, json!(3));
        assert!(bindings.get("c").is_none());
    }

    #[test]
    fn a_dispatcher_receives_the_name() {
        let dispatch: DispatchFn = Arc::new(|name, _| {
            let name = name.to_owned();
            Box::pin(async move { Ok(json!(name)) })
        });
        let bindings = CodeBindings::dispatch(Arc::new(BindingNames::new(vec!["x".into(), "y".into()])), dispatch);
        let names: Vec<&str> = bindings.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["x", "y"]);
        let value = futures_util::FutureExt::now_or_never(bindings.get("y").unwrap()(None)).unwrap().unwrap();
        assert_eq!(value, json!("y"));
    }
}
