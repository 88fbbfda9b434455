//! The lazy namespace (`lazy.rs`) against the eager one: one probe program, run over a namespace below
//! and one above [`LAZY_FROM`](super::LAZY_FROM), observes the same shape — keys in declaration order,
//! descriptors, prototype, `in`, missing names, calls and rejections, assignment, extension.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{Value, json};

use super::super::TypeScriptRuntime;
use super::LAZY_FROM;
use crate::code::{BindingFn, CodeBindingErrorClass, CodeBindingNamespace, CodeRunRequest, CodeRuntime, CodeRuntimeLimits, RunSignal};

fn namespace(n: usize) -> CodeBindingNamespace {
    let mut functions: Vec<(String, BindingFn)> = (0..n - 1)
        .map(|k| {
            let name = format!("f{k}");
            let answer = name.clone();
            let binding: BindingFn = Arc::new(move |_| {
                let answer = answer.clone();
                Box::pin(async move { Ok(Value::String(answer)) })
            });
            (name, binding)
        })
        .collect();
    functions.push(("fail_me".to_owned(), Arc::new(|_| Box::pin(async { Err("no".to_owned()) }))));
    CodeBindingNamespace {
        global: "tools".to_owned(),
        functions: functions.into(),
        error_class: Some(CodeBindingErrorClass { name: "ToolCallError".to_owned(), member_name_property: "toolName".to_owned() }),
    }
}

const PROBE: &str = r#"
const keys = Object.keys(tools);
const d = Object.getOwnPropertyDescriptor(tools, 'f1');
let assigned;
try { tools.f1 = 1; assigned = 'no throw'; } catch (e) { assigned = e.constructor.name; }
tools.extra = 5;
const all = Object.keys(tools);
return {
  first: keys.slice(0, 3), count: keys.length, lastDeclared: keys[keys.length - 1],
  proto: Object.getPrototypeOf(tools) === null,
  desc: [typeof d.value, d.value.name, d.writable, d.enumerable, d.configurable],
  has: ['f2' in tools, 'nope' in tools, tools.nope === undefined, typeof tools.f3],
  call: await tools.f2({}),
  failed: await tools.fail_me({}).then(() => 'resolved', (e) => [e.constructor.name, e instanceof ToolCallError, e.toolName, e.message]),
  assigned, extensible: Object.isExtensible(tools), last: all[all.length - 1], json: JSON.stringify(tools).length,
};
"#;

async fn probe(n: usize) -> Value {
    let runtime = TypeScriptRuntime::new(CodeRuntimeLimits::default()).unwrap();
    let request = CodeRunRequest { program: PROBE.to_owned(), bindings: vec![namespace(n)], signal: RunSignal::new(), state_owner: None };
    let result = runtime.run(request).await.unwrap();
    assert_eq!(result.error, None, "{result:?}");
    result.value.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_namespace_looks_like_an_eager_one() {
    let (small, large) = (10, LAZY_FROM + 36);
    let mut eager = probe(small).await;
    let mut lazy = probe(large).await;
    assert_eq!((eager["count"].take(), lazy["count"].take()), (json!(small), json!(large)));
    assert_eq!(eager, lazy);
    assert_eq!(lazy["first"], json!(["f0", "f1", "f2"]));
    assert_eq!(lazy["lastDeclared"], "fail_me");
    assert_eq!(lazy["desc"], json!(["function", "value", false, true, false]));
    assert_eq!(lazy["has"], json!([true, false, true, "function"]));
    assert_eq!(lazy["failed"], json!(["BindingCallError", true, "fail_me", "no"]));
    assert_eq!((&lazy["assigned"], &lazy["last"]), (&json!("TypeError"), &json!("extra")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn freezing_a_lazy_namespace_makes_every_function() {
    let runtime = TypeScriptRuntime::new(CodeRuntimeLimits::default()).unwrap();
    let program = "Object.freeze(tools); return [Object.isFrozen(tools), Object.keys(tools).length, typeof tools.f70, await tools.f70({})];";
    let request = CodeRunRequest { program: program.to_owned(), bindings: vec![namespace(100)], signal: RunSignal::new(), state_owner: None };
    let result = runtime.run(request).await.unwrap();
    assert_eq!(result.error, None, "{result:?}");
    assert_eq!(result.value, Some(json!([true, 100, "function", "f70"])));
}
