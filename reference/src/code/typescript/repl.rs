//! REPL retention for the TypeScript backend (seed 002, `persistent-in-memory`): which names a program
//! declares at its top level, and the one statement that keeps them. A program is the body of an async
//! function, so its `let`, `const`, `class`, `function` and `var` declarations are that function's locals;
//! a persistent run prepends, on the program's first line (line numbers stay the program's own), a
//! closure over exactly those names that makes each an accessor property of the global object over the
//! run's own binding. The engine calls it once the program has settled, so a later run of the same owner
//! reads and assigns the live bindings (what the earlier run's functions see, CDM-049), and a `const`
//! stays constant: its setter's assignment throws a TypeError.
//!
//! Declarations kept: every declaration statement of the body's top level (`var`, `let`, `const` with
//! their destructuring patterns, `function`, `class`) and `var` declarations nested in blocks and loops
//! (they are function-scoped); never anything inside a nested function or class, nor a block-scoped
//! declaration of a nested block. A name still in its temporal dead zone (the program returned before
//! reaching it) is skipped, as is one the global object refuses (`undefined`).
//!
//! Spec: CDM-036, CDM-049.

use swc_common::BytePos;
use swc_ecma_ast::{Decl, ForHead, ObjectPatProp, Pat, Stmt, VarDeclKind, VarDeclOrExpr};
use swc_ecma_parser::{EsSyntax, Parser, StringInput, Syntax};

use super::strip::{STRIP_PREFIX, STRIP_SUFFIX};

/// The parameter a persistent run's program receives: `{ global, keep }` (the real global object, and the
/// closure the keep statement installs).
pub(crate) const SLOT: &str = "__dsh_repl__";

