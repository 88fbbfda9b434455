//! The lowering of one non-combinator schema node: its type (a type list split into a `oneOf`,
//! `nullable`, a type inferred from values or keywords), the keywords that type keeps in the subset,
//! its annotations, and the object fix-ups (`required` names declared, a reopened closed object).

use serde_json::{Map, Value};

use super::{ANNOTATIONS, LowerError, Lowerer, fail};
use crate::schema::check::{SCHEMA_TYPES, scalar_matches};
use crate::value::{is_lossless, js_scalar_eq};

const SCALARS: [&str; 5] = ["string", "number", "integer", "boolean", "null"];
const OBJECT_KEYWORDS: [&str; 8] = [
    "properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties",
    "propertyNames", "dependentRequired",
];
const ARRAY_KEYWORDS: [&str; 7] = ["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "additionalItems"];

impl Lowerer<'_> {
    /// The node's types: its `type` (one or a list), plus `null` for `nullable: true`, or else inferred.
    pub(super) fn types(&mut self, map: &Map<String, Value>, path: &str) -> Result<Vec<String>, LowerError> {
        let mut types: Vec<String> = Vec::new();
        match map.get("type") {
            None => {}
            Some(Value::String(t)) => types.push(t.clone()),
            Some(Value::Array(list)) => {
                for t in list {
                    let Value::String(t) = t else { return fail(path, "type", "a type list must hold strings") };
                    if !types.contains(t) {
                        types.push(t.clone());
                    }
                }
                if types.is_empty() {
                    return fail(path, "type", "an empty type list accepts nothing");
                }
            }
            Some(_) => return fail(path, "type", "must be a type name or a list of them"),
        }
        if let Some(unknown) = types.iter().find(|t| !SCHEMA_TYPES.contains(&t.as_str())) {
            return fail(path, "type", format!("\"{unknown}\" is not a JSON Schema type"));
        }
        if let Some(nullable) = map.get("nullable") {
            if nullable == &Value::Bool(true) && !types.is_empty() && !types.iter().any(|t| t == "null") {
                types.push("null".into());
                self.rewritten(path, "nullable", "became a \"null\" type");
            } else {
                self.dropped(path, "nullable");
            }
        }
        if types.iter().any(|t| t == "number") && types.iter().any(|t| t == "integer") {
            types.retain(|t| t != "integer");
            self.rewritten(path, "type", "\"integer\" folded into \"number\" (it is a subset)");
        }
        if types.is_empty() {
            types = self.inferred_type(map, path);
        }
        Ok(types)
    }

    /// A type for a node without `type`, from its values or its object/array keywords.
    fn inferred_type(&mut self, map: &Map<String, Value>, path: &str) -> Vec<String> {
        let mut values: Vec<&Value> = map.get("enum").and_then(Value::as_array).map(|v| v.iter().collect()).unwrap_or_default();
        values.extend(map.get("const"));
        if !values.is_empty() {
            let mut types: Vec<String> = Vec::new();
            for value in &values {
                let ty = match value {
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "boolean",
                    Value::Null => "null",
                    _ => return Vec::new(), // an object or array value: the subset cannot list it; dropped later
                };
                if !types.iter().any(|t| t == ty) {
                    types.push(ty.to_owned());
                }
            }
            let keyword = if map.contains_key("enum") { "enum" } else { "const" };
            self.rewritten(path, keyword, format!("type {} inferred from its values", types.join("/")));
            return types;
        }
        let inferred = if OBJECT_KEYWORDS.iter().any(|k| map.contains_key(*k)) {
            "object"
        } else if ARRAY_KEYWORDS.iter().any(|k| map.contains_key(*k)) {
            "array"
        } else {
            return Vec::new();
        };
        self.rewritten(path, "type", format!("\"{inferred}\" inferred from its keywords (other types are no longer accepted)"));
        vec![inferred.to_owned()]
    }

    /// A node with several types: a `oneOf` with one branch per type carrying that type's keywords.
    pub(super) fn split_types(&mut self, map: &Map<String, Value>, types: &[String], path: &str, depth: usize) -> Result<Value, LowerError> {
        let mut outer = Map::new();
        let mut branches = Vec::new();
        for key in map.keys().filter(|k| ANNOTATIONS.contains(&k.as_str())) {
            if let Some(value) = map.get(key) {
                self.annotation(&mut outer, key, value, path);
            }
        }
        for ty in types {
            let mut branch: Map<String, Value> = map.iter().filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
            branch.remove("nullable");
            // Values of another type belong to that type's branch; a branch left with none accepts nothing.
            let mut empty = false;
            if let Some(Value::Array(values)) = branch.get_mut("enum") {
                values.retain(|v| scalar_matches(ty, v) || !SCALARS.contains(&ty.as_str()));
                empty |= values.is_empty();
            }
            if let Some(value) = branch.get("const") {
                empty |= SCALARS.contains(&ty.as_str()) && !scalar_matches(ty, value);
            }
            if empty {
                continue;
            }
            branch.insert("type".into(), Value::String(ty.clone()));
            branches.push(self.typed(&branch, ty, path, depth)?);
        }
        if branches.is_empty() {
            return fail(path, "type", "no listed type admits any of the allowed values");
        }
        self.rewritten(path, "type", format!("type list [{}] became a oneOf of one branch per type", types.join(", ")));
        if branches.len() == 1 {
            let mut single = branches.pop().unwrap_or_default();
            single.extend(outer);
            return Ok(Value::Object(single));
        }
        let mut out = Map::new();
        out.insert("oneOf".into(), Value::Array(branches.into_iter().map(Value::Object).collect()));
        out.extend(outer);
        Ok(Value::Object(out))
    }

    /// A node with no type: only its annotations survive (it accepts any value).
    pub(super) fn untyped(&mut self, map: &Map<String, Value>, path: &str) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, value) in map {
            if ANNOTATIONS.contains(&key.as_str()) {
                self.annotation(&mut out, key, value, path);
            } else {
                self.dropped(path, key);
            }
        }
        out
    }

    /// Keep an annotation the subset accepts (string `description`/`title`, lossless `default`/`examples`).
    pub(super) fn annotation(&mut self, out: &mut Map<String, Value>, key: &str, value: &Value, path: &str) {
        let valid = match key {
            "description" | "title" => value.is_string(),
            _ => is_lossless(value),
        };
        if valid {
            out.insert(key.to_owned(), value.clone());
        } else {
            self.dropped(path, key);
        }
    }

    /// A node of one type: that type's keywords kept (lowered), every other keyword dropped.
    pub(super) fn typed(&mut self, map: &Map<String, Value>, ty: &str, path: &str, depth: usize) -> Result<Map<String, Value>, LowerError> {
        let mut out = Map::new();
        out.insert("type".into(), Value::String(ty.to_owned()));
        let scalar = SCALARS.contains(&ty);
        for (key, value) in map {
            match (key.as_str(), ty) {
                ("type" | "nullable", _) => {}
                (k, _) if ANNOTATIONS.contains(&k) => self.annotation(&mut out, key, value, path),
                ("properties", "object") => {
                    let Value::Object(props) = value else { return fail(path, "properties", "must be an object of schemas") };
                    let mut lowered = Map::new();
                    for (name, schema) in props {
                        lowered.insert(name.clone(), self.node(schema, &format!("{path}.properties.{name}"), depth + 1)?);
                    }
                    out.insert(key.clone(), Value::Object(lowered));
                }
                ("required", "object") => {
                    let Value::Array(names) = value else { return fail(path, "required", "must be an array of strings") };
                    let mut kept: Vec<Value> = Vec::new();
                    for name in names {
                        if !name.is_string() {
                            return fail(path, "required", "must be an array of strings");
                        }
                        if !kept.contains(name) {
                            kept.push(name.clone());
                        }
                    }
                    if kept.len() != names.len() {
                        self.rewritten(path, "required", "repeated names removed");
                    }
                    out.insert(key.clone(), Value::Array(kept));
                }
                ("additionalProperties", "object") => match value {
                    Value::Bool(_) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Value::Object(schema) if schema.is_empty() => {
                        out.insert(key.clone(), Value::Bool(true));
                    }
                    _ => {
                        self.widening(path, "additionalProperties", "a schema for extra properties became `true`");
                        out.insert(key.clone(), Value::Bool(true));
                    }
                },
                ("items", "array") => match value {
                    Value::Object(_) => {
                        let items = self.node(value, &format!("{path}.items"), depth + 1)?;
                        out.insert(key.clone(), items);
                    }
                    Value::Bool(true) => self.dropped(path, "items"),
                    _ => self.dropped(path, "items"), // a tuple form or `false`: dropping widens
                },
                ("enum", _) if scalar => match value {
                    Value::Array(values) => {
                        let kept: Vec<Value> = values.iter().filter(|v| scalar_matches(ty, v)).cloned().collect();
                        if kept.is_empty() {
                            return fail(path, "enum", format!("no listed value is a {ty}, so nothing is accepted"));
                        }
                        if kept.len() != values.len() {
                            self.rewritten(path, "enum", format!("values that are not a {ty} removed (they could never match)"));
                        }
                        out.insert(key.clone(), Value::Array(kept));
                    }
                    _ => return fail(path, "enum", "must be an array"),
                },
                ("const", _) if scalar => {
                    if !scalar_matches(ty, value) {
                        return fail(path, "const", format!("the value is not a {ty}, so nothing is accepted"));
                    }
                    out.insert(key.clone(), value.clone());
                }
                _ => self.dropped(path, key),
            }
        }
        if let (Some(Value::Array(values)), Some(value)) = (out.get("enum"), out.get("const")) {
            if !values.iter().any(|v| js_scalar_eq(v, value)) {
                return fail(path, "const", "the value is not one of enum, so nothing is accepted");
            }
        }
        self.complete_object(&mut out, map, path);
        Ok(out)
    }

    /// Required names get a property entry; `patternProperties` beside a closed object reopens it.
    fn complete_object(&mut self, out: &mut Map<String, Value>, map: &Map<String, Value>, path: &str) {
        let required: Vec<String> =
            out.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
        let missing: Vec<String> = required
            .into_iter()
            .filter(|name| !out.get("properties").and_then(Value::as_object).is_some_and(|p| p.contains_key(name)))
            .collect();
        if !missing.is_empty() {
            let props = out.entry("properties").or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(props) = props {
                for name in &missing {
                    props.insert(name.clone(), Value::Object(Map::new()));
                }
            }
            self.rewritten(path, "required", format!("{} declared as properties accepting any value", missing.join(", ")));
        }
        if map.contains_key("patternProperties") && out.get("additionalProperties") == Some(&Value::Bool(false)) {
            out.insert("additionalProperties".into(), Value::Bool(true));
            self.widening(path, "additionalProperties", "false became true (the dropped patternProperties admitted more keys)");
        }
    }
}
