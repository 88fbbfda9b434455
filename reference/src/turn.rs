//! The turn executor: runs one model turn's tool calls under upstream's agent-loop scheduling contract
//! (`@deepseek-ai/dsh-tools` README § Parallel execution: "The agent loop groups consecutive `parallel`
//! calls into a bounded rolling pool and treats each `exclusive` call as an ordering barrier. Only
//! dispatch/body overlaps; policy, durable results, and context retain model order."; and § Runtime:
//! `executionMode` is `parallel` only when the visible definition's `isConcurrencySafe` returns exactly
//! `true`). `@deepseek-ai/dsh-agent@0.1.0-rc.8` itself holds no tool scheduler to follow: its README
//! defers "tool policy and outcome observation" to the complete `dsh-tools` pipeline, which is what
//! this lane drives.
//!
//! How that reads here — one lane per turn, built as the `run_code` bridge's sub-call pool is:
//! - calls start in model order; starting is the prepare stage (entry, pre-execute with approval,
//!   guards), one call at a time, so policy sees the calls in model order;
//! - a `Parallel` call starts while fewer than `max_parallel` dispatches are in flight and no
//!   exclusive call is active; an `Exclusive` one starts only when every earlier call has committed,
//!   and no later call starts until it committed (a barrier);
//! - dispatches (the `tools/execute` wrappers and the body) overlap;
//! - each call commits (post-execute, the content finalizer, `tools/result`) in model order, as soon as
//!   it and every earlier call settled; the results come back in model order, and each result's
//!   `additional_contexts` with it ([`TurnResults::contexts`] lists them all, in model order).
//!
//! The execution mode of a call is read when the call reaches the head of the queue. A call whose agent
//! has an installed [`ToolExecutor`](crate::ToolExecutor) (seed 002's seam: dsh-codemode's preset) is
//! routed by it ([`ToolExecutor::route`](crate::ToolExecutor::route), CDM-047): a call the executor would
//! pass through unchanged (`Native`) runs in the native lanes like any other; a call it keeps (`Own`) goes
//! through it as one unit ([`ToolRuntime::execute`]), since the lane cannot see inside it — `Exclusive`
//! (the default) starts in model order once every earlier call has committed, and no later call starts
//! until it settled, a barrier; `Parallel` starts like a parallel call and overlaps the others. The whole turn is
//! drop-safe as [`ToolRuntime::execute`] is: dropped once polled, it runs on to its end (unstarted calls
//! included) on the ambient runtime.
//!
//! Spec: CDM-004, CDM-047 and CDM-019 for executor-owned calls (a masked call in a turn is the executor's to
//! reject). The scheduling follows upstream README § Parallel execution, the agent loop's contract, which
//! no catalog rule holds (it is not dsh-tools').

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;

use crate::callback::{BoxFuture, DropSafe};
use crate::execution::{ExecutionMode, ToolExecutionInput};
use crate::executor::ExecutorRoute;
use crate::pipeline::entry::Call;
use crate::pipeline::{Pipeline, Prepared, Stage};
use crate::presentation::DEFAULT_MAX_PARALLEL_SUB_CALLS;
use crate::result::ToolExecutionResult;
use crate::runtime::ToolRuntime;

/// Executes model turns on one runtime. Cheap to clone.
///
/// ```
/// # use std::sync::Arc;
/// # use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolRuntime, ToolsConfig};
/// # use dsh_tools::turn::TurnExecutor;
/// # use serde_json::json;
/// # let runtime = ToolRuntime::new(ToolsConfig::default());
/// # let mut echo = ToolDefinition::new("echo", "Echo", Parameters::Raw(json!({"type": "object"})),
/// #     OutputDeclaration { schema: json!({}), render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v.to_string()})])), presentation_meta: None },
/// #     Arc::new(|args, _| Box::pin(async move { Ok((*args).clone()) })));
/// # echo.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
/// # let _echo = runtime.register(echo, None)?;
/// let turn = TurnExecutor::new(&runtime).max_parallel(4);
/// let calls = vec![
///     ToolExecutionInput::new("call-1", "echo", json!({"n": 1})),
///     ToolExecutionInput::new("call-2", "echo", json!({"n": 2})),
/// ];
/// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
/// let results = turn.execute(calls).await;
/// assert_eq!(results.results[1].0, "call-2");
/// assert!(results.results.iter().all(|(_, r)| !r.is_error()));
/// # });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct TurnExecutor {
    runtime: ToolRuntime,
    max_parallel: usize,
}

