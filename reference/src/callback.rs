//! Running code the embedder supplied (tool bodies, listeners, wrappers, guards, classifiers, observers,
//! code runtimes): the boxed-future type every callback returns ([`BoxFuture`]), and containment — a
//! panic in a user callback becomes its message, as a thrown error does upstream ([`contain`] for a
//! synchronous call, [`Contained`] for a future, which is polled to completion and never dropped early),
//! and [`DropSafe`], which finishes a started future in the background when its caller drops it.
//!
//! The bottom layer: used by the registry, the pipeline stages and the code transport alike, so it
//! imports nothing of this crate.
//!
//! Spec: PIPE-010 (a throwing callback's failure is a value, not a crash).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A boxed, sendable future: what tool bodies, listeners and runtimes return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The message of a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<unprintable thrown value>".to_owned()
    }
}

/// Run a user callback, turning a panic into its message (a thrown error, in upstream's terms).
pub(crate) fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()))
}

/// Polls a user future, turning a panic into its message. The future is polled to completion, never
/// dropped early.
pub(crate) struct Contained<'a, T>(pub(crate) BoxFuture<'a, T>);

impl<T> Future for Contained<'_, T> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(move || fut.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

/// Runs a future inline; dropped after its first poll and before completing, it hands the rest of the
/// future to the ambient tokio runtime (`Handle::try_current`), or, outside any runtime, to a helper
/// thread with its own current-thread runtime, so a started execution always runs to its end. Its
/// output is then dropped there. Dropped before its first poll, nothing started and nothing runs.
pub(crate) struct DropSafe<T: Send + 'static> {
    future: Option<BoxFuture<'static, T>>,
    started: bool,
}

impl<T: Send + 'static> DropSafe<T> {
    pub(crate) fn new(future: impl Future<Output = T> + Send + 'static) -> Self {
        Self { future: Some(Box::pin(future)), started: false }
    }
}

impl<T: Send + 'static> Future for DropSafe<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = &mut *self;
        // Only awaited once, inside an `async fn`, which never polls a finished future again.
        let Some(future) = this.future.as_mut() else { return Poll::Pending };
        this.started = true;
        let polled = future.as_mut().poll(cx);
        if polled.is_ready() {
            this.future = None;
        }
        polled
    }
}

impl<T: Send + 'static> Drop for DropSafe<T> {
    fn drop(&mut self) {
        let Some(future) = self.future.take() else { return };
        if !self.started {
            return;
        }
        let rest = async move {
            drop(future.await);
        };
        match tokio::runtime::Handle::try_current() {
            // A runtime that is shutting down drops the task at once: its tasks cannot outlive it.
            Ok(handle) => drop(handle.spawn(rest)),
            Err(_) => {
                let finish = move || match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime.block_on(rest),
                    Err(_) => drop(rest),
                };
                // If no thread can be started either, the closure (and the future) is dropped: nothing else can run it.
                let _ = std::thread::Builder::new().name("dsh-tools-detached".to_owned()).spawn(finish);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_their_message() {
        assert_eq!(contain(|| 1), Ok(1));
        assert_eq!(contain(|| -> i32 { panic!("boom") }), Err("boom".to_owned()));
        let owned = String::from("owned");
        assert_eq!(contain(move || -> i32 { panic!("{owned}") }), Err("owned".to_owned()));
        let future = Contained::<'_, i32>(Box::pin(async { panic!("later") }));
        let polled = tokio::runtime::Builder::new_current_thread().build().map(|rt| rt.block_on(future));
        assert!(matches!(polled, Ok(Err(ref m)) if m == "later"), "{polled:?}");
    }
}
