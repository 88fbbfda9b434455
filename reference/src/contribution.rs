//! What dsh-tools contributes to a [`SystemPrompt`] (upstream `ToolRuntime`'s constructor and `presentAs`):
//! the tool-schema provider (`wireSchemas`: the tool list per presentation mode, with the names
//! `toolOrder` may list), the `tools:code-only` section (order 99: the code collapse stated to the model)
//! and the `tools:sdk` section (order 150: the SDK text of the mounted runtime's language). Both sections
//! are registered globally when the config mode is not native and in a scope by a non-native
//! `presentAs`; they render empty where they do not apply. A non-native assembly requires the code
//! runtime through the bridge's check (`code::bridge::require_code_runtime`, thrown here as a
//! `PromptError`). Also what the SDK renderers consume for a scope.
//!
//! The layer just below the [`crate::ToolRuntime`] facade: it reads the registry and the code runtime
//! mount point the facade hands it, through weak handles (the prompt service must not keep the runtime
//! alive).
//!
//! With an executor installed for the assembling scope ([`crate::executor`]), the tool list is its
//! `describe` of the visible schemas instead.
//!
//! The SDK text depends only on the registry (its tools, masks and presentation, all writes that bump
//! its generation), the scope and the runtime's language, so it is cached per (scope, language) for the
//! current generation: assembling the prompt again with 10,000 tools copies the text instead of rendering
//! it; after a change, the TypeScript text is joined from members kept per registered tool, so only the
//! tools the change added are rendered (issue 39, `contribution/sdk_cache.rs`).
//!
//! Spec: PROMPT-008..PROMPT-017, CDM-001, CDM-006, REG-027.

use std::sync::{Arc, Mutex, Weak};

use crate::code::CodeRuntime;
use crate::executor::ExecutorTable;
use crate::hooks::{HookGuard, Slot};
use crate::presentation::{PresentAsError, PresentAsErrorKind, RUN_CODE_NAME, ToolMode};
use crate::prompt::{PromptError, PromptSection, SectionText, SystemPrompt, ToolProviderResult};
use crate::registry::Registry;
use crate::scope::ScopeKey;
use crate::sdk::{SdkToolSchema, renderer};

mod sdk_cache;
use sdk_cache::{MembersCache, SdkCache};

/// The name of the section stating the `code` collapse.
pub const CODE_ONLY_SECTION: &str = "tools:code-only";
/// Its order: after the persona, before the 100–199 tool-guidance band.
pub const CODE_ONLY_SECTION_ORDER: f64 = 99.0;
/// Its text under an effective `code` presentation (empty otherwise).
pub const CODE_ONLY_INSTRUCTION: &str = "`run_code` is the only tool you can call directly — a tool call naming any other tool fails. Reach every tool the SDK declares below from inside the program.";
/// The name of the generated-SDK section.
pub const SDK_SECTION: &str = "tools:sdk";
/// Its order.
pub const SDK_SECTION_ORDER: f64 = 150.0;
pub use crate::sdk::SDK_LANGUAGES;

/// [`require_code_runtime`](crate::code::bridge::require_code_runtime) as the prompt service throws it.
fn require_code_runtime(runtime: Option<Arc<dyn CodeRuntime>>, mode: ToolMode) -> Result<Arc<dyn CodeRuntime>, PromptError> {
    crate::code::bridge::require_code_runtime(runtime, mode).map_err(PromptError::new)
}

/// What the SDK renderers consume for `scope`: every tool `registry` shows it (presentation order, without
/// `run_code`) with its parameter and output schemas (upstream `sdkSchemas`). Copies are made without
/// recursion.
pub(crate) fn sdk_schemas(registry: &Registry, scope: Option<&ScopeKey>) -> Vec<SdkToolSchema> {
    registry
        .visible(scope)
        .into_iter()
        .filter(|tool| tool.schema.name != RUN_CODE_NAME)
        .map(|tool| SdkToolSchema {
            name: tool.schema.name.clone(),
            description: Some(tool.schema.description.clone()),
            parameters: crate::value::deep_clone(&tool.schema.parameters),
            output: Some(crate::value::deep_clone(&tool.output_schema)),
        })
        .collect()
}

