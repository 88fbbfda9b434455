//! Features a scenario needs (`spec/README.md` § Features inferred from a scenario), and whether a
//! subject can run it at all: a subject lacking a profile, feature or runtime makes the scenario
//! `SKIP(not-applicable)`, never a pass.

use std::collections::BTreeSet;

use crate::fixture::{Mode, Setup};
use crate::listener::{Hooks, Listener};
use crate::scenario::{Action, Scenario};
use crate::subject::SubjectInfo;

/// Any agent field or step.
pub const AGENTS: &str = "agents";
/// A tool or listener fixture's `plugin`, a `disposePlugin` or a `disposeRegistry` step.
pub const PLUGINS: &str = "plugins";
/// `setup.approval`.
pub const APPROVAL: &str = "approval";
/// `execute` hooks.
pub const EXECUTE_WRAPPERS: &str = "execute-wrappers";
/// `postExecute` hooks.
pub const POST_EXECUTE: &str = "post-execute";
/// `present` and `definition` steps (a UI's read of a resolved definition), and `presentCall` /
/// `presentResult` on a tool fixture.
pub const PRESENTERS: &str = "presenters";
/// `finalizeContent` on a tool fixture.
pub const FINALIZE_CONTENT: &str = "finalize-content";
/// `results` hooks.
pub const RESULT_LISTENERS: &str = "result-listeners";
/// `changes` hooks.
pub const CHANGE_LISTENERS: &str = "change-listeners";
/// `dispatchLog` hooks (`tools/code-dispatch-log` listeners).
pub const DISPATCH_LOG: &str = "dispatch-log";
/// `setup.sessionLog` (`session-append` events for every entry appended to an agent's session, RUN-058).
pub const SESSION_LOG: &str = "session-log";
/// A `restrict` step without `agent`: restrict through the plain context, which upstream rejects at run time
/// (SCOPE-017); a subject whose API cannot express the call (the reference's takes an agent scope by type)
/// does not declare it.
pub const PLAIN_CONTEXT_RESTRICT: &str = "plain-context-restrict";
/// `mode` other than `native`, or a `presentAs` step.
pub const CODE_MODE: &str = "code-mode";
/// `setup.codemode`: the dsh-codemode preset plugin.
pub const CODEMODE: &str = "codemode";
/// The reference's own answers where seed 002 fixes none (the discovery tools' output shapes, the
/// wording of its texts, the open questions' readings): never inferred, a scenario `requires:` it, so an
/// independent implementation of seed 002 declares `codemode` alone and skips those trials as not
/// applicable instead of failing on the reference's wording (`spec/rules/codemode.yaml` § the profile's
/// split).
pub const CODEMODE_REFERENCE: &str = "codemode-reference";
/// `assemble` steps.
pub const PROMPT: &str = "prompt";
/// `renderSdk` steps.
pub const SDK: &str = "sdk";
/// The `schema/*` requests: never inferred from a scenario (`requires: [schema]`); every trial of the
/// validation corpus needs it.
pub const SCHEMA: &str = "schema";
/// Prefix of `runtime:<language>`.
pub const RUNTIME_PREFIX: &str = "runtime:";

/// The features the scenario uses, inferred from its setup and steps, plus `requires:`.
pub fn required_features(scenario: &Scenario) -> BTreeSet<String> {
    let mut f = BTreeSet::new();
    let mut add = |name: &str| {
        f.insert(name.to_string());
    };
    if let Some(setup) = &scenario.setup {
        setup_features(setup, &mut add);
    }
    for step in &scenario.steps {
        match &step.action {
            Action::AddHook(h) => listener_features(&h.listener, &mut add),
            Action::Restrict(r) if r.agent.is_none() => add(PLAIN_CONTEXT_RESTRICT),
            Action::Restrict(_) | Action::OpenAgent(_) | Action::DropAgent(_) => add(AGENTS),
            Action::DisposePlugin(_) | Action::DisposeRegistry(_) => add(PLUGINS),
            Action::UnmountApproval(_) => add(APPROVAL),
            Action::Environments(_) => add(CODEMODE),
            Action::PresentAs(p) => {
                add(CODE_MODE);
                if p.agent.is_some() {
                    add(AGENTS);
                }
            }
            Action::Get(g) if g.agent.is_some() => add(AGENTS),
            Action::Schemas(a) if a.agent.is_some() => add(AGENTS),
            Action::ExecutionMode(e) if e.agent.is_some() => add(AGENTS),
            Action::Present(p) => {
                add(PRESENTERS);
                if p.agent.is_some() {
                    add(AGENTS);
                }
            }
            Action::Definition(g) => {
                add(PRESENTERS);
                if g.agent.is_some() {
                    add(AGENTS);
                }
            }
            Action::Execute(c) | Action::Start(c) if c.agent.is_some() => add(AGENTS),
            Action::Assemble(a) => {
                add(PROMPT);
                if a.agent.is_some() {
                    add(AGENTS);
                }
            }
            Action::RenderSdk(_) => add(SDK),
            _ => {}
        }
    }
    for r in scenario.requires.iter().flatten() {
        f.insert(r.clone());
    }
    f
}

