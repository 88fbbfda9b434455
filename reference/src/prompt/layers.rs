//! The prompt service's registrations: a global layer plus one layer per agent scope, each holding its
//! sections, tool providers and `system-prompt/assemble` listeners in registration order; an assembly
//! reads the global layer, then the scope chain farthest first.
//!
//! Spec: PROMPT-001, PROMPT-018.

use std::collections::HashMap;

use super::{AssembleListener, PromptSection, ToolProvider};
use crate::scope::ScopeKey;

/// The registrations of one layer, each under its id, in registration order.
#[derive(Default)]
pub(super) struct Layer {
    pub(super) sections: Vec<(u64, PromptSection)>,
    pub(super) providers: Vec<(u64, ToolProvider)>,
    pub(super) listeners: Vec<(u64, AssembleListener)>,
}

#[derive(Default)]
pub(super) struct Layers {
    pub(super) global: Layer,
    pub(super) scoped: HashMap<ScopeKey, Layer>,
}

impl Layers {
    /// The layers an assembly for `scope` reads, global first, then the chain farthest first.
    pub(super) fn chain<'a>(&'a self, scope: Option<&'a ScopeKey>) -> Vec<&'a Layer> {
        let mut out = vec![&self.global];
        if let Some(scope) = scope {
            let keys: Vec<&ScopeKey> = scope.chain().collect();
            out.extend(keys.into_iter().rev().filter_map(|key| self.scoped.get(key)));
        }
        out
    }

    pub(super) fn layer_mut(&mut self, scope: Option<&ScopeKey>) -> &mut Layer {
        match scope {
            None => &mut self.global,
            Some(key) => self.scoped.entry(key.clone()).or_default(),
        }
    }

    pub(super) fn remove(&mut self, scope: Option<&ScopeKey>, id: u64) {
        let layer = match scope {
            None => &mut self.global,
            Some(key) => match self.scoped.get_mut(key) {
                Some(layer) => layer,
                None => return,
            },
        };
        layer.sections.retain(|(i, _)| *i != id);
        layer.providers.retain(|(i, _)| *i != id);
        layer.listeners.retain(|(i, _)| *i != id);
        if let Some(key) = scope {
            if self
                .scoped
                .get(key)
                .is_some_and(|l| l.sections.is_empty() && l.providers.is_empty() && l.listeners.is_empty())
            {
                self.scoped.remove(key);
            }
        }
    }
}
