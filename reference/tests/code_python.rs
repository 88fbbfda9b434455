//! End-to-end tests of the Python code runtime (`dsh_tools::code::python::PythonRuntime`) against a real
//! `python3`: the program contract (top-level await/return, print, `ToolCallError`, `asyncio.gather`),
//! lossless JSON crossing, every failure kind (exception, invalid-output, timeout, output-limit,
//! worker-exit, abort), containment (the process group is gone when a run resolves) and hostile fd-3
//! frames. `measure_*` (ignored) prints the run figures: `cargo test --release -p dsh-tools --test
//! code_python -- --ignored --nocapture`.
//!
//! Spec: RUN-002, RUN-004, RUN-005, RUN-007, RUN-022, RUN-023, RUN-024, RUN-027, RUN-028, RUN-029, RUN-031,
//! RUN-032, RUN-034.
#![cfg(feature = "python")]
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_tools::code::python::{HEAP_EXIT_MESSAGE, PythonIsolation, PythonRuntime};
use dsh_tools::code::{
    BindingFn, CodeBindingErrorClass, CodeBindingNamespace, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    CodeRuntimeLimits, RunSignal,
};
use serde_json::{Value, json};

fn limits() -> CodeRuntimeLimits {
    CodeRuntimeLimits { compute_ms: 5_000.0, max_wall_ms: 60_000.0, max_output_bytes: 1 << 20, max_heap_bytes: 256 << 20, max_model_text_bytes: None }
}

fn runtime(limits: CodeRuntimeLimits) -> PythonRuntime {
    PythonRuntime::new(limits).unwrap()
}

