//! Budgets, limits and scheduling of the TypeScript runtime: the busy budget, the wall ceiling, the heap cap,
//! the output ledger, aborts, overlapping and sequential binding calls, pending binding futures, timers.
//! Split from `tests.rs` (its helpers are `super`'s).
//!
//! Spec: RUN-027, RUN-028, RUN-029, RUN-031, RUN-032.

use super::*;

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