/// A rejected prompt-section registration of a `presentAs` declaration, with the prompt service's message.
fn present_as_error(error: PromptError) -> PresentAsError {
    PresentAsError { kind: PresentAsErrorKind::Prompt, message: error.message }
}

/// The runtime's side of the contributions: everything is read at assembly time through weak handles.
#[derive(Clone)]
struct Tools {
    registry: Weak<Registry>,
    code_runtime: Weak<Slot<Arc<dyn CodeRuntime>>>,
    executors: Weak<ExecutorTable>,
    sdk_cache: Arc<Mutex<SdkCache>>,
    ts_members: Arc<Mutex<MembersCache>>,
}

impl Tools {
    fn registry(&self) -> Option<Arc<Registry>> {
        self.registry.upgrade()
    }

    fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.code_runtime.upgrade().and_then(|slot| slot.get())
    }

    /// Upstream `wireSchemas`: native — every visible schema, `toolOrder` may name any tool known before
    /// restrictions; code — only `run_code`, the only known name; both — every visible schema and
    /// `run_code`, the known names plus `run_code`. A non-native mode requires the code runtime.
    fn wire_schemas(&self, scope: Option<&ScopeKey>) -> Result<ToolProviderResult, PromptError> {
        let Some(registry) = self.registry() else { return Ok(ToolProviderResult::default()) };
        // An installed executor owns the request surface (seed 002, CDM-001).
        if let Some(executor) = self.executors.upgrade().and_then(|table| table.nearest(scope)) {
            let schemas = executor.describe(registry.schemas(scope));
            let names = schemas.iter().map(|s| s.name.clone()).collect();
            return Ok(ToolProviderResult { schemas, known_names: Some(names) });
        }
        let mode = registry.mode_for(scope);
        let known = || registry.known_names(scope);
        if mode == ToolMode::Native {
            return Ok(ToolProviderResult { schemas: registry.schemas(scope), known_names: Some(known()) });
        }
        require_code_runtime(self.code_runtime(), mode)?;
        if mode == ToolMode::Code {
            // Only `run_code` is listed (the name is reserved: no registered tool has it), so it is read
            // alone instead of copying every visible schema.
            let schemas = registry.resolve(RUN_CODE_NAME, scope).map(|tool| tool.schema.clone()).into_iter().collect();
            return Ok(ToolProviderResult { schemas, known_names: Some(vec![RUN_CODE_NAME.to_owned()]) });
        }
        let schemas = registry.schemas(scope);
        let mut names = known();
        names.push(RUN_CODE_NAME.to_owned());
        Ok(ToolProviderResult { schemas, known_names: Some(names) })
    }

    /// `tools:code-only`: the statement under an effective `code`, else empty (`both` executes native
    /// calls, so the rule would be false there).
    fn collapse_section(&self) -> PromptSection {
        let tools = self.clone();
        PromptSection {
            name: CODE_ONLY_SECTION.to_owned(),
            order: CODE_ONLY_SECTION_ORDER,
            text: SectionText::Dynamic(Arc::new(move |context| {
                let code = tools.registry().is_some_and(|r| r.mode_for(context.scope.as_ref()) == ToolMode::Code);
                Ok(if code { CODE_ONLY_INSTRUCTION.to_owned() } else { String::new() })
            })),
        }
    }

    /// `tools:sdk`: for a non-native scope, the SDK of the tools it sees (without `run_code`) in the
    /// mounted runtime's language; empty for a native scope.
    fn sdk_section(&self) -> PromptSection {
        let tools = self.clone();
        PromptSection {
            name: SDK_SECTION.to_owned(),
            order: SDK_SECTION_ORDER,
            text: SectionText::Dynamic(Arc::new(move |context| {
                let Some(registry) = tools.registry() else { return Ok(String::new()) };
                let scope = context.scope.as_ref();
                let mode = registry.mode_for(scope);
                if mode == ToolMode::Native {
                    return Ok(String::new());
                }
                let runtime = require_code_runtime(tools.code_runtime(), mode)?;
                let language = runtime.language();
                let Some(render) = renderer(language) else { return Ok(String::new()) };
                // Read before the render: a write meanwhile leaves the text under a generation no later
                // assembly asks for.
                let generation = registry.generation();
                let text = SdkCache::get_or_render(&tools.sdk_cache, generation, scope, language, || {
                    if language == "typescript" {
                        MembersCache::render(&tools.ts_members, &registry, scope)
                    } else if language == "python" {
                        // The registry's own schemas, borrowed: no copy of every schema per render.
                        let visible = registry.visible(scope);
                        let views: Vec<crate::sdk::SdkToolView<'_>> = visible
                            .iter()
                            .filter(|tool| tool.schema.name != RUN_CODE_NAME)
                            .map(|tool| crate::sdk::SdkToolView {
                                name: &tool.schema.name,
                                description: Some(&tool.schema.description),
                                parameters: &tool.schema.parameters,
                                output: Some(&tool.output_schema),
                            })
                            .collect();
                        crate::sdk::render_tools_sdk_py_views(&crate::sdk::SdkUsage::RUN_CODE, &views)
                    } else {
                        render(&sdk_schemas(&registry, scope))
                    }
                });
                Ok(text.to_string())
            })),
        }
    }
}

