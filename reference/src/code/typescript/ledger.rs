//! The TypeScript engine's side of the shared output ledger (`code/ledger.rs`): it holds the admitted logs
//! and the first entry that did not fit (after which the run is over as `output-limit`), and finalizes the
//! run's result as upstream's worker and then its host do (the worker's completion check, then the host's
//! `OutputLedger.success` / `failure` / `limit`).
//!
//! Spec: RUN-029, RUN-030.

use serde_json::Value;

use crate::code::ledger::{OutputLedger, json_string_bytes_up_to};
use crate::code::{CodeRunErrorKind, CodeRunResult};

/// One run's ledger: the admitted logs and their JSON-array bytes.
#[derive(Debug)]
pub(crate) struct Ledger {
    bytes: OutputLedger,
    logs: Vec<String>,
    /// Each admitted log's serialized bytes, so ending the run as `output-limit` does not measure the logs
    /// again (a full 64 MiB ledger took most of a second to re-measure in a debug build).
    sizes: Vec<u64>,
    /// The log that did not fit, once one did not: the run is over (`output-limit`).
    overflow: Option<String>,
}

impl Ledger {
    pub(crate) fn new(max_bytes: u64) -> Self {
        Self { bytes: OutputLedger::new(max_bytes), logs: Vec::new(), sizes: Vec::new(), overflow: None }
    }

    /// Admit one log entry; `false` (and the run is over) when it does not fit. Logs after an overflow are
    /// dropped.
    pub(crate) fn admit(&mut self, text: String) -> bool {
        if self.overflow.is_some() {
            return false;
        }
        match self.bytes.admit_sized(text, &mut self.logs) {
            Ok(size) => {
                self.sizes.push(size);
                true
            }
            Err(text) => {
                self.overflow = Some(text);
                false
            }
        }
    }

    /// The run's result once the program completed with `value` (`None` = `undefined`): the worker's
    /// completion check (a value that does not fit becomes the fixed overflow diagnostic), then the host's.
    pub(crate) fn success(self, value: Option<Value>) -> CodeRunResult {
        if self.overflow.is_some() {
            if let Some(value) = value {
                crate::value::dismantle(value);
            }
            return self.limit();
        }
        self.bytes.completion(self.logs, value)
    }

    /// A failure diagnostic the worker produced (exception, invalid output): replaced by the fixed overflow
    /// diagnostic when it does not fit, then finalized by the host.
    pub(crate) fn worker_failure(self, kind: CodeRunErrorKind, message: String) -> CodeRunResult {
        if json_string_bytes_up_to(&message, self.bytes.remaining()).is_none() {
            let message = self.bytes.limit_message();
            return self.failure(CodeRunErrorKind::OutputLimit, message);
        }
        self.failure(kind, message)
    }

    /// A failure (host-side: timeout, abort, worker exit, ...), with `output-limit` taking precedence when the
    /// message does not fit (upstream `OutputLedger.failure`).
    pub(crate) fn failure(self, kind: CodeRunErrorKind, message: String) -> CodeRunResult {
        if self.overflow.is_some() {
            return self.limit();
        }
        self.bytes.failure(self.logs, kind, message)
    }

    /// The explicit `output-limit` failure, keeping the logs (and a prefix of the first one that does not
    /// fit) that leave room for the message (upstream `OutputLedger.limit`).
    pub(crate) fn limit(self) -> CodeRunResult {
        let mut logs = self.logs;
        logs.extend(self.overflow);
        self.bytes.limit_sized(logs, &self.sizes)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Upstream: `while(true) console.log("xxxxxxxxxx")` under maxOutputBytes 100 keeps five logs.
    #[test]
    fn limit_keeps_upstream_prefix() {
        let mut ledger = Ledger::new(100);
        while ledger.admit("xxxxxxxxxx".to_owned()) {}
        let result = ledger.limit();
        assert_eq!(result.logs.len(), 5);
        assert_eq!(result.error.unwrap().message, "outer output exceeded 100 bytes");
    }
}
