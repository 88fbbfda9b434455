//! Tests of the TypeScript runtime against upstream's observed behaviour (strings captured from
//! `@deepseek-ai/dsh-code-runtime-worker-thread@0.1.0-rc.8` on Node 24).
//!
//! Spec: RUN-002, RUN-003, RUN-005, RUN-007, RUN-022, RUN-023, RUN-026, RUN-027, RUN-028, RUN-029,
//! RUN-031, RUN-032.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{json, Value};

use super::TypeScriptRuntime;
use crate::code::{
    BindingFn, CodeBindingErrorClass, CodeBindingNamespace, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    CodeRuntimeLimits, RunSignal,
};

fn binding(f: impl Fn(Option<Value>) -> Result<Value, String> + Send + Sync + 'static) -> BindingFn {
    let f = Arc::new(f);
    Arc::new(move |arg| {
        let f = f.clone();
        Box::pin(async move { f(arg) })
    })
}

fn tools() -> CodeBindingNamespace {
    CodeBindingNamespace {
        global: "tools".to_owned(),
        functions: vec![
            ("echo".to_owned(), binding(|a| Ok(a.unwrap_or(Value::Null)))),
            ("fail".to_owned(), binding(|a| Err(format!("boom {}", serde_json::to_string(&a.unwrap_or(Value::Null)).unwrap())))),
            ("negz".to_owned(), binding(|_| Ok(json!(-0.0)))),
            (
                "slow".to_owned(),
                Arc::new(|a: Option<Value>| {
                    Box::pin(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        Ok(a.unwrap_or(Value::Null))
                    }) as crate::callback::BoxFuture<'static, Result<Value, String>>
                }),
            ),
        ]
        .into(),
        error_class: Some(CodeBindingErrorClass { name: "ToolCallError".to_owned(), member_name_property: "toolName".to_owned() }),
    }
}

fn limits() -> CodeRuntimeLimits {
    CodeRuntimeLimits { compute_ms: 2_000.0, max_wall_ms: 10_000.0, max_output_bytes: 1 << 20, max_heap_bytes: 64 << 20, max_model_text_bytes: None }
}

async fn run_with(limits: CodeRuntimeLimits, program: &str, signal: RunSignal) -> CodeRunResult {
    let runtime = TypeScriptRuntime::new(limits).unwrap();
    runtime.run(CodeRunRequest { program: program.to_owned(), bindings: vec![tools()], signal, state_owner: None }).await.unwrap()
}

async fn run(program: &str) -> CodeRunResult {
    run_with(limits(), program, RunSignal::new()).await
}

