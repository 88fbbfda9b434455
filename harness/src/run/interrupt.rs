//! SIGINT (Ctrl-C) and SIGTERM: the harness kills every adapter it started (`adapter::kill_all`: their
//! process groups and every process carrying their token), ends the report with a footer saying it was
//! interrupted (`complete: false`), and exits with 130 (SIGINT) or 143 (SIGTERM).
//!
//! The signals are received on a thread of their own running a small tokio runtime (`tokio::signal`,
//! which wraps the handler installation safely); nothing runs inside a signal handler.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::report::Report;

/// What the handler ends: the report and the run's planned total.
struct Watched {
    report: Arc<Report>,
    planned: usize,
    started: Instant,
}

static WATCHED: Mutex<Option<Watched>> = Mutex::new(None);

/// Installs the handler thread; call once, before any adapter starts.
pub fn install() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let (ready, armed) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (mut int, mut term) = match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
                    (Ok(int), Ok(term)) => (int, term),
                    (Err(e), _) | (_, Err(e)) => {
                        let _ = ready.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                let (name, code) = tokio::select! {
                    _ = int.recv() => ("SIGINT", 130),
                    _ = term.recv() => ("SIGTERM", 143),
                };
                interrupted(name, code);
            });
        })
        .map_err(|e| e.to_string())?;
    armed.recv().map_err(|e| e.to_string())?
}

/// Tells the handler which report to end (and with what planned total) if a signal comes.
pub fn watch(report: &Arc<Report>, planned: usize, started: Instant) {
    if let Ok(mut watched) = WATCHED.lock() {
        *watched = Some(Watched { report: Arc::clone(report), planned, started });
    }
}

/// Set when a signal came: the handler thread is ending the run and will exit the process.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Called when the trials are over: if a signal is being handled, waits for the handler to exit the
/// process, so a run whose adapters the handler killed never ends as if it had finished on its own.
pub fn hold_if_interrupted() {
    while INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::park_timeout(std::time::Duration::from_secs(1));
    }
}

fn interrupted(name: &str, code: i32) -> ! {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    crate::adapter::kill_all();
    let watched = WATCHED.lock().ok().and_then(|mut w| w.take());
    if let Some(w) = watched {
        w.report.abort(w.planned, w.started.elapsed(), &format!("interrupted by {name}"));
    }
    eprintln!("dsh-harness: interrupted by {name}: every adapter was killed; the report says the run is incomplete");
    std::process::exit(code)
}
