//! Timer globals (Node's, which upstream programs can rely on): `setTimeout`, `clearTimeout`,
//! `setInterval`, `clearInterval`, backed by `tokio::time`. A delay outside 1..=2^31-1 ms (or not a number)
//! becomes 1 ms, as in Node; extra arguments are passed to the callback. Timers never keep a run alive: the
//! run ends when the program settles, and pending timers are dropped with it. Handles are numbers. Each
//! pending timer is charged to the run's heap budget (`budget.rs`): a program that schedules timers
//! without end runs into the heap cap (`worker-exit`), never into the host's memory.
//!
//! A timer function kept from a finished persistent run throws at once when a later run calls it.
//!
//! Spec: RUN-002 (programs may await timers; the run ends when the program settles), RUN-031 (heap cap), CDM-048.

use std::rc::Rc;
use std::time::Duration;

use rquickjs::function::{Opt, Rest};
use rquickjs::{Ctx, Exception, Function, Value as JsValue};

use super::budget::{TIMER_ARG_BYTES, TIMER_BYTES};
use super::host::{Entry, Host, Terminal};

fn delay_of(value: Option<&JsValue<'_>>) -> Duration {
    let ms = value.and_then(|v| v.as_number()).unwrap_or(1.0);
    let ms = if (1.0..=2_147_483_647.0).contains(&ms) { ms } else { 1.0 };
    Duration::from_secs_f64(ms.trunc() / 1000.0)
}

fn schedule<'js>(ctx: &Ctx<'js>, host: &Host<'js>, callback: JsValue<'js>, delay: Opt<JsValue<'js>>, args: Rest<JsValue<'js>>, repeat: bool) -> rquickjs::Result<u64> {
    let Some(callback) = callback.as_function().cloned() else {
        let message = format!(
            "The \"callback\" argument must be of type function. Received {}",
            if callback.is_undefined() { "undefined".to_owned() } else { format!("type {}", callback.type_name()) }
        );
        return Err(Exception::throw_type(ctx, &message));
    };
    let delay = delay_of(delay.0.as_ref());
    // A pending timer is host memory: charged to the heap budget before anything is made. Refused, the
    // run is over (the heap cap); the program gets a handle that names nothing.
    if host.meter.terminal() == Some(Terminal::Retired) {
        // A timer function of a finished persistent run, called by a later run: it throws at once (CDM-048).
        let error = super::bindings::stale(ctx, if repeat { "setInterval" } else { "setTimeout" })?;
        return Err(ctx.throw(error));
    }
    if host.ended() || host.meter.should_stop() {
        return host.interrupt(ctx).map_or(Ok(0), Err);
    }
    let Some(charge) = host.charge(TIMER_BYTES + TIMER_ARG_BYTES * args.0.len()) else {
        return host.interrupt(ctx).map_or(Ok(0), Err);
    };
    // `tokio::time::sleep` panics on a runtime built without its time driver: a JavaScript error instead.
    let Ok(sleep) = std::panic::catch_unwind(|| Box::pin(tokio::time::sleep(delay))) else {
        return Err(Exception::throw_internal(ctx, "timers are unavailable: the host's tokio runtime has no time driver"));
    };
    Ok(host.insert(Entry::Timer { sleep, callback, args: args.0, repeat: repeat.then_some(delay), charge }))
}

fn clear<'js>(host: &Host<'js>, id: Opt<JsValue<'js>>) {
    let Some(id) = id.0.and_then(|v| v.as_number()) else { return };
    if id >= 1.0 && id.fract() == 0.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let key = id as u64;
        let removed = {
            let mut pending = host.pending.borrow_mut();
            match pending.get(&key) {
                Some(Entry::Timer { .. }) => pending.remove(&key),
                _ => None,
            }
        };
        drop(removed);
    }
}

/// Define the timer globals.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, host: &Rc<Host<'js>>) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    for repeat in [false, true] {
        let h = host.clone();
        let set = Function::new(ctx.clone(), move |ctx: Ctx<'js>, callback: JsValue<'js>, delay: Opt<JsValue<'js>>, args: Rest<JsValue<'js>>| {
            schedule(&ctx, &h, callback, delay, args, repeat)
        })?
        .with_name(if repeat { "setInterval" } else { "setTimeout" })?;
        globals.set(if repeat { "setInterval" } else { "setTimeout" }, set)?;
        let h = host.clone();
        let clear_fn = Function::new(ctx.clone(), move |id: Opt<JsValue<'js>>| clear(&h, id))?
            .with_name(if repeat { "clearInterval" } else { "clearTimeout" })?;
        globals.set(if repeat { "clearInterval" } else { "clearTimeout" }, clear_fn)?;
    }
    Ok(())
}
