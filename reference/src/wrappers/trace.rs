//! `tracing` spans for every call (feature `tracing`): one `tool_call` span per execution (fields
//! `tool`, `call_id`, `agent`, `nested`, and, once the result is published, `is_error` and `code`),
//! with a child span per stage the hooks can see — `pre_execute` (the `tools/pre-execute` waterfall),
//! `execute` (the `tools/execute` wrappers, the body and output validation), `post_execute` — and a
//! `tools/result` event inside it. Guards and the approval seam run between the stages, unspanned.
//!
//! The hooks are prepended, so each stage span covers every other hook of its stage. A call that is
//! final at entry (the `code` collapse, a caller cancelled before it started) gets only its
//! `tool_call` span and result event.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tracing::Instrument;
use tracing::field::Empty;

use crate::callback::BoxFuture;
use crate::execution::{ExecutionToken, ToolExecution};
use crate::hooks::{HookGuard, post_execute_fn, pre_execute_fn};
use crate::pipeline::dispatch::{DispatchExecution, ExecuteNext, ExecuteOutcome, ExecuteWrapper};
use crate::runtime::ToolRuntime;
use crate::scope::ScopeKey;

/// Installs the spans on a runtime.
///
/// ```
/// use dsh_tools::wrappers::CallTracing;
/// use dsh_tools::{ToolRuntime, ToolsConfig};
///
/// let runtime = ToolRuntime::new(ToolsConfig::default());
/// let _spans = CallTracing::install(&runtime, None);
/// ```
#[derive(Debug)]
pub struct CallTracing;

/// The hooks [`CallTracing::install`] registered; dropping it removes them.
#[must_use = "dropping the guards removes the spans"]
#[derive(Debug)]
pub struct TracingGuards {
    _guards: Vec<HookGuard>,
}

/// The open `tool_call` span of each execution in flight.
#[derive(Default)]
struct Spans(Mutex<HashMap<ExecutionToken, tracing::Span>>);

impl Spans {
    fn call(&self, exec: &ToolExecution) -> tracing::Span {
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        open.entry(exec.token)
            .or_insert_with(|| {
                tracing::info_span!(
                    "tool_call",
                    tool = %exec.name,
                    call_id = %exec.call_id,
                    agent = ?exec.agent,
                    nested = exec.parent.is_some(),
                    is_error = Empty,
                    code = Empty,
                )
            })
            .clone()
    }

    fn close(&self, token: ExecutionToken) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&token);
    }
}

struct ExecuteSpan(Arc<Spans>);

impl ExecuteWrapper for ExecuteSpan {
    fn call<'a>(&'a self, dexec: &'a DispatchExecution, next: ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome> {
        let span = tracing::info_span!(parent: &self.0.call(dexec.execution()), "execute");
        Box::pin(next.run().instrument(span))
    }
}

impl CallTracing {
    /// Register the spans' hooks on `runtime` (globally, or for one agent scope), ahead of the hooks
    /// already there.
    pub fn install(runtime: &ToolRuntime, scope: Option<&ScopeKey>) -> TracingGuards {
        let spans = Arc::new(Spans::default());
        let pre = Arc::clone(&spans);
        let post = Arc::clone(&spans);
        let results = Arc::clone(&spans);
        let guards = vec![
            runtime.prepend_pre_execute(
                scope,
                pre_execute_fn(move |exec, next| {
                    let span = tracing::info_span!(parent: &pre.call(exec), "pre_execute");
                    Box::pin(next.run().instrument(span))
                }),
            ),
            runtime.prepend_execute(scope, Arc::new(ExecuteSpan(Arc::clone(&spans)))),
            runtime.prepend_post_execute(
                scope,
                post_execute_fn(move |exec, _result, next| {
                    let span = tracing::info_span!(parent: &post.call(exec), "post_execute");
                    Box::pin(next.run().instrument(span))
                }),
            ),
            runtime.prepend_result(
                scope,
                Arc::new(move |exec, result| {
                    let span = results.call(exec);
                    let code = result.error_code().map(|c| c.as_str().to_owned());
                    span.record("is_error", result.is_error());
                    if let Some(code) = &code {
                        span.record("code", code.as_str());
                    }
                    tracing::info!(parent: &span, is_error = result.is_error(), code = code.as_deref(), "tools/result");
                    results.close(exec.token);
                }),
            ),
        ];
        TracingGuards { _guards: guards }
    }
}
