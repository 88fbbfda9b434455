//! The call vocabulary: [`ToolExecutionInput`] (what a caller supplies), [`ToolExecution`] (the immutable
//! pipeline view with the registry-minted [`ExecutionToken`]), [`ToolRunContext`] (what a body receives)
//! and [`ExecutionMode`]; the reasons callers attach to executions' cancellations (`AbortReasons`) and
//! how a listener or a body reads the reason of the signal it sees ([`ToolExecution::abort_reason`],
//! [`ToolRunContext::abort_reason`]).
//!
//! Spec: ARG-001, PIPE-017, PIPE-022, PIPE-018, PIPE-019, FIN-010, MODE-001..MODE-004.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::scope::ScopeKey;

/// A registry-assigned opaque correlation token: equality only; never chosen by callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExecutionToken(u64);

impl ExecutionToken {
    /// A token no other execution in the process has. Each thread takes a block of values from the shared
    /// counter and mints from it, so most mints touch no shared atomic.
    pub(crate) fn mint() -> Self {
        const BLOCK: u64 = 1024;
        static NEXT: AtomicU64 = AtomicU64::new(1);
        thread_local! {
            /// The next value of this thread's block, and the block's end.
            static BLOCK_LEFT: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
        }
        BLOCK_LEFT.with(|left| {
            let (mut next, mut end) = left.get();
            if next == end {
                next = NEXT.fetch_add(BLOCK, Ordering::Relaxed);
                end = next + BLOCK;
            }
            left.set((next + 1, end));
            Self(next)
        })
    }
}

/// A caller's call description.
#[derive(Debug)]
pub struct ToolExecutionInput {
    /// The model's call id.
    pub call_id: String,
    /// The requested tool name.
    pub name: String,
    /// Parsed arguments (any JSON).
    pub arguments: Value,
    /// The caller-owned cancellation signal.
    pub signal: CancellationToken,
    /// The calling agent scope (`None`: the global view).
    pub agent: Option<ScopeKey>,
    /// The enclosing execution's token for nested calls.
    pub parent: Option<ExecutionToken>,
    /// The root model-requested call of this call's tree (upstream `rootCallId`): `None` for a root call,
    /// whose execution then uses its own `call_id`; a nested dispatcher passes its enclosing root on.
    pub root_call_id: Option<String>,
}

impl ToolExecutionInput {
    /// A top-level global call with a fresh signal.
    pub fn new(call_id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
            signal: CancellationToken::new(),
            agent: None,
            parent: None,
            root_call_id: None,
        }
    }

    /// The same call observing `signal` (cancel it to abort the call; a child token of a turn's token
    /// aborts with the turn).
    pub fn with_signal(mut self, signal: CancellationToken) -> Self {
        self.signal = signal;
        self
    }

    /// The same call made by the agent `scope` (it sees that scope's tools and hooks).
    pub fn with_agent(mut self, scope: &ScopeKey) -> Self {
        self.agent = Some(scope.clone());
        self
    }
}

/// The immutable pipeline view of one call, shared with listeners, guards and observers.
#[derive(Debug)]
pub struct ToolExecution {
    /// Registry-minted token.
    pub token: ExecutionToken,
    /// The model's call id.
    pub call_id: String,
    /// The call id of the root of this call's tree: its own for a top-level call; a `run_code`
    /// sub-call carries its transport call's root (upstream `rootCallId`).
    pub root_call_id: String,
    /// The requested tool name.
    pub name: String,
    /// The frozen argument snapshot.
    pub arguments: Arc<Value>,
    /// The caller's signal.
    pub signal: CancellationToken,
    /// The calling agent scope.
    pub agent: Option<ScopeKey>,
    /// The enclosing execution's token.
    pub parent: Option<ExecutionToken>,
    /// The runtime's part of the attached abort reasons (see [`crate::ToolRuntime::set_abort_reason`]).
    pub(crate) reasons: AbortReasons,
    /// What the body stage and the body share for this call (kept here so a call allocates it with the
    /// execution, not on its own).
    pub(crate) state: CallState,
}

