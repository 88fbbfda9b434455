//! The portable-name contract every code backend enforces alike (upstream `@deepseek-ai/dsh-code-runtime`'s
//! shared sets, so a binding namespace valid on one backend is valid on all): the reserved binding globals,
//! the reserved error members, the reserved words of ECMAScript ∪ Python, and upstream `validateBindings`
//! over them. Each backend prefixes the message with its own package name.
//!
//! Spec: RUN-004, RUN-005 (bindings and their error class), RUN-038 (names that need quoting).

use std::collections::HashSet;

use super::CodeRunRequest;

/// Upstream `RESERVED_BINDING_GLOBALS`.
pub const RESERVED_BINDING_GLOBALS: [&str; 5] = ["console", "__dsh_main__", "__builtins__", "__name__", "__debug__"];

/// Upstream `RESERVED_ERROR_MEMBERS`.
pub const RESERVED_ERROR_MEMBERS: [&str; 6] = ["name", "message", "stack", "args", "with_traceback", "add_note"];

/// Upstream `PORTABLE_RESERVED_WORDS` (ECMAScript ∪ Python).
pub const PORTABLE_RESERVED_WORDS: [&str; 71] = [
    "await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
    "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof", "new",
    "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with",
    "yield", "let", "static", "implements", "interface", "package", "private", "protected", "public", "arguments",
    "eval", "False", "None", "True", "and", "as", "assert", "async", "def", "del", "elif", "except", "from",
    "global", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "match", "type", "_",
];

/// The seam's portable identifier subset (upstream `IDENTIFIER`: `^[A-Za-z_][A-Za-z0-9_]*$`).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Upstream `DUNDER_MEMBER` (`^__.+__$`).
pub fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

fn usable(name: &str) -> bool {
    is_identifier(name) && !PORTABLE_RESERVED_WORDS.contains(&name)
}

/// `JSON.stringify` of a string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

/// Upstream `validateBindings`: usable, unreserved, distinct globals first, then each error class (usable,
/// unreserved, colliding with no global or other class, with a usable member property). The first
/// violation's message, without the backend's prefix.
pub fn check_bindings(request: &CodeRunRequest) -> Result<(), String> {
    let mut globals = HashSet::new();
    for namespace in &request.bindings {
        let global = namespace.global.as_str();
        if !usable(global) {
            return Err(format!("binding global {} is not a usable identifier", quoted(global)));
        }
        if RESERVED_BINDING_GLOBALS.contains(&global) {
            return Err(format!("reserved binding global {}", quoted(global)));
        }
        if !globals.insert(global) {
            return Err(format!("duplicate binding global {}", quoted(global)));
        }
    }
    let mut classes = HashSet::new();
    for namespace in &request.bindings {
        let Some(descriptor) = &namespace.error_class else { continue };
        let name = descriptor.name.as_str();
        if !usable(name) {
            return Err(format!("binding error class {} is not a usable identifier", quoted(name)));
        }
        if RESERVED_BINDING_GLOBALS.contains(&name) {
            return Err(format!("reserved binding global {}", quoted(name)));
        }
        if globals.contains(name) || !classes.insert(name) {
            return Err(format!("duplicate injected global {}", quoted(name)));
        }
        let member = descriptor.member_name_property.as_str();
        if member.is_empty() || RESERVED_ERROR_MEMBERS.contains(&member) || is_dunder(member) {
            return Err(format!("binding error member property {} is not usable", quoted(member)));
        }
    }
    Ok(())
}