fn error_of(result: &CodeRunResult) -> (CodeRunErrorKind, &str) {
    let error = result.error.as_ref().unwrap_or_else(|| panic!("no error: {result:?}"));
    (error.kind, error.message.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_level_await_and_return() {
    let result = run("const x: number = await tools.echo({a: 1}); console.log('got', x); return [x, 2];").await;
    assert_eq!(result.error, None);
    assert_eq!(result.logs, vec!["got { a: 1 }"]);
    assert_eq!(result.value, Some(json!([{"a": 1}, 2])));
}


fn limits_with(f: impl FnOnce(&mut CodeRuntimeLimits)) -> CodeRuntimeLimits {
    let mut l = limits();
    f(&mut l);
    l
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_error_is_a_real_class() {
    let result = run(
        "try { await tools.fail({a: 1}); } catch (e) { return [e instanceof ToolCallError, e instanceof Error, e.toolName, e.name, e.message, Object.keys(e)]; }",
    )
    .await;
    assert_eq!(result.value, Some(json!([true, true, "fail", "ToolCallError", "boom {\"a\":1}", ["name", "toolName"]])));
    // Uncaught: upstream reports `error.stack`, whose first line is `ToolCallError: <message>`.
    let result = run("await tools.fail(2)").await;
    let (kind, message) = error_of(&result);
    assert_eq!(kind, CodeRunErrorKind::Exception);
    assert!(message.starts_with("ToolCallError: boom 2\n    at "), "{message}");
}

/// Each line as upstream (rc.8, Node 24 `util.inspect`) printed it for the same program.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_formats_like_upstream() {
    let program = r#"
console.log("got", {x: 1}, [1, 2], "s");
console.log({a: {b: {c: {d: {e: {f: 1}}}}}});
console.log(new Map([[1, 2], ["a", {b: 1}]]), new Set([1, "x"]));
console.log(-0, 1n, undefined, null, true, 1.5, NaN, -Infinity, 1e21, 2**60);
console.log({s: 'it\'s', t: "q\"", n: "a\nb"}, ['x']);
function f() {} const g = () => 1; class K { constructor() { this.v = 1; } } class Empty {}
console.log(f, g, K, new K(), new Empty(), async function af() {}, function* gen() {});
console.info([undefined, null, , 3]);
console.warn({}, [], Object.create(null), {__proto__: null, a: 1});
console.debug(Symbol("s"), {[Symbol("k")]: 1, 'a-b': 2, 1: 3, valid_id: 4});
console.log(Array.from({length: 120}, (_, i) => i));
console.log({arr: [[1, [2, [3, [4, [5]]]]]]});
console.log(new Date(0), /re/g, new Uint8Array(2));
const c = {a: 1}; c.self = c; console.log(c);
console.log({get x() { return 1; }, set y(v) {}});
console.log("a".repeat(3), ["a".repeat(20)], {long: "x".repeat(90)});
console.log({a: 1, b: 'two', c: [1, 2, 3], d: {e: 'f'}, g: null, h: undefined, i: true, j: 'jjjjjjjjjjjjjjjjjjj'});
console.log(Promise.resolve(1), new WeakMap(), [function named() {}]);
console.log(new (class Foo extends Map {})([[1,2]]));
console.log(new Boolean(true), new Number(3), new String("ab"));
console.log([1.5, -0, 0], {'': 1});
console.log(Object.create({inherited: 1}));
console.log(tools, tools.echo);
console.log([ 'aaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccc', 'ddddddddddddddddddd' ]);
console.log(Array.from({length: 30}, (_, i) => i * 1000));
console.log({x: [{y: 1}, {z: [1, 2]}]});
console.log(new Set(), new Map(), [[]], [{}]);
console.error(new Error("bad"));
"#;
    let expected = [
        "got { x: 1 } [ 1, 2 ] s",
        "{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  }\n}",
        "Map(2) { 1 => 2, 'a' => { b: 1 } } Set(2) { 1, 'x' }",
        "-0 1n undefined null true 1.5 NaN -Infinity 1e+21 1152921504606847000",
        "{ s: \"it's\", t: 'q\"', n: 'a\\nb' } [ 'x' ]",
        "[Function: f] [Function: g] [class K] K { v: 1 } Empty {} [AsyncFunction: af] [GeneratorFunction: gen]",
        "[ undefined, null, <1 empty item>, 3 ]",
        "{} [] [Object: null prototype] {} [Object: null prototype] { a: 1 }",
        "Symbol(s) { '1': 3, 'a-b': 2, valid_id: 4, Symbol(k): 1 }",
        "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 20 more items\n]",
        "{\n  arr: [\n    [ 1, [ 2, [ 3, [Array] ] ] ]\n  ]\n}",
        "1970-01-01T00:00:00.000Z /re/g Uint8Array(2) [ 0, 0 ]",
        "<ref *1> { a: 1, self: [Circular *1] }",
        "{ x: [Getter], y: [Setter] }",
        "aaa [ 'aaaaaaaaaaaaaaaaaaaa' ] {\n  long: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n}",
        "{\n  a: 1,\n  b: 'two',\n  c: [ 1, 2, 3 ],\n  d: { e: 'f' },\n  g: null,\n  h: undefined,\n  i: true,\n  j: 'jjjjjjjjjjjjjjjjjjj'\n}",
        "Promise { 1 } WeakMap { <items unknown> } [ [Function: named] ]",
        "Foo(1) [Map] { 1 => 2 }",
        "[Boolean: true] [Number: 3] [String: 'ab']",
        "[ 1.5, -0, 0 ] { '': 1 }",
        "{}",
        "[Object: null prototype] {\n  echo: [Function: value],\n  fail: [Function: value],\n  negz: [Function: value],\n  slow: [Function: value]\n} [Function: value]",
        "[\n  'aaaaaaaaaaaaaaaaaaaaa',\n  'bbbbbbbbbbbbbbbbbbbbbbbbb',\n  'cccccccccccccccccccccccc',\n  'ddddddddddddddddddd'\n]",
        "[\n      0,  1000,  2000,  3000,  4000,\n   5000,  6000,  7000,  8000,  9000,\n  10000, 11000, 12000, 13000, 14000,\n  15000, 16000, 17000, 18000, 19000,\n  20000, 21000, 22000, 23000, 24000,\n  25000, 26000, 27000, 28000, 29000\n]",
        "{\n  x: [ { y: 1 }, { z: [ 1, 2 ] } ]\n}",
        "Set(0) {} Map(0) {} [ [] ] [ {} ]",
    ];
    let result = run(program).await;
    assert_eq!(result.error, None);
    let (stack, logs) = result.logs.split_last().unwrap();
    for (got, want) in logs.iter().zip(expected) {
        assert_eq!(got, want);
    }
    assert_eq!(logs.len(), expected.len());
    // An error prints its stack (frames are the engine's own).
    assert!(stack.starts_with("Error: bad\n    at "), "{stack}");
}

/// More `util.inspect` cases, each line as upstream printed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_formats_like_upstream_more() {
    // Upstream's line for `['y'.repeat(10003)]`: the string cut at maxStringLength.
    let long_string_line = format!("[\n  '{}'... 3 more characters\n]", "y".repeat(10_000));

    let program = r#"console.log(new Error("outer", { cause: new Error("inner") }).cause.message);
console.log({a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8});
console.log(['x'.repeat(30), 'y'.repeat(30), 'z'.repeat(30)]);
console.log({text: "line one\nline two\nline three which is long enough to split the string"});
console.log(["a\nb"]);
console.log([-1, 20, -300, 4000, 5, 6, 7, 8]);
console.log([1, 'a', 2, 'bb', 3, 'ccc', 4, 'dddd']);
console.log(Object.assign([1, 2], {x: 1}));
console.log([1n, 2n, 3n, 4n, 5n, 6n, 7n]);
console.log([, , 1, , ]);
console.log([Symbol('a'), Symbol.iterator]);
console.log({[Symbol.toStringTag]: 'Custom', a: 1});
class T { get [Symbol.toStringTag]() { return 'Tagged'; } }
console.log(new T());
console.log(Object.assign(new Number(5), {k: 1}));
console.log(new Date(NaN));
function withProps() {} withProps.x = 1; console.log(withProps);
class Base {} class Derived extends Base {} console.log(Derived, class {}, new Derived());
function fb() {} console.log(fb.bind(null), (() => {}), function () {});
console.log({n: {__proto__: null, x: {}}});
console.log(Object.freeze({a: [1]}));
(function () { console.log(arguments); })(1, 2);
console.log([{a: 1, b: 2}, {a: 3, b: 4}, {a: 5, b: 6}, {a: 7, b: 8}]);
console.log(new Map([[{a: 1}, [1, 2]], ['k', new Set([1])]]));
console.log('x'.repeat(10005).length, ['y'.repeat(10003)].toString().length);
console.log(['y'.repeat(10003)]);
console.log([0.1, 0.2, 1e-7, 123456789012, -5e-324]);
console.log({ 'key with space': 1, 'ünï': 2, $dollar: 3, _u: 4, '0x': 5 });
console.log([[1, 2, [3, 4, [5, 6, [7, 8, [9]]]]]]);
console.log(new Array(5));
console.log([undefined, , null]);
console.log(Object.create(Array.prototype));
console.log({ f() {}, async g() {}, *h() {} });
console.log(new Proxy({a: 1}, {}));
console.log([new Error('in array')].length, typeof Symbol());
console.log(String(Symbol('d')), [null, undefined].join('-'));
console.log("%s %d", "fmt", 5);
console.log(globalThis === this, typeof globalThis);
"#;
    let expected = [
        "inner",
        "{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8 }",
        "[\n  'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n  'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy',\n  'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'\n]",
        "{\n  text: 'line one\\nline two\\nline three which is long enough to split the string'\n}",
        "[ 'a\\nb' ]",
        "[\n  -1, 20, -300, 4000,\n   5,  6,    7,    8\n]",
        "[\n  1,    'a',    2,\n  'bb', 3,      'ccc',\n  4,    'dddd'\n]",
        "[ 1, 2, x: 1 ]",
        "[\n  1n, 2n, 3n, 4n,\n  5n, 6n, 7n\n]",
        "[ <2 empty items>, 1, <1 empty item> ]",
        "[ Symbol(a), Symbol(Symbol.iterator) ]",
        "{ a: 1, Symbol(Symbol.toStringTag): 'Custom' }",
        "T [Tagged] {}",
        "[Number: 5] { k: 1 }",
        "Invalid Date",
        "[Function: withProps] { x: 1 }",
        "[class Derived extends Base] [class (anonymous)] Derived {}",
        "[Function: bound fb] [Function (anonymous)] [Function (anonymous)]",
        "{ n: [Object: null prototype] { x: {} } }",
        "{ a: [ 1 ] }",
        "[Arguments] { '0': 1, '1': 2 }",
        "[ { a: 1, b: 2 }, { a: 3, b: 4 }, { a: 5, b: 6 }, { a: 7, b: 8 } ]",
        "Map(2) { { a: 1 } => [ 1, 2 ], 'k' => Set(1) { 1 } }",
        "10005 10003",
        long_string_line.as_str(),
        "[ 0.1, 0.2, 1e-7, 123456789012, -5e-324 ]",
        "{ 'key with space': 1, 'ünï': 2, '$dollar': 3, _u: 4, '0x': 5 }",
        "[\n  [\n    1,\n    2,\n    [ 3, 4, [ 5, 6, [ 7, 8, [Array] ] ] ]\n  ]\n]",
        "[ <5 empty items> ]",
        "[ undefined, <1 empty item>, null ]",
        "Array {}",
        "{ f: [Function: f], g: [AsyncFunction: g], h: [GeneratorFunction: h] }",
        "{ a: 1 }",
        "1 symbol",
        "Symbol(d) -",
        "%s %d fmt 5",
        "false object"
    ];
    let result = run(program).await;
    assert_eq!(result.error, None);
    for (got, want) in result.logs.iter().zip(expected) {
        assert_eq!(got, want);
    }
    assert_eq!(result.logs.len(), expected.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_strip_errors_end_the_run_before_anything_runs() {
    let result = run("console.log('ran');\nenum E { A }\nreturn 1;").await;
    assert_eq!(result.logs, Vec::<String>::new());
    assert_eq!(error_of(&result), (CodeRunErrorKind::Exception, "TypeScript enum is not supported in strip-only mode"));
    let result = run("console.log('ran'); let x = ;").await;
    assert_eq!(result.logs, Vec::<String>::new());
    assert_eq!(error_of(&result), (CodeRunErrorKind::Exception, "Expression expected"));
    let result = run("a b").await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::Exception, "Expected ';', '}' or <eof>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_binding_is_named_like_v8() {
    let result = run("const x = 1;\nreturn await tools.nope({})").await;
    let (kind, message) = error_of(&result);
    assert_eq!(kind, CodeRunErrorKind::Exception);
    assert!(message.starts_with("TypeError: tools.nope is not a function\n    at "), "{message}");
    let result = run("try { tools.nope() } catch (e) { console.log(e) }").await;
    assert!(result.logs[0].starts_with("TypeError: tools.nope is not a function\n    at "), "{:?}", result.logs);
}

/// Upstream captures raw stream writes as entries of their own, unsplit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_stream_writes_are_log_entries() {
    let result = run("process.stdout.write('raw\\n'); await new Promise(r => process.stderr.write('e', r)); console.log(1, {a: 1}, [1, 2], 's', undefined, null); return Object.keys(process.env).length").await;
    assert_eq!(result.logs, vec!["raw\n", "e", "1 { a: 1 } [ 1, 2 ] s undefined null"]);
    assert_eq!(result.value, Some(json!(0)));
}

/// A program may tie host-made objects into cycles; the run still tears down cleanly (an engine value held
/// by a Rust closure would survive the engine and abort the process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_made_cycles_through_host_objects_are_collected() {
    let program = "ToolCallError.keep = tools.echo; ToolCallError.prototype.ns = tools; tools.echo.self = tools.echo;
        console.log.c = console; setTimeout.t = setTimeout; process.stdout.write.p = process; return 1";
    assert_eq!(run(program).await.value, Some(json!(1)));
    let pending = "ToolCallError.keep = tools.slow; tools.slow.p = tools.slow(1); setTimeout(() => {}, 100000); return 2";
    assert_eq!(run(pending).await.value, Some(json!(2)));
}

/// A binding that panics (when called or while polled) rejects that call; nothing crashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_bindings_reject_the_call() {
    let at_call: BindingFn = Arc::new(|_| panic!("at call"));
    let at_poll: BindingFn = Arc::new(|_| Box::pin(async { panic!("at poll") }));
    let namespace = CodeBindingNamespace {
        global: "host".to_owned(),
        functions: vec![("a".to_owned(), at_call), ("b".to_owned(), at_poll)].into(),
        error_class: Some(CodeBindingErrorClass { name: "HostError".to_owned(), member_name_property: "fn".to_owned() }),
    };
    let runtime = TypeScriptRuntime::new(limits()).unwrap();
    let program = "const out = []; for (const f of [host.a, host.b]) { try { await f({}); } catch (e) { out.push([e instanceof HostError, e.fn, e.message]); } } return out";
    let request = CodeRunRequest { program: program.to_owned(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: None };
    let result = runtime.run(request).await.unwrap();
    assert_eq!(result.value, Some(json!([[true, "a", "binding panicked"], [true, "b", "binding panicked"]])));
}

/// A fresh runtime per run: globals do not leak between runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_start_fresh() {
    let runtime = TypeScriptRuntime::new(limits()).unwrap();
    let request = |program: &str| CodeRunRequest { program: program.to_owned(), bindings: vec![tools()], signal: RunSignal::new(), state_owner: None };
    let first = runtime.run(request("globalThis.leftover = 41; return typeof globalThis.leftover")).await.unwrap();
    let second = runtime.run(request("return typeof globalThis.leftover")).await.unwrap();
    assert_eq!((first.value, second.value), (Some(json!("number")), Some(json!("undefined"))));
}