/// The mutable per-call state next to the immutable view: the body's deferred contexts, its
/// `conclude_turn` mark, and which signal aborted the body first.
#[derive(Debug, Default)]
pub(crate) struct CallState {
    /// Contexts deferred by [`ToolRunContext::defer_context`], in deferral order.
    pub(crate) deferred: Mutex<Vec<Value>>,
    /// Set before a context joins `deferred`: a call whose body deferred nothing (most calls) takes the
    /// list without its lock.
    pub(crate) deferred_any: AtomicBool,
    /// Set by [`ToolRunContext::conclude_turn`]; read when the execution's success is created.
    pub(crate) concluded: AtomicBool,
    /// Set by the body stage's relay when a wrapper's replacement signal aborted before the caller's.
    pub(crate) replacement_first: AtomicBool,
}

impl ToolExecution {
    /// The reason of the caller's cancellation (upstream `exec.signal.reason`, as `String(reason)`):
    /// `None` while [`signal`](Self::signal) is live; once it is cancelled, the reason the caller attached
    /// with [`crate::ToolRuntime::set_abort_reason`], else [`DEFAULT_ABORT_REASON`].
    pub fn abort_reason(&self) -> Option<String> {
        if !self.signal.is_cancelled() {
            return None;
        }
        Some(self.reasons.get(self.token).unwrap_or_else(|| DEFAULT_ABORT_REASON.to_owned()))
    }
}

/// The reason of a cancellation nobody gave a reason for: JavaScript's `String(reason)` of the
/// `DOMException` an `AbortController.abort()` without an argument stores (the same text as
/// `crate::code::DEFAULT_ABORT_REASON`, which the `run_code` failure quotes).
pub const DEFAULT_ABORT_REASON: &str = "AbortError: This operation was aborted";

impl Drop for ToolExecution {
    fn drop(&mut self) {
        // The last holder dismantles the snapshot without recursion (arguments may be arbitrarily deep).
        if let Some(arguments) = Arc::get_mut(&mut self.arguments) {
            if matches!(arguments, Value::Array(_) | Value::Object(_)) {
                crate::value::dismantle(std::mem::take(arguments));
            }
        }
    }
}

/// What a tool body receives: the (fused) signal, the execution's identity, `defer_context` and
/// `conclude_turn`. Cloning it is cheap (a reference count, and a token when a wrapper replaced the
/// signal). Its `Debug` shows the identity and whether the signal is cancelled, never the arguments (which
/// may be 64 MiB or 100,000 levels deep).
#[derive(Clone)]
pub struct ToolRunContext {
    /// The fused signal when a `tools/execute` wrapper replaced the caller's; `None`: the caller's own,
    /// read from the execution (a token clone takes its lock twice, once to clone and once to drop).
    relay: Option<CancellationToken>,
    exec: Arc<ToolExecution>,
}

impl std::fmt::Debug for ToolRunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRunContext")
            .field("call_id", &self.exec.call_id)
            .field("root_call_id", &self.exec.root_call_id)
            .field("name", &self.exec.name)
            .field("token", &self.exec.token)
            .field("agent", &self.exec.agent)
            .field("parent", &self.exec.parent)
            .field("cancelled", &self.signal().is_cancelled())
            .finish_non_exhaustive()
    }
}

impl ToolRunContext {
    /// The context of `exec`'s body, observing `relay` (a wrapper replaced the signal) or else the
    /// caller's signal.
    pub(crate) fn new(relay: Option<CancellationToken>, exec: Arc<ToolExecution>) -> Self {
        Self { relay, exec }
    }

    /// The signal the body must observe: cancelled when the caller aborts (or when a `tools/execute`
    /// wrapper's replacement signal does). Clone it to move it into a task of its own.
    pub fn signal(&self) -> &CancellationToken {
        self.relay.as_ref().unwrap_or(&self.exec.signal)
    }

    /// The execution this body runs for (the same view listeners, guards and observers get; its
    /// [`signal`](ToolExecution::signal) is the caller's, while [`signal`](Self::signal) is the one to observe).
    pub fn execution(&self) -> &ToolExecution {
        &self.exec
    }