fn setup_features(setup: &Setup, add: &mut impl FnMut(&str)) {
    if matches!(setup.mode, Some(Mode::Code | Mode::Both)) {
        add(CODE_MODE);
    }
    if let Some(lang) = setup.runtime {
        add(&format!("{RUNTIME_PREFIX}{}", lang.as_str()));
    }
    if setup.approval.is_some() {
        add(APPROVAL);
    }
    if setup.prompt.is_some() {
        add(PROMPT);
    }
    if setup.codemode.is_some() {
        add(CODEMODE);
    }
    if setup.session_log == Some(true) {
        add(SESSION_LOG);
    }
    if setup.agents.as_ref().is_some_and(|a| !a.is_empty()) {
        add(AGENTS);
    }
    for tool in setup.tools.iter().flatten() {
        if tool.agent.is_some() {
            add(AGENTS);
        }
        if tool.plugin.is_some() {
            add(PLUGINS);
        }
        if tool.finalize_content.is_some() {
            add(FINALIZE_CONTENT);
        }
        if tool.present_call.is_some() || tool.present_result.is_some() {
            add(PRESENTERS);
        }
    }
    if let Some(hooks) = &setup.hooks {
        for l in hook_listeners(hooks) {
            listener_features(&l, add);
        }
    }
}

/// The listeners of a `hooks` block, tagged by kind, in registration order.
pub fn hook_listeners(hooks: &Hooks) -> Vec<Listener> {
    let mut out = Vec::new();
    out.extend(hooks.pre_execute.iter().flatten().cloned().map(Listener::PreExecute));
    out.extend(hooks.guards.iter().flatten().cloned().map(Listener::Guards));
    out.extend(hooks.execute.iter().flatten().cloned().map(Listener::Execute));
    out.extend(hooks.post_execute.iter().flatten().cloned().map(Listener::PostExecute));
    out.extend(hooks.results.iter().flatten().cloned().map(Listener::Results));
    out.extend(hooks.changes.iter().flatten().cloned().map(Listener::Changes));
    out.extend(hooks.dispatch_log.iter().flatten().cloned().map(Listener::DispatchLog));
    out
}

fn listener_features(listener: &Listener, add: &mut impl FnMut(&str)) {
    if listener.common().agent.is_some() {
        add(AGENTS);
    }
    if listener.common().plugin.is_some() {
        add(PLUGINS);
    }
    match listener {
        Listener::Execute(_) => add(EXECUTE_WRAPPERS),
        Listener::PostExecute(_) => add(POST_EXECUTE),
        Listener::Results(_) => add(RESULT_LISTENERS),
        Listener::Changes(_) => add(CHANGE_LISTENERS),
        Listener::DispatchLog(_) => add(DISPATCH_LOG),
        Listener::PreExecute(_) | Listener::Guards(_) => {}
    }
}

/// Why the subject cannot run the scenario (`SKIP(not-applicable)`), or `None` when it can.
pub fn applicability(info: &SubjectInfo, scenario: &Scenario) -> Option<String> {
    let profile = scenario.profile();
    if !info.profiles.iter().any(|p| p == profile) {
        return Some(format!("subject does not declare profile {profile:?}"));
    }
    let mut missing = Vec::new();
    for feature in required_features(scenario) {
        let has = match feature.strip_prefix(RUNTIME_PREFIX) {
            Some(lang) => info.runtimes.iter().any(|r| r == lang),
            None => info.features.contains(&feature),
        };
        if !has {
            missing.push(feature);
        }
    }
    if missing.is_empty() {
        None
    } else {
        Some(format!("subject lacks {}", missing.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(yaml: &str) -> Scenario {
        let head = "id: s\nrules: [R-001]\nlevel: must\ndescription: d\n";
        let value = crate::yaml::parse(&format!("{head}{yaml}")).expect("yaml").value;
        serde_json::from_value(value).expect("scenario")
    }

    fn names(s: &Scenario) -> Vec<String> {
        required_features(s).into_iter().collect()
    }

    #[test]
    fn plain_scenario_needs_nothing() {
        let s = scenario("setup: { tools: [{ name: echo }] }\nsteps:\n  - execute: { name: echo, arguments: {} }\n");
        assert!(names(&s).is_empty());
    }

    #[test]
    fn inferred_from_setup() {
        let s = scenario(
            "setup:\n  mode: both\n  runtime: python\n  sessionLog: true\n  approval: { answer: rejected }\n  tools: [{ name: t, agent: a1, finalizeContent: { keep: true } }]\n  hooks: { execute: [{ id: w, around: next }], postExecute: [{ id: p, decide: next }], results: [{ id: r }] }\nrequires: [zeta]\n",
        );
        assert_eq!(
            names(&s),
            [
                "agents",
                "approval",
                "code-mode",
                "execute-wrappers",
                "finalize-content",
                "post-execute",
                "result-listeners",
                "runtime:python",
                "session-log",
                "zeta"
            ]
        );
    }

    #[test]
    fn inferred_from_steps() {
        let s = scenario(
            "steps:\n  - presentAs: { mode: code }\n  - assemble: {}\n  - renderSdk: { language: typescript, tools: [] }\n  - addHook: { results: { id: r } }\n  - get: { name: x, agent: a }\n",
        );
        assert_eq!(names(&s), ["agents", "code-mode", "prompt", "result-listeners", "sdk"]);
    }

    #[test]
    fn applicability_names_what_is_missing() {
        let s = scenario("setup: { runtime: typescript }\nsteps: [{ assemble: {} }]\n");
        let mut info = SubjectInfo {
            protocol_version: "1.0".into(),
            name: "x".into(),
            version: "0".into(),
            language: "rust".into(),
            profiles: vec!["dsh-tools-0.1".into()],
            features: vec![],
            runtimes: vec![],
        };
        assert_eq!(applicability(&info, &s).as_deref(), Some("subject lacks prompt, runtime:typescript"));
        info.features.push("prompt".into());
        info.runtimes.push("typescript".into());
        assert_eq!(applicability(&info, &s), None);
        info.profiles.clear();
        assert!(applicability(&info, &s).is_some_and(|r| r.contains("dsh-tools-0.1")));
    }
}
