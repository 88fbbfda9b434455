//! The explorer's output (issue 40): a minimal disagreement written as a ready scenario file, whose
//! expectations are what one subject (upstream, the `--against` adapter) answered, for a person to review,
//! give an id and rules, and add to `spec/scenarios/`.
//!
//! The file cites `PROBE-000` until then, so `dsh-harness probe FILE --adapter CMD` runs it as written.
//! [`to_yaml`] writes any JSON value as block YAML with JSON (flow) leaves, which the loader reads back
//! exactly (JSON is YAML's flow style).

use serde_json::{Map, Value, json};

use super::observe::Observation;

/// The scenario value with an `expect` on each step from `obs` (`ok`/`threw`, `tool`, `schemas`,
/// `result`), and a last `events` step listing the session's events.
pub fn with_expectations(scenario: &Value, obs: &Observation) -> Value {
    let mut out = scenario.clone();
    let Some(steps) = out.get_mut("steps").and_then(Value::as_array_mut) else { return out };
    for answer in &obs.answers {
        let Some(index) = answer.get("step").and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok()) else { continue };
        let (Some(step), Some(result)) = (index.checked_sub(1).and_then(|i| steps.get_mut(i)), answer.get("result")) else { continue };
        let method = answer.get("method").and_then(Value::as_str).unwrap_or_default();
        let mut expect = Map::new();
        match method {
            "tools/register" | "hooks/add" | "scope/restrict" | "scope/presentAs" | "handle/dispose" => match result.pointer("/outcome/threw") {
                Some(threw) => {
                    expect.insert("threw".into(), threw.clone());
                }
                None if result.get("outcome").is_some() => {
                    expect.insert("ok".into(), json!(true));
                }
                None => {}
            },
            "tools/get" | "tools/present" | "tools/definition" => {
                let key = method.trim_start_matches("tools/");
                let key = if key == "get" { "tool" } else { key };
                expect.insert(key.into(), result.get(key).cloned().unwrap_or(Value::Null));
            }
            "tools/schemas" => match (result.get("schemas"), result.pointer("/outcome/threw")) {
                (Some(schemas), _) => {
                    expect.insert("schemas".into(), schemas.clone());
                }
                (None, Some(threw)) => {
                    expect.insert("threw".into(), threw.clone());
                }
                _ => {}
            },
            "prompt/assemble" => match result.pointer("/outcome/threw") {
                Some(threw) => {
                    expect.insert("threw".into(), threw.clone());
                }
                None => {
                    for key in ["sections", "tools"] {
                        if let Some(v) = result.get(key) {
                            expect.insert(key.into(), v.clone());
                        }
                    }
                }
            },
            "call/await" => {
                expect.insert("result".into(), result.get("result").cloned().unwrap_or(Value::Null));
            }
            _ => {}
        }
        if !expect.is_empty() {
            if let Some(map) = step.as_object_mut() {
                map.insert("expect".into(), Value::Object(expect));
            }
        }
    }
    if obs.stopped.is_none() {
        steps.push(json!({ "events": obs.events }));
    }
    out
}

/// `value` as YAML: mappings and lists in block style down to values short enough for one line, which
/// are written as JSON.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    block(&mut out, value, 0);
    out
}

const INLINE: usize = 100;

/// `value` in YAML's flow style: `{ key: value }`, `[a, b]`, plain strings where they read back as the same
/// string, JSON text for everything else.
fn flow(value: &Value) -> String {
    match value {
        Value::String(s) => scalar(s),
        Value::Array(items) if !items.is_empty() => format!("[{}]", items.iter().map(flow).collect::<Vec<_>>().join(", ")),
        Value::Object(map) if !map.is_empty() => {
            format!("{{ {} }}", map.iter().map(|(k, v)| format!("{}: {}", scalar(k), flow(v))).collect::<Vec<_>>().join(", "))
        }
        other => dsh_conformance::json::write(other, false),
    }
}

/// A string as a plain scalar when that reads back as the same string, else JSON-quoted.
fn scalar(s: &str) -> String {
    const WORDS: [&str; 9] = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || " _.-/".contains(c))
        && !s.ends_with(' ')
        && !WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain { s.to_owned() } else { dsh_conformance::json::write(&Value::String(s.to_owned()), false) }
}

fn key(k: &str) -> String {
    scalar(k)
}

fn fits(value: &Value, indent: usize) -> bool {
    !matches!(value, Value::Object(_) | Value::Array(_)) || flow(value).len() + indent <= INLINE
}

/// Writes the entries of a mapping or list at `indent` (the caller has written what precedes them).
fn block(out: &mut String, value: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                entry(out, &format!("{pad}{}:", key(k)), v, indent);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                match item {
                    Value::Object(map) if !map.is_empty() && !fits(item, indent + 2) => {
                        // `- first: ...` then the other keys under it.
                        let mut first = true;
                        for (k, v) in map {
                            let lead = if first { format!("{pad}- {}:", key(k)) } else { format!("{pad}  {}:", key(k)) };
                            first = false;
                            entry(out, &lead, v, indent + 2);
                        }
                    }
                    _ if fits(item, indent + 2) => out.push_str(&format!("{pad}- {}\n", flow(item))),
                    _ => {
                        out.push_str(&format!("{pad}-\n"));
                        block(out, item, indent + 2);
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", flow(other))),
    }
}

/// `lead` (`key:` with its indentation) and its value, inline when it fits, else nested.
fn entry(out: &mut String, lead: &str, value: &Value, indent: usize) {
    if fits(value, lead.len() + 1) {
        out.push_str(&format!("{lead} {}\n", flow(value)));
    } else {
        out.push_str(&format!("{lead}\n"));
        block(out, value, indent + 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_reads_back_as_the_same_value() {
        let long = "x".repeat(120);
        let value = json!({
            "id": "a",
            "setup": { "tools": [{ "name": "t1", "body": [{ "emit": "e" }, { "return": long }] }], "agents": ["a1"] },
            "steps": [{ "execute": { "name": "t1", "arguments": {} } }, [1, [2, { "k": long }]], "text: with colon", { "": null }],
            "plain": ["h1 value", "yes", "No", "1a", "a #b", "a,b", "", "t-1/x.y", { "a b": [true, null, -1.5] }],
        });
        let text = to_yaml(&value);
        let back = dsh_conformance::yaml::parse(&text).map(|d| d.value);
        assert_eq!(back.ok(), Some(value), "{text}");
    }
}