    /// The execution's token.
    pub fn token(&self) -> ExecutionToken {
        self.exec.token
    }

    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.exec.call_id
    }

    /// The root call id of the call's tree (see [`ToolExecution::root_call_id`]).
    pub fn root_call_id(&self) -> &str {
        &self.exec.root_call_id
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.exec.name
    }

    /// The calling agent scope.
    pub fn agent(&self) -> Option<&ScopeKey> {
        self.exec.agent.as_ref()
    }

    /// The enclosing execution's token.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.exec.parent
    }

    /// The reason of the body's signal (upstream `exec.signal.reason`, as `String(reason)`): `None` while
    /// [`signal`](Self::signal) is live. Once it is cancelled: for a body observing the caller's signal, the
    /// reason the caller attached ([`crate::ToolRuntime::set_abort_reason`]); for a signal fused with a
    /// wrapper's replacement, the reason of whichever source aborted first — a replacement carries
    /// [`DEFAULT_ABORT_REASON`]. Without an attached reason, [`DEFAULT_ABORT_REASON`].
    pub fn abort_reason(&self) -> Option<String> {
        if !self.signal().is_cancelled() {
            return None;
        }
        if self.exec.state.replacement_first.load(Ordering::SeqCst) {
            return Some(DEFAULT_ABORT_REASON.to_owned());
        }
        Some(self.exec.reasons.get(self.exec.token).unwrap_or_else(|| DEFAULT_ABORT_REASON.to_owned()))
    }

    /// Defer one context (a user message) until this call's final result reaches the loop; kept even when
    /// the body later fails or cancellation wins, in deferral order.
    pub fn defer_context(&self, context: Value) {
        // The flag goes up first: a stage that still reads it down takes the list before this context
        // joins it, exactly as if the context were deferred after that stage took the list.
        self.exec.state.deferred_any.store(true, Ordering::SeqCst);
        let mut list = self.exec.state.deferred.lock().unwrap_or_else(|p| p.into_inner());
        list.push(context);
    }

    /// Mark this execution's successful final result as terminal for the current agent turn (upstream
    /// `exec.concludeTurn()`): the result then reports [`ToolExecutionResult::concludes_turn`]. A failure
    /// (a later throw, invalid output, a block, cancellation) never carries the mark.
    ///
    /// [`ToolExecutionResult::concludes_turn`]: crate::ToolExecutionResult::concludes_turn
    pub fn conclude_turn(&self) {
        self.exec.state.concluded.store(true, Ordering::SeqCst);
    }
}

/// Scheduling class of a pending call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionMode {
    /// May overlap other parallel calls.
    Parallel,
    /// Runs alone, as an ordering barrier.
    Exclusive,
}

/// The reasons callers attached to executions' cancellations (see [`crate::ToolRuntime::set_abort_reason`]),
/// for every runtime of the process, each under its runtime's id: a runtime reads and forgets only its
/// own. Empty almost always, so forgetting is one atomic load. One table rather than one per runtime: an
/// execution then names its runtime with a number, where a shared table would cost it two atomic
/// reference-count operations per call.
struct ReasonTable {
    any: AtomicBool,
    entries: Mutex<Vec<(u64, ExecutionToken, Reason)>>,
}

/// A reason as the table holds it: a text a caller attached, or one read from the signal the execution
/// was started under when asked (a `run_code` sub-call's run signal, RUN-057).
#[derive(Clone)]
enum Reason {
    Text(String),
    Follow(Arc<dyn Fn() -> Option<String> + Send + Sync>),
}

static REASONS: ReasonTable = ReasonTable { any: AtomicBool::new(false), entries: Mutex::new(Vec::new()) };

impl ReasonTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, ExecutionToken, Reason)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drop the entries `keep` rejects, and lower the flag once none is left.
    fn retain(&self, keep: impl Fn(u64, ExecutionToken) -> bool) {
        if !self.any.load(Ordering::SeqCst) {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|(runtime, token, _)| keep(*runtime, *token));
        self.any.store(!entries.is_empty(), Ordering::SeqCst);
    }
}

/// One runtime's part of the process's abort-reason table: its id there. The runtime's pipeline owns
/// one and purges its entries when it is dropped.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AbortReasons {
    runtime: u64,
}

impl Default for AbortReasons {
    fn default() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self { runtime: NEXT.fetch_add(1, Ordering::Relaxed) }
    }
}

impl AbortReasons {
    pub(crate) fn set(&self, token: ExecutionToken, reason: String) {
        self.put(token, Reason::Text(reason));
    }

    /// Read `token`'s reason from `reason` whenever it is asked for (`None`: no reason yet): the reason
    /// of the signal the execution was started under, which aborts after the execution began (RUN-057).
    pub(crate) fn follow(&self, token: ExecutionToken, reason: impl Fn() -> Option<String> + Send + Sync + 'static) {
        self.put(token, Reason::Follow(Arc::new(reason)));
    }

