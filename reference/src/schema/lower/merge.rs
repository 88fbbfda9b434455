//! Helpers of the lowering that work on plain schema maps: the conjunction of two schemas (`allOf`, a
//! `$ref` with sibling keywords, keywords distributed into `oneOf` branches), whether two lowered
//! schemas can both accept one value (the `anyOf` → `oneOf` soundness test), and local JSON Pointer
//! resolution. Nothing here reports; the caller turns an `Err` into a `LowerError`.

use serde_json::{Map, Value};

use crate::value::js_scalar_eq;

/// Keywords that only describe; on a conflict the second schema's value wins.
const DESCRIBING: [&str; 8] = ["description", "title", "default", "examples", "$comment", "$schema", "$id", "deprecated"];

/// The conjunction of `a` and `b` as one schema map, as far as plain keyword union expresses it:
/// `properties` are united (a shared property becomes an `allOf` of both), `required` lists united,
/// `type`s and `enum`s intersected, `additionalProperties` booleans and-ed. Keywords the lowering drops
/// anyway keep `a`'s value. `Err((keyword, reason))` when the two cannot be combined.
pub(super) fn conjoin(a: &Map<String, Value>, b: &Map<String, Value>) -> Result<Map<String, Value>, (String, String)> {
    let mut out = a.clone();
    for (key, vb) in b {
        let Some(va) = out.get(key) else {
            out.insert(key.clone(), vb.clone());
            continue;
        };
        if va == vb {
            continue;
        }
        let combined = match key.as_str() {
            k if DESCRIBING.contains(&k) => vb.clone(),
            "properties" => match (va, vb) {
                (Value::Object(pa), Value::Object(pb)) => {
                    let mut props = pa.clone();
                    for (name, schema) in pb {
                        let merged = match props.get(name) {
                            Some(existing) if existing != schema => all_of(existing.clone(), schema.clone()),
                            _ => schema.clone(),
                        };
                        props.insert(name.clone(), merged);
                    }
                    Value::Object(props)
                }
                _ => return Err(conflict(key, "both declare it, not both as objects")),
            },
            "required" => match (va, vb) {
                (Value::Array(ra), Value::Array(rb)) => {
                    let mut names = ra.clone();
                    names.extend(rb.iter().filter(|n| !ra.contains(n)).cloned());
                    Value::Array(names)
                }
                _ => return Err(conflict(key, "both declare it, not both as arrays")),
            },
            "type" => {
                let (ta, tb) = (type_list(va), type_list(vb));
                let mut common: Vec<&str> = Vec::new();
                for t in &ta {
                    for u in &tb {
                        let meet = match (*t, *u) {
                            (x, y) if x == y => Some(x),
                            ("integer", "number") | ("number", "integer") => Some("integer"),
                            _ => None,
                        };
                        if let Some(m) = meet.filter(|m| !common.contains(m)) {
                            common.push(m);
                        }
                    }
                }
                match common.as_slice() {
                    [] => return Err(conflict(key, "the schemas allow no common type")),
                    [one] => Value::String((*one).to_owned()),
                    many => Value::Array(many.iter().map(|t| Value::String((*t).to_owned())).collect()),
                }
            }
            "enum" => match (va, vb) {
                (Value::Array(ea), Value::Array(eb)) => {
                    let common: Vec<Value> = ea.iter().filter(|v| eb.contains(v)).cloned().collect();
                    if common.is_empty() {
                        return Err(conflict(key, "the schemas allow no common value"));
                    }
                    Value::Array(common)
                }
                _ => return Err(conflict(key, "both declare it, not both as arrays")),
            },
            "additionalProperties" => match (va, vb) {
                (Value::Bool(x), Value::Bool(y)) => Value::Bool(*x && *y),
                _ => all_of(va.clone(), vb.clone()),
            },
            "items" => all_of(va.clone(), vb.clone()),
            "allOf" => match (va, vb) {
                (Value::Array(xa), Value::Array(xb)) => Value::Array(xa.iter().chain(xb).cloned().collect()),
                _ => return Err(conflict(key, "both declare it, not both as arrays")),
            },
            "const" | "oneOf" | "anyOf" | "$ref" => return Err(conflict(key, "both declare it, with different values")),
            _ => continue,
        };
        out.insert(key.clone(), combined);
    }
    Ok(out)
}

fn conflict(key: &str, reason: &str) -> (String, String) {
    (key.to_owned(), format!("cannot combine two schemas that both constrain it: {reason}"))
}

fn all_of(a: Value, b: Value) -> Value {
    let mut map = Map::new();
    map.insert("allOf".into(), Value::Array(vec![a, b]));
    Value::Object(map)
}

fn type_list(value: &Value) -> Vec<&str> {
    match value {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether some value could be accepted by both lowered schemas. Conservative: `true` unless the two
/// are told apart by their types, their finite scalar value sets (`const`/`enum`), or, for objects, a
/// property both require whose finite value sets are disjoint (a tagged union's discriminator).
pub(super) fn may_overlap(a: &Value, b: &Value) -> bool {
    if let Some(branches) = a.get("oneOf").and_then(Value::as_array) {
        return branches.iter().any(|branch| may_overlap(branch, b));
    }
    if let Some(branches) = b.get("oneOf").and_then(Value::as_array) {
        return branches.iter().any(|branch| may_overlap(a, branch));
    }
    let (Some(ta), Some(tb)) = (a.get("type").and_then(Value::as_str), b.get("type").and_then(Value::as_str)) else {
        return true;
    };
    let numeric = |t: &str| t == "number" || t == "integer";
    if ta != tb && !(numeric(ta) && numeric(tb)) {
        return false;
    }
    if let (Some(va), Some(vb)) = (finite_values(a), finite_values(b)) {
        return va.iter().any(|x| vb.iter().any(|y| js_scalar_eq(x, y)));
    }
    if ta == "object" {
        return !has_disjoint_discriminator(a, b);
    }
    true
}

/// The finite set of values a lowered scalar schema accepts, if it declares one.
fn finite_values(schema: &Value) -> Option<Vec<&Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value]);
    }
    schema.get("enum").and_then(Value::as_array).map(|values| values.iter().collect())
}

fn has_disjoint_discriminator(a: &Value, b: &Value) -> bool {
    let required = |s: &Value| -> Vec<String> {
        s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    let (ra, rb) = (required(a), required(b));
    ra.iter().filter(|name| rb.contains(name)).any(|name| {
        let pa = a.get("properties").and_then(|p| p.get(name.as_str()));
        let pb = b.get("properties").and_then(|p| p.get(name.as_str()));
        match (pa, pb) {
            (Some(pa), Some(pb)) => !may_overlap(pa, pb) && finite_values(pa).is_some() && finite_values(pb).is_some(),
            _ => false,
        }
    })
}

/// The JSON Pointer of a local reference (`#`, `#/$defs/x`, percent-encoded or not), or `None` for a
/// reference that is not local to the document.
pub(super) fn local_pointer(reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    if !(fragment.is_empty() || fragment.starts_with('/')) {
        return None;
    }
    percent_decode(fragment)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
