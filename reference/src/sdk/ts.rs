//! The TypeScript flavor of the SDK section: schema → TypeScript type text, and the whole
//! `tools:sdk` block (usage text, `JsonValue`, `ToolArgsMap`, `ToolOutputMap`, `ToolName`,
//! `ToolCallError`, `tools`).
//!
//! Rendering streams into one buffer with an explicit task stack. The only construct whose text
//! depends on its subtree is an array of a type containing `|` or `&`, which takes parentheses; a
//! first pass computes that fact for every node bottom-up, so even a 100,000-deep array chain renders
//! in linear time.

use serde_json::Value;

use super::subset::{self, Keywords, Required};
use super::{SdkToolSchema, js, sort_by_name};

/// The fixed usage contract above the declarations.
const INSTRUCTIONS: &str = "## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.
- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.
- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit results with `return` and/or `console.log(...)`. Only what you print or return is program output. A successful tool result containing an image is attached after the run so you can inspect it on the next step; every other intermediate result stays out of the conversation, so extract just what you need.

The available tools:";

const JSON_VALUE: &str = "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }";

const TAIL: &str = "type ToolName = keyof ToolOutputMap

declare class ToolCallError extends Error {
  readonly name: \"ToolCallError\";
  readonly toolName: ToolName;
}

declare const tools: {
  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;
}";

/// TypeScript type text for one schema (top-level indentation 0). Every construct of the enforced
/// subset renders; anything outside it (`$ref`, `anyOf`, type arrays, malformed nodes) is `unknown`.
pub fn json_schema_to_ts(schema: &Value) -> String {
    let mut out = String::new();
    push_type(&mut out, schema, 0);
    out
}

/// The complete TypeScript SDK section for a tool set, tools in UTF-16 name order.
pub fn render_tools_sdk(schemas: &[SdkToolSchema]) -> String {
    let sorted = sort_by_name(schemas);
    let mut out = String::with_capacity(4096 + schemas.len() * 512);
    out.push_str(INSTRUCTIONS);
    out.push_str("\n\n```ts\n");
    out.push_str(JSON_VALUE);
    out.push_str("\n\ninterface ToolArgsMap {");
    for tool in &sorted {
        out.push('\n');
        if let Some(description) = tool.description.as_deref() {
            push_doc_line(&mut out, description, 1);
        }
        out.push_str("  ");
        push_key(&mut out, &tool.name);
        out.push_str(": ");
        push_type(&mut out, &tool.parameters, 1);
        out.push(';');
    }
    if !sorted.is_empty() {
        out.push('\n');
    }
    out.push_str("}\n\ninterface ToolOutputMap {");
    for tool in &sorted {
        out.push_str("\n  ");
        push_key(&mut out, &tool.name);
        out.push_str(": ");
        match &tool.output {
            Some(output) => push_type(&mut out, output, 1),
            None => out.push_str("unknown"),
        }
        out.push(';');
    }
    if !sorted.is_empty() {
        out.push('\n');
    }
    out.push_str("}\n\n");
    out.push_str(TAIL);
    out.push_str("\n```");
    out
}

fn pad(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}

fn is_ts_identifier(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' || *b == b'$' => {}
        _ => return false,
    }
    bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
}

/// An object key: bare when it is an ASCII identifier, JSON-quoted otherwise.
fn push_key(out: &mut String, name: &str) {
    if is_ts_identifier(name) {
        out.push_str(name);
    } else {
        js::push_json_string(out, name);
    }
}

/// One `/** … */` line followed by a newline (none for an empty description). The description is
/// collapsed to one line and `*/` is escaped so it cannot close the comment.
fn push_doc_line(out: &mut String, description: &str, indent: usize) {
    if description.is_empty() {
        return;
    }
    let mut collapsed = String::with_capacity(description.len());
    js::push_collapsed(&mut collapsed, description);
    pad(out, indent);
    out.push_str("/** ");
    out.push_str(&collapsed.replace("*/", "*\\/"));
    out.push_str(" */\n");
}

fn push_scalar(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => js::push_json_string(out, s),
        Value::Number(n) => js::push_js_number(out, js::js_number(n)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        // Unreachable after the subset check: scalar enum/const entries only.
        Value::Array(_) | Value::Object(_) => out.push_str("unknown"),
    }
}

fn has_bar_or_amp(s: &str) -> bool {
    s.bytes().any(|b| b == b'|' || b == b'&')
}

/// The children a validated node renders, in render order.
fn children<'a>(k: &Keywords<'a>) -> Children<'a> {
    if let Some(Value::Array(branches)) = k.one_of {
        return Children::Branches(branches);
    }
    match k.ty.and_then(Value::as_str) {
        Some("array") => match k.items {
            Some(items) => Children::Items(items),
            None => Children::None,
        },
        Some("object") => match k.properties {
            Some(Value::Object(properties)) if !properties.is_empty() => Children::Properties(js::entries(properties)),
            _ => Children::None,
        },
        _ => Children::None,
    }
}