    fn put(&self, token: ExecutionToken, reason: Reason) {
        let mut entries = REASONS.lock();
        entries.retain(|(runtime, t, _)| (*runtime, *t) != (self.runtime, token));
        entries.push((self.runtime, token, reason));
        REASONS.any.store(true, Ordering::SeqCst);
    }

    pub(crate) fn get(&self, token: ExecutionToken) -> Option<String> {
        if !REASONS.any.load(Ordering::SeqCst) {
            return None;
        }
        let found = {
            let entries = REASONS.lock();
            entries.iter().find(|(runtime, t, _)| (*runtime, *t) == (self.runtime, token)).map(|(_, _, r)| r.clone())
        };
        match found? {
            Reason::Text(text) => Some(text),
            Reason::Follow(read) => read(),
        }
    }

    pub(crate) fn forget(&self, token: ExecutionToken) {
        REASONS.retain(|runtime, t| (runtime, t) != (self.runtime, token));
    }

    /// Forget every reason of this runtime (its pipeline is gone: no execution of it can publish now).
    pub(crate) fn purge(&self) {
        REASONS.retain(|runtime, _| runtime != self.runtime);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_reasons_stay_with_their_runtime_and_go_with_it() {
        let (a, b) = (AbortReasons::default(), AbortReasons::default());
        let token = ExecutionToken::mint();
        a.set(token, "stop".into());
        assert_eq!(a.get(token).as_deref(), Some("stop"));
        assert_eq!(b.get(token), None, "another runtime does not see the reason");
        b.set(token, "other".into());
        a.forget(token);
        assert_eq!(a.get(token), None);
        assert_eq!(b.get(token).as_deref(), Some("other"), "forgetting is per runtime");
        a.set(token, "again".into());
        b.purge();
        assert_eq!(b.get(token), None);
        assert_eq!(a.get(token).as_deref(), Some("again"), "a purge leaves other runtimes' reasons");
        a.purge();
        assert_eq!(a.get(token), None);
    }

    #[test]
    fn a_followed_reason_is_read_when_asked() {
        let reasons = AbortReasons::default();
        let token = ExecutionToken::mint();
        let slot = Arc::new(Mutex::new(None::<String>));
        let read = Arc::clone(&slot);
        reasons.follow(token, move || read.lock().unwrap_or_else(|p| p.into_inner()).clone());
        assert_eq!(reasons.get(token), None, "no reason before the followed signal aborts");
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some("run_code settled".into());
        assert_eq!(reasons.get(token).as_deref(), Some("run_code settled"));
        reasons.forget(token);
        assert_eq!(reasons.get(token), None);
    }

    #[test]
    fn a_body_context_debug_names_the_call_and_not_its_arguments() {
        let exec = ToolExecution {
            token: ExecutionToken::mint(),
            call_id: "c1".into(),
            root_call_id: "c1".into(),
            name: "echo".into(),
            arguments: Arc::new(serde_json::json!({ "secret": "x".repeat(64) })),
            signal: CancellationToken::new(),
            agent: None,
            parent: None,
            reasons: AbortReasons::default(),
            state: CallState::default(),
        };
        let ctx = ToolRunContext::new(Some(CancellationToken::new()), Arc::new(exec));
        let shown = format!("{ctx:?}");
        assert!(shown.contains("\"c1\"") && shown.contains("\"echo\"") && shown.contains("cancelled: false"), "{shown}");
        assert!(!shown.contains("secret"), "arguments are not shown: {shown}");
    }

    /// Tokens minted on several threads, across block boundaries, never repeat.
    #[test]
    fn tokens_minted_on_several_threads_are_all_distinct() {
        let per_thread = 3_000;
        let minted: Vec<Vec<ExecutionToken>> = std::thread::scope(|s| {
            let workers: Vec<_> =
                (0..4).map(|_| s.spawn(move || (0..per_thread).map(|_| ExecutionToken::mint()).collect())).collect();
            workers.into_iter().map(|w| w.join().unwrap_or_default()).collect()
        });
        let all: std::collections::HashSet<ExecutionToken> = minted.iter().flatten().copied().collect();
        assert_eq!(all.len(), 4 * per_thread);
    }
}
