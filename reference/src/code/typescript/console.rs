//! The program's `console` (upstream `makeConsoleShim`): five methods — `log`, `info`, `warn`, `error`,
//! `debug` — each rendering its arguments as upstream does (strings as they are, anything else through
//! Node's `util.inspect` with depth 4, maxArrayLength 100, maxStringLength 10000), joined by one space, and
//! admitted to the run's output ledger as one log entry. The `util.inspect` subset, the console shim, the
//! rejection-class factory and the exception renderer live in `prelude.js`, evaluated in each run's fresh
//! context before the program so they hold the intrinsics the program could later replace. Raw writes to
//! `process.stdout` / `process.stderr` are entries of their own, unsplit (upstream `captureStreamWrites`).
//!
//! Floods: every entry checks the run's limits (a console loop of large lines stops at the wall ceiling,
//! not only when the engine's interrupt handler next runs), and each admitted entry's overhead beyond its
//! ledger bytes is charged to the heap budget (`budget.rs`).
//!
//! Spec: RUN-026 (console capture and formatting), RUN-029 (log entries in the output ledger), RUN-055
//! (the exception renderer in `prelude.js`: a stack-less Error, a value whose `String()` throws).

use std::rc::Rc;
use std::sync::OnceLock;

use rquickjs::module::WriteOptions;
use rquickjs::{Context, Ctx, Function, Module, Object, Runtime, Value as JsValue};

use super::host::{Host, Terminal};

/// The in-engine helpers (see `prelude.js`).
const PRELUDE: &str = include_str!("prelude.js");

/// The prelude's bytecode, compiled once per process: compiling its source costs milliseconds per run,
/// loading bytecode a small fraction of that.
static BYTECODE: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();

fn compile() -> Result<Vec<u8>, String> {
    let runtime = Runtime::new().map_err(|e| e.to_string())?;
    let context = Context::full(&runtime).map_err(|e| e.to_string())?;
    context
        .with(|ctx| Module::declare(ctx, "dsh:prelude", PRELUDE)?.write(WriteOptions::default()))
        .map_err(|e| e.to_string())
}

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
    let bytes: &'static [u8] = match BYTECODE.get_or_init(compile) {
        Ok(bytes) => bytes,
        Err(message) => return Err(rquickjs::Error::new_from_js_message("prelude", "bytecode", message.clone())),
    };
    // SAFETY: `bytes` is bytecode this process's own QuickJS build wrote from `PRELUDE` (`compile`), and it is
    // `'static`, as `Module::load` requires of data the loaded module may keep referencing.
    #[allow(unsafe_code)]
    let module = unsafe { Module::load(ctx.clone(), bytes) }?;
    let (module, evaluated) = module.eval()?;
    evaluated.finish::<()>()?;
    let factory: Function<'js> = module.get("default")?;
    let natives = Object::new(ctx.clone())?;
    natives.set("source", source)?;
    let emit_host = host.clone();
    natives.set(
        "emit",
        Function::new(ctx.clone(), move |ctx: Ctx<'js>, text: String| -> rquickjs::Result<()> {
            // Each entry is host work the interrupt handler does not see (copying the text out, metering
            // it): the limits are checked on every entry, and once the run is over the program is stopped
            // at once, so a flood stops at its wall ceiling.
            let stop = |host: &Host<'js>| host.interrupt(&ctx).map_or(Ok(()), Err);
            if emit_host.ended() || emit_host.meter.should_stop() {
                return stop(&emit_host);
            }
            if !emit_host.ledger.borrow_mut().admit(text) {
                emit_host.meter.terminate(Terminal::OutputLimit);
                return stop(&emit_host);
            }
            // The entry's text is bounded by the ledger; its bookkeeping by the heap budget.
            if !emit_host.charge_log() {
                return stop(&emit_host);
            }
            Ok(())
        })?,
    )?;
    let exit_host = host.clone();
    natives.set("exit", Function::new(ctx.clone(), move |code: i32| exit_host.meter.exit(code))?)?;
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
