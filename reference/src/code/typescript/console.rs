//! The program's `console` (upstream `makeConsoleShim`): five methods — `log`, `info`, `warn`, `error`,
//! `debug` — each rendering its arguments as upstream does (strings as they are, anything else through
//! Node's `util.inspect` with depth 4, maxArrayLength 100, maxStringLength 10000), joined by one space, and
//! admitted to the run's output ledger as one log entry. The `util.inspect` subset, the console shim, the
//! rejection-class factory and the exception renderer live in `prelude.js`, evaluated in each run's fresh
//! context before the program so they hold the intrinsics the program could later replace. Raw writes to
//! `process.stdout` / `process.stderr` are entries of their own, unsplit (upstream `captureStreamWrites`).
//!
//! Spec: RUN-026 (console capture and formatting), RUN-029 (log entries in the output ledger).

use std::rc::Rc;

use rquickjs::{Ctx, Function, Object, Value as JsValue};

use super::host::{Host, Terminal};

/// The in-engine helpers (see `prelude.js`).
const PRELUDE: &str = include_str!("prelude.js");

/// What the prelude hands back.
pub(crate) struct Prelude<'js> {
    pub(crate) console: JsValue<'js>,
    pub(crate) make_error_class: Function<'js>,
    pub(crate) describe: Function<'js>,
    pub(crate) error: rquickjs::Constructor<'js>,
}

/// Evaluate the prelude with the host's `emit` (console text into the ledger) and `promiseState`, and
/// define the global `process` (captured `stdout`/`stderr` writes).
pub(crate) fn load<'js>(ctx: &Ctx<'js>, host: &Rc<Host<'js>>, source: &str) -> rquickjs::Result<Prelude<'js>> {
    let factory: Function<'js> = ctx.eval(PRELUDE)?;
    let natives = Object::new(ctx.clone())?;
    natives.set("source", source)?;
    let emit_host = host.clone();
    natives.set(
        "emit",
        Function::new(ctx.clone(), move |text: String| {
            if emit_host.ended() {
                return;
            }
            if !emit_host.ledger.borrow_mut().admit(text) {
                emit_host.meter.terminate(Terminal::OutputLimit);
            }
        })?,
    )?;
    natives.set(
        "promiseState",
        Function::new(ctx.clone(), move |ctx: Ctx<'js>, value: JsValue<'js>| -> rquickjs::Result<JsValue<'js>> {
            let Some(promise) = value.as_promise() else {
                return Ok(JsValue::new_undefined(ctx));
            };
            let state = rquickjs::Array::new(ctx.clone())?;
            match promise.result::<JsValue<'js>>() {
                None => state.set(0, 0)?,
                Some(Ok(v)) => {
                    state.set(0, 1)?;
                    state.set(1, v)?;
                }
                Some(Err(_)) => {
                    let reason = ctx.catch();
                    state.set(0, 2)?;
                    state.set(1, reason)?;
                }
            }
            Ok(state.into_value())
        })?,
    )?;
    let api: Object<'js> = factory.call((natives,))?;
    let make_console: Function<'js> = api.get("makeConsole")?;
    let make_process: Function<'js> = api.get("makeProcess")?;
    ctx.globals().set("process", make_process.call::<_, JsValue<'js>>(())?)?;
    Ok(Prelude {
        console: make_console.call(())?,
        make_error_class: api.get("makeErrorClass")?,
        describe: api.get("describeThrown")?,
        error: api.get("ErrorCtor")?,
    })
}