enum Children<'a> {
    None,
    Branches(&'a [Value]),
    Items(&'a Value),
    Properties(Vec<(&'a str, &'a Value)>),
}

/// Whether the node's own text (excluding its children's) contains `|` or `&`.
fn own_flag(k: &Keywords<'_>, kids: &Children<'_>) -> bool {
    match kids {
        Children::Branches(_) => true,
        Children::Items(_) => false,
        Children::Properties(entries) => {
            k.open()
                || entries.iter().any(|(name, prop)| {
                    has_bar_or_amp(name)
                        || prop.get("description").and_then(Value::as_str).is_some_and(has_bar_or_amp)
                })
        }
        Children::None => {
            if let Some(value) = k.constant {
                value.as_str().is_some_and(has_bar_or_amp)
            } else if let Some(Value::Array(values)) = k.enumeration {
                values.len() > 1 || values.iter().any(|v| v.as_str().is_some_and(has_bar_or_amp))
            } else {
                false
            }
        }
    }
}

/// For every node in render (pre-)order: whether its rendered text contains `|` or `&`.
fn union_flags<'a>(root: &'a Value, keys: &[Keywords<'a>]) -> Vec<bool> {
    let mut flags: Vec<bool> = Vec::new();
    let mut parents: Vec<usize> = Vec::new();
    let mut stack: Vec<(&Value, usize)> = vec![(root, usize::MAX)];
    while let Some((node, parent)) = stack.pop() {
        let id = flags.len();
        parents.push(parent);
        let Value::Object(map) = node else {
            flags.push(false);
            continue;
        };
        let _ = map;
        let k = keys.get(id).copied().unwrap_or_default();
        let kids = children(&k);
        flags.push(own_flag(&k, &kids));
        match kids {
            Children::None => {}
            Children::Branches(branches) => stack.extend(branches.iter().rev().map(|b| (b, id))),
            Children::Items(items) => stack.push((items, id)),
            Children::Properties(entries) => stack.extend(entries.iter().rev().map(|(_, v)| (*v, id))),
        }
    }
    for id in (1..flags.len()).rev() {
        if flags[id] {
            if let Some(parent) = flags.get_mut(parents[id]) {
                *parent = true;
            }
        }
    }
    flags
}

enum Task<'a> {
    Node(&'a Value, usize),
    Text(&'static str),
    Property { name: &'a str, prop: &'a Value, required: bool, indent: usize },
    Close { indent: usize, open: bool },
}

/// Append the type text of `schema` rendered at `indent`.
pub(crate) fn push_type(out: &mut String, schema: &Value, indent: usize) {
    let Some(analysis) = subset::analyze(schema) else {
        out.push_str("unknown");
        return;
    };
    let flags = union_flags(schema, &analysis.keys);
    let mut next_id = 0usize;
    let mut tasks: Vec<Task<'_>> = vec![Task::Node(schema, indent)];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Text(text) => out.push_str(text),
            Task::Property { name, prop, required, indent } => {
                out.push('\n');
                if let Some(description) = prop.get("description").and_then(Value::as_str) {
                    push_doc_line(out, description, indent);
                }
                pad(out, indent);
                push_key(out, name);
                out.push_str(if required { ": " } else { "?: " });
            }
            Task::Close { indent, open } => {
                out.push('\n');
                pad(out, indent);
                out.push('}');
                if open {
                    out.push_str(" & Record<string, JsonValue>");
                }
            }
            Task::Node(node, indent) => {
                let id = next_id;
                next_id += 1;
                if !node.is_object() {
                    out.push_str("unknown");
                    continue;
                }
                let k = analysis.keys.get(id).copied().unwrap_or_default();
                let open = k.open();
                match children(&k) {
                    Children::Branches(branches) => {
                        for (index, branch) in branches.iter().enumerate().rev() {
                            tasks.push(Task::Node(branch, indent));
                            if index > 0 {
                                tasks.push(Task::Text(" | "));
                            }
                        }
                    }
                    Children::Items(items) => {
                        if flags.get(id + 1).copied().unwrap_or(false) {
                            out.push('(');
                            tasks.push(Task::Text(")[]"));
                        } else {
                            tasks.push(Task::Text("[]"));
                        }
                        tasks.push(Task::Node(items, indent));
                    }
                    Children::Properties(entries) => {
                        out.push('{');
                        tasks.push(Task::Close { indent, open });
                        let required = Required::of(&k);
                        for (name, prop) in entries.into_iter().rev() {
                            tasks.push(Task::Text(";"));
                            tasks.push(Task::Node(prop, indent + 1));
                            tasks.push(Task::Property { name, prop, required: required.contains(name), indent: indent + 1 });
                        }
                    }
                    Children::None => push_leaf(out, &k, open),
                }
            }
        }
    }
}

/// A childless node: annotation-only, scalar, item-less array, or property-less object.
fn push_leaf(out: &mut String, k: &Keywords<'_>, open: bool) {
    let Some(ty) = k.ty.and_then(Value::as_str) else {
        out.push_str("JsonValue");
        return;
    };
    match ty {
        "array" => out.push_str("JsonValue[]"),
        "object" => out.push_str(if open { "Record<string, JsonValue>" } else { "Record<string, never>" }),
        _ => {
            if let Some(value) = k.constant {
                push_scalar(out, value);
            } else if let Some(Value::Array(values)) = k.enumeration {
                for (index, value) in values.iter().enumerate() {
                    if index > 0 {
                        out.push_str(" | ");
                    }
                    push_scalar(out, value);
                }
            } else {
                out.push_str(if ty == "integer" { "number" } else { ty });
            }
        }
    }
}
