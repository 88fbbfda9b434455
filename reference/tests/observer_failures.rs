//! `tools/result` observer failures reach the log sinks (PIPE-021): an observer that panics while it runs,
//! and one that finishes later (hands its work to a task) and reports that work's failure through
//! [`ObserverFailureLog`], log the same line; a later observer still runs and the result is unchanged.
//!
//! Spec: PIPE-012, PIPE-021.

use std::sync::{Arc, Mutex};

use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolRuntime, ToolsConfig};
use serde_json::json;

fn echo() -> ToolDefinition {
    ToolDefinition::new(
        "echo",
        "d",
        Parameters::Dsl(json!({})),
        OutputDeclaration {
            schema: json!({"type": "string"}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])),
            presentation_meta: None,
        },
        Arc::new(|_, _| Box::pin(async { Ok(json!("ok")) })),
    )
}

#[tokio::test]
async fn a_panicking_and_a_later_failing_observer_are_logged_alike() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let _tool = rt.register(echo(), None);
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&lines);
    let _log = rt.on_log(Arc::new(move |line| sink.lock().map(|mut l| l.push(line.to_owned())).unwrap_or(())));
    let _panics = rt.on_result(Arc::new(|_, _| std::panic::resume_unwind(Box::new("at once".to_owned()))));
    let failures = rt.observer_failure_log();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = Mutex::new(Some(tx));
    let _later = rt.on_result(Arc::new(move |exec, _| {
        let (name, call_id, failures, tx) = (exec.name.clone(), exec.call_id.clone(), failures.clone(), tx.lock().ok().and_then(|mut t| t.take()));
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            failures.report(&name, &call_id, "late rejection");
            if let Some(tx) = tx {
                let _ = tx.send(());
            }
        });
    }));
    let seen = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&seen);
    let _last = rt.on_result(Arc::new(move |_, _| counter.lock().map(|mut n| *n += 1).unwrap_or(())));

    let result = rt.execute(ToolExecutionInput::new("c1", "echo", json!({}))).await;
    assert!(!result.is_error());
    assert_eq!(*seen.lock().unwrap_or_else(|e| e.into_inner()), 1);
    assert_eq!(
        lines.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        vec![r#"tool "echo" (c1): tools/result observer failed: at once"#.to_owned()]
    );
    assert!(rx.await.is_ok());
    assert_eq!(
        lines.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        vec![
            r#"tool "echo" (c1): tools/result observer failed: at once"#.to_owned(),
            r#"tool "echo" (c1): tools/result observer failed: late rejection"#.to_owned(),
        ]
    );
}