/// A turn's results, in model order.
#[derive(Debug)]
pub struct TurnResults {
    /// Each call's id and final result, in the order the calls were given.
    pub results: Vec<(String, ToolExecutionResult)>,
}

impl TurnResults {
    /// Every result's additional contexts, in model order: what the loop appends after the results.
    pub fn contexts(&self) -> impl Iterator<Item = &Value> {
        self.results.iter().flat_map(|(_, result)| result.additional_contexts())
    }
}

impl TurnExecutor {
    /// A turn executor over `runtime`, overlapping at most 10 parallel dispatches.
    pub fn new(runtime: &ToolRuntime) -> Self {
        Self { runtime: runtime.clone(), max_parallel: DEFAULT_MAX_PARALLEL_SUB_CALLS as usize }
    }

    /// Overlap at most `n` parallel dispatches (at least 1; 1 runs the turn serially).
    pub fn max_parallel(mut self, n: usize) -> Self {
        self.max_parallel = n.max(1);
        self
    }

    /// Execute one turn's calls; exactly one result per call, in the order given.
    pub async fn execute(&self, calls: Vec<ToolExecutionInput>) -> TurnResults {
        let mut lane = Lane {
            runtime: self.runtime.clone(),
            pipeline: Arc::clone(self.runtime.pipeline()),
            max_parallel: self.max_parallel,
            queue: calls.into_iter().enumerate().collect(),
            started: VecDeque::new(),
            stage: None,
            exclusive_active: false,
            results: Vec::new(),
        };
        let lane = DropSafe::new(async move {
            std::future::poll_fn(|cx| lane.poll(cx)).await;
            lane.results.sort_by_key(|(index, _, _)| *index);
            lane.results.into_iter().map(|(_, id, result)| (id, result)).collect()
        });
        TurnResults { results: lane.await }
    }
}

