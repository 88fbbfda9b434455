//! Writing the JSON Lines report, and the run's tally. The records are `dsh_conformance::report`'s
//! (`ReportLine`: header, trial, footer); this module fills them in from the runner's verdicts.
//!
//! The file is created (truncated) when the run starts, before the adapter is started, so a report of an
//! earlier run never survives a run that fails early. Records are written and flushed as trials finish,
//! so a run that dies leaves a report without a footer (never one that looks complete); a run cut short
//! (initialize failed, version mismatch, nothing planned, SIGINT/SIGTERM) ends with a footer saying why.
//! A write that fails is reported at once on stderr, and again in the summary line. Transcripts are kept
//! for every outcome but PASS.
//!
//! When a JUnit file is asked for (`set_junit`), the records are also kept in memory and the JUnit XML
//! (`junit.rs`) is written whenever the footer is, an aborted or interrupted run included. The kept
//! records also serve `--update-expectations`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dsh_conformance::OutcomeName;
use dsh_conformance::report::{Expected, Footer, Header, ReportLine, TrialLine};
use dsh_conformance::subject::SubjectInfo;

use super::expectations::Entry;
use super::verdict::Verdict;

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
    path: Option<String>,
    counts: Mutex<BTreeMap<OutcomeName, usize>>,
    failed: AtomicBool,
    /// The first write error.
    error: Mutex<Option<String>>,
    /// Set once the footer is written: later records are dropped.
    closed: AtomicBool,
    /// Records kept in memory (`keep_trials`), when asked for.
    kept: Mutex<Option<Vec<TrialLine>>>,
    /// The JUnit file to write with the footer, and the implementation it names.
    junit: Mutex<Option<(PathBuf, String)>>,
    /// XFAIL trials: (id, what happened, the expectation's reason), for the console (libtest shows `ok`).
    xfails: Mutex<Vec<(String, String, String)>>,
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
        Ok(Report {
            out: Mutex::new(out),
            path: path.map(|p| p.display().to_string()),
            counts: Mutex::new(BTreeMap::new()),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            closed: AtomicBool::new(false),
            kept: Mutex::new(None),
            junit: Mutex::new(None),
            xfails: Mutex::new(Vec::new()),
        })
    }

    /// Keeps every trial record in memory from now on (`kept_trials`).
    pub fn keep_trials(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.get_or_insert_with(Vec::new);
        }
    }

    /// The trial records kept since `keep_trials` (empty when it was not called).
    pub fn kept_trials(&self) -> Vec<TrialLine> {
        self.kept.lock().ok().and_then(|k| k.clone()).unwrap_or_default()
    }

    /// Writes JUnit XML to `path` whenever the footer is written, naming `implementation`.
    pub fn set_junit(&self, path: &Path, implementation: &str) {
        self.keep_trials();
        if let Ok(mut junit) = self.junit.lock() {
            *junit = Some((path.to_owned(), implementation.to_owned()));
        }
    }

    /// Writes the header (`info` is `None` when the subject did not initialize).
    pub fn header(&self, info: Option<&SubjectInfo>, subject: &str, spec: &Path, expectations: Option<&Path>) {
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let spec = spec.display().to_string();
        let expectations = expectations.map(|p| p.display().to_string());
        self.write(&ReportLine::Header(Header::new(info, subject, &spec, expectations.as_deref(), started)));
    }

    /// Counts a trial and writes its record.
    pub fn record(&self, record: &TrialRecord<'_>) {
        let verdict = record.verdict;
        if let Ok(mut counts) = self.counts.lock() {
            *counts.entry(verdict.outcome).or_default() += 1;
        }
        if let (OutcomeName::Xfail, Ok(mut xfails)) = (verdict.outcome, self.xfails.lock()) {
            let reason = record.expected.map(|e| e.reason.clone()).unwrap_or_default();
            xfails.push((record.id.to_owned(), verdict.label(), reason));
        }
        let line = TrialLine {
            id: record.id.to_owned(),
            file: record.file.to_owned(),
            rules: record.rules.to_vec(),
            outcome: verdict.outcome,
            detail: verdict.detail.clone(),
            message: verdict.message.clone(),
            duration_ms: millis(record.duration),
            expected: record.expected.map(|e| Expected { outcome: e.outcome, reason: e.reason.clone() }),
            transcript: TrialLine::keeps_transcript(verdict.outcome).then(|| verdict.transcript.clone()),
        };
        if !self.closed.load(Ordering::SeqCst) {
            if let Ok(mut kept) = self.kept.lock() {
                if let Some(kept) = kept.as_mut() {
                    kept.push(line.clone());
                }
            }
        }
        self.write(&ReportLine::Trial(line));
    }

    /// Writes the footer; `planned` is the number of trials selected to run.
    pub fn footer(&self, planned: usize, duration: Duration) {
        let footer = Footer::new(planned, self.counts(), millis(duration));
        self.write(&ReportLine::Footer(footer.clone()));
        self.closed.store(true, Ordering::SeqCst);
        self.write_junit(&footer);
    }

    /// Writes the footer of a run cut short for `reason`; records written after it are dropped.
    pub fn abort(&self, planned: usize, duration: Duration, reason: &str) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let footer = Footer::aborted(planned, self.counts(), millis(duration), reason.to_owned());
        self.write_line(&ReportLine::Footer(footer.clone()));
        self.write_junit(&footer);
    }

    /// Writes the JUnit file, if one was asked for; a failure is reported like a report write failure.
    fn write_junit(&self, footer: &Footer) {
        let Some((path, implementation)) = self.junit.lock().ok().and_then(|j| j.clone()) else { return };
        let xml = super::junit::render(&implementation, &self.kept_trials(), Some(footer));
        if let Err(e) = std::fs::write(&path, xml) {
            let message = format!("cannot write the JUnit file {}: {e}", path.display());
            eprintln!("dsh-harness: {message}");
            self.failed.store(true, Ordering::Relaxed);
            if let Ok(mut error) = self.error.lock() {
                error.get_or_insert(message);
            }
        }
    }

    /// Trials counted so far, per outcome.
    pub fn counts(&self) -> BTreeMap<OutcomeName, usize> {
        self.counts.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The XFAIL trials, one a line with what happened and the expectation's reason (libtest-mimic can
    /// only print `ok` for them); `None` when there were none.
    pub fn xfail_summary(&self) -> Option<String> {
        let mut xfails = self.xfails.lock().map(|x| x.clone()).unwrap_or_default();
        if xfails.is_empty() {
            return None;
        }
        xfails.sort();
        let mut out = format!("expected failures (XFAIL: failed as the expectations file says): {} trial(s)\n", xfails.len());
        for (id, label, reason) in xfails {
            let reason = reason.lines().next().unwrap_or_default();
            out.push_str(&format!("    {id}: {label}: {}\n", crate::adapter::wire::shorten(reason, 200)));
        }
        Some(out)
    }

    /// The one-line summary of the run.
    pub fn summary(&self, planned: usize, implementation: &str) -> String {
        let counts = self.counts();
        let executed: usize = counts.values().sum();
        let parts: Vec<String> = OutcomeName::ALL
            .iter()
            .filter_map(|o| counts.get(o).map(|n| format!("{n} {o}")))
            .collect();
        let unexpected: usize = counts.iter().filter(|(o, _)| o.is_unexpected()).map(|(_, n)| n).sum();
        let parts = if parts.is_empty() { "nothing ran".to_owned() } else { parts.join(", ") };
        let mut line = format!(
            "conformance of {implementation}: {parts}; {executed} of {planned} planned trials executed; {}",
            if unexpected == 0 { "no unexpected outcomes".to_owned() } else { format!("{unexpected} unexpected") }
        );
        if let Some(error) = self.write_error() {
            line.push_str(&format!("; FAILED: {error}"));
        }
        line
    }

    /// Whether writing the report failed at some point.
    pub fn write_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Why writing the report failed, naming the file, if it did.
    pub fn write_error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|e| e.clone())
    }

    fn write(&self, line: &ReportLine) {
        if !self.closed.load(Ordering::SeqCst) {
            self.write_line(line);
        }
    }

    fn write_line(&self, line: &ReportLine) {
        if let Ok(mut out) = self.out.lock() {
            if let Some(out) = out.as_mut() {
                let text = line.to_line();
                // A report that cannot be written must not pass silently: say so at once, and in the summary.
                if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
                    if !self.failed.swap(true, Ordering::Relaxed) {
                        let message = format!("cannot write the report {}: {e}", self.path.as_deref().unwrap_or("?"));
                        eprintln!("dsh-harness: {message}");
                        if let Ok(mut error) = self.error.lock() {
                            *error = Some(message);
                        }
                    }
                }
            }
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
