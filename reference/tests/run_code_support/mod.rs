//! A scripted code runtime for the `run_code` bridge tests: the "program" is a JSON list of steps that
//! call bindings in a given order and concurrency and end with given logs, value or failure. A test
//! double of the `CodeRuntime` seam (no language involved), so the bridge's scheduling can be checked
//! without a real backend.
//!
//! Steps: `{"call": name, "args": V}` (await one binding), `{"all": [{"name", "args"}...]}` (start every
//! call in order, await all, like `Promise.allSettled`), `{"log": s}`, `{"return": V}`, `{"throw": s}`
//! (an `exception` failure), `{"forget": {"name", "args"}}` (start a call and never await it),
//! `{"untilAbort": true}` (wait for the run signal). Each awaited call's outcome is appended to the
//! completion value (a list of `{"ok": V}` / `{"err": message}`) unless a `return` step ends the program.
//! An aborted run ends at once with an `abort` failure whose message is the signal's reason, dropping
//! whatever the program still awaited, as a real runtime does.
//!
//! Spec: none (test support).

#![allow(dead_code)]

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use dsh_tools::BoxFuture;
use dsh_tools::code::{BindingFn, CodeRunError, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeMisuse};
use serde_json::{Value, json};

/// The scripted runtime; `language` is what it reports.
pub struct Scripted {
    pub language: String,
    /// Every run's binding names, in namespace order (for assertions).
    pub seen_bindings: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Scripted {
    pub fn new(language: &str) -> Arc<Self> {
        Arc::new(Self { language: language.to_owned(), seen_bindings: Arc::default() })
    }
}

/// Await futures together, first polling each in index order (so submissions keep program order).
pub struct JoinAll<T> {
    pending: Vec<Option<BoxFuture<'static, T>>>,
    out: Vec<Option<T>>,
}

impl<T> JoinAll<T> {
    pub fn new(futures: Vec<BoxFuture<'static, T>>) -> Self {
        let out = futures.iter().map(|_| None).collect();
        Self { pending: futures.into_iter().map(Some).collect(), out }
    }
}

impl<T: Unpin> Future for JoinAll<T> {
    type Output = Vec<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<T>> {
        let this = &mut *self;
        for (i, slot) in this.pending.iter_mut().enumerate() {
            if let Some(future) = slot {
                if let Poll::Ready(v) = future.as_mut().poll(cx) {
                    this.out[i] = Some(v);
                    *slot = None;
                }
            }
        }
        if this.pending.iter().all(Option::is_none) {
            Poll::Ready(this.out.iter_mut().filter_map(Option::take).collect())
        } else {
            Poll::Pending
        }
    }
}

fn outcome(r: Result<Value, String>) -> Value {
    match r {
        Ok(v) => json!({ "ok": v }),
        Err(e) => json!({ "err": e }),
    }
}

fn call(bindings: &HashMap<String, BindingFn>, name: &str, args: Option<Value>) -> BoxFuture<'static, Result<Value, String>> {
    match bindings.get(name) {
        Some(b) => b(args),
        None => {
            let name = name.to_owned();
            Box::pin(async move { Err(format!("TypeError: tools.{name} is not a function")) })
        }
    }
}

async fn interpret(steps: Vec<Value>, bindings: HashMap<String, BindingFn>, logs: Arc<Mutex<Vec<String>>>) -> Result<Option<Value>, String> {
    let mut outcomes = Vec::new();
    let mut forgotten = Vec::new();
    for step in steps {
        if let Some(name) = step.get("call").and_then(Value::as_str) {
            outcomes.push(outcome(call(&bindings, name, step.get("args").cloned()).await));
        } else if let Some(list) = step.get("all").and_then(Value::as_array) {
            let futures = list
                .iter()
                .map(|c| call(&bindings, c["name"].as_str().unwrap_or_default(), c.get("args").cloned()))
                .collect();
            for r in JoinAll::new(futures).await {
                outcomes.push(outcome(r));
            }
        } else if let Some(c) = step.get("forget") {
            let mut future = call(&bindings, c["name"].as_str().unwrap_or_default(), c.get("args").cloned());
            // Start it (first poll submits), never await it again.
            let _ = futures_poll_once(&mut future).await;
            forgotten.push(future);
        } else if let Some(text) = step.get("log").and_then(Value::as_str) {
            logs.lock().unwrap_or_else(|p| p.into_inner()).push(text.to_owned());
        } else if let Some(v) = step.get("return") {
            return Ok(Some(v.clone()));
        } else if let Some(message) = step.get("throw").and_then(Value::as_str) {
            return Err(format!("Error: {message}"));
        } else if step.get("untilAbort").is_some() {
            std::future::pending::<()>().await;
        }
    }
    drop(forgotten);
    Ok(Some(Value::Array(outcomes)))
}

/// Poll a future once.
async fn futures_poll_once<T>(future: &mut BoxFuture<'static, T>) -> Poll<T> {
    std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

impl CodeRuntime for Scripted {
    fn language(&self) -> &str {
        &self.language
    }

    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        let seen = Arc::clone(&self.seen_bindings);
        Box::pin(async move {
            let steps: Vec<Value> = match serde_json::from_str(&request.program) {
                Ok(Value::Array(steps)) => steps,
                _ => {
                    return Ok(CodeRunResult {
                        logs: vec![],
                        value: None,
                        error: Some(CodeRunError { kind: CodeRunErrorKind::Exception, message: "SyntaxError: not a script".into() }),
                    });
                }
            };
            let mut bindings = HashMap::new();
            let mut names = Vec::new();
            for ns in &request.bindings {
                for (name, f) in ns.functions.iter() {
                    names.push(name.to_owned());
                    bindings.insert(name.to_owned(), f);
                }
            }
            seen.lock().unwrap_or_else(|p| p.into_inner()).push(names);
            let logs = Arc::new(Mutex::new(Vec::new()));
            let signal = request.signal.clone();
            let program = interpret(steps, bindings, Arc::clone(&logs));
            let ended = tokio::select! {
                biased;
                _ = signal.token().cancelled() => Err(None),
                r = program => r.map_err(Some),
            };
            let logs = std::mem::take(&mut *logs.lock().unwrap_or_else(|p| p.into_inner()));
            Ok(match ended {
                Ok(value) => CodeRunResult { logs, value, error: None },
                Err(Some(message)) => CodeRunResult { logs, value: None, error: Some(CodeRunError { kind: CodeRunErrorKind::Exception, message }) },
                Err(None) => CodeRunResult { logs, value: None, error: Some(CodeRunError { kind: CodeRunErrorKind::Abort, message: signal.reason() }) },
            })
        })
    }
}
