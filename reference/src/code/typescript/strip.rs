//! Type stripping (upstream `WorkerThreadCodeRuntime.run`'s strip step): the program is wrapped in the
//! async-function shell `STRIP_WRAP`, stripped in swc's strip-only mode (the stripper Node's
//! `stripTypeScriptTypes` wraps, so the error texts are Node's), and sliced back out. Strip-only mode turns
//! removed syntax into whitespace, so the model's own line and column positions survive.
//!
//! Spec: RUN-003 (TypeScript programs are type-stripped before anything runs; non-erasable syntax such as
//! `enum` is an `exception` carrying the stripper's message).

use std::sync::{Arc, Mutex};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler, HANDLER};
use swc_common::sync::Lrc;
use swc_common::{Globals, SourceMap, GLOBALS};
use swc_ts_fast_strip::{operate, Mode, Options};

/// Upstream's `STRIP_WRAP.prefix`: the grammatical context the program executes in (an async function
/// body, where top-level `await` and `return` are legal).
pub(crate) const STRIP_PREFIX: &str = "async function __dsh_program__() {\n";
/// Upstream's `STRIP_WRAP.suffix`.
pub(crate) const STRIP_SUFFIX: &str = "\n}";

/// Collects each diagnostic's message (the text Node reports as the error's `message`).
struct Collect(Arc<Mutex<Vec<String>>>);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let mut messages = self.0.lock().unwrap_or_else(|p| p.into_inner());
        messages.push(db.message());
    }
}

/// Strip the program's types; `Err` carries the message upstream reports as the `exception`.
pub(crate) fn strip_program(program: &str) -> Result<String, String> {
    let messages = Arc::new(Mutex::new(Vec::new()));
    let handler = Handler::with_emitter(true, false, Box::new(Collect(messages.clone())));
    let cm: Lrc<SourceMap> = Lrc::default();
    let mut options = Options { mode: Mode::StripOnly, ..Default::default() };
    // Node's amaro parses with decorators on (swc's serde default, not `Default`).
    options.parser.decorators = true;
    let input = format!("{STRIP_PREFIX}{program}{STRIP_SUFFIX}");
    let input_len = input.len();
    // swc may panic on inputs it considers bugs; a panic must not cross the runtime.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        GLOBALS.set(&Globals::new(), || HANDLER.set(&handler, || operate(&cm, &handler, input, options)))
    }));
    let first_message = || {
        let messages = messages.lock().unwrap_or_else(|p| p.into_inner());
        messages.first().cloned()
    };
    match outcome {
        Ok(Ok(output)) => {
            let code = output.code;
            // Strip-only keeps every byte position, so the wrap survives unchanged; check rather than trust.
            if code.len() == input_len && code.starts_with(STRIP_PREFIX) && code.ends_with(STRIP_SUFFIX) {
                Ok(code[STRIP_PREFIX.len()..code.len() - STRIP_SUFFIX.len()].to_owned())
            } else {
                Err(first_message().unwrap_or_else(|| "type stripping changed the program shape".to_owned()))
            }
        }
        Ok(Err(error)) => Err(first_message().unwrap_or(error.message)),
        Err(_) => Err(first_message().unwrap_or_else(|| "type stripping failed".to_owned())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::strip_program;

    /// Messages as Node 24's `stripTypeScriptTypes` reports them for the same wrapped input.
    #[test]
    fn messages_match_node() {
        let cases = [
            ("enum E { A }\nreturn 1;", "TypeScript enum is not supported in strip-only mode"),
            ("let x = ;", "Expression expected"),
            ("namespace N { export const a = 1 }", "TypeScript namespace declaration is not supported in strip-only mode"),
            ("class A { constructor(private x: number) {} }", "TypeScript parameter property is not supported in strip-only mode"),
            ("const a = <number>1;", "The angle-bracket syntax for type assertions, `<T>expr`, is not supported in type strip mode. Instead, use the 'as' syntax: `expr as T`."),
            ("return (1", "Expected ',', got '}'"),
            ("const enum C { A }", "TypeScript enum is not supported in strip-only mode"),
            ("}", "Expression expected"),
            ("await foo(", "Expression expected"),
            ("import x from 'y'", "'import', and 'export' cannot be used outside of module code"),
            ("a b", "Expected ';', '}' or <eof>"),
        ];
        for (program, message) in cases {
            assert_eq!(strip_program(program), Err(message.to_owned()), "{program}");
        }
    }

    #[test]
    fn positions_kept() {
        assert_eq!(strip_program("let x: number = 1; return x").as_deref(), Ok("let x         = 1; return x"));
    }
}
