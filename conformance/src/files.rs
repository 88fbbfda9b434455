//! Finding and reading the suite's files safely: every spec, corpus and expectations file goes through
//! here.
//!
//! - [`list`] walks a directory for files with one extension, following symbolic links to directories
//!   (a link that leads back into a directory being walked is an error, never a loop) and reporting
//!   every entry it cannot use: nothing is skipped silently.
//! - [`read_text`] reads one file only if it is a regular file (after links) of at most [`MAX_FILE`]
//!   bytes: a FIFO never blocks the loader and a link to `/dev/zero` never fills memory. Invalid UTF-8 is
//!   reported at its line and column.

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Largest file read: 64 MiB (the largest corpus file is 24 MB).
pub const MAX_FILE: u64 = 64 << 20;

/// Why a file or directory cannot be used: where (1-based line and column, 1:1 for the whole file) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl FileError {
    fn whole(message: String) -> FileError {
        FileError { line: 1, column: 1, message }
    }
}

/// Reads `path` as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, FileError> {
    let meta = std::fs::metadata(path).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(FileError::whole(format!("not a regular file ({}): refused", kind(&meta))));
    }
    if meta.len() > MAX_FILE {
        return Err(FileError::whole(format!("{} bytes, larger than the limit of {MAX_FILE} bytes", meta.len())));
    }
    let file = std::fs::File::open(path).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(FileError::whole(format!("larger than the limit of {MAX_FILE} bytes")));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        FileError { line, column, message: format!("not UTF-8: invalid byte 0x{:02x}", e.as_bytes()[good.len()]) }
    })
}

/// The bytes `span` of a regular file as text (what [`read_text`] would give for that range, without
/// reading the rest); an error when the file is shorter now or the range is not text.
pub fn read_span(path: &Path, span: std::ops::Range<usize>) -> Result<String, FileError> {
    use std::io::{Seek, SeekFrom};
    let meta = std::fs::metadata(path).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(FileError::whole(format!("not a regular file ({}): refused", kind(&meta))));
    }
    if (span.end as u64) > meta.len() {
        return Err(FileError::whole(format!("{} bytes now, shorter than when it was listed", meta.len())));
    }
    let mut file = std::fs::File::open(path).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    file.seek(SeekFrom::Start(span.start as u64)).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    let mut bytes = vec![0; span.len()];
    file.read_exact(&mut bytes).map_err(|e| FileError::whole(format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|_| FileError::whole("not UTF-8 where an item was listed: the file changed".to_owned()))
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Files found: (full path, path relative to the root).
pub type Found = Vec<(PathBuf, PathBuf)>;
/// Entries that cannot be used: (path relative to the root, why).
pub type Refused = Vec<(PathBuf, FileError)>;

/// Files under `root/dir` (only its top level unless `recursive`) whose extension is `ext`, sorted by
/// path relative to `root`, as (full path, relative path). Problems come back as (relative path, error):
/// a directory that cannot be listed, a link loop, a dangling link, a file with the extension that is
/// not a regular file, and a file named `.<alt>` for each of `refused` (e.g. `.yml` for `.yaml`). A
/// missing top directory is no error (no files). Names starting with `.` are left out.
pub fn list(root: &Path, dir: &str, ext: &str, recursive: bool, refused: &[&str]) -> (Found, Refused) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let top = root.join(dir);
    match std::fs::metadata(&top) {
        Ok(meta) => {
            seen.insert((meta.dev(), meta.ino()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (out, problems),
        Err(e) => {
            problems.push((PathBuf::from(dir), FileError::whole(format!("cannot list: {e}"))));
            return (out, problems);
        }
    }
    let mut stack = vec![PathBuf::from(dir)];
    while let Some(rel_dir) = stack.pop() {
        let entries = match std::fs::read_dir(root.join(&rel_dir)) {
            Ok(e) => e,
            Err(e) => {
                problems.push((rel_dir, FileError::whole(format!("cannot list: {e}"))));
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let rel = rel_dir.join(&name);
            let full = root.join(&rel);
            let has = |e: &str| rel.extension().is_some_and(|x| x == e);
            // Follows links: a link to a directory is walked, a link to a file is read.
            let meta = match std::fs::metadata(&full) {
                Ok(meta) => meta,
                Err(e) => {
                    if has(ext) || entry.file_type().is_ok_and(|t| t.is_symlink()) {
                        problems.push((rel, FileError::whole(format!("cannot read (a dangling link?): {e}"))));
                    }
                    continue;
                }
            };
            if meta.is_dir() {
                if !recursive {
                    continue;
                }
                if !seen.insert((meta.dev(), meta.ino())) {
                    problems.push((rel, FileError::whole("a link back into a directory already walked (a loop): not followed".into())));
                    continue;
                }
                stack.push(rel);
            } else if has(ext) {
                if meta.is_file() {
                    out.push((full, rel));
                } else {
                    problems.push((rel, FileError::whole(format!("not a regular file ({}): refused", kind(&meta)))));
                }
            } else if let Some(alt) = refused.iter().find(|alt| has(alt)) {
                problems.push((rel, FileError::whole(format!("spec files end in .{ext}, not .{alt}"))));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    problems.sort_by(|a, b| a.0.cmp(&b.0));
    (out, problems)
}
