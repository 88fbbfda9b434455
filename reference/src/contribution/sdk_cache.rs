//! What the `tools:sdk` section keeps between assemblies: the whole SDK text per (scope, language) for
//! the registry's current generation ([`SdkCache`]: an assembly with nothing changed copies it), and the
//! TypeScript members of every registered tool ([`MembersCache`]: after a change only the tools the change
//! added are rendered, the text is joined from the members into one buffer, and no schema is copied).
//! A tool's members depend only on its registration (its name, description, parameter and output
//! schemas, none of which changes while it is registered), so they are kept per registration.
//!
//! Spec: SDK-006 (the text is the renderer's, byte for byte: `sdk::assemble_tools_sdk`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use crate::presentation::RUN_CODE_NAME;
use crate::registry::{RegisteredTool, Registry};
use crate::scope::ScopeKey;
use crate::sdk::{SdkUsage, TsMembers, assemble_tools_sdk};

/// SDK texts rendered at one registry generation, per (scope, language).
#[derive(Default)]
pub(super) struct SdkCache {
    generation: u64,
    texts: Vec<(Option<ScopeKey>, String, Arc<str>)>,
}

/// Most (scope, language) texts kept for one generation.
const SDK_CACHE_ENTRIES: usize = 64;

impl SdkCache {
    /// The text for `(scope, language)` at `generation`, rendered by `render` on a miss.
    pub(super) fn get_or_render(
        cache: &Mutex<Self>,
        generation: u64,
        scope: Option<&ScopeKey>,
        language: &str,
        render: impl FnOnce() -> String,
    ) -> Arc<str> {
        {
            let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
            if cache.generation == generation
                && let Some((.., text)) = cache.texts.iter().find(|(s, l, _)| s.as_ref() == scope && l == language)
            {
                return Arc::clone(text);
            }
        }
        // Rendered unlocked: two assemblies may both render once; either result is the same text.
        let text: Arc<str> = render().into();
        let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.generation != generation {
            *cache = Self { generation, texts: Vec::new() };
        }
        if cache.texts.len() >= SDK_CACHE_ENTRIES {
            cache.texts.remove(0);
        }
        cache.texts.push((scope.cloned(), language.to_owned(), Arc::clone(&text)));
        text
    }
}

/// The TypeScript members of registered tools, by registration (the `RegisteredTool` allocation: the weak
/// handle kept with them holds that address, so no other registration can take it while the entry lives).
#[derive(Default)]
pub(super) struct MembersCache {
    members: HashMap<usize, (Weak<RegisteredTool>, Arc<TsMembers>)>,
}

impl MembersCache {
    /// The `run_code` TypeScript SDK of what `scope` sees in `registry`: `sdk::render_tools_sdk`'s text,
    /// rendering only the tools not rendered before. Entries of dropped registrations are let go.
    pub(super) fn render(cache: &Mutex<Self>, registry: &Registry, scope: Option<&ScopeKey>) -> String {
        let visible: Vec<Arc<RegisteredTool>> =
            registry.visible(scope).into_iter().filter(|tool| tool.schema.name != RUN_CODE_NAME).collect();
        let mut members: Vec<Arc<TsMembers>> = Vec::with_capacity(visible.len());
        {
            let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
            let before = cache.members.len();
            for tool in &visible {
                let key = Arc::as_ptr(tool) as usize;
                let entry = cache.members.entry(key).or_insert_with(|| {
                    let rendered = TsMembers::render(
                        &tool.schema.name,
                        Some(&tool.schema.description),
                        &tool.schema.parameters,
                        Some(&tool.output_schema),
                    );
                    (Arc::downgrade(tool), Arc::new(rendered))
                });
                members.push(Arc::clone(&entry.1));
            }
            if cache.members.len() > before {
                // Something was added: what was dropped since is let go (no registration can reuse a
                // live entry's address, so the rest are still their tools').
                cache.members.retain(|_, (tool, _)| tool.strong_count() > 0);
            }
        }
        let members: Vec<&TsMembers> = members.iter().map(|m| &**m).collect();
        assemble_tools_sdk(&SdkUsage::RUN_CODE, &members)
    }
}
