//! Unit tests of the prompt service: ordering, shadowing, rendering and the `toolOrder` checks.

use super::*;

fn schema(name: &str) -> ToolSchema {
    ToolSchema { name: name.to_owned(), description: String::new(), parameters: Arc::new(serde_json::json!({})) }
}

fn names(tools: &[ToolSchema]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn tool_order_is_checked_at_construction() {
    let err = |order: &[&str]| {
        SystemPrompt::new(PromptConfig::with_tool_order(order.iter().map(|s| (*s).to_owned()).collect()))
            .map(|_| ())
            .map_err(|e| e.message)
    };
    assert_eq!(err(&["a", "a", TOOL_ORDER_REST]), Err("toolOrder lists \"a\" more than once".to_owned()));
    assert_eq!(
        err(&["a"]),
        Err("toolOrder must contain the \"<unlisted-tools>\" rest entry (where unlisted tools are inserted)".to_owned())
    );
    assert_eq!(err(&[TOOL_ORDER_REST, "a"]), Ok(()));
}

#[test]
fn tools_are_ordered_and_unknown_names_rejected() {
    let tools = || vec![schema("b"), schema("c"), schema("a")];
    let known: Vec<String> = ["a", "b", "c", "hidden"].iter().map(|s| (*s).to_owned()).collect();
    let sorted = order_tools(tools(), None, &known).map(|t| names(&t).join(","));
    assert_eq!(sorted, Ok("a,b,c".to_owned()));
    let order: Vec<String> = ["c", TOOL_ORDER_REST, "hidden"].iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(order_tools(tools(), Some(&order), &known).map(|t| names(&t).join(",")), Ok("c,a,b".to_owned()));
    let order: Vec<String> = ["x", TOOL_ORDER_REST, "y"].iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        order_tools(tools(), Some(&order), &known).map(|_| ()).map_err(|e| e.message),
        Err("toolOrder lists unregistered tools \"x\", \"y\"; known tools: a, b, c, hidden".to_owned())
    );
    assert_eq!(
        order_tools(vec![], Some(&order[..2]), &[]).map(|_| ()).map_err(|e| e.message),
        Err("toolOrder lists unregistered tool \"x\"; known tools: (none)".to_owned())
    );
    assert_eq!(
        order_tools(vec![schema(TOOL_ORDER_REST)], None, &[]).map(|_| ()).map_err(|e| e.message),
        Err("tool provider returned reserved tool name \"<unlisted-tools>\" (reserved for toolOrder's rest entry)".to_owned())
    );
}

#[test]
fn sections_are_ordered_shadowed_and_rendered_without_empty_ones() -> Result<(), PromptError> {
    let prompt = SystemPrompt::new(PromptConfig::default())?;
    let agent = ScopeKey::new("a1");
    let text = |t: &str| SectionText::Static(t.to_owned());
    let _g = prompt.section(None, PromptSection { name: "g".into(), order: 150.0, text: text("global") })?;
    let _s = prompt.section(Some(&agent), PromptSection { name: "g".into(), order: 150.0, text: text("scoped") })?;
    let _e = prompt.section(None, PromptSection { name: "early".into(), order: 99.0, text: text("early") })?;
    let global = prompt.assemble(None)?;
    let order: Vec<&str> = global.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(order, [HARNESS_IDENTITY_SECTION, PERSONA_SECTION, "early", "g"]);
    assert_eq!(global.render(), format!("{HARNESS_IDENTITY_TEXT}\n\nearly\n\nglobal"));
    assert_eq!(prompt.assemble(Some(&agent))?.sections[3].text, "scoped");
    let dup = prompt.section(None, PromptSection { name: "g".into(), order: 1.0, text: text("") });
    assert_eq!(
        dup.map(|_| ()).map_err(|e| e.message),
        Err("prompt section \"g\" is already registered (for a per-agent override, register through that agent's `agent.ctx` instead)".to_owned())
    );
    let nan = prompt.section(None, PromptSection { name: "n".into(), order: f64::NAN, text: text("") });
    assert_eq!(nan.map(|_| ()).map_err(|e| (e.name, e.message)), Err(("TypeError", "prompt section \"n\" order must be a finite number".to_owned())));
    prompt.dispose_scope(&agent);
    assert_eq!(prompt.assemble(Some(&agent))?.sections[3].text, "global");
    Ok(())
}
