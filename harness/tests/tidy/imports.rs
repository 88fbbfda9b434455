//! The tidy test's import scanner: which modules of a crate each source file names through `crate::`,
//! `super::` and `self::` paths (in `use` items and inline), read from the source text as rust-analyzer's
//! tidy tests read theirs. Comments, string and character literals are blanked first, and code compiled
//! only for tests (`#[cfg(test)]` items, and the module files such items declare) is skipped: a test may
//! use the facade from any layer.
//!
//! The checks built on it: [`Graph::sibling_cycles`] (no two modules under one parent import each other,
//! directly or around a circle) and the layer table in `tidy.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One path naming a module of the crate: where it is written and the absolute module path it names
/// (as far as it is written: `crate::a::b::Item` is `[a, b, Item]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// The file, relative to the workspace root.
    pub file: String,
    /// 1-based line of the path's first segment.
    pub line: usize,
    /// The module the file is.
    pub from: Vec<String>,
    /// The resolved path.
    pub to: Vec<String>,
}

/// A crate's modules (one per source file) and its imports.
#[derive(Debug, Default)]
pub struct Graph {
    pub modules: BTreeSet<Vec<String>>,
    pub imports: Vec<Import>,
}

/// One source file of a crate and the module path it is (`a/mod.rs` and `a.rs` are both `a`, `lib.rs` is
/// the root), from which `super` and `self` resolve.
pub struct Source {
    pub file: String,
    pub module: Vec<String>,
    pub text: String,
}

/// Every `.rs` file under `src` (a crate's `src/`), skipping `src/bin` and `main.rs` (separate crates),
/// with paths reported relative to `root`.
pub fn sources(src: &Path, root: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            let rel = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
            if path.is_dir() {
                if rel != Path::new("bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || rel == Path::new("main.rs") {
                continue;
            }
            let mut module: Vec<String> = rel.with_extension("").iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let file = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            out.push(Source { file, module, text });
        }
    }
    out.sort_by(|a, b| a.module.cmp(&b.module));
    out
}

/// The import graph of a set of sources; files declared test-only by their parent are left out.
pub fn graph(sources: &[Source]) -> Graph {
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut scanned = Vec::new();
    for source in sources {
        let code = blank(&source.text);
        let (kept, test_children) = without_test_items(&code);
        for child in test_children {
            let mut path = source.module.clone();
            path.push(child);
            test_only.insert(path);
        }
        scanned.push((source, kept));
    }
    let mut graph = Graph::default();
    for (source, kept) in scanned {
        if test_only.iter().any(|t| source.module.starts_with(t)) {
            continue;
        }
        graph.modules.insert(source.module.clone());
        for (line, path) in paths(&kept) {
            if let Some(to) = resolve(&source.module, &path) {
                graph.imports.push(Import { file: source.file.clone(), line, from: source.module.clone(), to });
            }
        }
    }
    graph
}

impl Graph {
    /// The child modules of `parent` (one level down).
    pub fn children(&self, parent: &[String]) -> BTreeSet<String> {
        self.modules
            .iter()
            .filter(|m| m.len() == parent.len() + 1 && m.starts_with(parent))
            .map(|m| m[parent.len()].clone())
            .collect()
    }

    /// Edges between sibling modules: for an import from `a/x/..` to `a/y/..` (x ≠ y, both modules under
    /// `a`), the edge `x → y` under parent `a`, with the imports behind it.
    pub fn sibling_edges(&self) -> BTreeMap<(Vec<String>, String, String), Vec<&Import>> {
        let mut edges: BTreeMap<(Vec<String>, String, String), Vec<&Import>> = BTreeMap::new();
        for import in &self.imports {
            let common = import.from.iter().zip(&import.to).take_while(|(a, b)| a == b).count();
            if import.from.len() <= common || import.to.len() <= common {
                continue;
            }
            let parent = import.from[..common].to_vec();
            let (x, y) = (&import.from[common], &import.to[common]);
            if self.children(&parent).contains(y) {
                edges.entry((parent, x.clone(), y.clone())).or_default().push(import);
            }
        }
        edges
    }

    /// Every import circle among siblings, one message each naming the modules and an import per edge.
    pub fn sibling_cycles(&self) -> Vec<String> {
        let edges = self.sibling_edges();
        let mut by_parent: BTreeMap<&Vec<String>, BTreeMap<&str, BTreeSet<&str>>> = BTreeMap::new();
        for (parent, x, y) in edges.keys() {
            by_parent.entry(parent).or_default().entry(x.as_str()).or_default().insert(y.as_str());
        }
        let mut problems = Vec::new();
        for (parent, adjacency) in by_parent {
            for cycle in cycles(&adjacency) {
                let mut steps = Vec::new();
                for pair in cycle.windows(2) {
                    let key = (parent.clone(), pair[0].to_owned(), pair[1].to_owned());
                    let at = edges.get(&key).and_then(|v| v.first()).map(|i| format!("{}:{}", i.file, i.line));
                    steps.push(format!("{} → {} ({})", pair[0], pair[1], at.unwrap_or_default()));
                }
                let scope = if parent.is_empty() { "crate root".to_owned() } else { parent.join("::") };
                problems.push(format!("import circle under {scope}: {}", steps.join(", ")));
            }
        }
        problems
    }
}

/// Circles as closed walks `[a, b, ..., a]`: from each module not yet on a reported circle, a depth-first
/// search for a path back to it. Every module on a circle is on some reported walk (a component may be
/// reported by more than one walk).
fn cycles<'a>(adjacency: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut reported: BTreeSet<&str> = BTreeSet::new();
    for &start in adjacency.keys() {
        if reported.contains(start) {
            continue;
        }
        // Depth-first search for a path back to `start`.
        let mut stack: Vec<(&str, Vec<&str>)> = vec![(start, vec![start])];
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for &next in adjacency.get(node).into_iter().flatten() {
                if next == start {
                    let mut cycle = path.clone();
                    cycle.push(start);
                    reported.extend(cycle.iter().copied());
                    out.push(cycle);
                    stack.clear();
                    break;
                }
                if seen.insert(next) {
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push((next, longer));
                }
            }
        }
    }
    out
}

