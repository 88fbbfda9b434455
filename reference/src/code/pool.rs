//! The per-run sub-call pool of the `run_code` bridge (upstream's `drive` lane): one ordered lane that,
//! at each step, first commits the head of the commit queue once it settled (post-execute, finalize,
//! `tools/result`, in submission order), else starts the head of the submission queue when its slot is
//! free (its prepare stage: entry, pre-execute, guards — one at a time, in submission order), else waits.
//! A parallel sub-call may start while fewer than `maxParallelSubCalls` dispatches are in flight and no
//! exclusive one is active; an exclusive one starts only with nothing in flight, and no later sub-call
//! starts until it committed. Dispatches (wrappers and body) overlap; they are polled here, in the
//! transport call's own task, so nothing is spawned and nothing started is ever dropped. Once the run is
//! over (its signal aborted) queued submissions are abandoned; the pool finishes when the run settled,
//! every started sub-call committed and every settle record was logged.
//!
//! A committed sub-call's reply reaches the program first; its settle record is then shaped by the
//! `tools/code-dispatch-log` waterfall as log work polled here too (upstream's `logWork`): a waterfall
//! that completes at once is logged before the lane moves on, a waiting one later. While more than
//! `maxParallelSubCalls` settle records are pending the lane neither commits nor starts (upstream's
//! backpressure after each commit).
//!
//! Spec: RUN-008, RUN-009, RUN-011..RUN-019, RUN-037, RUN-039, RUN-040, RUN-042, RUN-046..RUN-050, RUN-054, RUN-057
//! (a queued sub-call is classified when it starts), CODE-001,
//! CODE-008, MODE-001.

use std::collections::VecDeque;

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use serde_json::Value;
use tokio::sync::oneshot;

use super::RunSignal;
use super::dispatch_log::{CodeDispatchEvent, CodeDispatchLog, CodeDispatchStart, DispatchLogHooks};
use crate::callback::BoxFuture;
use crate::execution::{ExecutionMode, ToolExecutionInput, ToolRunContext};
use crate::pipeline::entry::Call;
use crate::pipeline::{Pipeline, Prepared, Stage};
use crate::result::ToolExecutionResult;

/// What a waiting binding receives.
pub(crate) enum Reply {
    /// The committed result: the value, or the failure's message.
    Settled(Result<Value, String>),
    /// The run ended before the sub-call could start; the abort reason at that moment.
    Abandoned(String),
}

/// One binding call waiting to start.
pub(crate) struct Submission {
    pub(crate) name: String,
    pub(crate) sub_call_id: String,
    pub(crate) input: ToolExecutionInput,
    /// The detached copy the dispatch log reports.
    pub(crate) logged: Value,
    pub(crate) reply: oneshot::Sender<Reply>,
}

#[derive(Default)]
struct QueueState {
    pending: VecDeque<Submission>,
    dispatches: u64,
    waker: Option<Waker>,
}

/// The submission side, shared with the bindings.
#[derive(Default)]
pub(crate) struct Queue {
    state: Mutex<QueueState>,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next dispatch number (1-based).
    pub(crate) fn next_number(&self) -> u64 {
        let mut state = self.lock();
        state.dispatches += 1;
        state.dispatches
    }

