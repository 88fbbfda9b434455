//! One scope's contribution ([`Layer`]): its tools in registration order, its guards and its restriction
//! masks, its `presentAs` mode.
//!
//! Spec: REG-002, REG-003, REG-018, CODE-003.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{FastMap, RegisteredTool};
use crate::hooks::FallibleGuardFn;
use crate::presentation::ToolMode;
use super::ToolFilter;

/// A registered tool and the sequence number that orders it.
pub(crate) struct ToolEntry {
    pub(crate) id: u64,
    pub(crate) tool: Arc<RegisteredTool>,
}

/// One layer: the global layer or one agent scope's.
#[derive(Default)]
pub(crate) struct Layer {
    pub(crate) tools: FastMap<Arc<str>, ToolEntry>,
    /// Registration order: id -> name (ids grow monotonically).
    pub(crate) order: BTreeMap<u64, Arc<str>>,
    /// Shared copy-on-write: a guard pass holds the table it is walking while its guards run unlocked.
    pub(crate) guards: Arc<GuardTable>,
    /// Restriction masks over inherited tools; they intersect.
    pub(crate) restrictions: Vec<(u64, Arc<ToolFilter>)>,
    /// This scope's `presentAs` declaration and the id of the guard that made it (CODE-003, CODE-004).
    pub(crate) mode: Option<(u64, ToolMode)>,
}

/// One layer's guards in registration order, and their generation.
#[derive(Clone, Default)]
pub(crate) struct GuardTable {
    /// Fresh (a new id) whenever a guard joins an empty table, so a live guard pass that started on the
    /// old generation stops there (upstream's emptied entry table is replaced).
    pub(crate) generation: u64,
    /// `(id, guard)`; ids grow in push order.
    pub(crate) entries: Vec<(u64, FallibleGuardFn)>,
}

impl Layer {
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.guards.entries.is_empty() && self.restrictions.is_empty() && self.mode.is_none()
    }

    /// Tools in registration order.
    pub(crate) fn ordered(&self) -> impl Iterator<Item = (&Arc<str>, &Arc<RegisteredTool>)> {
        self.order.values().filter_map(|name| self.tools.get(name).map(|e| (name, &e.tool)))
    }

    /// Whether every restriction of this layer admits an inherited tool name.
    pub(crate) fn admits(&self, name: &str) -> bool {
        self.restrictions.iter().all(|(_, filter)| filter.admits(name))
    }

    pub(crate) fn remove_tool(&mut self, name: &str, id: u64) {
        if self.tools.get(name).is_some_and(|e| e.id == id) {
            self.tools.remove(name);
            self.order.remove(&id);
        }
    }
}
