//! Binding namespaces in the program (upstream `makeNamespaces`, `makeBindingErrorClass`,
//! `bindingFailure`): one null-prototype object per namespace whose declared names are own enumerable
//! functions; each call checks its argument is lossless JSON (else rejects that call only), starts the
//! host binding, and settles the program's promise with the resolution (itself checked) or with an instance
//! of the namespace's error class — a real `Error` subclass, so `instanceof` works — carrying the binding's
//! name in the declared member property (plain `Error` when the namespace declares no class).
//!
//! A namespace of many functions is materialized on demand instead (`lazy.rs`), with the same observable
//! shape.
//!
//! A binding kept from a finished persistent run rejects at once when a later run calls it (CDM-048).
//!
//! A pending call is charged to the run's heap budget (`budget.rs`): un-awaited calls in a loop run into
//! the heap cap (`worker-exit`), never into the host's memory.
//!
//! Spec: RUN-031 (heap cap), RUN-004 (one own enumerable function per binding), RUN-005 (the real rejection class with
//! `name` and the member-name property), RUN-007 (lossy arguments reject that one call), RUN-030 (binding
//! values cross whole), CDM-048.

use std::rc::Rc;
use std::sync::Arc;

use rquickjs::function::Opt;
use rquickjs::object::Property;
use rquickjs::{Constructor, Ctx, Function, Object, Promise, Value as JsValue};
use serde_json::Value;

use super::budget::{value_bytes, CALL_ARGUMENT_COPIES, CALL_BYTES};
use super::host::{Entry, Host, Terminal};
use super::lossless::{snapshot, to_js};
use crate::code::{BindingFn, CodeBindingNamespace};

/// Upstream's rejection texts.
pub(crate) const ARGUMENTS_NOT_LOSSLESS: &str = "binding arguments must be lossless JSON";
pub(crate) const RESOLUTION_NOT_LOSSLESS: &str = "binding resolution must be lossless JSON";

/// What a binding or timer function of a finished persistent run says when a later run calls it.
pub(crate) const STALE: &str = "belongs to an earlier code run that has finished; call it through this run's bindings";

/// The `Error` for `what` (`binding \`x\``, `setTimeout`) called after its run finished (CDM-048).
pub(crate) fn stale<'js>(ctx: &Ctx<'js>, what: &str) -> rquickjs::Result<JsValue<'js>> {
    let error: Constructor<'js> = ctx.globals().get("Error")?;
    error.construct((format!("{what} {STALE}"),))
}

/// The rejection for a failed call of `member`.
pub(crate) fn failure<'js>(
    ctx: &Ctx<'js>,
    host: &Host<'js>,
    class: Option<&Constructor<'js>>,
    member: &str,
    message: &str,
) -> rquickjs::Result<JsValue<'js>> {
    match class {
        Some(class) => class.construct((member, message)),
        None => {
            let error = host.handles.borrow().as_ref().map(|h| h.error.clone());
            match error {
                Some(error) => error.construct((message,)),
                None => Ok(rquickjs::String::from_str(ctx.clone(), message)?.into_value()),
            }
        }
    }
}

/// The program-side values of the namespaces: `(globals, values)` in upstream's parameter order (every
/// namespace global, then every declared error class name).
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host<'js>>,
    make_error_class: &Function<'js>,
    namespaces: &[Arc<CodeBindingNamespace>],
) -> rquickjs::Result<(Vec<String>, Vec<JsValue<'js>>)> {
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut class_names = Vec::new();
    let mut class_values = Vec::new();
    for (index, namespace) in namespaces.iter().enumerate() {
        let class: Option<Constructor<'js>> = match &namespace.error_class {
            Some(descriptor) => {
                let class: Constructor<'js> =
                    make_error_class.call((descriptor.name.as_str(), descriptor.member_name_property.as_str()))?;
                class_names.push(descriptor.name.clone());
                class_values.push(class.clone().into_value());
                Some(class)
            }
            None => None,
        };
        host.classes.borrow_mut().push(class);
        names.push(namespace.global.clone());
        if namespace.functions.len() >= super::lazy::LAZY_FROM {
            let host = host.clone();
            let make = move |ctx: &Ctx<'js>, member: &str, binding: BindingFn| {
                binding_function(ctx, &host, member.to_owned(), binding, index)
            };
            values.push(super::lazy::namespace(ctx, namespace, make)?);
            continue;
        }
        let object = Object::new_proto(ctx.clone(), None)?;
        for (member, binding) in namespace.functions.iter() {
            let function = binding_function(ctx, host, member.to_owned(), binding, index)?;
            object.prop(member, Property::from(function).enumerable())?;
        }
        values.push(object.into_value());
    }
    names.extend(class_names);
    values.extend(class_values);
    Ok((names, values))
}

