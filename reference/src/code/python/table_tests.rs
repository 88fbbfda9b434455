//! Tests of the fork server's names table (`zygote.rs`, issue 39): a large names set two runs in a row
//! want is held by the fork server and inherited by the runs forked after (their boot frames refer to it),
//! a table never serves another names set (a newer generation's set with the same size and shape sees its
//! own names, and a run of the older set again sees the older ones), a child drops a table its boot does
//! not use before the program runs, and a persistent process's later runs get fresh bindings from it.
//!
//! Spec: RUN-004 (one binding per declared name), RUN-034 (fresh state per run).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{Value, json};

use super::PythonRuntime;
use super::zygote::TABLE_MIN_NAMES;
use crate::code::{
    BindingFn, CodeBindingNamespace, CodeBindings, CodeExecutionMode, CodeRunRequest, CodeRuntime, CodeRuntimeLimits, RunSignal,
    StateOwner,
};

fn runtime() -> PythonRuntime {
    PythonRuntime::new(CodeRuntimeLimits { max_wall_ms: 20_000.0, ..CodeRuntimeLimits::default() }).unwrap()
}

/// `TABLE_MIN_NAMES` names `<prefix>_<k>`, each answering its own name: one names set (one id).
fn names_set(prefix: &str) -> CodeBindings {
    (0..TABLE_MIN_NAMES)
        .map(|k| {
            let name = format!("{prefix}_{k}");
            let answer = name.clone();
            let binding: BindingFn = Arc::new(move |_| {
                let answer = answer.clone();
                Box::pin(async move { Ok(json!(answer)) })
            });
            (name, binding)
        })
        .collect()
}

/// What a run sees: its namespace's size, first and last names, what a binding answers, and the tables its
/// process holds (`{id: [size, first name]}`, read from the bootstrap's globals as a program can).
const REPORT: &str = "import sys\n\
    held = {str(k): [len(v), next(iter(v))] for k, v in sys.modules['__main__']._TABLES.items()}\n\
    names = list(tools)\n\
    return [len(tools), names[0], names[-1], await tools[names[1]]({}), held]";

async fn report(rt: &PythonRuntime, bindings: &CodeBindings, owner: Option<&str>) -> Value {
    let namespace = CodeBindingNamespace { global: "tools".into(), functions: bindings.clone(), error_class: None };
    let request = CodeRunRequest {
        program: REPORT.to_owned(),
        bindings: vec![namespace],
        signal: RunSignal::new(),
        state_owner: owner.map(StateOwner::new),
    };
    let result = rt.run(request).await.unwrap();
    assert_eq!(result.error, None, "{result:?}");
    result.value.unwrap()
}

fn sees(seen: &Value, prefix: &str) {
    let last = format!("{prefix}_{}", TABLE_MIN_NAMES - 1);
    assert_eq!(seen.as_array().unwrap()[..4], [json!(TABLE_MIN_NAMES), json!(format!("{prefix}_0")), json!(last), json!(format!("{prefix}_1"))], "{seen}");
}

fn held(seen: &Value) -> Vec<(String, Value)> {
    seen[4].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[tokio::test]
async fn a_table_serves_only_the_names_set_it_was_made_from() {
    let rt = runtime();
    let older = names_set("a");
    let seen = report(&rt, &older, None).await;
    sees(&seen, "a");
    assert!(held(&seen).is_empty(), "the first run of a set lists its names: {seen}");
    let seen = report(&rt, &older, None).await;
    sees(&seen, "a");
    let tables = held(&seen);
    assert_eq!(tables.len(), 1, "the second run in a row inherits the set as the fork server's table: {seen}");
    assert_eq!(tables[0].1, json!([TABLE_MIN_NAMES, "a_0"]), "{seen}");
    let older_id = tables[0].0.clone();

    // A newer generation: another set of the same size and shape. Never served by the older table.
    let newer = names_set("b");
    let seen = report(&rt, &newer, None).await;
    sees(&seen, "b");
    assert!(held(&seen).is_empty(), "a child drops the table its boot does not use: {seen}");
    let seen = report(&rt, &newer, None).await;
    sees(&seen, "b");
    let tables = held(&seen);
    assert_eq!(tables.len(), 1, "{seen}");
    assert_ne!(tables[0].0, older_id, "the newer set is a table of its own: {seen}");
    assert_eq!(tables[0].1, json!([TABLE_MIN_NAMES, "b_0"]), "{seen}");

    // The older set again: listed, then its table again (under its own id).
    let seen = report(&rt, &older, None).await;
    sees(&seen, "a");
    assert!(held(&seen).is_empty(), "{seen}");
    let seen = report(&rt, &older, None).await;
    sees(&seen, "a");
    assert_eq!(held(&seen), vec![(older_id, json!([TABLE_MIN_NAMES, "a_0"]))], "{seen}");
}

#[tokio::test]
async fn a_small_names_set_is_always_listed() {
    let rt = runtime();
    let noop: BindingFn = Arc::new(|_| Box::pin(async { Ok(Value::Null) }));
    let small: CodeBindings = (0..TABLE_MIN_NAMES - 1).map(|k| (format!("s_{k}"), Arc::clone(&noop))).collect();
    for _ in 0..3 {
        let seen = report(&rt, &small, None).await;
        assert_eq!(seen[0], json!(TABLE_MIN_NAMES - 1), "{seen}");
        assert!(held(&seen).is_empty(), "{seen}");
    }
}

#[tokio::test]
async fn a_persistent_process_makes_fresh_bindings_from_its_table_on_every_run() {
    let per_call = runtime();
    let set = names_set("p");
    report(&per_call, &set, None).await;
    let seen = report(&per_call, &set, None).await;
    assert_eq!(held(&seen).len(), 1, "the set is the fork server's table: {seen}");
    let persistent = per_call.with_limits(per_call.limits()).unwrap().with_execution_mode(CodeExecutionMode::PersistentInMemory);
    let owner = Some("owner");
    let seen = report(&persistent, &set, owner).await;
    sees(&seen, "p");
    assert_eq!(held(&seen).len(), 1, "the resident process inherited the table and keeps it: {seen}");
    // A binding kept from the first run is not the second run's binding of the same name.
    let first = run_program(&persistent, &set, "kept = tools.p_1\nreturn await kept({})").await;
    assert_eq!(first, json!("p_1"));
    let second = run_program(&persistent, &set, "return [kept is tools.p_1, await tools.p_1({}), await kept({})]").await;
    assert_eq!(second, json!([false, "p_1", "p_1"]));
    // Another set in the same process: listed, its own names.
    let seen = report(&persistent, &names_set("q"), owner).await;
    sees(&seen, "q");
}

async fn run_program(rt: &PythonRuntime, bindings: &CodeBindings, program: &str) -> Value {
    let namespace = CodeBindingNamespace { global: "tools".into(), functions: bindings.clone(), error_class: None };
    let request =
        CodeRunRequest { program: program.to_owned(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: Some(StateOwner::new("owner")) };
    let result = rt.run(request).await.unwrap();
    assert_eq!(result.error, None, "{result:?}");
    result.value.unwrap_or(Value::Null)
}
