//! Quiescence of a session's tasks: a request is answered only once every task it set going has run
//! as far as it can without waiting — the Rust analogue of upstream running its microtasks to the end
//! before the adapter writes a response. That makes which events precede a response deterministic.
//!
//! Each call task is wrapped in [`Tracked`], whose waker counts the task as busy from the moment it is
//! woken until its poll returns `Pending` without a new wake. [`Activity::settled`] waits for zero.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use tokio::sync::Notify;

const IDLE: u8 = 0;
const SCHEDULED: u8 = 1;
const RUNNING: u8 = 2;
const RUNNING_WOKEN: u8 = 3;
const DONE: u8 = 4;

/// The busy-task count of one session.
#[derive(Default)]
pub struct Activity {
    busy: AtomicUsize,
    idle: Notify,
}

impl Activity {
    fn up(&self) {
        self.busy.fetch_add(1, Ordering::SeqCst);
    }

    fn down(&self) {
        if self.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// Wraps a task so its activity is counted (it starts scheduled).
    pub fn track<F: Future<Output = ()> + Send + 'static>(self: &Arc<Self>, task: F) -> Tracked<F> {
        self.up();
        Tracked { task: Box::pin(task), flag: Arc::new(AtomicU8::new(SCHEDULED)), activity: self.clone() }
    }

    /// Waits until no tracked task is scheduled or running.
    pub async fn settled(&self) {
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.busy.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// A task whose wakes and polls are counted in its session's [`Activity`].
pub struct Tracked<F> {
    task: Pin<Box<F>>,
    flag: Arc<AtomicU8>,
    activity: Arc<Activity>,
}

struct CountingWaker {
    inner: Waker,
    flag: Arc<AtomicU8>,
    activity: Arc<Activity>,
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.flag.load(Ordering::SeqCst);
        loop {
            let next = match state {
                IDLE => SCHEDULED,
                RUNNING => RUNNING_WOKEN,
                _ => break,
            };
            match self.flag.compare_exchange(state, next, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    if state == IDLE {
                        self.activity.up();
                    }
                    break;
                }
                Err(actual) => state = actual,
            }
        }
        self.inner.wake_by_ref();
    }
}

impl<F: Future<Output = ()>> Future for Tracked<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.flag.store(RUNNING, Ordering::SeqCst);
        let waker = Waker::from(Arc::new(CountingWaker {
            inner: cx.waker().clone(),
            flag: self.flag.clone(),
            activity: self.activity.clone(),
        }));
        let outcome = self.task.as_mut().poll(&mut Context::from_waker(&waker));
        match outcome {
            Poll::Ready(()) => {
                self.flag.store(DONE, Ordering::SeqCst);
                self.activity.down();
            }
            Poll::Pending => {
                // Woken while running: stays counted, as the runtime polls it again.
                if self.flag.compare_exchange(RUNNING, IDLE, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                    self.activity.down();
                } else {
                    self.flag.store(SCHEDULED, Ordering::SeqCst);
                }
            }
        }
        outcome
    }
}

impl<F> Drop for Tracked<F> {
    fn drop(&mut self) {
        // Aborted while counted (scheduled or running): uncount it.
        let state = self.flag.swap(DONE, Ordering::SeqCst);
        if state != IDLE && state != DONE {
            self.activity.down();
        }
    }
}
