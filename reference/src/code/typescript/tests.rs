//! Tests of the TypeScript runtime against upstream's observed behaviour (strings captured from
//! `@deepseek-ai/dsh-code-runtime-worker-thread@0.1.0-rc.8` on Node 24).
//!
//! The console's formatting is in `tests/console.rs`, budgets, limits and scheduling in `tests/limits.rs`.
//!
//! Spec: RUN-002, RUN-003, RUN-005, RUN-007, RUN-022, RUN-023, RUN-026, RUN-034, RUN-056.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{json, Value};

use super::TypeScriptRuntime;
mod console;
mod limits;

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
