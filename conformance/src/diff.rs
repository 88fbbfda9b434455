//! A line diff of two pretty-printed JSON texts, for FAIL messages: `-` expected, `+` actual, with a
//! few lines of context (longest common subsequence; falls back to both texts when they are large).
//! Both the number of lines and the length of each are capped, so a 200 MB string value costs a FAIL
//! message a few hundred bytes, not 200 MB.

const CONTEXT: usize = 3;
/// Above this many line pairs the LCS table is not built.
const MAX_CELLS: usize = 4_000_000;
/// Lines shown at most.
const MAX_LINES: usize = 200;
/// Bytes of one line shown at most; the rest is elided with its length.
pub const MAX_LINE_LEN: usize = 400;

/// `text` cut to at most `max` bytes at a character boundary, saying how much was left out.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}… ({} more bytes)", &text[..at], text.len() - at)
}

/// `--- expected` / `+++ actual` and the differing lines with context.
pub fn unified(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut out = String::from("--- expected\n+++ actual\n");
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        push_capped(&mut out, a.iter().map(|l| format!("-{l}")).chain(b.iter().map(|l| format!("+{l}"))));
        return out;
    }
    // lcs[i][j] = LCS length of a[i..] and b[j..]
    let w = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * w];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * w + j] = if a[i] == b[j] { lcs[(i + 1) * w + j + 1] + 1 } else { lcs[(i + 1) * w + j].max(lcs[i * w + j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let changed: Vec<usize> = ops.iter().enumerate().filter(|(_, (c, _))| *c != ' ').map(|(k, _)| k).collect();
    let keep = |k: usize| changed.iter().any(|&c| k + CONTEXT >= c && k <= c + CONTEXT);
    let mut lines = Vec::new();
    let mut skipped = false;
    for (k, (c, l)) in ops.iter().enumerate() {
        if keep(k) {
            if skipped {
                lines.push("@@ ... @@".to_string());
                skipped = false;
            }
            lines.push(format!("{c}{l}"));
        } else {
            skipped = true;
        }
    }
    push_capped(&mut out, lines.into_iter());
    out
}

fn push_capped(out: &mut String, lines: impl Iterator<Item = String>) {
    for (n, line) in lines.enumerate() {
        if n == MAX_LINES {
            out.push_str("... (diff truncated)\n");
            break;
        }
        out.push_str(&cut(&line, MAX_LINE_LEN));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut() {
        let d = unified("\"a\"", &format!("\"{}\"", "x".repeat(10_000)));
        assert!(d.len() < 1000 && d.contains("more bytes)"), "{d}");
    }

    #[test]
    fn shows_changed_lines_with_context() {
        let d = unified("{\n  \"a\": 1,\n  \"b\": 2\n}", "{\n  \"a\": 1,\n  \"b\": 3\n}");
        assert_eq!(d, "--- expected\n+++ actual\n {\n   \"a\": 1,\n-  \"b\": 2\n+  \"b\": 3\n }\n");
    }
}