/// Upstream's worker dies of an unhandled rejection (or an uncaught timer error) while the program runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unhandled_rejections_kill_the_run() {
    let cases = [
        ("tools.fail(1); await new Promise(r => setTimeout(r, 20)); return 1", "worker error: boom 1"),
        ("setTimeout(() => { throw new Error('late') }, 1); await new Promise(r => setTimeout(r, 50)); return 1", "worker error: late"),
        ("Promise.reject('str'); await new Promise(r => setTimeout(r, 20)); return 1", "worker error: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason \"str\"."),
        ("Promise.reject({a: 1}); await new Promise(r => setTimeout(r, 20)); return 1", "worker error: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason \"#<Object>\"."),
    ];
    for (program, message) in cases {
        assert_eq!(error_of(&run(program).await), (CodeRunErrorKind::WorkerExit, message), "{program}");
    }
    // Handled within the same microtask drain, or settled with the program: no failure.
    let handled = "const p = Promise.reject(new Error('h')); await null; p.catch(() => {}); await new Promise(r => setTimeout(r, 20)); return 1";
    assert_eq!(run(handled).await.value, Some(json!(1)));
    assert_eq!(run("Promise.reject(new Error('x')); return 2").await.value, Some(json!(2)));
    assert_eq!(run("try { await tools.echo() } catch {} return 3").await.value, Some(json!(3)));
}