/// The names `code` (a stripped program) declares at its top level, in source order, each once. A program
/// that does not parse declares nothing (compiling it fails the run anyway).
pub(crate) fn top_level_names(code: &str) -> Vec<String> {
    let wrapped = format!("{STRIP_PREFIX}{code}{STRIP_SUFFIX}");
    let end = u32::try_from(wrapped.len()).unwrap_or(u32::MAX - 1).saturating_add(1);
    let input = StringInput::new(&wrapped, BytePos(1), BytePos(end));
    let mut parser = Parser::new(Syntax::Es(EsSyntax::default()), input, None);
    let Ok(script) = parser.parse_script() else { return Vec::new() };
    let mut names = Vec::new();
    let body = script.body.first().and_then(|stmt| match stmt {
        Stmt::Decl(Decl::Fn(function)) => function.function.body.as_ref(),
        _ => None,
    });
    if let Some(body) = body {
        for stmt in &body.stmts {
            collect(stmt, true, &mut names);
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names
}

/// The keep statement for `names` (one line, no newline): it stores a closure on the slot that makes each
/// name an accessor of the slot's `global` reading and assigning the run's own binding (a `const`'s
/// assignment throws there, as in the run), skipping one in its dead zone (reading it throws) or refused
/// by the global object (a non-configurable property).
pub(crate) fn keep_statement(names: &[String]) -> String {
    let mut out = format!("{SLOT}.keep = () => {{ const __dsh_g__ = {SLOT}.global, __dsh_d__ = {SLOT}.define;");
    for name in names {
        let key = serde_json::Value::String(name.clone()).to_string();
        out.push_str(&format!(
            " try {{ {name}; __dsh_d__(__dsh_g__, {key}, {{ get: () => {name}, set: (__dsh_v__) => {{ {name} = __dsh_v__; }}, configurable: true, enumerable: true }}); }} catch {{}}"
        ));
    }
    out.push_str(" };");
    out
}

fn collect(stmt: &Stmt, top: bool, names: &mut Vec<String>) {
    match stmt {
        Stmt::Decl(Decl::Var(var)) if top || var.kind == VarDeclKind::Var => {
            for declarator in &var.decls {
                pattern(&declarator.name, names);
            }
        }
        Stmt::Decl(Decl::Fn(function)) if top => names.push(function.ident.sym.to_string()),
        Stmt::Decl(Decl::Class(class)) if top => names.push(class.ident.sym.to_string()),
        Stmt::Block(block) => block.stmts.iter().for_each(|s| collect(s, false, names)),
        Stmt::Labeled(labeled) => collect(&labeled.body, false, names),
        Stmt::If(branch) => {
            collect(&branch.cons, false, names);
            if let Some(alt) = &branch.alt {
                collect(alt, false, names);
            }
        }
        Stmt::Try(attempt) => {
            attempt.block.stmts.iter().for_each(|s| collect(s, false, names));
            if let Some(handler) = &attempt.handler {
                handler.body.stmts.iter().for_each(|s| collect(s, false, names));
            }
            if let Some(finalizer) = &attempt.finalizer {
                finalizer.stmts.iter().for_each(|s| collect(s, false, names));
            }
        }
        Stmt::While(looped) => collect(&looped.body, false, names),
        Stmt::DoWhile(looped) => collect(&looped.body, false, names),
        Stmt::For(looped) => {
            if let Some(VarDeclOrExpr::VarDecl(var)) = &looped.init {
                if var.kind == VarDeclKind::Var {
                    var.decls.iter().for_each(|d| pattern(&d.name, names));
                }
            }
            collect(&looped.body, false, names);
        }
        Stmt::ForIn(looped) => {
            for_head(&looped.left, names);
            collect(&looped.body, false, names);
        }
        Stmt::ForOf(looped) => {
            for_head(&looped.left, names);
            collect(&looped.body, false, names);
        }
        Stmt::Switch(switch) => {
            for case in &switch.cases {
                case.cons.iter().for_each(|s| collect(s, false, names));
            }
        }
        _ => {}
    }
}

fn for_head(head: &ForHead, names: &mut Vec<String>) {
    if let ForHead::VarDecl(var) = head {
        if var.kind == VarDeclKind::Var {
            var.decls.iter().for_each(|d| pattern(&d.name, names));
        }
    }
}

fn pattern(pat: &Pat, names: &mut Vec<String>) {
    match pat {
        Pat::Ident(binding) => names.push(binding.id.sym.to_string()),
        Pat::Array(array) => array.elems.iter().flatten().for_each(|p| pattern(p, names)),
        Pat::Rest(rest) => pattern(&rest.arg, names),
        Pat::Assign(assign) => pattern(&assign.left, names),
        Pat::Object(object) => {
            for prop in &object.props {
                match prop {
                    ObjectPatProp::KeyValue(kv) => pattern(&kv.value, names),
                    ObjectPatProp::Assign(assign) => names.push(assign.key.id.sym.to_string()),
                    ObjectPatProp::Rest(rest) => pattern(&rest.arg, names),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{keep_statement, top_level_names};

    #[test]
    fn top_level_declarations_and_function_scoped_vars() {
        let code = "let a = 1; const { b, c: [d, ...e], f = 2, ...g } = o; function h() { var inner; }\n\
                    class K {}\nif (x) { var v = 1; let blockLocal = 2; function blockFn() {} }\n\
                    for (var i = 0; i < 1; i++) {} for (var k in o) {} for (var [m] of o) {}\n\
                    try { var t; } catch (err) { var u; } finally { var w; }\nreturn a;";
        assert_eq!(top_level_names(code), ["a", "b", "d", "e", "f", "g", "h", "K", "v", "i", "k", "m", "t", "u", "w"]);
    }

    #[test]
    fn unparsable_programs_declare_nothing() {
        assert!(top_level_names("let = ;").is_empty());
        assert!(top_level_names("return 1").is_empty());
    }

    #[test]
    fn the_keep_statement_is_one_line() {
        let statement = keep_statement(&["x".to_owned(), "f".to_owned()]);
        assert!(!statement.contains('\n'));
        assert_eq!(
            statement,
            "__dsh_repl__.keep = () => { const __dsh_g__ = __dsh_repl__.global, __dsh_d__ = __dsh_repl__.define; \
             try { x; __dsh_d__(__dsh_g__, \"x\", { get: () => x, set: (__dsh_v__) => { x = __dsh_v__; }, configurable: true, enumerable: true }); } catch {} \
             try { f; __dsh_d__(__dsh_g__, \"f\", { get: () => f, set: (__dsh_v__) => { f = __dsh_v__; }, configurable: true, enumerable: true }); } catch {} };"
        );
    }
}