fn binding<F, Fut>(f: F) -> BindingFn
where
    F: Fn(Option<Value>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, String>> + Send + 'static,
{
    Arc::new(move |args| Box::pin(f(args)))
}

fn tools(functions: Vec<(&str, BindingFn)>) -> CodeBindingNamespace {
    CodeBindingNamespace {
        global: "tools".to_owned(),
        functions: functions.into_iter().map(|(n, f)| (n.to_owned(), f)).collect(),
        error_class: Some(CodeBindingErrorClass { name: "ToolCallError".to_owned(), member_name_property: "toolName".to_owned() }),
    }
}

fn echo() -> (&'static str, BindingFn) {
    ("echo", binding(|args| async move { Ok(args.unwrap_or(Value::Null)) }))
}

fn standard_tools() -> CodeBindingNamespace {
    tools(vec![
        echo(),
        ("fail", binding(|_| async { Err("nope".to_owned()) })),
        ("negative_zero", binding(|_| async { Ok(json!(-0.0)) })),
        ("unsafe_integer", binding(|_| async { Ok(json!(9_007_199_254_740_993u64)) })),
    ])
}

async fn run_with(rt: &PythonRuntime, program: &str, bindings: Vec<CodeBindingNamespace>, signal: RunSignal) -> CodeRunResult {
    rt.run(CodeRunRequest { program: program.to_owned(), bindings, signal, state_owner: None }).await.unwrap()
}

async fn run(program: &str) -> CodeRunResult {
    run_with(&runtime(limits()), program, vec![standard_tools()], RunSignal::new()).await
}

fn error_of(result: &CodeRunResult) -> (CodeRunErrorKind, &str) {
    let error = result.error.as_ref().unwrap_or_else(|| panic!("expected a failure, got {result:?}"));
    (error.kind, error.message.as_str())
}

fn ok_value(result: CodeRunResult) -> Option<Value> {
    assert!(result.error.is_none(), "unexpected failure: {result:?}");
    result.value
}

/// Whether `pid` is still a running (non-zombie) process.
fn running(pid: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_ascii_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn language_is_python_and_the_interpreter_is_absolute() {
    let rt = runtime(limits());
    assert_eq!(rt.language(), "python");
    assert!(rt.interpreter().is_absolute());
    assert!(!rt.interpreter().to_string_lossy().contains("shims"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_level_await_and_return() {
    let result = run("x = await tools.echo({'a': [1, 2.5, None, True, 'é']})\nreturn {'got': x}").await;
    assert_eq!(ok_value(result), Some(json!({"got": {"a": [1, 2.5, null, true, "é"]}})));
    assert_eq!(ok_value(run("pass").await), None);
    assert_eq!(ok_value(run("return None").await), None);
    assert_eq!(ok_value(run("return 1.0").await), Some(json!(1)));
    assert_eq!(ok_value(run("return tools['echo'] is tools.echo").await), Some(json!(true)));
    // Bindings in declaration order (`dir` sorts, as Python's `dir` always does); a missing one is
    // Python's own AttributeError.
    assert_eq!(
        ok_value(run("return [list(tools), dir(tools), 'echo' in tools, len(tools)]").await),
        Some(json!([
            ["echo", "fail", "negative_zero", "unsafe_integer"],
            ["echo", "fail", "negative_zero", "unsafe_integer"],
            true,
            4
        ]))
    );
    let result = run("await tools.nope(1)").await;
    assert!(error_of(&result).1.ends_with("AttributeError: 'tools' object has no attribute 'nope'"), "{result:?}");
    let program = "from __future__ import annotations\ndef f(x: Undefined) -> int:\n    return x\nreturn f.__annotations__";
    assert_eq!(ok_value(run(program).await), Some(json!({"x": "Undefined", "return": "int"})));
    // Functions, classes and closures defined by the program see its top-level names.
    let program = "k = 3\ndef f(x):\n    return x * k\nclass C:\n    v = 2\nreturn [f(2), C.v, [k for _ in range(2)]]";
    assert_eq!(ok_value(run(program).await), Some(json!([6, 2, [3, 3]])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_and_stdio_writes_are_logs() {
    let program = "import sys, os\nprint('hello', 42)\nprint('a', 'b', sep='-', end='')\nprint()\nsys.stderr.write('err\\n')\n\
                   print('to stderr', file=sys.stderr)\nos.write(1, b'stray')\nreturn 7";
    let result = run(program).await;
    assert_eq!(result.logs, vec!["hello 42", "a-b", "", "err\n", "to stderr", "stray"]);
    assert_eq!(ok_value(result), Some(json!(7)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_error_carries_the_tool_name() {
    let program = "try:\n    await tools.fail({})\nexcept ToolCallError as e:\n    \
                   return [isinstance(e, ToolCallError), isinstance(e, Exception), e.toolName, str(e), type(e).__name__]";
    assert_eq!(ok_value(run(program).await), Some(json!([true, true, "fail", "nope", "ToolCallError"])));
    let result = run("x = 1\nawait tools.fail({'a': 1})").await;
    let (kind, message) = error_of(&result);
    assert_eq!(kind, CodeRunErrorKind::Exception);
    assert!(message.starts_with("Traceback (most recent call last):\n"), "{message}");
    assert!(message.contains("File \"<program>\", line 2, in <module>"), "{message}");
    assert!(message.ends_with("\nToolCallError: nope"), "{message}");
    assert!(!message.contains("dsh-bootstrap"), "{message}");
    // The program may raise the class itself.
    let result = run("raise ToolCallError('mine', 'custom')").await;
    assert!(error_of(&result).1.ends_with("ToolCallError: custom"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gathered_binding_calls_overlap() {
    let spans: Arc<Mutex<Vec<(Instant, Instant)>>> = Arc::default();
    let recorded = Arc::clone(&spans);
    let slow = binding(move |args| {
        let recorded = Arc::clone(&recorded);
        async move {
            let start = Instant::now();
            tokio::time::sleep(Duration::from_millis(300)).await;
            recorded.lock().unwrap().push((start, Instant::now()));
            Ok(args.unwrap_or(Value::Null))
        }
    });
    let program = "import asyncio\nreturn await asyncio.gather(tools.slow(1), tools.slow(2))";
    let result = run_with(&runtime(limits()), program, vec![tools(vec![("slow", slow)])], RunSignal::new()).await;
    assert_eq!(ok_value(result), Some(json!([1, 2])));
    let spans = spans.lock().unwrap();
    assert_eq!(spans.len(), 2);
    let (a, b) = (spans[0], spans[1]);
    assert!(a.0 < b.1 && b.0 < a.1, "the two calls did not overlap");
}

/// A binding call with nothing else ready waits for its reply outside the loop's turn (the bootstrap's
/// `_wait_alone`); that must not starve a task waiting on another descriptor, nor reorder tasks whose
/// replies arrive together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_alone_still_serves_other_descriptors_and_reply_order() {
    let slow = binding(|args| async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        Ok(args.unwrap_or(Value::Null))
    });
    // A thread writes to a socket 50 ms in; the task reading it must run while the slow call is pending.
    let program = "import asyncio, socket, threading\n\
        a, b = socket.socketpair()\n\
        got = []\n\
        reading = asyncio.Event()\n\
        async def read():\n    reader, _ = await asyncio.open_connection(sock=a)\n    reading.set()\n    got.append((await reader.read(5)).decode())\n\
        task = asyncio.create_task(read())\n\
        await reading.wait()\n\
        threading.Timer(0.05, lambda: b.send(b'hello')).start()\n\
        value = await tools.slow(7)\n\
        return [value, list(got)]";
    let result = run_with(&runtime(limits()), program, vec![tools(vec![("slow", slow)])], RunSignal::new()).await;
    assert_eq!(ok_value(result), Some(json!([7, ["hello"]])), "the reader ran before the slow reply");
    // Three calls gathered: the last one waits alone; replies delivered together resume tasks in reply order.
    let program = "import asyncio\norder = []\n\
        async def call(n):\n    await tools.echo(n)\n    order.append(n)\n\
        await asyncio.gather(call(1), call(2), call(3))\nreturn order";
    assert_eq!(ok_value(run(program).await), Some(json!([1, 2, 3])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_lossless_violation_rejects_only_that_call() {
    let program = r#"
cyclic = []
cyclic.append(cyclic)
class Thing: pass
cases = [float('nan'), float('inf'), -float('inf'), -0.0, cyclic, {1: 2}, (1, 2), 2**53 + 1, 10**400, Thing(),
         {'s': '\ud800'}, [1, {2, 3}], b'bytes']
out = []
for case in cases:
    try:
        await tools.echo(case)
        out.append('accepted')
    except ToolCallError as e:
        out.append([e.toolName, str(e)])
try:
    await tools.echo()
except ToolCallError as e:
    out.append(str(e))
shared = [1]
out.append(await tools.echo({'big': 2**60, 'neg': -2**53, 'twice': [shared, shared], 'zero': 0.0, 'f': 0.1}))
return out
"#;
    let value = ok_value(run(program).await).unwrap();
    let items = value.as_array().unwrap();
    let rejected = json!(["echo", "binding arguments must be lossless JSON"]);
    for item in &items[..13] {
        assert_eq!(item, &rejected);
    }
    assert_eq!(items[13], json!("binding arguments must be lossless JSON"));
    assert_eq!(items[14], json!({"big": 1u64 << 60, "neg": -(1i64 << 53), "twice": [[1], [1]], "zero": 0, "f": 0.1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_resolutions_must_be_lossless() {
    let program = "out = []\nfor name in ['negative_zero', 'unsafe_integer']:\n    try:\n        await tools[name](1)\n    \
                   except ToolCallError as e:\n        out.append([e.toolName, str(e)])\nreturn out";
    assert_eq!(
        ok_value(run(program).await),
        Some(json!([
            ["negative_zero", "binding resolution must be lossless JSON"],
            ["unsafe_integer", "binding resolution must be lossless JSON"]
        ]))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lossy_completion_is_invalid_output() {
    for program in ["return float('nan')", "return {1: 2}", "return (1,)", "return 2**53 + 1", "return -0.0", "x = []\nx.append(x)\nreturn x"] {
        let result = run(program).await;
        assert_eq!(error_of(&result), (CodeRunErrorKind::InvalidOutput, "program completion must be lossless JSON"), "{program}");
    }
    assert_eq!(ok_value(run("return 2**60").await), Some(json!(1u64 << 60)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syntax_and_runtime_errors_are_exceptions() {
    let result = run("print('never')\ndef (:\n    pass").await;
    let (kind, message) = error_of(&result);
    assert_eq!(kind, CodeRunErrorKind::Exception);
    assert!(message.starts_with("  File \"<program>\", line 2\n"), "{message}");
    assert!(message.ends_with("SyntaxError: invalid syntax"), "{message}");
    assert!(result.logs.is_empty());
    let result = run("print('before')\nx = 1\nraise ValueError('boom')").await;
    let (kind, message) = error_of(&result);
    assert_eq!(kind, CodeRunErrorKind::Exception);
    assert_eq!(
        message,
        "Traceback (most recent call last):\n  File \"<program>\", line 3, in <module>\n    raise ValueError('boom')\nValueError: boom"
    );
    assert_eq!(result.logs, vec!["before"]);
    let result = run("yield 1").await;
    assert!(error_of(&result).1.ends_with("SyntaxError: 'yield' outside function"), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_loop_exhausts_the_compute_budget() {
    let rt = runtime(CodeRuntimeLimits { compute_ms: 300.0, ..limits() });
    let started = Instant::now();
    let result = run_with(&rt, "print('spinning')\nwhile True:\n    pass", vec![], RunSignal::new()).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::Timeout, "compute budget exhausted (300ms busy)"));
    assert_eq!(result.logs, vec!["spinning"]);
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    // A child flooding fd 3 with logs cannot starve the budget.
    let rt = runtime(CodeRuntimeLimits { compute_ms: 300.0, max_output_bytes: 64 << 20, ..limits() });
    let result = run_with(&rt, "while True:\n    print('x')", vec![], RunSignal::new()).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::Timeout, "compute budget exhausted (300ms busy)"));
    assert!(result.logs.len() > 100);
    // Waiting is not busy time; the wall ceiling ends it.
    let rt = runtime(CodeRuntimeLimits { compute_ms: 300.0, max_wall_ms: 800.0, ..limits() });
    let result = run_with(&rt, "import asyncio\nawait asyncio.sleep(60)", vec![], RunSignal::new()).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::Timeout, "wall-clock ceiling reached (800ms)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_allocation_ends_as_worker_exit() {
    let rt = runtime(CodeRuntimeLimits { max_heap_bytes: 64 << 20, ..limits() });
    for program in ["chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 20))", "x = ' ' * (10 ** 10)"] {
        let started = Instant::now();
        let result = run_with(&rt, program, vec![], RunSignal::new()).await;
        assert_eq!(error_of(&result), (CodeRunErrorKind::WorkerExit, HEAP_EXIT_MESSAGE), "{program}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }
    // A MemoryError the program catches is its own business.
    let result = run_with(&rt, "try:\n    x = ' ' * (10 ** 10)\nexcept MemoryError:\n    return 'caught'", vec![], RunSignal::new()).await;
    assert_eq!(ok_value(result), Some(json!("caught")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_printing_hits_the_output_limit() {
    let rt = runtime(CodeRuntimeLimits { max_output_bytes: 1000, ..limits() });
    for program in ["while True:\n    print('spam' * 10)", "import os\nwhile True:\n    os.write(1, b'x' * 100)", "print('y' * 5000)"] {
        let result = run_with(&rt, program, vec![], RunSignal::new()).await;
        assert_eq!(error_of(&result), (CodeRunErrorKind::OutputLimit, "outer output exceeded 1000 bytes"), "{program}");
        let bytes = serde_json::to_string(&result.logs).unwrap().len() + "\"outer output exceeded 1000 bytes\"".len();
        assert!(bytes <= 1000, "{bytes}");
        assert!(bytes > 900, "the fitting prefix is kept: {bytes}");
    }
    // A completion that does not fit is the fixed diagnostic, which keeps the logs (upstream's worker check).
    let result = run_with(&rt, "print('a')\nreturn 'z' * 2000", vec![], RunSignal::new()).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::OutputLimit, "outer output exceeded 1000 bytes"));
    assert_eq!(result.logs, vec!["a"]);
    let result = run_with(&rt, "raise ValueError('w' * 2000)", vec![], RunSignal::new()).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::OutputLimit, "outer output exceeded 1000 bytes"));
}

/// The host posture lets a program start processes; the process group kill at settlement still ends them
/// (the contained posture refuses to start them at all: `tests/containment_python.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_host_posture_nothing_the_program_spawned_outlives_the_run() {
    let program = "import subprocess, os\np = subprocess.Popen(['sleep', '100'])\npid = os.fork()\nif pid == 0:\n    \
                   import time\n    while True:\n        time.sleep(1)\nreturn [p.pid, pid, os.getpid()]";
    let rt = PythonRuntime::with_isolation("python3", limits(), PythonIsolation::Host).unwrap();
    assert_eq!(rt.posture(), PythonIsolation::Host);
    let value = ok_value(run_with(&rt, program, vec![], RunSignal::new()).await).unwrap();
    let pids: Vec<u64> = value.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 3);
    for pid in pids {
        assert!(!running(pid), "process {pid} is still running");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_mid_run_reports_the_reason() {
    let (called, mut on_call) = tokio::sync::mpsc::unbounded_channel::<()>();
    let gate = binding(move |_| {
        let called = called.clone();
        async move {
            let _ = called.send(());
            std::future::pending::<()>().await;
            Ok(Value::Null)
        }
    });
    let signal = RunSignal::new();
    let rt = runtime(limits());
    let program = "import os\nprint(os.getpid())\nawait tools.gate(1)";
    let run = tokio::spawn({
        let (rt, signal) = (rt.clone(), signal.clone());
        async move { run_with(&rt, program, vec![tools(vec![("gate", gate)])], signal).await }
    });
    on_call.recv().await.unwrap();
    signal.abort("stop now");
    let result = run.await.unwrap();
    assert_eq!(error_of(&result), (CodeRunErrorKind::Abort, "stop now"));
    let pid: u64 = result.logs[0].parse().unwrap();
    assert!(!running(pid));
    // Aborted before it starts: no process at all.
    let signal = RunSignal::new();
    signal.abort("early");
    let result = run_with(&rt, "print('never')", vec![], signal).await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::Abort, "early"));
    assert!(result.logs.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposal_aborts_runs_and_refuses_new_ones() {
    let rt = runtime(limits());
    let run = tokio::spawn({
        let rt = rt.clone();
        async move { run_with(&rt, "import asyncio\nawait asyncio.sleep(60)", vec![], RunSignal::new()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    rt.dispose();
    assert_eq!(error_of(&run.await.unwrap()), (CodeRunErrorKind::Abort, "runtime disposed"));
    let refused = rt.run(CodeRunRequest { program: String::new(), bindings: vec![], signal: RunSignal::new(), state_owner: None }).await;
    assert_eq!(refused.unwrap_err().message, "dsh-code-runtime-python: run() after disposal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_lines_end_the_run_and_rejected_frames_are_dropped() {
    // A line that is not JSON, or a second boot-ack, ends the run (RUN-051: the host's line parsing is not
    // upstream's to publish).
    let cases = [
        ("import os\nos.write(3, b'garbage\\n')\nawait tools.echo(1)", "worker sent a malformed frame: invalid JSON at byte 0: unexpected character"),
        ("import os\nos.write(3, b'{\"type\":\"boot-ack\"}\\n')\nawait tools.echo(1)", "worker sent a malformed frame: unexpected second boot-ack"),
        ("import os\nos.write(3, b'[1,2')\nawait tools.echo(1)", "worker sent a malformed frame: invalid JSON at byte 4: expected `,` or a closing bracket"),
    ];
    for (program, expected) in cases {
        let result = run(program).await;
        assert_eq!(error_of(&result), (CodeRunErrorKind::WorkerExit, expected), "{program}");
    }
    // Frames upstream's validator drops (an unknown type) are ignored, and a call it keeps is served
    // whatever its id (-1 here): the run goes on to its own completion (RUN-051).
    for frame in [r#"{"type":"shout"}"#, r#"{"type":"call","id":-1,"global":"tools","name":"echo","args":1}"#] {
        let program = format!("import os\nos.write(3, b'{}\\n')\nreturn await tools.echo(1)", frame.replace('"', "\\\""));
        assert_eq!(ok_value(run(&program).await), Some(json!(1)), "{frame}");
    }
    // A well-formed frame with a lossy payload is answered like the TypeScript host answers it.
    let result = run("import os, asyncio\nos.write(3, b'{\"type\":\"done\",\"value\":9007199254740993}\\n')\nawait asyncio.sleep(30)").await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::InvalidOutput, "program completion must be lossless JSON"));
    let result = run("import os\nos._exit(3)").await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::WorkerExit, "worker exited with code 3 before completing"));
    let result = run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)").await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::WorkerExit, "worker exited with signal SIGSEGV before completing"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sys_exit_ends_the_worker_like_process_exit() {
    let result = run("print('bye')\nimport sys\nsys.exit(2)").await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::WorkerExit, "worker exited with code 2 before completing"));
    assert_eq!(result.logs, vec!["bye"]);
    let result = run("import sys\nsys.exit('fatal')").await;
    assert_eq!(error_of(&result), (CodeRunErrorKind::WorkerExit, "worker exited with code 1 before completing"));
    assert_eq!(result.logs, vec!["fatal\n"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prints_from_threads_stay_whole_frames() {
    let program = "import threading\ndef work(i):\n    for _ in range(50):\n        print(str(i) * 3000)\n\
                   threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]\nfor t in threads:\n    t.start()\n\
                   for t in threads:\n    t.join()\nreturn 'ok'";
    let result = run(program).await;
    assert_eq!(result.logs.len(), 200);
    assert!(result.logs.iter().all(|l| l.len() == 3000 && l.chars().all(|c| c == l.chars().next().unwrap_or('?'))));
    assert_eq!(ok_value(result), Some(json!("ok")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_values_cross_both_ways() {
    let program = "x = []\nfor _ in range(5000):\n    x = [x]\ny = await tools.echo(x)\nd = 0\nwhile y:\n    y = y[0]\n    d += 1\n\
                   z = []\nfor _ in range(100000):\n    z = [z]\nreturn [d, z]";
    let mut result = run(program).await;
    assert!(result.error.is_none(), "{result:?}");
    let value = result.value.take().unwrap();
    let Value::Array(mut parts) = value else { panic!("not an array") };
    let deep = parts.pop().unwrap();
    assert_eq!(parts[0], json!(5000));
    let mut depth = 0;
    let mut cursor = &deep;
    while let Value::Array(items) = cursor {
        match items.first() {
            Some(inner) => cursor = inner,
            None => break,
        }
        depth += 1;
    }
    assert_eq!(depth, 100_000);
    dsh_tools::value::dismantle(deep);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement: run with --release -- --ignored --nocapture"]
async fn measure_trivial_and_binding_heavy_runs() {
    let rt = runtime(CodeRuntimeLimits::default());
    let mut trivial = Vec::new();
    for _ in 0..30 {
        let started = Instant::now();
        let result = run_with(&rt, "return 1", vec![], RunSignal::new()).await;
        trivial.push(started.elapsed());
        assert_eq!(result.value, Some(json!(1)));
    }
    let mut calls = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let result = run_with(&rt, "for i in range(100):\n    await tools.echo(i)\nreturn 1", vec![tools(vec![echo()])], RunSignal::new()).await;
        calls.push(started.elapsed());
        assert_eq!(result.value, Some(json!(1)));
    }
    // The floor: the same interpreter starting and importing what the bootstrap imports, nothing else.
    let mut floor = Vec::new();
    for _ in 0..30 {
        let started = Instant::now();
        let status = std::process::Command::new(rt.interpreter())
            .args(["-I", "-c", "import ast, asyncio, json, resource, threading, traceback"])
            .env_clear()
            .status()
            .unwrap();
        floor.push(started.elapsed());
        assert!(status.success());
    }
    trivial.sort();
    calls.sort();
    floor.sort();
    let median = |v: &[Duration]| v[v.len() / 2].as_secs_f64() * 1e6;
    println!("{{\"figure\": \"run_code_python_trivial\", \"median_us\": {:.0}}}", median(&trivial));
    println!("{{\"figure\": \"run_code_python_100_calls\", \"median_us\": {:.0}}}", median(&calls));
    println!("{{\"figure\": \"python3_start_and_imports_floor\", \"median_us\": {:.0}}}", median(&floor));
}

/// Replies that fill the child's 1 MiB read buffer exactly, and ones several times larger, arrive whole
/// and in order: the child reads fd 3 once per wake-up, so a reply ending on a buffer edge never leaves it
/// waiting for bytes the host sends only after the program goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_on_and_across_read_buffer_edges_arrive_whole() {
    // `{"type":"reply","id":N,"ok":true,"value":"…"}\n` around a string of `n` x's.
    let frame_overhead = |id: u32| format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"value\":\"\"}}\n").len();
    let big = binding(|args| async move {
        let n = args.and_then(|a| a.as_u64()).unwrap_or(0) as usize;
        Ok(Value::String("x".repeat(n)))
    });
    let limits = CodeRuntimeLimits { max_output_bytes: 64 << 20, ..limits() };
    let rt = runtime(limits);
    let exact = (1 << 20) - frame_overhead(1);
    let program = format!(
        "a = await tools.big({exact})\nb = await tools.big({})\nc = await tools.big(3)\nreturn [len(a), len(b), c]",
        3 << 20
    );
    let result = run_with(&rt, &program, vec![tools(vec![("big", big)])], RunSignal::new()).await;
    assert_eq!(ok_value(result), Some(json!([exact, 3 << 20, "xxx"])));
}