fn binding_function<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host<'js>>,
    member: String,
    binding: BindingFn,
    namespace: usize,
) -> rquickjs::Result<Function<'js>> {
    let host = host.clone();
    let function = Function::new(ctx.clone(), move |ctx: Ctx<'js>, arg: Opt<JsValue<'js>>| -> rquickjs::Result<Promise<'js>> {
        let (promise, resolve, reject) = ctx.promise()?;
        if host.meter.terminal() == Some(Terminal::Retired) {
            // A binding an earlier persistent run left behind, called by a later run: it fails at once
            // rather than never settle (CDM-048). Its run's classes are gone with it: a plain `Error`.
            reject.call::<_, ()>((stale(&ctx, &format!("binding `{member}`"))?,))?;
            return Ok(promise);
        }
        if host.ended() || host.meter.should_stop() {
            // The run is over: nothing new starts, the program is stopped.
            return host.interrupt(&ctx).map_or(Ok(promise), Err);
        }
        let class = host.classes.borrow().get(namespace).cloned().flatten();
        let arg = arg.0.unwrap_or_else(|| JsValue::new_undefined(ctx.clone()));
        let intrinsics = host.handles.borrow().as_ref().map(|h| h.intrinsics.clone());
        let detached = intrinsics.and_then(|intrinsics| snapshot(&ctx, arg, &intrinsics, &|| host.meter.should_stop()));
        match detached {
            None => {
                let error = failure(&ctx, &host, class.as_ref(), &member, ARGUMENTS_NOT_LOSSLESS)?;
                reject.call::<_, ()>((error,))?;
            }
            Some(json) => {
                // A pending call is host memory: its argument (as many copies as a binding may keep) and
                // its future are charged to the heap budget before the binding starts. Refused, the run is
                // over (the heap cap) and the call never starts.
                let bytes = CALL_BYTES + member.len() + CALL_ARGUMENT_COPIES * value_bytes(&json);
                let Some(charge) = host.charge(bytes) else {
                    crate::value::dismantle(json);
                    return host.interrupt(&ctx).map_or(Ok(promise), Err);
                };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| binding(Some(json)))) {
                Ok(future) => {
                    host.insert(Entry::Call { future, resolve, reject, member: member.clone(), class, charge });
                }
                Err(_) => {
                    let error = failure(&ctx, &host, class.as_ref(), &member, "binding panicked")?;
                    reject.call::<_, ()>((error,))?;
                }
                }
            }
        }
        // Copying a large argument out is host work the interrupt handler does not see: the wall and
        // busy limits are checked after it, so a loop of such calls stops on time.
        if host.meter.should_stop() {
            return host.interrupt(&ctx).map_or(Ok(promise), Err);
        }
        Ok(promise)
    })?;
    // Upstream's binding functions are arrows defined as a property descriptor's `value`.
    function.with_name("value")
}

/// Settle the program's promise for a finished binding call.
pub(crate) fn settle<'js>(
    ctx: &Ctx<'js>,
    host: &Host<'js>,
    outcome: Result<Value, String>,
    resolve: Function<'js>,
    reject: Function<'js>,
    member: &str,
    class: Option<&Constructor<'js>>,
) -> rquickjs::Result<()> {
    match outcome {
        Ok(value) => {
            if !crate::value::is_lossless(&value) {
                crate::value::dismantle(value);
                let error = failure(ctx, host, class, member, RESOLUTION_NOT_LOSSLESS)?;
                return reject.call((error,));
            }
            let js = to_js(ctx, &value);
            crate::value::dismantle(value);
            resolve.call((js?,))
        }
        Err(message) => {
            let error = failure(ctx, host, class, member, &message)?;
            reject.call((error,))
        }
    }
}
