//! The `tracing` spans of `wrappers::trace` (feature `tracing`), seen by a recording subscriber: one
//! `tool_call` span per execution with its stage spans and the result event inside it, and the
//! recorded outcome.

#![cfg(feature = "tracing")]
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dsh_tools::wrappers::CallTracing;
use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolRuntime, ToolsConfig};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Default)]
struct Recorded {
    /// (id, name, explicit parent id)
    spans: Vec<(u64, String, Option<u64>)>,
    /// (explicit parent id, fields as `name=value`)
    events: Vec<(Option<u64>, Vec<String>)>,
    /// (span id, fields recorded later)
    recorded: Vec<(u64, Vec<String>)>,
}

#[derive(Clone, Default)]
struct Recorder {
    next: Arc<AtomicU64>,
    seen: Arc<Mutex<Recorded>>,
}

struct Fields(Vec<String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push(format!("{}={value:?}", field.name()));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let parent = attrs.parent().map(Id::into_u64);
        self.seen.lock().unwrap().spans.push((id, attrs.metadata().name().to_owned(), parent));
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = Fields(Vec::new());
        values.record(&mut fields);
        self.seen.lock().unwrap().recorded.push((span.into_u64(), fields.0));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        self.seen.lock().unwrap().events.push((event.parent().map(Id::into_u64), fields.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn each_call_has_a_span_with_its_stages_and_result() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    let runtime = ToolRuntime::new(ToolsConfig::default());
    let tool = ToolDefinition::new(
        "echo",
        "d",
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration { schema: json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(|args, _| Box::pin(async move { Ok((*args).clone()) })),
    );
    let _tool = runtime.register(tool, None).unwrap();
    let _spans = CallTracing::install(&runtime, None);
    let tokio = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let ok = tokio.block_on(runtime.execute(ToolExecutionInput::new("c1", "echo", json!({}))));
    let missing = tokio.block_on(runtime.execute(ToolExecutionInput::new("c2", "nope", json!({}))));
    assert!(!ok.is_error() && missing.is_error());
    let seen = recorder.seen.lock().unwrap();
    let calls: Vec<u64> = seen.spans.iter().filter(|(_, name, _)| name == "tool_call").map(|(id, _, _)| *id).collect();
    assert_eq!(calls.len(), 2, "{:?}", seen.spans);
    for call in &calls {
        let stages: Vec<&str> = seen.spans.iter().filter(|(_, _, parent)| *parent == Some(*call)).map(|(_, name, _)| name.as_str()).collect();
        assert_eq!(stages, ["pre_execute", "execute", "post_execute"], "stages of span {call}");
        let events: Vec<&Vec<String>> = seen.events.iter().filter(|(parent, _)| *parent == Some(*call)).map(|(_, f)| f).collect();
        assert_eq!(events.len(), 1);
        assert!(events[0].contains(&"message=tools/result".to_owned()), "{:?}", events[0]);
    }
    let recorded_on = |call: u64| -> Vec<String> { seen.recorded.iter().filter(|(id, _)| *id == call).flat_map(|(_, f)| f.clone()).collect() };
    assert_eq!(recorded_on(calls[0]), ["is_error=false"]);
    assert_eq!(recorded_on(calls[1]), ["is_error=true", "code=\"UNKNOWN_TOOL\""]);
}
