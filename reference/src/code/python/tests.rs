//! Unit tests of the Python runtime that need no interpreter (the end-to-end suite is
//! `reference/tests/code_python.rs`).
//!
//! Spec: the runtime's misuse checks (upstream `validateBindings`, config validation).

#![allow(clippy::unwrap_used)]

use super::*;

fn request(bindings: Vec<crate::code::CodeBindingNamespace>) -> CodeRunRequest {
    CodeRunRequest { program: String::new(), bindings, signal: crate::code::RunSignal::new(), state_owner: None }
}

fn namespace(global: &str, class: Option<(&str, &str)>) -> crate::code::CodeBindingNamespace {
    crate::code::CodeBindingNamespace {
        global: global.to_owned(),
        functions: Vec::new().into(),
        error_class: class.map(|(name, member)| CodeBindingErrorClass { name: name.to_owned(), member_name_property: member.to_owned() }),
    }
}

fn misuse_of(bindings: Vec<crate::code::CodeBindingNamespace>) -> String {
    match validate_bindings(&request(bindings)) {
        Ok(_) => String::new(),
        Err(e) => e.message,
    }
}

#[test]
fn bindings_are_validated_like_upstream() {
    assert_eq!(misuse_of(vec![namespace("tools", Some(("ToolCallError", "toolName")))]), "");
    assert_eq!(misuse_of(vec![namespace("lambda", None)]), "dsh-code-runtime-python: binding global \"lambda\" is not a usable identifier");
    assert_eq!(misuse_of(vec![namespace("$x", None)]), "dsh-code-runtime-python: binding global \"$x\" is not a usable identifier");
    assert_eq!(misuse_of(vec![namespace("__name__", None)]), "dsh-code-runtime-python: reserved binding global \"__name__\"");
    assert_eq!(misuse_of(vec![namespace("a", None), namespace("a", None)]), "dsh-code-runtime-python: duplicate binding global \"a\"");
    assert_eq!(misuse_of(vec![namespace("a", Some(("a", "m")))]), "dsh-code-runtime-python: duplicate injected global \"a\"");
    assert_eq!(
        misuse_of(vec![namespace("a", Some(("E", "args")))]),
        "dsh-code-runtime-python: binding error member property \"args\" is not usable"
    );
    assert_eq!(
        misuse_of(vec![namespace("a", Some(("E", "__x__")))]),
        "dsh-code-runtime-python: binding error member property \"__x__\" is not usable"
    );
}

#[test]
fn limits_are_validated_like_upstream() {
    let bad = CodeRuntimeLimits { compute_ms: 0.0, ..CodeRuntimeLimits::default() };
    assert_eq!(validate_limits(&bad).unwrap_err().message, "dsh-code-runtime-python: config.computeMs must be a positive number, got 0");
    let bad = CodeRuntimeLimits { max_output_bytes: 3, ..CodeRuntimeLimits::default() };
    assert_eq!(
        validate_limits(&bad).unwrap_err().message,
        "dsh-code-runtime-python: config.maxOutputBytes must be a safe integer of at least 4, got 3"
    );
    assert!(validate_limits(&CodeRuntimeLimits::default()).is_ok());
}
