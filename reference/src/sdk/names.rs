//! Python names in the SDK: which schema names may appear bare (method names, `TypedDict` fields),
//! and how class names are derived from tool and field names (CamelCase over identifier runs,
//! `Tool` prefix for a head that cannot start an identifier, NFKC, a 120-UTF-16-unit cap).
//!
//! Spec: SDK-009 (attribute names), SDK-019 (field names), SDK-020 (CamelCase), SDK-021 (the cap).

use super::unicode;

/// Hard keywords, plus `__debug__` (CPython refuses to assign it). Soft keywords stay usable.
fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "False" | "None" | "True" | "and" | "as" | "assert" | "async" | "await" | "break" | "class" | "continue"
            | "def" | "del" | "elif" | "else" | "except" | "finally" | "for" | "from" | "global" | "if" | "import"
            | "in" | "is" | "lambda" | "nonlocal" | "not" | "or" | "pass" | "raise" | "return" | "try" | "while"
            | "with" | "yield" | "__debug__"
    )
}

/// Longest class-name base, in UTF-16 code units (keeps deep chains linear).
const MAX_CLASS_NAME_BASE: usize = 120;

/// `xid_start xid_continue*` (with `_` as a start) on the engine's tables, and NFKC-stable.
pub(crate) fn is_bare_identifier(name: &str) -> bool {
    if name.is_ascii() {
        let bytes = name.as_bytes();
        return bytes.first().is_some_and(|&b| b == b'_' || b.is_ascii_alphabetic())
            && bytes.iter().all(|&b| b == b'_' || b.is_ascii_alphanumeric());
    }
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c == '_' || unicode::is_xid_start(c) => {}
        _ => return false,
    }
    chars.all(unicode::is_xid_continue) && unicode::is_nfkc_stable(name)
}

/// A name usable as a class-syntax `TypedDict` field: bare, not reserved, not name-mangled (`__x`).
pub(crate) fn is_field_name(name: &str) -> bool {
    let mangled = name.starts_with("__") && !name.ends_with("__");
    is_bare_identifier(name) && !is_reserved(name) && !mangled
}

/// A tool name reachable as `tools.name`: bare, not reserved, not underscore-leading.
pub(crate) fn is_attribute_name(name: &str) -> bool {
    is_bare_identifier(name) && !is_reserved(name) && !name.starts_with('_')
}

/// CamelCase class-name segment for a tool or field name.
pub(crate) fn camel_case(raw: &str) -> String {
    if raw.is_ascii() {
        return camel_case_ascii(raw);
    }
    let mut joined = String::with_capacity(raw.len() + 4);
    for part in raw.split(|c: char| c == '_' || !unicode::is_xid_continue(c)).filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(head) = chars.next() {
            // The engine upper-cases the first UTF-16 unit alone: an astral head stays as it is.
            if (head as u32) < 0x1_0000 {
                joined.extend(head.to_uppercase());
            } else {
                joined.push(head);
            }
            joined.push_str(chars.as_str());
        }
    }
    let joined = unicode::nfkc(&joined).into_owned();
    let prefixed = if joined.chars().next().is_some_and(unicode::is_xid_start) { joined } else { format!("Tool{joined}") };
    unicode::nfkc(&prefixed).into_owned()
}

/// [`camel_case`] of an ASCII name: `XID_Continue` is `[A-Za-z0-9_]` there, upper-casing is ASCII and
/// NFKC changes nothing, so one pass builds the name.
fn camel_case_ascii(raw: &str) -> String {
    let mut joined = String::with_capacity(raw.len() + 4);
    for part in raw.split(|c: char| !c.is_ascii_alphanumeric()).filter(|p| !p.is_empty()) {
        let (head, rest) = part.split_at(1);
        joined.extend(head.chars().map(|c| c.to_ascii_uppercase()));
        joined.push_str(rest);
    }
    if !joined.starts_with(|c: char| c.is_ascii_alphabetic()) {
        joined.insert_str(0, "Tool");
    }
    joined
}

/// The longest prefix of whole characters within [`MAX_CLASS_NAME_BASE`] UTF-16 units.
pub(crate) fn cap_class_name(base: &str) -> &str {
    if base.len() <= MAX_CLASS_NAME_BASE {
        return base;
    }
    let mut units = 0;
    for (index, c) in base.char_indices() {
        units += c.len_utf16();
        if units > MAX_CLASS_NAME_BASE {
            return &base[..index];
        }
    }
    base
}

/// A child's class-name base: parent base + segment, NFKC-normalized (the seam can compose), capped.
pub(crate) fn child_class_name(base: &str, segment: &str) -> String {
    if base.is_ascii() && segment.is_ascii() {
        let mut joined = String::with_capacity((base.len() + segment.len()).min(MAX_CLASS_NAME_BASE));
        joined.push_str(base);
        joined.push_str(segment);
        joined.truncate(MAX_CLASS_NAME_BASE);
        return joined;
    }
    let joined = format!("{base}{segment}");
    let normalized = unicode::nfkc(&joined);
    cap_class_name(&normalized).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names() {
        assert_eq!(camel_case("read_file"), "ReadFile");
        assert_eq!(camel_case("my-tool v2"), "MyToolV2");
        assert_eq!(camel_case("2fa"), "Tool2fa");
        assert_eq!(camel_case(""), "Tool");
        assert_eq!(camel_case("路径"), "路径");
        assert_eq!(camel_case("straße"), "Straße");
        assert_eq!(camel_case("ßx"), "SSx");
        assert_eq!(cap_class_name(&"a".repeat(130)).len(), 120);
        assert_eq!(cap_class_name(&format!("{}😀", "a".repeat(119))), "a".repeat(119));
    }

    #[test]
    fn identifiers() {
        assert!(is_field_name("path"));
        assert!(is_field_name("match"));
        assert!(is_field_name("__init__"));
        assert!(!is_field_name("__token"));
        assert!(!is_field_name("class"));
        assert!(!is_field_name("ﬁeld"));
        assert!(is_attribute_name("路径"));
        assert!(!is_attribute_name("_private"));
    }
}
