//! The JSON Lines report and the run's tally.
//!
//! ```text
//! {"type":"header","schema":1,"suite":{..},"implementation":{..},"capabilities":{..},"subject":..,..}
//! {"type":"trial","id":..,"file":..,"rules":[..],"outcome":"FAIL","detail":..,"message":..,"durationMs":..,"transcript":[..]}
//! {"type":"footer","planned":N,"executed":M,"complete":true,"counts":{"PASS":..,..}}
//! ```
//! Records are written and flushed as trials finish, so a run that dies leaves a report without a footer
//! (never one that looks complete). Transcripts are kept for every outcome but PASS.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dsh_conformance::subject::SubjectInfo;
use serde_json::{Value, json};

use super::expectations::Entry;
use super::outcome::{Outcome, Verdict};

/// Version of the report format.
pub const SCHEMA: u32 = 1;

/// One finished trial.
pub struct TrialRecord<'a> {
    /// Trial name: the scenario id (or the file, for load errors).
    pub id: &'a str,
    /// The scenario file, relative to the spec directory.
    pub file: &'a str,
    /// Rules the scenario cites.
    pub rules: &'a [String],
    /// The final verdict (expectations applied).
    pub verdict: &'a Verdict,
    /// The expectations entry, if listed.
    pub expected: Option<&'a Entry>,
    /// Wall time of the trial.
    pub duration: Duration,
}

/// The report file (optional) and the tally (always).
pub struct Report {
    out: Mutex<Option<BufWriter<File>>>,
    counts: Mutex<BTreeMap<Outcome, usize>>,
    failed: AtomicBool,
}

impl Report {
    /// Creates (truncates) the report file, when one is asked for.
    pub fn create(path: Option<&Path>) -> io::Result<Report> {
        let out = match path {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                Some(BufWriter::new(File::create(path)?))
            }
            None => None,
        };
        Ok(Report { out: Mutex::new(out), counts: Mutex::new(BTreeMap::new()), failed: AtomicBool::new(false) })
    }

    /// Writes the header.
    pub fn header(&self, info: &SubjectInfo, subject: &str, spec: &Path, expectations: Option<&Path>) {
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        self.write(&json!({
            "type": "header",
            "schema": SCHEMA,
            "suite": { "name": "dsh-conformance", "version": env!("CARGO_PKG_VERSION") },
            "protocolVersion": info.protocol_version,
            "implementation": { "name": info.name, "version": info.version, "language": info.language },
            "capabilities": { "profiles": info.profiles, "features": info.features, "runtimes": info.runtimes },
            "subject": subject,
            "spec": spec.display().to_string(),
            "expectations": expectations.map(|p| p.display().to_string()),
            "startedAt": started,
        }));
    }

    /// Counts a trial and writes its record.
    pub fn record(&self, record: &TrialRecord<'_>) {
        let verdict = record.verdict;
        if let Ok(mut counts) = self.counts.lock() {
            *counts.entry(verdict.outcome).or_default() += 1;
        }
        let mut line = json!({
            "type": "trial",
            "id": record.id,
            "file": record.file,
            "rules": record.rules,
            "outcome": verdict.outcome.as_str(),
            "detail": verdict.detail,
            "message": verdict.message,
            "durationMs": u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
        });
        if let Some(entry) = record.expected {
            line["expected"] = json!({ "outcome": entry.outcome.as_str(), "reason": entry.reason });
        }
        if verdict.outcome != Outcome::Pass {
            line["transcript"] = json!(verdict.transcript);
        }
        self.write(&line);
    }

    /// Writes the footer; `planned` is the number of trials selected to run.
    pub fn footer(&self, planned: usize, duration: Duration) {
        let counts = self.counts();
        let executed: usize = counts.values().sum();
        let by_name: BTreeMap<&str, usize> = counts.iter().map(|(o, n)| (o.as_str(), *n)).collect();
        self.write(&json!({
            "type": "footer",
            "planned": planned,
            "executed": executed,
            "complete": executed == planned,
            "counts": by_name,
            "durationMs": u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        }));
    }

    /// Trials counted so far, per outcome.
    pub fn counts(&self) -> BTreeMap<Outcome, usize> {
        self.counts.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The closing summary line.
    pub fn summary(&self, planned: usize, implementation: &str) -> String {
        let counts = self.counts();
        let executed: usize = counts.values().sum();
        let parts: Vec<String> = Outcome::ALL
            .iter()
            .filter_map(|o| counts.get(o).map(|n| format!("{n} {o}")))
            .collect();
        let unexpected: usize = counts.iter().filter(|(o, _)| o.is_unexpected()).map(|(_, n)| n).sum();
        let parts = if parts.is_empty() { "nothing ran".to_owned() } else { parts.join(", ") };
        format!(
            "conformance of {implementation}: {parts}; {executed} of {planned} planned trials executed; {}",
            if unexpected == 0 { "no unexpected outcomes".to_owned() } else { format!("{unexpected} unexpected") }
        )
    }

    /// Whether writing the report failed at some point.
    pub fn write_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    fn write(&self, line: &Value) {
        if let Ok(mut out) = self.out.lock() {
            if let Some(out) = out.as_mut() {
                let text = serde_json::to_string(line).unwrap_or_default();
                // A report that cannot be written must not pass silently.
                if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
                    self.failed.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}