    /// Queue one submission and wake the lane.
    pub(crate) fn submit(&self, submission: Submission) {
        let waker = {
            let mut state = self.lock();
            state.pending.push_back(submission);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// What the transport call contributes to every sub-call.
pub(crate) struct Outer {
    /// The transport call's run context (deferred contexts go through it).
    pub(crate) ctx: ToolRunContext,
    pub(crate) run_signal: RunSignal,
    pub(crate) max_parallel: u64,
}

/// A started sub-call, in the commit queue.
struct Started {
    name: String,
    sub_call_id: String,
    logged: Value,
    mode: ExecutionMode,
    reply: Option<oneshot::Sender<Reply>>,
    call: Option<Arc<Call>>,
    flight: Option<BoxFuture<'static, Stage>>,
    parked: Option<Stage>,
}

enum Lane {
    Start(BoxFuture<'static, (Arc<Call>, Prepared)>),
    Commit(Box<Started>, BoxFuture<'static, ToolExecutionResult>),
}

/// The lane and the in-flight dispatches of one run.
pub(crate) struct Pool {
    pipeline: Arc<Pipeline>,
    dispatch_log: DispatchLogHooks,
    outer: Arc<Outer>,
    queue: Arc<Queue>,
    started: VecDeque<Started>,
    /// Settle records still in the `tools/code-dispatch-log` waterfall.
    log_work: Vec<BoxFuture<'static, ()>>,
    lane: Option<Lane>,
    exclusive_active: bool,
    /// The run settled: finish once everything started has committed.
    pub(crate) finishing: bool,
}

impl Pool {
    pub(crate) fn new(
        pipeline: Arc<Pipeline>,
        dispatch_log: DispatchLogHooks,
        outer: Arc<Outer>,
        queue: Arc<Queue>,
    ) -> Self {
        Self {
            pipeline,
            dispatch_log,
            outer,
            queue,
            started: VecDeque::new(),
            log_work: Vec::new(),
            lane: None,
            exclusive_active: false,
            finishing: false,
        }
    }

    fn in_flight(&self) -> u64 {
        self.started.iter().filter(|s| s.flight.is_some()).count() as u64
    }

    /// Poll the pending settle records; drop what was logged.
    fn poll_log_work(&mut self, cx: &mut Context<'_>) {
        self.log_work.retain_mut(|work| work.as_mut().poll(cx).is_pending());
    }

    /// Poll the in-flight dispatches; park what settled.
    fn poll_flights(&mut self, cx: &mut Context<'_>) {
        for started in &mut self.started {
            if let Some(flight) = started.flight.as_mut() {
                if let Poll::Ready(stage) = flight.as_mut().poll(cx) {
                    started.flight = None;
                    started.parked = Some(stage);
                }
            }
        }
    }

    /// Start the submission: the start record, then the prepare stage on the lane.
    fn start(&mut self, submission: Submission, mode: ExecutionMode) {
        let Submission { name, sub_call_id, input, logged, reply } = submission;
        if let Some(agent) = self.outer.ctx.agent() {
            self.dispatch_log.emit(&CodeDispatchEvent::Start(CodeDispatchStart {
                agent: agent.clone(),
                root_call_id: self.outer.ctx.root_call_id().to_owned(),
                parent_call_id: self.outer.ctx.call_id().to_owned(),
                sub_call_id: sub_call_id.clone(),
                name: name.clone(),
                arguments: crate::value::deep_clone(&logged),
            }));
        }
        let pipeline = Arc::clone(&self.pipeline);
        let run_signal = self.outer.run_signal.clone();
        self.lane = Some(Lane::Start(Box::pin(async move {
            let call = Arc::new(pipeline.enter(input));
            // The sub-call's signal is the run signal: its abort reason is the run signal's (RUN-057).
            pipeline.abort_reasons.follow(call.exec.token, move || run_signal.abort_reason());
            let prepared = pipeline.prepare(&call).await;
            (call, prepared)
        })));
        self.started.push_back(Started { name, sub_call_id, logged, mode, reply: Some(reply), call: None, flight: None, parked: None });
    }

    fn started(&mut self, call: Arc<Call>, prepared: Prepared) {
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

    fn begin_commit(&mut self) -> bool {
        let Some(head) = self.started.front() else { return false };
        if head.parked.is_none() {
            return false;
        }
        let Some(mut entry) = self.started.pop_front() else { return false };
        let (Some(stage), Some(call)) = (entry.parked.take(), entry.call.clone()) else { return false };
        let pipeline = Arc::clone(&self.pipeline);
        self.lane = Some(Lane::Commit(Box::new(entry), Box::pin(async move { pipeline.complete(&call, stage).await })));
        true
    }

    /// The committed result reaches the parent (image content and contexts deferred, a concluded turn
    /// forwarded), the program, and then the dispatch log's waterfall (polled once here: a waterfall that
    /// completes at once is logged now).
    fn committed(&mut self, mut entry: Started, result: ToolExecutionResult, cx: &mut Context<'_>) {
        let ctx = &self.outer.ctx;
        if !result.is_error() && result.content().iter().any(|b| b.get("type").and_then(Value::as_str) == Some("image")) {
            ctx.defer_context(image_message(result.content()));
        }
        for context in result.additional_contexts() {
            ctx.defer_context(crate::value::deep_clone(context));
        }
        if result.concludes_turn() {
            // Forwarded like the contexts: only this committed (post-policy) success can conclude the run.
            ctx.conclude_turn();
        }
        let outcome = match &result {
            ToolExecutionResult::Success { value, .. } => Ok(crate::value::deep_clone(value)),
            ToolExecutionResult::Failure { error, .. } => Err(error.message.clone()),
        };
        if let Some(reply) = entry.reply.take() {
            let _ = reply.send(Reply::Settled(outcome));
        }
        if let Some(agent) = ctx.agent() {
            let call = CodeDispatchStart {
                agent: agent.clone(),
                root_call_id: ctx.root_call_id().to_owned(),
                parent_call_id: ctx.call_id().to_owned(),
                sub_call_id: entry.sub_call_id.clone(),
                name: entry.name.clone(),
                arguments: std::mem::take(&mut entry.logged),
            };
            let dispatch = CodeDispatchLog {
                call,
                is_error: result.is_error(),
                content: result.content().iter().map(crate::value::deep_clone).collect(),
            };
            let logs = Arc::clone(&self.pipeline.logs);
            let mut work: BoxFuture<'static, ()> = Box::pin(self.dispatch_log.clone().log_settled(dispatch, logs));
            if work.as_mut().poll(cx).is_pending() {
                self.log_work.push(work);
            }
        }
        if entry.mode == ExecutionMode::Exclusive {
            self.exclusive_active = false;
        }
        crate::value::dismantle(entry.logged);
        if let ToolExecutionResult::Success { value, .. } = result {
            crate::value::dismantle(value);
        }
    }

    /// One pass of the lane; `Ready` once the run settled and everything started has committed.
    pub(crate) fn poll_lane(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            self.poll_flights(cx);
            self.poll_log_work(cx);
            match self.lane.take() {
                Some(Lane::Start(mut future)) => match future.as_mut().poll(cx) {
                    Poll::Ready((call, prepared)) => {
                        self.started(call, prepared);
                        continue;
                    }
                    Poll::Pending => {
                        self.lane = Some(Lane::Start(future));
                        return Poll::Pending;
                    }
                },
                Some(Lane::Commit(entry, mut future)) => match future.as_mut().poll(cx) {
                    Poll::Ready(result) => {
                        self.committed(*entry, result, cx);
                        continue;
                    }
                    Poll::Pending => {
                        self.lane = Some(Lane::Commit(entry, future));
                        return Poll::Pending;
                    }
                },
                None => {}
            }
            if self.log_work.len() as u64 > self.outer.max_parallel {
                // Backpressure: the pending log work (polled above) wakes the lane.
                return Poll::Pending;
            }
            if self.begin_commit() {
                continue;
            }
            let mut state = self.queue.lock();
            if let Some(head) = state.pending.front() {
                if self.outer.run_signal.aborted() {
                    if let Some(head) = state.pending.pop_front() {
                        drop(state);
                        let _ = head.reply.send(Reply::Abandoned(self.outer.run_signal.reason()));
                        crate::value::dismantle(head.logged);
                        crate::value::dismantle(head.input.arguments);
                    }
                    continue;
                }
                let mode = self.pipeline.execution_mode(&head.input);
                let in_flight = self.in_flight();
                let free = match mode {
                    ExecutionMode::Exclusive => in_flight == 0,
                    ExecutionMode::Parallel => in_flight < self.outer.max_parallel,
                };
                if !self.exclusive_active && free {
                    if let Some(head) = state.pending.pop_front() {
                        drop(state);
                        if mode == ExecutionMode::Exclusive {
                            self.exclusive_active = true;
                        }
                        self.start(head, mode);
                        continue;
                    }
                }
            }
            if state.pending.is_empty() && self.started.is_empty() && self.log_work.is_empty() && self.finishing {
                return Poll::Ready(());
            }
            state.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
    }
}

/// A user message carrying an image-bearing sub-result's content, from the Code Mode plugin (upstream
/// `createUserMessage({ content, source: { kind: 'plugin', plugin: 'tools-code-mode' } })`).
fn image_message(content: &[Value]) -> Value {
    let mut source = serde_json::Map::new();
    source.insert("kind".into(), Value::String("plugin".into()));
    source.insert("plugin".into(), Value::String("tools-code-mode".into()));
    let mut message = serde_json::Map::new();
    message.insert("role".into(), Value::String("user".into()));
    message.insert("content".into(), Value::Array(content.iter().map(crate::value::deep_clone).collect()));
    message.insert("source".into(), Value::Object(source));
    Value::Object(message)
}