/// 100,000 levels through a binding and back out as the completion: every walk is iterative.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_values_cross_both_ways() {
    let program = "let v = 1; for (let i = 0; i < 100000; i++) v = [v]; const back = await tools.echo(v); console.log(back); return back";
    // Debug builds walk slowly; the budget is not what this test is about.
    let result = run_with(limits_with(|l| l.compute_ms = 60_000.0), program, RunSignal::new()).await;
    assert_eq!(result.error, None);
    // Node's own text for this value (depth 4, compact 3).
    assert_eq!(result.logs, vec!["[\n  [\n    [ [ [ [Array] ] ] ]\n  ]\n]"]);
    let value = result.value.unwrap();
    let mut depth = 0;
    let mut at = &value;
    while let Value::Array(items) = at {
        depth += 1;
        at = &items[0];
    }
    assert_eq!((depth, at), (100_000, &json!(1)));
    crate::value::dismantle(value);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrown_values_render_like_upstream() {
    assert_eq!(error_of(&run("throw 'str'").await), (CodeRunErrorKind::Exception, "str"));
    assert_eq!(error_of(&run("throw {a: 1}").await), (CodeRunErrorKind::Exception, "[object Object]"));
    let result = run("null.x").await;
    let (kind, message) = error_of(&result);
    assert_eq!(kind, CodeRunErrorKind::Exception);
    assert!(message.starts_with("TypeError: ") && message.contains("\n    at "), "{message}");
}

