//! Large binding namespaces, materialized on demand: with thousands of tools, defining one host function
//! per tool in every run's fresh context cost more than the run itself (10,000 tools: ~7 ms against
//! ~0.4 ms). A namespace of at least [`LAZY_FROM`] functions is instead a `Proxy` over a null-prototype
//! object: a binding function is made (by the `make` the caller, `bindings.rs`, passes: exactly as the
//! eager path makes it) the first time its name is read, tested, described, defined or deleted, and enumerating the
//! namespace makes them all, in declaration order. What a program observes is the eager namespace's:
//! own, enumerable, non-writable, non-configurable functions named `value`, in declaration order, the
//! object extensible (issue 39).
//!
//! Spec: RUN-004 (one own enumerable function per binding), kept through the proxy.

use std::sync::Arc;

use rquickjs::{Array, Ctx, Function, Value as JsValue};

use crate::code::{BindingFn, CodeBindingNamespace};

/// Namespaces with at least this many functions are materialized on demand.
pub(crate) const LAZY_FROM: usize = 64;

/// The proxy: `lookup(name)` makes one binding function (or `undefined`), `keys()` lists the names.
const PROXY: &str = r#"(function (lookup, keys) {
  'use strict';
  const hasOwn = Object.prototype.hasOwnProperty;
  const defineProperty = Object.defineProperty;
  const R = Reflect;
  const target = Object.create(null);
  const absent = new Set();
  const materialize = (key) => {
    if (typeof key !== 'string' || hasOwn.call(target, key) || absent.has(key)) return;
    const fn = lookup(key);
    if (fn === undefined) { absent.add(key); return; }
    defineProperty(target, key, { value: fn, enumerable: true, writable: false, configurable: false });
  };
  let listed, listedSet;
  const handler = {
    get(t, k, r) { materialize(k); return R.get(t, k, r); },
    has(t, k) { materialize(k); return R.has(t, k); },
    getOwnPropertyDescriptor(t, k) { materialize(k); return R.getOwnPropertyDescriptor(t, k); },
    defineProperty(t, k, d) { materialize(k); return R.defineProperty(t, k, d); },
    deleteProperty(t, k) { materialize(k); return R.deleteProperty(t, k); },
    set(t, k, v, r) { materialize(k); return R.set(t, k, v, r); },
    ownKeys(t) {
      if (listed === undefined) {
        listed = keys();
        listedSet = new Set(listed);
        for (const k of listed) materialize(k);
      }
      return listed.concat(R.ownKeys(t).filter((k) => !listedSet.has(k)));
    },
    preventExtensions(t) { handler.ownKeys(t); return R.preventExtensions(t); },
  };
  return new Proxy(target, handler);
})"#;

/// The program-side value of `namespace`, materialized on demand: `make(ctx, member, binding)` makes
/// one binding function. Nothing here grows with the number of bindings until the program reads them:
/// a name is found through the names' index, and the list is made only when the namespace is enumerated.
pub(crate) fn namespace<'js, M>(ctx: &Ctx<'js>, namespace: &Arc<CodeBindingNamespace>, make: M) -> rquickjs::Result<JsValue<'js>>
where
    M: Fn(&Ctx<'js>, &str, BindingFn) -> rquickjs::Result<Function<'js>> + 'js,
{
    let proxy: Function<'js> = ctx.eval(PROXY)?;
    let members = Arc::clone(namespace);
    let lookup = Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: rquickjs::String<'js>| -> rquickjs::Result<JsValue<'js>> {
        let name = name.to_string()?;
        // The first declaration of the name, as a search in declaration order finds it.
        let functions = &members.functions;
        match functions.names().first(&name).and_then(|position| functions.binding(position)) {
            Some(binding) => Ok(make(&ctx, &name, binding)?.into_value()),
            None => Ok(JsValue::new_undefined(ctx)),
        }
    })?;
    let members = Arc::clone(namespace);
    let keys = Function::new(ctx.clone(), move |ctx: Ctx<'js>| -> rquickjs::Result<Array<'js>> {
        let array = Array::new(ctx)?;
        for (position, member) in members.functions.names().as_slice().iter().enumerate() {
            array.set(position, member.as_str())?;
        }
        Ok(array)
    })?;
    proxy.call((lookup, keys))
}

#[cfg(test)]
#[path = "lazy_tests.rs"]
mod tests;
