//! A minimal system-prompt assembler (upstream `@deepseek-ai/dsh-system-prompt`'s `SystemPrompt`), enough
//! to observe what dsh-tools contributes to the prompt: ordered named sections ([`PromptSection`], a
//! global layer plus one layer per agent scope, a nearer scope's section shadowing a same-named one),
//! tool-schema providers ([`ToolProvider`]) and the configured `toolOrder` ([`PromptConfig`]).
//! [`SystemPrompt::assemble`] returns the sections in ascending `order` (ties in registration order) with
//! their text resolved for the assembling scope, empty ones included, and the providers' tool schemas in
//! lexicographic or configured order, then hands that assembly through the `system-prompt/assemble`
//! listeners ([`SystemPrompt::on_assemble`]), whose returned assembly is authoritative;
//! [`PromptAssembly::render`] drops the empty sections.
//!
//! Not modelled: prompt variables and `{{…}}` interpolation, dynamic contexts, complete sections, change
//! notifications.
//!
//! What dsh-tools contributes (the tool provider, `tools:code-only`, `tools:sdk`) is in
//! [`crate::contribution`], a layer above: this service knows nothing of tools beyond their schemas.
//!
//! Spec: PROMPT-001..PROMPT-007, PROMPT-019.

mod layers;
mod order;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use self::layers::Layers;
use self::order::{order_tools, validate_tool_order};
use crate::definition::ToolSchema;
use crate::hooks::{HookGuard, next_id};
use crate::scope::ScopeKey;

/// The name of the fixed opener section.
pub const HARNESS_IDENTITY_SECTION: &str = "harness:identity";
/// The order of the fixed opener section.
pub const HARNESS_IDENTITY_ORDER: f64 = -100.0;
/// The text of the fixed opener section.
pub const HARNESS_IDENTITY_TEXT: &str = "You are an AI agent powered by DeepSeek Harness.";
/// The name of the deployment-persona section.
pub const PERSONA_SECTION: &str = "deployment:persona";
/// The order of the deployment-persona section.
pub const PERSONA_ORDER: f64 = 0.0;
/// The reserved `toolOrder` entry where unlisted tools are inserted.
pub const TOOL_ORDER_REST: &str = "<unlisted-tools>";

/// What one assembly is for: the assembling agent's scope (`None`: the global view).
#[derive(Clone, Debug, Default)]
pub struct AssembleContext {
    /// The layer selector: the global layer plus this scope's chain.
    pub scope: Option<ScopeKey>,
}

/// A section text computed at each assembly; an `Err` rejects the assembly with it.
pub type SectionTextFn = Arc<dyn Fn(&AssembleContext) -> Result<String, PromptError> + Send + Sync>;

/// A section's text: fixed, or computed for each assembly.
#[derive(Clone)]
pub enum SectionText {
    /// The same text for every assembly.
    Static(String),
    /// Computed for each assembly with its context.
    Dynamic(SectionTextFn),
}

impl fmt::Debug for SectionText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Static(text) => f.debug_tuple("Static").field(text).finish(),
            Self::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}

/// A prompt section (upstream `PromptSection`, without `complete`).
#[derive(Clone, Debug)]
pub struct PromptSection {
    /// Unique within its layer; a scoped section shadows a same-named global one for that scope.
    pub name: String,
    /// Sections are assembled in ascending order. Must be finite.
    pub order: f64,
    /// The text.
    pub text: SectionText,
}

/// One section of an assembly: its text resolved for the assembling scope (possibly empty).
#[derive(Clone, Debug, PartialEq)]
pub struct AssembledSection {
    /// The section name.
    pub name: String,
    /// The section order.
    pub order: f64,
    /// The resolved text.
    pub text: String,
}

/// A `system-prompt/assemble` listener: it receives what the listeners registered after it returned (the
/// service's own assembly at the end of the chain) and returns the assembly to hand on; an `Err` rejects
/// the assembly with it. Upstream's waterfall listener awaits `next()` and edits the result; this is that
/// listener with the `next()` call done for it.
pub type AssembleListener =
    Arc<dyn Fn(&AssembleContext, PromptAssembly) -> Result<PromptAssembly, PromptError> + Send + Sync>;

/// What a tool provider returns for one assembly (upstream `ToolProviderResult`).
#[derive(Clone, Debug, Default)]
pub struct ToolProviderResult {
    /// The schemas the assembling scope is shown (after restrictions).
    pub schemas: Vec<ToolSchema>,
    /// The names `toolOrder` may list (before restrictions); `None`: the names of `schemas`.
    pub known_names: Option<Vec<String>>,
}

/// A tool-schema provider, evaluated at each assembly; an `Err` rejects the assembly with it.
pub type ToolProvider = Arc<dyn Fn(&AssembleContext) -> Result<ToolProviderResult, PromptError> + Send + Sync>;