/// A runtime's link to the prompt service it contributes to: the service, and the global registrations
/// (dropped with the runtime).
pub(crate) struct ToolsPromptLink {
    prompt: SystemPrompt,
    tools: Tools,
    /// The global registrations; emptied by [`detach`](Self::detach).
    global: std::sync::Mutex<Vec<HookGuard>>,
    /// Set by [`detach`](Self::detach): later `presentAs` declarations add no sections.
    detached: std::sync::atomic::AtomicBool,
}

impl ToolsPromptLink {
    /// Register the tool provider globally and, when `default_mode` is not native, the two sections; they
    /// read `registry` and the code runtime mounted in `code_runtime` at each assembly.
    pub(crate) fn attach(
        prompt: &SystemPrompt,
        registry: Weak<Registry>,
        code_runtime: Weak<Slot<Arc<dyn CodeRuntime>>>,
        executors: Weak<ExecutorTable>,
        default_mode: ToolMode,
    ) -> Result<Self, PromptError> {
        let tools = Tools { registry, code_runtime, executors, sdk_cache: Arc::default(), ts_members: Arc::default() };
        let provider_tools = tools.clone();
        let mut global =
            vec![prompt.tools(None, Arc::new(move |context| provider_tools.wire_schemas(context.scope.as_ref())))];
        if default_mode != ToolMode::Native {
            global.push(prompt.section(None, tools.collapse_section())?);
            global.push(prompt.section(None, tools.sdk_section())?);
        }
        Ok(Self {
            prompt: prompt.clone(),
            tools,
            global: std::sync::Mutex::new(global),
            detached: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Withdraw the global registrations (the tool provider and the config mode's sections), as disposing
    /// upstream's `ToolRuntime` plugin does; idempotent. Later `presentAs` declarations add no sections.
    /// REG-027.
    pub(crate) fn detach(&self) {
        self.detached.store(true, std::sync::atomic::Ordering::SeqCst);
        let global = std::mem::take(&mut *self.global.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        drop(global); // outside the lock: a guard's removal runs the prompt service's code
    }

    /// Register an executor's section in `scope` on its behalf (CDM-006): the prompt service's rules
    /// apply, so a name already in that layer is rejected.
    pub(crate) fn section(&self, scope: Option<&ScopeKey>, section: PromptSection) -> Result<HookGuard, PromptError> {
        self.prompt.section(scope, section)
    }

    /// A `presentAs` declaration's prompt side: a non-native declaration adds both sections to the scope's
    /// layer. The returned guard withdraws the sections, then the declaration.
    pub(crate) fn present_as(&self, scope: &ScopeKey, mode: ToolMode, declared: HookGuard) -> Result<HookGuard, PresentAsError> {
        if mode == ToolMode::Native || self.detached.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(declared);
        }
        let collapse = self.prompt.section(Some(scope), self.tools.collapse_section()).map_err(present_as_error)?;
        let sdk = self.prompt.section(Some(scope), self.tools.sdk_section()).map_err(present_as_error)?;
        Ok(HookGuard::new(move || {
            drop(sdk);
            drop(collapse);
            drop(declared);
        }))
    }

    /// Drop what `scope` registered in the prompt service, as disposing the agent's context does.
    pub(crate) fn dispose_scope(&self, scope: &ScopeKey) {
        self.prompt.dispose_scope(scope);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::{CodeRunRequest, CodeRunResult, CodeRuntimeMisuse};
    use crate::callback::BoxFuture;
    use crate::definition::{OutputDeclaration, Parameters, ToolDefinition};
    use crate::prompt::PromptConfig;
    use crate::runtime::{ToolRuntime, ToolsConfig};

    struct Fake(&'static str);

    impl CodeRuntime for Fake {
        fn language(&self) -> &str {
            self.0
        }

        fn run(&self, _request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
            Box::pin(async { Err(CodeRuntimeMisuse { message: "not a real runtime".to_owned() }) })
        }
    }

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::new(
            name,
            "d",
            Parameters::Raw(serde_json::json!({"type": "object"})),
            OutputDeclaration { schema: serde_json::json!({"type": "string"}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(|_, _| Box::pin(async { Ok(serde_json::Value::Null) })),
        )
    }

    fn runtime(mode: ToolMode) -> Result<(SystemPrompt, ToolRuntime), PromptError> {
        let prompt = SystemPrompt::new(PromptConfig::default())?;
        let rt = ToolRuntime::try_with_prompt(ToolsConfig::with_mode(mode), &prompt).map_err(|e| PromptError::new(e.message))?;
        Ok((prompt, rt))
    }

    fn section_texts(prompt: &SystemPrompt, scope: Option<&ScopeKey>) -> Result<Vec<(String, String)>, PromptError> {
        Ok(prompt.assemble(scope)?.sections.into_iter().map(|s| (s.name, s.text)).collect())
    }

    /// The cached SDK text is never stale: it follows registration, unregistration, a mask and the
    /// mounted runtime's language, and an unchanged registry gives the same text again.
    #[test]
    fn the_cached_sdk_text_follows_every_change() -> Result<(), PromptError> {
        let err = |e: crate::RegisterError| PromptError::new(e.message);
        let (prompt, rt) = runtime(ToolMode::Native)?;
        let agent = ScopeKey::new("a1");
        let _mounted = rt.mount_code_runtime(Arc::new(Fake("typescript")));
        let _declared = rt.present_as(Some(&agent), ToolMode::Code).map_err(|e| PromptError::new(e.message))?;
        let sdk = |prompt: &SystemPrompt| -> Result<String, PromptError> {
            let sections = section_texts(prompt, Some(&agent))?;
            Ok(sections.into_iter().find(|(name, _)| name == SDK_SECTION).map(|(_, text)| text).unwrap_or_default())
        };
        let alpha = rt.register(tool("alpha"), None).map_err(err)?;
        let first = sdk(&prompt)?;
        assert!(first.contains("alpha"), "{first}");
        assert_eq!(sdk(&prompt)?, first, "unchanged registry, same text");
        let _beta = rt.register(tool("beta"), None).map_err(err)?;
        assert!(sdk(&prompt)?.contains("beta"), "a registration shows");
        drop(alpha);
        assert!(!sdk(&prompt)?.contains("alpha"), "an unregistration shows");
        let mask = rt.restrict(&agent, crate::ToolFilter { allow: None, deny: Some(vec!["beta".into()]) }).map_err(|e| PromptError::new(e.to_string()))?;
        assert!(!sdk(&prompt)?.contains("beta"), "a mask shows");
        drop(mask);
        let typescript = sdk(&prompt)?;
        assert!(typescript.contains("beta"));
        let _python = rt.mount_code_runtime(Arc::new(Fake("python")));
        assert_ne!(sdk(&prompt)?, typescript, "the language shows");
        Ok(())
    }

    /// After any change the TypeScript text, joined from members kept per registration, and the Python
    /// text, rendered from the registry's schemas borrowed, are the renderers' texts for the same tools,
    /// byte for byte (exotic names, empty and missing descriptions, nested schemas, a re-registered name,
    /// drops and scopes).
    #[test]
    fn the_text_joined_from_kept_members_is_the_renderers() -> Result<(), PromptError> {
        let err = |e: crate::RegisterError| PromptError::new(e.message);
        let (prompt, rt) = runtime(ToolMode::Code)?;
        let agent = ScopeKey::new("a1");
        let shaped = |name: &str, description: &str, parameters: serde_json::Value| {
            let mut def = tool(name);
            def.description = description.to_owned();
            def.parameters = Parameters::Raw(parameters);
            def
        };
        let check = |scope: Option<&ScopeKey>| -> Result<(), PromptError> {
            for language in ["typescript", "python"] {
                let _mounted = rt.mount_code_runtime(Arc::new(Fake(language)));
                let text = section_texts(&prompt, scope)?.into_iter().find(|(name, _)| name == SDK_SECTION).map(|(_, t)| t).unwrap_or_default();
                assert_eq!(text, crate::sdk::renderer(language).map(|render| render(&rt.sdk_schemas(scope))).unwrap_or_default(), "{language}");
            }
            Ok(())
        };
        check(None)?;
        let nested = serde_json::json!({"type": "object", "properties": {"a": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}}, "b": {"type": "object", "description": "*/ b", "properties": {"c": {"type": "string", "enum": ["x", "y"]}}, "required": ["c"]}}, "required": ["a"]});
        let mut kept = vec![
            rt.register(shaped("zeta", "", serde_json::json!({"type": "object"})), None).map_err(err)?,
            rt.register(shaped("a-b", "exotic */ name", nested.clone()), None).map_err(err)?,
            rt.register(shaped("\u{e9}t\u{e9}", "accents\nand lines", nested), None).map_err(err)?,
            rt.register(shaped("Alpha", "upper", serde_json::json!({"type": "object", "properties": {"k": {"type": "integer"}}})), None).map_err(err)?,
        ];
        check(None)?;
        check(Some(&agent))?;
        let _mine = rt.register(shaped("zeta", "the agent's own zeta", serde_json::json!({"type": "object"})), Some(&agent)).map_err(err)?;
        check(Some(&agent))?;
        check(None)?;
        drop(kept.remove(1));
        check(None)?;
        kept.push(rt.register(shaped("a-b", "registered again, changed", serde_json::json!({"type": "object", "properties": {"z": {"type": "boolean"}}})), None).map_err(err)?);
        check(None)?;
        check(Some(&agent))?;
        Ok(())
    }

    #[test]
    fn an_unknown_language_has_no_renderer() -> Result<(), PromptError> {
        let (prompt, rt) = runtime(ToolMode::Code)?;
        let _mounted = rt.mount_code_runtime(Arc::new(Fake("ruby")));
        assert_eq!(
            prompt.assemble(None).map(|_| ()).map_err(|e| e.message),
            Err("dsh-tools: no SDK renderer registered for runtime language \"ruby\" (known: \"typescript\", \"python\")".to_owned())
        );
        Ok(())
    }

    #[test]
    fn the_sdk_section_follows_the_language_and_the_scope() -> Result<(), PromptError> {
        let (prompt, rt) = runtime(ToolMode::Native)?;
        let _t = rt.register(tool("zeta"), None).map_err(|e| PromptError::new(e.message))?;
        let agent = ScopeKey::new("a1");
        let _own = rt.register(tool("mine"), Some(&agent)).map_err(|e| PromptError::new(e.message))?;
        let _mounted = rt.mount_code_runtime(Arc::new(Fake("python")));
        let declared = rt.present_as(Some(&agent), ToolMode::Code).map_err(|e| PromptError::new(e.message))?;
        let sdk = crate::sdk::render_tools_sdk_py(&rt.sdk_schemas(Some(&agent)));
        assert!(sdk.contains("mine") && sdk.contains("zeta"));
        assert_eq!(
            section_texts(&prompt, Some(&agent))?[2..],
            [(CODE_ONLY_SECTION.to_owned(), CODE_ONLY_INSTRUCTION.to_owned()), (SDK_SECTION.to_owned(), sdk)]
        );
        assert_eq!(section_texts(&prompt, None)?.len(), 2);
        let tools: Vec<String> = prompt.assemble(Some(&agent))?.tools.into_iter().map(|t| t.name).collect();
        assert_eq!(tools, [RUN_CODE_NAME]);
        drop(declared);
        assert_eq!(section_texts(&prompt, Some(&agent))?.len(), 2);
        let tools: Vec<String> = prompt.assemble(Some(&agent))?.tools.into_iter().map(|t| t.name).collect();
        assert_eq!(tools, ["mine", "zeta"]);
        Ok(())
    }

    #[test]
    fn disposing_the_scope_withdraws_its_sections_and_the_runtime_its_provider() -> Result<(), PromptError> {
        let (prompt, rt) = runtime(ToolMode::Native)?;
        let _t = rt.register(tool("zeta"), None).map_err(|e| PromptError::new(e.message))?;
        let agent = ScopeKey::new("a1");
        let declared = rt.present_as(Some(&agent), ToolMode::Both).map_err(|e| PromptError::new(e.message))?;
        assert_eq!(
            prompt.assemble(Some(&agent)).map(|_| ()).map_err(|e| e.message),
            Err("dsh-tools: mode \"both\" requires a code runtime — load a ctx.codeRuntime implementation (e.g. @deepseek-ai/dsh-code-runtime-worker-thread) or set tools mode to \"native\"".to_owned())
        );
        rt.dispose_scope(&agent);
        assert_eq!(section_texts(&prompt, Some(&agent))?.len(), 2);
        declared.dispose();
        drop(rt);
        assert!(prompt.assemble(None)?.tools.is_empty());
        Ok(())
    }
    #[test]
    fn detaching_withdraws_the_provider_and_the_sections_while_the_runtime_lives() -> Result<(), PromptError> {
        let (prompt, rt) = runtime(ToolMode::Code)?;
        let _t = rt.register(tool("zeta"), None).map_err(|e| PromptError::new(e.message))?;
        let _mounted = rt.mount_code_runtime(Arc::new(Fake("typescript")));
        let agent = ScopeKey::new("a1");
        let before: Vec<String> = section_texts(&prompt, None)?.into_iter().map(|(name, _)| name).collect();
        assert_eq!(before[2..], [CODE_ONLY_SECTION.to_owned(), SDK_SECTION.to_owned()]);
        assert_eq!(prompt.assemble(None)?.tools.len(), 1);
        rt.detach_prompt();
        rt.detach_prompt();
        assert_eq!(section_texts(&prompt, None)?.len(), 2);
        assert!(prompt.assemble(None)?.tools.is_empty());
        // A declaration after the detachment adds no sections.
        let _declared = rt.present_as(Some(&agent), ToolMode::Code).map_err(|e| PromptError::new(e.message))?;
        assert_eq!(section_texts(&prompt, Some(&agent))?.len(), 2);
        // The runtime itself still answers.
        assert_eq!(rt.schemas(None).len(), 2);
        Ok(())
    }
}
