//! The threads runs execute on: each run needs a thread of its own with a large stack (deeply nested values
//! and program text are walked there, and the engine may block it for a whole busy budget, which must never
//! be a tokio worker). Spawning a 256 MiB-stack thread per run costs more than the run itself, so finished
//! threads wait (up to a minute) to take the next run.
//!
//! Spec: RUN-034 (runs share no program state: a thread only carries the next run's fresh engine).

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::Duration;

/// A run's work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// The run thread's stack.
pub(crate) const RUN_STACK_BYTES: usize = 256 * 1024 * 1024;
/// How long an idle thread waits for another run.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Idle threads: an id and the channel that hands one of them its next job.
static IDLE: Mutex<Vec<(u64, Sender<Job>)>> = Mutex::new(Vec::new());
static NEXT_ID: Mutex<u64> = Mutex::new(0);

fn idle() -> std::sync::MutexGuard<'static, Vec<(u64, Sender<Job>)>> {
    IDLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `job` on an idle run thread, or on a new one.
pub(crate) fn submit(mut job: Job) -> std::io::Result<()> {
    loop {
        let Some((_, sender)) = idle().pop() else { break };
        match sender.send(job) {
            Ok(()) => return Ok(()),
            Err(returned) => job = returned.0,
        }
    }
    let id = {
        let mut next = NEXT_ID.lock().unwrap_or_else(|p| p.into_inner());
        *next += 1;
        *next
    };
    std::thread::Builder::new().name("dsh-ts-run".to_owned()).stack_size(RUN_STACK_BYTES).spawn(move || worker(id, job))?;
    Ok(())
}

fn worker(id: u64, first: Job) {
    let mut job = first;
    loop {
        // A job never unwinds into the pool (runs contain their own failures); keep the thread either way.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let (sender, receiver) = channel::<Job>();
        idle().push((id, sender));
        job = match receiver.recv_timeout(IDLE_TIMEOUT) {
            Ok(next) => next,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                let mut idle = idle();
                if let Some(at) = idle.iter().position(|(other, _)| *other == id) {
                    idle.swap_remove(at);
                    return;
                }
                drop(idle);
                // A submitter took this thread just now: its job is on the way.
                match receiver.recv() {
                    Ok(next) => next,
                    Err(_) => return,
                }
            }
        };
    }
}