/// The result of [`SystemPrompt::assemble`] (upstream `PromptAssembly`, without variables and contexts).
#[derive(Clone, Debug, Default)]
pub struct PromptAssembly {
    /// Every effective section in ascending order, empty ones included.
    pub sections: Vec<AssembledSection>,
    /// The tool schemas, in configured or lexicographic name order.
    pub tools: Vec<ToolSchema>,
}

impl PromptAssembly {
    /// The prompt text: the non-empty sections joined with blank lines (empty sections are dropped).
    /// Text is taken verbatim (no variable interpolation in this minimal assembler).
    pub fn render(&self) -> String {
        let texts: Vec<&str> = self.sections.iter().map(|s| s.text.as_str()).filter(|t| !t.is_empty()).collect();
        texts.join("\n\n")
    }
}

/// Something the prompt service threw, with upstream's message and error class name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptError {
    /// Upstream's message.
    pub message: String,
    /// The JavaScript error class upstream throws (`Error`, `TypeError`).
    pub name: &'static str,
}

impl PromptError {
    /// An `Error` with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), name: "Error" }
    }
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PromptError {}

/// The prompt service's configuration (upstream's `systemPrompt` config row).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PromptConfig {
    /// Register the `harness:identity` opener (default true).
    pub include_harness_identity: bool,
    /// The `deployment:persona` text (default empty).
    pub persona: String,
    /// The explicit tool order: names plus exactly one [`TOOL_ORDER_REST`]; `None`: lexicographic.
    pub tool_order: Option<Vec<String>>,
}

impl Default for PromptConfig {
    fn default() -> Self {
        Self { include_harness_identity: true, persona: String::new(), tool_order: None }
    }
}

impl PromptConfig {
    /// The default configuration with an explicit tool order.
    pub fn with_tool_order(tool_order: Vec<String>) -> Self {
        Self { tool_order: Some(tool_order), ..Self::default() }
    }
}

struct Inner {
    layers: Mutex<Layers>,
    tool_order: Option<Vec<String>>,
}

/// The system-prompt service: sections and tool providers per layer, assembled per scope. Cheap to clone
/// (clones share the service). Registrations are RAII [`HookGuard`]s.
#[derive(Clone)]
pub struct SystemPrompt {
    inner: Arc<Inner>,
}

impl fmt::Debug for SystemPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemPrompt").field("tool_order", &self.inner.tool_order).finish_non_exhaustive()
    }
}

impl SystemPrompt {
    /// The service with its own sections: `harness:identity` (order -100, unless disabled) and
    /// `deployment:persona` (order 0, the configured persona, empty by default). A `toolOrder` with a
    /// duplicate name or without the rest entry is rejected, as upstream rejects it at load.
    pub fn new(config: PromptConfig) -> Result<Self, PromptError> {
        if let Some(order) = &config.tool_order {
            validate_tool_order(order)?;
        }
        let prompt = Self { inner: Arc::new(Inner { layers: Mutex::default(), tool_order: config.tool_order }) };
        if config.include_harness_identity {
            prompt
                .section(
                    None,
                    PromptSection {
                        name: HARNESS_IDENTITY_SECTION.to_owned(),
                        order: HARNESS_IDENTITY_ORDER,
                        text: SectionText::Static(HARNESS_IDENTITY_TEXT.to_owned()),
                    },
                )?
                .forget();
        }
        prompt
            .section(
                None,
                PromptSection {
                    name: PERSONA_SECTION.to_owned(),
                    order: PERSONA_ORDER,
                    text: SectionText::Static(config.persona),
                },
            )?
            .forget();
        Ok(prompt)
    }