/// The text with comments, string literals and character literals replaced by spaces (newlines kept, so
/// offsets keep their line numbers).
pub fn blank(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let keep_newlines = |slice: &[u8], out: &mut Vec<u8>| {
        out.extend(slice.iter().map(|&b| if b == b'\n' { b'\n' } else { b' ' }));
    };
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_newlines(&rest[..j], &mut out);
            i += j;
        } else if let Some(len) = raw_string_len(rest, i == 0 || !is_ident(bytes[i - 1])) {
            keep_newlines(&rest[..len], &mut out);
            i += len;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let len = (j + 1).min(rest.len());
            keep_newlines(&rest[..len], &mut out);
            i += len;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', '\'') — not a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(3).position(|&b| b == b'\'').map(|p| p + 4)
            } else {
                let width = rest.get(1).map_or(1, |&b| utf8_width(b));
                (rest.get(1 + width) == Some(&b'\'')).then_some(2 + width)
            };
            match len {
                Some(len) => {
                    keep_newlines(&rest[..len], &mut out);
                    i += len;
                }
                None => {
                    // A lifetime or label: kept as written.
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn utf8_width(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of a raw (byte) string literal starting here (`r"…"`, `r#"…"#`, `br#"…"#`).
fn raw_string_len(rest: &[u8], at_token_start: bool) -> Option<usize> {
    if !at_token_start {
        return None;
    }
    let prefix = if rest.starts_with(b"br") { 2 } else if rest.starts_with(b"r") { 1 } else { return None };
    let hashes = rest[prefix..].iter().take_while(|&&b| b == b'#').count();
    if rest.get(prefix + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = prefix + hashes + 1;
    let end = rest[body..].windows(close.len()).position(|w| w == close.as_slice())?;
    Some(body + end + close.len())
}

/// The blanked text without the items under `#[cfg(test)]`, and the names of child modules declared
/// test-only (`#[cfg(test)] mod name;`).
fn without_test_items(code: &str) -> (String, Vec<String>) {
    let bytes = code.as_bytes();
    let mut out: Vec<u8> = bytes.to_vec();
    let mut children = Vec::new();
    let mut search = 0;
    while let Some(found) = code[search..].find("#[cfg(test)]") {
        let start = search + found;
        let mut i = start + "#[cfg(test)]".len();
        // The item: up to its `;` or its balanced `{ … }`, whichever comes first.
        let item_start = i;
        let mut depth = 0usize;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let item = code[item_start..i].trim();
        if let Some(name) = item.strip_prefix("mod ").and_then(|rest| rest.strip_suffix(';')) {
            children.push(name.trim().to_owned());
        }
        for b in &mut out[start..i] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        search = i;
    }
    (String::from_utf8_lossy(&out).into_owned(), children)
}

/// Every `crate::`/`super::`/`self::` path in blanked code, with `use` groups expanded: `(line, segments)`.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_start = i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b'$' || bytes[i - 1] == b':');
        let word = ["crate", "super", "self"].into_iter().find(|w| code[i..].starts_with(w));
        match word {
            Some(w) if at_start && code[i + w.len()..].trim_start().starts_with("::") => {
                let line = code[..i].matches('\n').count() + 1;
                let end = expand(code, i, Vec::new(), line, &mut out);
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    out
}

/// Read one path starting at `i` (after `prefix` segments), pushing each complete path; returns where it
/// ended.
fn expand(code: &str, mut i: usize, mut prefix: Vec<String>, line: usize, out: &mut Vec<(usize, Vec<String>)>) -> usize {
    let bytes = code.as_bytes();
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            // A group: each comma-separated member continues the prefix.
            i += 1;
            loop {
                while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
                if i >= bytes.len() || bytes[i] == b'}' {
                    return i + 1;
                }
                let before = i;
                i = expand(code, i, prefix.clone(), line, out);
                // Skip an `as name` or anything the member reader did not consume.
                while i < bytes.len() && bytes[i] != b',' && bytes[i] != b'}' {
                    i += 1;
                }
                if i == before {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
        if start == i {
            // `*` or nothing: the path so far.
            if !prefix.is_empty() {
                out.push((line, prefix));
            }
            return i;
        }
        prefix.push(code[start..i].to_owned());
        let mut j = i;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if code[j..].starts_with("::") {
            i = j + 2;
            continue;
        }
        out.push((line, prefix));
        return i;
    }
}

/// The absolute module path a written path names, from module `from`; `None` for a path that leaves the
/// crate (`super` above the root).
fn resolve(from: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut segments = path.iter().peekable();
    let mut base: Vec<String> = match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        _ => from.to_vec(),
    };
    while let Some(segment) = segments.peek() {
        match segment.as_str() {
            "self" => {
                segments.next();
            }
            "super" => {
                base.pop()?;
                segments.next();
            }
            _ => break,
        }
    }
    base.extend(segments.cloned());
    Some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanking_keeps_code_and_lines() {
        let text = "a // crate::x\n\"crate::y\" 'c' '\\'' 'a: r#\"crate::z\"# b";
        let blanked = blank(text);
        assert_eq!(blanked.lines().count(), 2);
        assert!(!blanked.contains("crate"), "{blanked}");
        assert!(blanked.contains("'a:") && blanked.ends_with(" b"), "{blanked}");
    }
}
