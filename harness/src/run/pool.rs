//! A pool of subjects: each trial leases one, serving one session at a time.
//!
//! In-process subjects are cheap and run in parallel. Adapter processes are created on demand, one per
//! worker thread at most: with the adapter default (one thread per core) that many processes share the
//! run, and with `--test-threads=1` one process serves it all. A subject whose trial ended in CRASH,
//! TIMEOUT or ERROR(adapter) is restarted before it serves again.
//!
//! # Restart breaker
//! After [`BREAKER`] restarts in a row that fail (the process does not start, `initialize` crashes, times
//! out or answers badly), the pool stops trying: every later lease fails at once with the reason, so the
//! rest of the run is `ERROR(adapter)` immediately instead of one step timeout per trial. Starts already
//! under way on other threads when it trips still finish.

use std::sync::Mutex;
use std::time::Duration;

use dsh_conformance::subject::{Stray, Subject, SubjectError, SubjectInfo};

use dsh_conformance::protocol::major;

/// Creates a fresh, not yet initialized subject.
pub type Factory = Box<dyn Fn() -> Result<Box<dyn Subject>, SubjectError> + Send + Sync>;

/// A subject in the pool, and whether it must be restarted before its next session.
pub struct Lease {
    /// The subject.
    pub subject: Box<dyn Subject>,
    /// Set when the last session left the subject in an unknown state.
    pub needs_restart: bool,
    /// Set until `initialize` has been answered.
    needs_init: bool,
}

/// Subjects not currently serving a trial.
pub struct Pool {
    factory: Factory,
    idle: Mutex<Vec<Lease>>,
    expected_major: String,
    /// Restarts that failed in a row, and the last failure.
    failures: Mutex<(usize, String)>,
}

/// Failed restarts in a row after which the pool gives up.
pub const BREAKER: usize = 3;

impl Pool {
    /// Creates the first subject and initializes it; its answer is the run's `SubjectInfo`. A failure
    /// comes with the subject's stderr tail (empty when none), as a restart's does.
    pub fn start(factory: Factory) -> Result<(Pool, SubjectInfo), (SubjectError, String)> {
        let mut subject = factory().map_err(|e| (e, String::new()))?;
        let info = subject.initialize().map_err(|e| (e, subject.stderr_tail()))?;
        let pool = Pool {
            factory,
            idle: Mutex::new(vec![Lease { subject, needs_restart: false, needs_init: false }]),
            expected_major: major(&info.protocol_version).to_owned(),
            failures: Mutex::new((0, String::new())),
        };
        Ok((pool, info))
    }

    /// An initialized subject ready for a session; fails at once once the breaker has tripped. A failure
    /// comes with the subject's stderr tail (empty when none).
    pub fn lease(&self) -> Result<Lease, (SubjectError, String)> {
        let (failed, last) = self.failures.lock().map(|f| f.clone()).unwrap_or_default();
        if failed >= BREAKER {
            let message = format!(
                "not run: the adapter failed to restart {failed} times in a row, so the harness stopped restarting it; last failure: {last}"
            );
            return Err((SubjectError::Protocol { message }, String::new()));
        }
        let leased = self.try_lease();
        if let Ok(mut failures) = self.failures.lock() {
            match &leased {
                Ok(_) => *failures = (0, String::new()),
                Err((e, _)) => *failures = (failures.0 + 1, describe(e)),
            }
        }
        leased
    }

    fn try_lease(&self) -> Result<Lease, (SubjectError, String)> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut lease = match idle {
            Some(lease) => lease,
            None => Lease { subject: (self.factory)().map_err(|e| (e, String::new()))?, needs_restart: false, needs_init: true },
        };
        if lease.needs_restart {
            lease.subject.restart().map_err(|e| (e, String::new()))?;
            lease.needs_init = true;
        }
        if lease.needs_init {
            let info = lease.subject.initialize().map_err(|e| (e, lease.subject.stderr_tail()))?;
            if major(&info.protocol_version) != self.expected_major {
                let message = format!("restarted adapter speaks protocol {}", info.protocol_version);
                return Err((SubjectError::Protocol { message }, String::new()));
            }
            lease.needs_restart = false;
            lease.needs_init = false;
        }
        Ok(lease)
    }

    /// Ends every idle subject (`Subject::finish`), returning the strays they still sent.
    pub fn finish(&self, wait: Duration) -> Vec<Stray> {
        let idle = self.idle.lock().map(|mut idle| std::mem::take(&mut *idle)).unwrap_or_default();
        idle.into_iter().flat_map(|mut lease| lease.subject.finish(wait)).collect()
    }

    /// Returns a subject after its trial.
    pub fn give_back(&self, lease: Lease) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(lease);
        }
    }
}

/// A subject error in one line (a crash with its stderr tail).
pub fn describe(error: &SubjectError) -> String {
    match error {
        SubjectError::Timeout { method, waited } => format!("`{method}` got no answer within {:.1} s", waited.as_secs_f64()),
        SubjectError::Crash { status, stderr_tail } => format!("crashed ({status}); stderr tail:\n{stderr_tail}"),
        SubjectError::Protocol { message } => message.clone(),
    }
}

/// The reference served in-process (`refserver::ReferenceSubject`): one per pooled subject.
pub fn in_process() -> Factory {
    Box::new(|| {
        crate::refserver::ReferenceSubject::new().map(|s| Box::new(s) as Box<dyn Subject>).map_err(|e| SubjectError::Crash {
            status: format!("the in-process reference could not start: {e}"),
            stderr_tail: String::new(),
        })
    })
}