/// A started call, in the commit queue.
struct Started {
    index: usize,
    mode: ExecutionMode,
    call: Option<Arc<Call>>,
    flight: Option<BoxFuture<'static, Stage>>,
    parked: Option<Stage>,
    /// A call an installed executor runs as one unit, and its result once settled.
    delegated: Option<(String, BoxFuture<'static, ToolExecutionResult>)>,
    settled: Option<(String, ToolExecutionResult)>,
}

/// The one sequential stage the lane runs at a time: a call's prepare, or a call's commit.
enum Sequential {
    Start(BoxFuture<'static, (Arc<Call>, Prepared)>),
    Commit(usize, ExecutionMode, Arc<Call>, BoxFuture<'static, ToolExecutionResult>),
}

struct Lane {
    runtime: ToolRuntime,
    pipeline: Arc<Pipeline>,
    max_parallel: usize,
    queue: VecDeque<(usize, ToolExecutionInput)>,
    started: VecDeque<Started>,
    stage: Option<Sequential>,
    exclusive_active: bool,
    results: Vec<(usize, String, ToolExecutionResult)>,
}

impl Lane {
    fn in_flight(&self) -> usize {
        self.started.iter().filter(|s| s.flight.is_some() || s.delegated.is_some()).count()
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            for started in &mut self.started {
                if let Some(flight) = started.flight.as_mut() {
                    if let Poll::Ready(stage) = flight.as_mut().poll(cx) {
                        started.flight = None;
                        started.parked = Some(stage);
                    }
                }
                if let Some((id, flight)) = started.delegated.as_mut() {
                    if let Poll::Ready(result) = flight.as_mut().poll(cx) {
                        let id = std::mem::take(id);
                        started.delegated = None;
                        started.settled = Some((id, result));
                    }
                }
            }
            match self.stage.take() {
                Some(Sequential::Start(mut future)) => match future.as_mut().poll(cx) {
                    Poll::Ready((call, prepared)) => {
                        self.prepared(call, prepared);
                        continue;
                    }
                    Poll::Pending => {
                        self.stage = Some(Sequential::Start(future));
                        return Poll::Pending;
                    }
                },
                Some(Sequential::Commit(index, mode, call, mut future)) => match future.as_mut().poll(cx) {
                    Poll::Ready(result) => {
                        if mode == ExecutionMode::Exclusive {
                            self.exclusive_active = false;
                        }
                        self.results.push((index, call.exec.call_id.clone(), result));
                        continue;
                    }
                    Poll::Pending => {
                        self.stage = Some(Sequential::Commit(index, mode, call, future));
                        return Poll::Pending;
                    }
                },
                None => {}
            }
            if self.begin_commit() || self.begin_start() {
                continue;
            }
            if self.queue.is_empty() && self.started.is_empty() {
                return Poll::Ready(());
            }
            // Pending: every in-flight dispatch registered the waker when polled above.
            return Poll::Pending;
        }
    }

    fn prepared(&mut self, call: Arc<Call>, prepared: Prepared) {
        let Some(entry) = self.started.back_mut() else { return };
        entry.call = Some(Arc::clone(&call));
        match prepared {
            Prepared::Dispatch => {
                let pipeline = Arc::clone(&self.pipeline);
                entry.flight = Some(Box::pin(async move { pipeline.dispatch(&call).await }));
            }
            Prepared::Done(stage) => entry.parked = Some(stage),
        }
    }

    /// Commit the head of the commit queue once it settled (a delegated call's result is final already).
    fn begin_commit(&mut self) -> bool {
        if self.started.front().is_some_and(|head| head.settled.is_some()) {
            let Some(mut head) = self.started.pop_front() else { return false };
            if let Some((id, result)) = head.settled.take() {
                if head.mode == ExecutionMode::Exclusive {
                    self.exclusive_active = false;
                }
                self.results.push((head.index, id, result));
            }
            return true;
        }
        if self.started.front().is_none_or(|head| head.parked.is_none()) {
            return false;
        }
        let Some(mut head) = self.started.pop_front() else { return false };
        let (Some(stage), Some(call)) = (head.parked.take(), head.call.take()) else { return false };
        let pipeline = Arc::clone(&self.pipeline);
        let committing = Arc::clone(&call);
        let future: BoxFuture<'static, ToolExecutionResult> = Box::pin(async move { pipeline.complete(&committing, stage).await });
        self.stage = Some(Sequential::Commit(head.index, head.mode, call, future));
        true
    }

    /// Start the head of the queue when the contract lets it.
    fn begin_start(&mut self) -> bool {
        let Some((_, input)) = self.queue.front() else { return false };
        if let Some(ExecutorRoute::Own(mode)) = self.runtime.executor_route(input) {
            let free = match mode {
                ExecutionMode::Exclusive => self.started.is_empty(),
                ExecutionMode::Parallel => self.in_flight() < self.max_parallel,
            };
            if self.exclusive_active || !free {
                return false;
            }
            let Some((index, input)) = self.queue.pop_front() else { return false };
            self.exclusive_active = mode == ExecutionMode::Exclusive;
            let (id, runtime) = (input.call_id.clone(), self.runtime.clone());
            let delegated: BoxFuture<'static, ToolExecutionResult> = Box::pin(async move { runtime.execute(input).await });
            self.started.push_back(Started {
                index,
                mode,
                call: None,
                flight: None,
                parked: None,
                delegated: Some((id, delegated)),
                settled: None,
            });
            return true;
        }
        let mode = self.pipeline.execution_mode(input);
        let free = match mode {
            ExecutionMode::Exclusive => self.started.is_empty(),
            ExecutionMode::Parallel => self.in_flight() < self.max_parallel,
        };
        if self.exclusive_active || !free {
            return false;
        }
        let Some((index, input)) = self.queue.pop_front() else { return false };
        self.exclusive_active = mode == ExecutionMode::Exclusive;
        let pipeline = Arc::clone(&self.pipeline);
        self.stage = Some(Sequential::Start(Box::pin(async move {
            let call = Arc::new(pipeline.enter(input));
            let prepared = pipeline.prepare(&call).await;
            (call, prepared)
        })));
        self.started.push_back(Started { index, mode, call: None, flight: None, parked: None, delegated: None, settled: None });
        true
    }
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane").field("queued", &self.queue.len()).field("started", &self.started.len()).finish_non_exhaustive()
    }
}
