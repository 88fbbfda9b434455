//! A pool of subjects: each trial leases one, serving one session at a time.
//!
//! In-process subjects are cheap and run in parallel. Adapter processes are created on demand, so with
//! `--test-threads=1` (the adapter default) one process serves the whole run. A subject whose trial ended
//! in CRASH, TIMEOUT or ERROR(adapter) is restarted before it serves again.

use std::sync::Mutex;

use dsh_conformance::subject::{Subject, SubjectError, SubjectInfo};

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
}

impl Pool {
    /// Creates the first subject and initializes it; its answer is the run's `SubjectInfo`.
    pub fn start(factory: Factory) -> Result<(Pool, SubjectInfo), SubjectError> {
        let mut subject = factory()?;
        let info = subject.initialize()?;
        let pool = Pool {
            factory,
            idle: Mutex::new(vec![Lease { subject, needs_restart: false, needs_init: false }]),
            expected_major: major(&info.protocol_version).to_owned(),
        };
        Ok((pool, info))
    }

    /// An initialized subject ready for a session.
    pub fn lease(&self) -> Result<Lease, SubjectError> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut lease = match idle {
            Some(lease) => lease,
            None => Lease { subject: (self.factory)()?, needs_restart: false, needs_init: true },
        };
        if lease.needs_restart {
            lease.subject.restart()?;
            lease.needs_init = true;
        }
        if lease.needs_init {
            let info = lease.subject.initialize()?;
            if major(&info.protocol_version) != self.expected_major {
                return Err(SubjectError::Protocol {
                    message: format!("restarted adapter speaks protocol {}", info.protocol_version),
                });
            }
            lease.needs_restart = false;
            lease.needs_init = false;
        }
        Ok(lease)
    }

    /// Returns a subject after its trial.
    pub fn give_back(&self, lease: Lease) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(lease);
        }
    }
}