    fn layers(&self) -> MutexGuard<'_, Layers> {
        self.inner.layers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn guard(&self, scope: Option<&ScopeKey>, id: u64) -> HookGuard {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let scope = scope.cloned();
        HookGuard::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.layers.lock().unwrap_or_else(|p| p.into_inner()).remove(scope.as_ref(), id);
            }
        })
    }

    /// Contribute a section to the global layer (`None`) or to one agent scope's layer, where it shadows a
    /// same-named global (or farther) section. A non-finite order (`TypeError`) and a name already in the
    /// layer are rejected with upstream's messages. Dropping the guard withdraws it.
    pub fn section(&self, scope: Option<&ScopeKey>, section: PromptSection) -> Result<HookGuard, PromptError> {
        if !section.order.is_finite() {
            return Err(PromptError {
                message: format!("prompt section \"{}\" order must be a finite number", section.name),
                name: "TypeError",
            });
        }
        let id = next_id();
        {
            let mut layers = self.layers();
            let layer = layers.layer_mut(scope);
            if layer.sections.iter().any(|(_, s)| s.name == section.name) {
                let message = match scope {
                    None => format!(
                        "prompt section \"{}\" is already registered (for a per-agent override, register through that agent's `agent.ctx` instead)",
                        section.name
                    ),
                    Some(_) => format!("prompt section \"{}\" is already registered in this scope", section.name),
                };
                return Err(PromptError::new(message));
            }
            layer.sections.push((id, section));
        }
        Ok(self.guard(scope, id))
    }

    /// Contribute a tool-schema provider to the global layer (consulted by every assembly) or to one
    /// agent scope's layer (consulted only by that scope's assemblies). Dropping the guard withdraws it.
    pub fn tools(&self, scope: Option<&ScopeKey>, provider: ToolProvider) -> HookGuard {
        let id = next_id();
        self.layers().layer_mut(scope).providers.push((id, provider));
        self.guard(scope, id)
    }

    /// Add a `system-prompt/assemble` listener to the global layer (it sees every assembly) or to one agent
    /// scope's layer (it sees only the assemblies of that scope and the scopes nested in it). Listeners
    /// run as upstream's waterfall nests them: the first registered is outermost, so it edits last, and
    /// what the outermost returns is the assembly. Dropping the guard withdraws it.
    pub fn on_assemble(&self, scope: Option<&ScopeKey>, listener: AssembleListener) -> HookGuard {
        let id = next_id();
        self.layers().layer_mut(scope).listeners.push((id, listener));
        self.guard(scope, id)
    }

    /// Drop everything registered in `scope`'s layer, as disposing the agent's context does upstream.
    pub fn dispose_scope(&self, scope: &ScopeKey) {
        let removed = self.layers().scoped.remove(scope);
        drop(removed);
    }

    /// Assemble the prompt for `scope` (`None`: the global view): the providers are evaluated first
    /// (global, then the scope chain farthest first), then the effective sections' texts in ascending
    /// order, then the tools are ordered, then the assembly goes through the assemble listeners
    /// ([`Self::on_assemble`]) and what they return is the result. The first `Err` rejects the assembly.
    pub fn assemble(&self, scope: Option<&ScopeKey>) -> Result<PromptAssembly, PromptError> {
        // Snapshot under the lock, evaluate outside it: providers and texts may read other services.
        let (providers, sections, mut listeners) = {
            let layers = self.layers();
            let chain = layers.chain(scope);
            let providers: Vec<ToolProvider> =
                chain.iter().flat_map(|layer| layer.providers.iter().map(|(_, p)| Arc::clone(p))).collect();
            let listeners: Vec<(u64, AssembleListener)> =
                chain.iter().flat_map(|layer| layer.listeners.iter().map(|(id, l)| (*id, Arc::clone(l)))).collect();
            let mut sections: Vec<PromptSection> = Vec::new();
            for layer in &chain {
                for (_, section) in &layer.sections {
                    // A nearer layer's section replaces a same-named one in its position.
                    match sections.iter_mut().find(|s| s.name == section.name) {
                        Some(slot) => *slot = section.clone(),
                        None => sections.push(section.clone()),
                    }
                }
            }
            (providers, sections, listeners)
        };
        let context = AssembleContext { scope: scope.cloned() };
        let mut collected = Vec::new();
        let mut known: Vec<String> = Vec::new();
        for provider in providers {
            let result = provider(&context)?;
            let names = result.known_names.unwrap_or_else(|| result.schemas.iter().map(|s| s.name.clone()).collect());
            for name in names {
                if !known.contains(&name) {
                    known.push(name);
                }
            }
            collected.extend(result.schemas);
        }
        let mut sections = sections;
        // Stable: equal orders keep registration order. Orders compare as numbers, as upstream's
        // `a.order - b.order` does: -0 ties with 0 (`total_cmp` would put it first; PROMPT-001). Orders are
        // finite (checked at registration), so `partial_cmp` always answers.
        sections.sort_by(|a, b| a.order.partial_cmp(&b.order).unwrap_or(std::cmp::Ordering::Equal));
        let mut assembled = Vec::with_capacity(sections.len());
        for section in sections {
            let text = match &section.text {
                SectionText::Static(text) => text.clone(),
                SectionText::Dynamic(f) => f(&context)?,
            };
            assembled.push(AssembledSection { name: section.name, order: section.order, text });
        }
        let tools = order_tools(collected, self.inner.tool_order.as_deref(), &known)?;
        let mut assembly = PromptAssembly { sections: assembled, tools };
        // Registration order across layers (ids are global and increasing); the innermost edits first.
        listeners.sort_by_key(|(id, _)| *id);
        for (_, listener) in listeners.iter().rev() {
            assembly = listener(&context, assembly)?;
        }
        Ok(assembly)
    }
}

#[cfg(test)]
mod tests;
