//! Bounded reading of an adapter's output streams (`conformance/PROTOCOL.md` § Limits).
//!
//! - [`LineReader`]: protocol lines from stdout, each at most [`MAX_LINE`] bytes. A longer line is reported
//!   as [`Line::TooLong`] as soon as it passes the cap (an endless line never waits for its newline), and
//!   its remaining bytes are skipped, never buffered.
//! - [`StderrTail`]: the last [`STDERR_TAIL_LINES`] lines of stderr, each cut to [`STDERR_LINE_MAX`] bytes.
//!   A `\r` not followed by `\n` starts the line over, as on a terminal, so a progress bar keeps one line.
//!
//! Memory is bounded whatever the adapter writes: one line buffer of at most `MAX_LINE` bytes for
//! stdout, and `STDERR_TAIL_LINES × STDERR_LINE_MAX` bytes for stderr.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};

/// Longest protocol line accepted, in bytes without the `\n`: 256 MiB. A run_code result at Code Mode's
/// default 64 MiB output limit (RUN-029) is carried twice in one line (`value` and `content`), so the cap
/// sits well above twice that.
pub const MAX_LINE: usize = 256 << 20;
/// How many stderr lines are kept.
pub const STDERR_TAIL_LINES: usize = 40;
/// How many bytes of one stderr line are kept.
pub const STDERR_LINE_MAX: usize = 2000;
/// How many bytes of an over-long line are kept to show.
const HEAD: usize = 600;

/// One line read from stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its `\n` (the last line of a stream may lack it).
    Full(Vec<u8>),
    /// A line longer than the cap: its first bytes and how many bytes it had when it passed the cap.
    TooLong {
        /// The first bytes, to show.
        head: Vec<u8>,
        /// Its length in bytes so far (more than the cap).
        len: usize,
    },
}

/// Splits a byte stream into lines of at most `max` bytes.
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    /// Set after a `TooLong`: the rest of that line is being skipped.
    skipping: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader with a cap of `max` bytes a line.
    pub fn new(inner: R, max: usize) -> Self {
        LineReader { inner: BufReader::with_capacity(64 << 10, inner), max, skipping: false }
    }

    /// The next line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut buf = Vec::new();
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                return Ok(if buf.is_empty() { None } else { Some(Line::Full(buf)) });
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            if self.skipping {
                let used = newline.map_or(chunk.len(), |i| i + 1);
                self.skipping = newline.is_none();
                self.inner.consume(used);
                continue;
            }
            let take = newline.unwrap_or(chunk.len());
            if buf.len() + take > self.max {
                let len = buf.len() + take;
                let room = HEAD.saturating_sub(buf.len()).min(take);
                buf.truncate(HEAD);
                buf.extend_from_slice(&chunk[..room]);
                self.skipping = newline.is_none();
                self.inner.consume(newline.map_or(take, |i| i + 1));
                return Ok(Some(Line::TooLong { head: buf, len }));
            }
            buf.extend_from_slice(&chunk[..take]);
            self.inner.consume(newline.map_or(take, |i| i + 1));
            if newline.is_some() {
                return Ok(Some(Line::Full(buf)));
            }
        }
    }
}

/// The bounded tail of a stderr stream.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: VecDeque<String>,
    current: Vec<u8>,
    /// Bytes of the current line, kept or not.
    current_len: usize,
    /// A `\r` was seen and not yet resolved (`\r\n` ends a line, `\r` + anything else starts it over).
    carriage_return: bool,
}

impl StderrTail {
    /// Takes more bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match b {
                b'\n' => {
                    self.carriage_return = false;
                    let line = self.current_text();
                    self.current.clear();
                    self.current_len = 0;
                    if self.lines.len() == STDERR_TAIL_LINES {
                        self.lines.pop_front();
                    }
                    self.lines.push_back(line);
                }
                b'\r' => self.carriage_return = true,
                _ => {
                    if self.carriage_return {
                        self.carriage_return = false;
                        self.current.clear();
                        self.current_len = 0;
                    }
                    self.current_len += 1;
                    if self.current.len() < STDERR_LINE_MAX {
                        self.current.push(b);
                    }
                }
            }
        }
    }

    fn current_text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.current).into_owned();
        if self.current_len > self.current.len() {
            text.push_str(&format!("… ({} more bytes)", self.current_len - self.current.len()));
        }
        text
    }

    /// The kept lines, and the unfinished last line if any, joined with `\n`.
    pub fn text(&self) -> String {
        let mut lines: Vec<String> = self.lines.iter().cloned().collect();
        if self.current_len > 0 {
            if lines.len() == STDERR_TAIL_LINES {
                lines.remove(0);
            }
            lines.push(self.current_text());
        }
        lines.join("\n")
    }

    /// Bytes held, at most `STDERR_TAIL_LINES × (STDERR_LINE_MAX + a suffix)` plus one line buffer.
    pub fn held(&self) -> usize {
        self.lines.iter().map(String::len).sum::<usize>() + self.current.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max);
        std::iter::from_fn(|| reader.next_line().ok().flatten()).collect()
    }

    #[test]
    fn splits_and_caps() {
        assert_eq!(lines(b"a\nbc\n\nd", 10), vec![Line::Full(b"a".to_vec()), Line::Full(b"bc".to_vec()), Line::Full(vec![]), Line::Full(b"d".to_vec())]);
        let got = lines(b"0123456789abc\nok\n", 10);
        assert!(matches!(&got[0], Line::TooLong { len, .. } if *len > 10), "{got:?}");
        assert_eq!(got[1..], [Line::Full(b"ok".to_vec())]);
    }

    #[test]
    fn carriage_returns_overwrite() {
        let mut tail = StderrTail::default();
        tail.push(b"10%\r20%\r30%");
        tail.push(b"\r\ndone\r\n");
        assert_eq!(tail.text(), "30%\ndone");
    }
}
