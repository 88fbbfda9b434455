//! The explorer's signatures (issue 40): what makes two disagreements the same one, so each distinct
//! disagreement is shrunk and written once and the others count as its repeats.

use serde_json::Value;

use super::observe::Observation;

/// The first change between two observations' lines, names and numbers blanked: the lines one side has
/// and the other lacks where they first part (a longest-common-subsequence diff, so the lines around it,
/// which depend on the rest of the scenario, are not part of it). What makes two disagreements the same.
pub fn signature(a: &Observation, b: &Observation) -> String {
    let (ra, rb) = (a.lines(), b.lines());
    let la: Vec<String> = ra.iter().map(|l| blank(l)).collect();
    let lb: Vec<String> = rb.iter().map(|l| blank(l)).collect();
    let (n, m) = (la.len(), lb.len());
    // lcs[i][j]: the longest common subsequence of la[i..] and lb[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if la[i] == lb[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m && la[i] == lb[j] {
        i += 1;
        j += 1;
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    while (i < n || j < m) && !(i < n && j < m && la[i] == lb[j]) {
        if j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
            removed.push(i);
            i += 1;
        } else {
            added.push(j);
            j += 1;
        }
    }
    // A line answered differently: where in it, rather than all of it (an assembly's line holds every
    // tool, which depends on the rest of the scenario).
    if let ([x], [y]) = (removed.as_slice(), added.as_slice()) {
        let parse = |l: &str| serde_json::from_str::<Value>(l.strip_prefix("event ").unwrap_or(l)).ok().filter(Value::is_object);
        if let (Some(x), Some(y)) = (parse(&ra[*x]), parse(&rb[*y])) {
            if let Some((path, vx, vy)) = first_difference(&x, &y, String::new()) {
                let method = x.get("method").and_then(Value::as_str).unwrap_or("event");
                let short = |v: &Value| blank(&dsh_conformance::json::write(v, false)).chars().take(200).collect::<String>();
                return format!("{method} {}: {} <> {}", blank(&path), short(&vx), short(&vy));
            }
        }
    }
    let change: Vec<String> = removed.iter().map(|&i| format!("- {}", la[i])).chain(added.iter().map(|&j| format!("+ {}", lb[j]))).collect();
    let text = if change.is_empty() { "stopped differently".to_owned() } else { change.join(" / ") };
    text.chars().take(480).collect()
}

/// The first place two values differ (a mapping's keys in `a`'s order, then those only `b` has), with the
/// two values there (`null` for a missing one); `None` when they are equal.
fn first_difference(a: &Value, b: &Value, path: String) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .map(|(k, v)| (k, Some(v), y.get(k)))
            .chain(y.iter().filter(|(k, _)| !x.contains_key(*k)).map(|(k, v)| (k, None, Some(v))))
            .find_map(|(k, vx, vy)| match (vx, vy) {
                (Some(vx), Some(vy)) => first_difference(vx, vy, format!("{path}/{k}")),
                (vx, vy) => Some((format!("{path}/{k}"), vx.cloned().unwrap_or(Value::Null), vy.cloned().unwrap_or(Value::Null))),
            }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (vx, vy))| first_difference(vx, vy, format!("{path}/{i}")))
        }
        _ if a == b => None,
        _ => Some((path, a.clone(), b.clone())),
    }
}

/// `text` with the names the generator numbers blanked to `#`: a word of letters and digits ending in
/// digits (`t1`, `k2`, `dg1`, `a3`) whole, and the digits after a letter and `-` (`call-2`, `explore-7`),
/// and a step's number; error codes and other values stay.
fn blank(text: &str) -> String {
    let text = text.strip_prefix("{\"step\":").map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_digit())).map_or(text.to_owned(), |rest| format!("{{\"step\":#{rest}"));
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let word_start = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if word_start && chars[i].is_ascii_alphabetic() {
            let letters = chars[i..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
            let digits = chars[i + letters..].iter().take_while(|c| c.is_ascii_digit()).count();
            let end = i + letters + digits;
            if digits > 0 && chars.get(end).is_none_or(|c| !c.is_ascii_alphanumeric()) {
                out.push('#');
                i = end;
                continue;
            }
            out.extend(&chars[i..i + letters]);
            i += letters;
            continue;
        }
        let after_name = i > 1 && chars[i - 1] == '-' && chars[i - 2].is_ascii_alphabetic();
        if after_name && chars[i].is_ascii_digit() {
            out.push('#');
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_blanked_and_codes_kept() {
        let obs = |lines: &[&str]| Observation { answers: lines.iter().map(|l| serde_json::json!(l)).collect(), ..Observation::default() };
        // The change, not its context: the same extra line after different ones is one disagreement.
        let (a, b) = (obs(&["alpha", "y", "z"]), obs(&["beta", "y", "extra", "z"]));
        let (c, d) = (obs(&["w", "y", "z"]), obs(&["w", "y", "extra7", "z"]));
        assert_eq!(signature(&a, &b), "- \"alpha\" / + \"beta\"");
        assert_eq!(signature(&c, &d), "+ \"#\"");
        // A line answered differently: the first place in it.
        let line = |text: &str| serde_json::json!({ "step": 3, "method": "prompt/assemble", "result": { "sections": ["a", "b", text], "tools": ["t1"] } });
        let (mut e, mut f) = (obs(&[]), obs(&[]));
        e.answers.push(line("k1 says no"));
        f.answers.push(line("k1 says NO"));
        assert_eq!(signature(&e, &f), "prompt/assemble /result/sections/2: \"# says no\" <> \"# says NO\"");
        assert_eq!(blank(r#"{"step":12,"method":"x","error":{"code":-32000},"t":"t12 call-3 k1 threw dg2 says no, h1x2 k-1"}"#), r##"{"step":#,"method":"x","error":{"code":-32000},"t":"# call-# # threw # says no, h1x2 k-#"}"##);
    }
}