/// Upstream's answers for the same calls: each lossy argument rejects only its own call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lossless_violations_reject_only_that_call() {
    let program = r#"
const out = [];
for (const [label, f] of [["noarg", () => tools.echo()], ["undef", () => tools.echo(undefined)], ["negz", () => tools.echo(-0)], ["nested-undef", () => tools.echo({a: undefined})], ["bigint", () => tools.echo(1n)], ["map", () => tools.echo(new Map())], ["sparse", () => tools.echo([1,,2])], ["nan", () => tools.echo(NaN)], ["fn", () => tools.echo(() => 1)], ["ok", () => tools.echo({a: [1, "x", null, true]})], ["getter", () => tools.echo({get x() { return 1; }})], ["res-negz", () => tools.negz({})], ["fail", () => tools.fail(1)]]) {
  try { out.push([label, await f()]); } catch (e) { out.push([label, e instanceof ToolCallError, e.toolName, e.message]); }
}
const c = {}; c.c = c;
try { await tools.echo(c); } catch (e) { out.push(["cycle", e.message]); }
const shared = {z: 1};
out.push(["shared", await tools.echo({a: shared, b: shared})]);
for (const v of [Object.defineProperty({}, 'h', {value: 1}), {[Symbol('s')]: 1}, Object.assign([1], {x: 2}), new Date(0), new (class A {})(), Infinity]) {
  try { await tools.echo(v); out.push('accepted'); } catch (e) { out.push(e.message); }
}
out.push(await tools.echo({__proto__: null, k: [{}, [], '', 0, -1.5, 2**53]}));
return out;
"#;
    let lossy = "binding arguments must be lossless JSON";
    let expected = json!([
        ["noarg", true, "echo", lossy], ["undef", true, "echo", lossy], ["negz", true, "echo", lossy],
        ["nested-undef", true, "echo", lossy], ["bigint", true, "echo", lossy], ["map", true, "echo", lossy],
        ["sparse", true, "echo", lossy], ["nan", true, "echo", lossy], ["fn", true, "echo", lossy],
        ["ok", {"a": [1, "x", null, true]}], ["getter", {"x": 1}],
        ["res-negz", true, "negz", "binding resolution must be lossless JSON"], ["fail", true, "fail", "boom 1"],
        ["cycle", lossy], ["shared", {"a": {"z": 1}, "b": {"z": 1}}],
        lossy, lossy, lossy, lossy, lossy, lossy,
        {"k": [{}, [], "", 0, -1.5, 9_007_199_254_740_992_i64]}
    ]);
    let result = run(program).await;
    assert_eq!(result.error, None);
    assert_eq!(result.value, Some(expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_must_be_lossless() {
    for program in ["return {a: undefined}", "return -0", "return new Map()", "return [1,,2]", "return () => 1", "const c = {}; c.c = c; return c"] {
        let result = run(program).await;
        assert_eq!(error_of(&result), (CodeRunErrorKind::InvalidOutput, "program completion must be lossless JSON"), "{program}");
    }
    let result = run("return undefined").await;
    assert_eq!((result.value, result.error), (None, None));
    assert_eq!(run("return null").await.value, Some(Value::Null));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_loop_times_out_within_budget() {
    let started = std::time::Instant::now();
    let result = run_with(limits_with(|l| l.compute_ms = 200.0), "try { while (true) {} } catch { return 'caught'; }", RunSignal::new()).await;
    let elapsed = started.elapsed();
    assert_eq!(error_of(&result), (CodeRunErrorKind::Timeout, "compute budget exhausted (200ms busy)"));
    assert!(elapsed < std::time::Duration::from_millis(1_000), "{elapsed:?}");
    assert!(elapsed >= std::time::Duration::from_millis(200), "{elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wall_ceiling() {
    let started = std::time::Instant::now();
    let result = run_with(limits_with(|l| l.max_wall_ms = 150.0), "console.log('hello'); await new Promise(() => {})", RunSignal::new()).await;
    assert_eq!(result.logs, vec!["hello"]);
    assert_eq!(error_of(&result), (CodeRunErrorKind::Timeout, "wall-clock ceiling reached (150ms)"));
    assert!(started.elapsed() < std::time::Duration::from_millis(1_000));
}

/// Time spent in host bindings is not the program's busy time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_time_is_not_busy_time() {
    let runtime = TypeScriptRuntime::new(limits_with(|l| l.compute_ms = 100.0)).unwrap();
    let burn = binding(|_| {
        let until = std::time::Instant::now() + std::time::Duration::from_millis(150);
        while std::time::Instant::now() < until {}
        Ok(json!(1))
    });
    let namespace = CodeBindingNamespace { global: "host".to_owned(), functions: vec![("burn".to_owned(), burn)].into(), error_class: None };
    let request = CodeRunRequest { program: "return (await host.burn({})) + (await host.burn({}))".to_owned(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: None };
    let result = runtime.run(request).await.unwrap();
    assert_eq!((result.value, result.error), (Some(json!(2)), None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_allocation_is_a_worker_exit() {
    let started = std::time::Instant::now();
    let result = run_with(
        limits_with(|l| l.max_heap_bytes = 32 << 20),
        "const a = []; try { while (true) a.push(new Array(1e5).fill(1)); } catch { return 'caught'; }",
        RunSignal::new(),
    )
    .await;
    assert_eq!(
        error_of(&result),
        (CodeRunErrorKind::WorkerExit, "worker error: Worker terminated due to reaching memory limit: JS heap out of memory")
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

/// Upstream keeps five of the ten-character logs under a 100-byte ledger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_printing_is_an_output_limit() {
    let result = run_with(limits_with(|l| l.max_output_bytes = 100), "while (true) console.log('xxxxxxxxxx')", RunSignal::new()).await;
    assert_eq!(result.logs, vec!["xxxxxxxxxx"; 5]);
    assert_eq!(error_of(&result), (CodeRunErrorKind::OutputLimit, "outer output exceeded 100 bytes"));
    // The completion shares the ledger.
    let result = run_with(limits_with(|l| l.max_output_bytes = 40), "console.log('0123456789'); return 'x'.repeat(30)", RunSignal::new()).await;
    // Upstream's limit(): the message's 32 bytes leave 8 for the logs, so a prefix of the log remains.
    assert_eq!(result.logs, vec!["0123"]);
    assert_eq!(error_of(&result), (CodeRunErrorKind::OutputLimit, "outer output exceeded 40 bytes"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_mid_run_reports_the_reason() {
    let signal = RunSignal::new();
    let aborter = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        aborter.abort("stop");
    });
    let started = std::time::Instant::now();
    let result = run_with(limits(), "console.log('hello'); await new Promise(() => {})", signal).await;
    assert_eq!(result.logs, vec!["hello"]);
    assert_eq!(error_of(&result), (CodeRunErrorKind::Abort, "stop"));
    assert!(started.elapsed() < std::time::Duration::from_millis(1_000));
    // A busy program is interrupted too.
    let signal = RunSignal::new();
    let aborter = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        aborter.abort(crate::code::DEFAULT_ABORT_REASON);
    });
    let result = run_with(limits(), "while (true) {}", signal).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::Abort, "AbortError: This operation was aborted"));
    // Aborted before the run: nothing runs.
    let signal = RunSignal::new();
    signal.abort("early");
    let result = run_with(limits(), "console.log('x')", signal).await;
    assert_eq!((result.logs.len(), error_of(&result)), (0, (CodeRunErrorKind::Abort, "early")));
}

/// Two calls in `Promise.all` are in flight together: each waits at a two-party barrier, which a sequential
/// runtime would never pass (the wall ceiling would end the run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_calls_overlap() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet: BindingFn = Arc::new(move |a| {
        let barrier = barrier.clone();
        Box::pin(async move {
            barrier.wait().await;
            Ok(a.unwrap_or(Value::Null))
        })
    });
    let namespace = CodeBindingNamespace { global: "host".to_owned(), functions: vec![("meet".to_owned(), meet)].into(), error_class: None };
    let runtime = TypeScriptRuntime::new(limits_with(|l| l.max_wall_ms = 2_000.0)).unwrap();
    let request = CodeRunRequest { program: "return await Promise.all([host.meet(1), host.meet(2)])".to_owned(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: None };
    let result = runtime.run(request).await.unwrap();
    assert_eq!((result.value, result.error), (Some(json!([1, 2])), None));
    let result = run("return await Promise.all([tools.slow(1), tools.slow(2)])").await;
    assert_eq!(result.value, Some(json!([1, 2])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_sequential_calls() {
    let started = std::time::Instant::now();
    let result = run("let n = 0; for (let i = 0; i < 1000; i++) n += (await tools.echo({i})).i; return n").await;
    assert_eq!(result.value, Some(json!(499_500)));
    // Debug build: generous; the release figure is printed by `figures`.
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_binding_futures_do_not_outlive_the_run() {
    struct Flag(Arc<std::sync::atomic::AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = dropped.clone();
    let hang: BindingFn = Arc::new(move |_| {
        let guard = Flag(flag.clone());
        Box::pin(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(Value::Null)
        })
    });
    let namespace = CodeBindingNamespace { global: "host".to_owned(), functions: vec![("hang".to_owned(), hang)].into(), error_class: None };
    let runtime = TypeScriptRuntime::new(limits()).unwrap();
    let request = CodeRunRequest { program: "host.hang({}); await null; return 1".to_owned(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: None };
    let result = runtime.run(request).await.unwrap();
    assert_eq!(result.value, Some(json!(1)));
    assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timers() {
    let result = run(
        "const order = []; const t = setTimeout(() => order.push('cleared'), 5); clearTimeout(t);
         await new Promise(r => setTimeout((a, b) => { order.push(a + b); r(); }, 20, 'x', 'y'));
         let n = 0; await new Promise(r => { const i = setInterval(() => { if (++n === 3) { clearInterval(i); r(); } }, 1); });
         order.push(n); return order;",
    )
    .await;
    assert_eq!((result.value, result.error), (Some(json!(["xy", 3])), None));
}

#[test]
fn config_validation_messages() {
    let bad = |f: fn(&mut CodeRuntimeLimits)| {
        let mut l = CodeRuntimeLimits::default();
        f(&mut l);
        TypeScriptRuntime::new(l).unwrap_err().message
    };
    assert_eq!(bad(|l| l.compute_ms = 0.0), "dsh-code-runtime-worker-thread: config.computeMs must be a positive number, got 0");
    assert_eq!(bad(|l| l.max_wall_ms = f64::NAN), "dsh-code-runtime-worker-thread: config.maxWallMs must be a positive number, got NaN");
    assert_eq!(bad(|l| l.max_output_bytes = 3), "dsh-code-runtime-worker-thread: config.maxOutputBytes must be a safe integer of at least 4, got 3");
    assert_eq!(
        bad(|l| l.max_wall_ms = 3e9),
        "dsh-code-runtime-worker-thread: config.maxWallMs must be at most 2147483647 (Node clamps a longer setTimeout delay to 1ms), got 3000000000"
    );
    assert!(TypeScriptRuntime::new(CodeRuntimeLimits::default()).is_ok());
    assert_eq!(TypeScriptRuntime::new(CodeRuntimeLimits::default()).unwrap().language(), "typescript");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_validation_messages() {
    let runtime = TypeScriptRuntime::new(limits()).unwrap();
    let check = |global: &str, class: Option<(&str, &str)>| {
        let mut namespace = tools();
        namespace.global = global.to_owned();
        namespace.error_class = class.map(|(n, m)| CodeBindingErrorClass { name: n.to_owned(), member_name_property: m.to_owned() });
        CodeRunRequest { program: String::new(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: None }
    };
    let cases = [
        (check("lambda", None), "binding global \"lambda\" is not a usable identifier"),
        (check("a$", None), "binding global \"a$\" is not a usable identifier"),
        (check("console", None), "reserved binding global \"console\""),
        (check("tools", Some(("type", "toolName"))), "binding error class \"type\" is not a usable identifier"),
        (check("tools", Some(("__name__", "toolName"))), "reserved binding global \"__name__\""),
        (check("tools", Some(("tools", "toolName"))), "duplicate injected global \"tools\""),
        (check("tools", Some(("E", "message"))), "binding error member property \"message\" is not usable"),
        (check("tools", Some(("E", "__x__"))), "binding error member property \"__x__\" is not usable"),
        (check("tools", Some(("E", ""))), "binding error member property \"\" is not usable"),
    ];
    for (request, message) in cases {
        let error = runtime.run(request).await.unwrap_err();
        assert_eq!(error.message, format!("dsh-code-runtime-worker-thread: {message}"));
    }
    let twice = CodeRunRequest { program: String::new(), bindings: vec![tools(), tools()], signal: RunSignal::new(), state_owner: None };
    assert_eq!(runtime.run(twice).await.unwrap_err().message, "dsh-code-runtime-worker-thread: duplicate binding global \"tools\"");
}

/// Works without a caller tokio runtime too (timers get a private one).
#[test]
fn runs_on_a_plain_executor() {
    let runtime = TypeScriptRuntime::new(limits()).unwrap();
    let request = CodeRunRequest { program: "await new Promise(r => setTimeout(r, 1)); return 7".to_owned(), bindings: vec![], signal: RunSignal::new(), state_owner: None };
    let result = futures_lite_block_on(runtime.run(request)).unwrap();
    assert_eq!(result.value, Some(json!(7)));
}

/// A minimal block_on (the crate has no executor dependency).
fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// Development aid: `DSH_TS_PROGRAM=file cargo test -p dsh-tools --lib explore -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "development aid"]
async fn explore() {
    let Ok(path) = std::env::var("DSH_TS_PROGRAM") else { return };
    let program = std::fs::read_to_string(path).unwrap();
    let result = run(&program).await;
    println!("{}", serde_json::to_string_pretty(&json!({"logs": result.logs, "value": result.value, "error": result.error.map(|e| json!({"kind": e.kind.as_str(), "message": e.message}))})).unwrap());
}

/// Figures against upstream's anchors (trivial run ~38 ms, 100 sequential binding calls ~104 ms):
/// `cargo test --release -p dsh-tools --lib code::typescript::tests::figures -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run in release"]
async fn figures() {
    async fn median_us(program: &str, runs: usize) -> f64 {
        let runtime = TypeScriptRuntime::new(limits()).unwrap();
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = std::time::Instant::now();
            let result = runtime
                .run(CodeRunRequest { program: program.to_owned(), bindings: vec![tools()], signal: RunSignal::new(), state_owner: None })
                .await
                .unwrap();
            times.push(started.elapsed().as_secs_f64() * 1e6);
            assert_eq!(result.error, None);
        }
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    }
    let trivial = median_us("return 1", 200).await;
    let calls = median_us("let n = 0; for (let i = 0; i < 100; i++) n += (await tools.echo({i})).i; return n", 100).await;
    let thousand = median_us("let n = 0; for (let i = 0; i < 1000; i++) n += (await tools.echo({i})).i; return n", 20).await;
    println!("{{\"figure\": \"run_code_trivial\", \"median_us\": {trivial:.1}}}");
    println!("{{\"figure\": \"run_code_100_sequential_calls\", \"median_us\": {calls:.1}}}");
    println!("{{\"figure\": \"run_code_1000_sequential_calls\", \"median_us\": {thousand:.1}}}");
}

/// Where a trivial run's time goes (development aid, release).
#[test]
#[ignore = "measurement; run in release"]
fn figures_breakdown() {
    let time = |label: &str, f: &dyn Fn()| {
        let mut t = Vec::new();
        for _ in 0..50 {
            let s = std::time::Instant::now();
            f();
            t.push(s.elapsed().as_secs_f64() * 1e6);
        }
        t.sort_by(f64::total_cmp);
        println!("{label}: {:.1} us", t[25]);
    };
    time("strip", &|| {
        super::strip::strip_program("return 1").unwrap();
    });
    time("thread spawn+join", &|| {
        std::thread::Builder::new().stack_size(super::pool::RUN_STACK_BYTES).spawn(|| ()).unwrap().join().unwrap();
    });
    time("engine", &|| {
        let spec = super::engine::RunSpec {
            code: "return 1".to_owned(),
            namespaces: vec![Arc::new(tools())],
            signal: RunSignal::new(),
            limits: limits(),
            dropped: tokio_util::sync::CancellationToken::new(),
            released: None,
            requested: std::time::Instant::now(),
        };
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let _g = rt.enter();
        super::engine::execute(&spec);
    });
    time("bare runtime+context", &|| {
        let rt = rquickjs::Runtime::new().unwrap();
        let ctx = rquickjs::Context::full(&rt).unwrap();
        ctx.with(|ctx| ctx.eval::<i32, _>("1").unwrap());
    });
}
