//! Code Mode presentation vocabulary: [`ToolMode`] (the `mode` config field and `presentAs` argument), the
//! reserved transport name [`RUN_CODE_NAME`],
//! the `maxParallelSubCalls` construction check ([`resolve_max_parallel_sub_calls`], [`ConfigError`]),
//! the `presentAs` failures ([`PresentAsError`]) and the message of the code-mode executor collapse.
//! The per-scope declaration itself lives in the registry layers; the collapse runs at pipeline entry.
//!
//! Spec: CODE-001, CODE-003, CODE-004, CODE-006.

use std::fmt;

/// The reserved Code Mode transport name: no tool may be registered, shadowed or restricted under it.
pub const RUN_CODE_NAME: &str = "run_code";

/// How one agent's tools are presented to the model (upstream `ToolPresentationMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolMode {
    /// Native function definitions.
    #[default]
    Native,
    /// Only the reserved `run_code` transport is callable directly; every other tool is reached from a
    /// `run_code` program (CODE-006).
    Code,
    /// Native definitions and the `run_code` transport; native calls execute (no collapse, CODE-009).
    Both,
}

impl ToolMode {
    /// Upstream's spelling: `native`, `code` or `both`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Code => "code",
            Self::Both => "both",
        }
    }

    /// The mode spelled `s` (upstream's spelling), if any.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "native" => Some(Self::Native),
            "code" => Some(Self::Code),
            "both" => Some(Self::Both),
            _ => None,
        }
    }
}

impl fmt::Display for ToolMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `run_code` overlap cap when the config names none.
pub const DEFAULT_MAX_PARALLEL_SUB_CALLS: u64 = 10;

/// The message of an invalid `maxParallelSubCalls` (CODE-001).
pub const MAX_PARALLEL_SUB_CALLS_MESSAGE: &str = "maxParallelSubCalls must be a positive integer";

/// A rejected runtime configuration, with upstream's exact message (an `Error` thrown by the
/// `ToolRuntime` constructor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Upstream's message.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Resolve the `run_code` overlap cap as upstream's constructor does: absent is
/// [`DEFAULT_MAX_PARALLEL_SUB_CALLS`]; anything but an integer `>= 1` (0, negatives, fractions, NaN,
/// infinities) fails with [`MAX_PARALLEL_SUB_CALLS_MESSAGE`]. Integers beyond `u64::MAX` saturate.
pub fn resolve_max_parallel_sub_calls(value: Option<f64>) -> Result<u64, ConfigError> {
    let Some(value) = value else { return Ok(DEFAULT_MAX_PARALLEL_SUB_CALLS) };
    if !value.is_finite() || value.fract() != 0.0 || value < 1.0 {
        return Err(ConfigError { message: MAX_PARALLEL_SUB_CALLS_MESSAGE.to_owned() });
    }
    // `as` saturates; the value is a finite integer >= 1 here.
    Ok(value as u64)
}

/// Why `presentAs` was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PresentAsErrorKind {
    /// Called without an agent scope (upstream: from a plain context).
    Unscoped,
    /// The scope already declared a presentation.
    Conflict,
    /// A prompt section the declaration contributes could not be registered in the scope.
    Prompt,
    /// A `tools/change` listener threw while the declaration was announced (REG-028): the declaration
    /// is withdrawn.
    ChangeListener,
}

/// A rejected `presentAs`, with upstream's exact message (an `Error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresentAsError {
    /// What went wrong.
    pub kind: PresentAsErrorKind,
    /// Upstream's message.
    pub message: String,
}

impl PresentAsError {
    pub(crate) fn unscoped() -> Self {
        Self {
            kind: PresentAsErrorKind::Unscoped,
            message: "tools.presentAs() requires a scoped context (agent.ctx): a context-global presentation is the `mode` config field on the tools row".to_owned(),
        }
    }

    pub(crate) fn change_listener(message: String) -> Self {
        Self { kind: PresentAsErrorKind::ChangeListener, message }
    }

    pub(crate) fn conflict(requested: ToolMode, existing: ToolMode) -> Self {
        Self {
            kind: PresentAsErrorKind::Conflict,
            message: format!(
                "tools.presentAs(\"{requested}\") conflicts with \"{existing}\" already declared for this scope; one composition selects one presentation"
            ),
        }
    }
}

impl fmt::Display for PresentAsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PresentAsError {}

/// Whether the `code` executor collapse rejects a call: a model-direct call (no `parent` token) naming
/// anything but the reserved transport, under an effective `code` presentation (CODE-006, CODE-008,
/// CODE-009).
pub(crate) fn collapses(mode: ToolMode, name: &str, nested: bool) -> bool {
    !nested && mode == ToolMode::Code && name != RUN_CODE_NAME
}

/// The detail of the collapse's `ToolNotFoundError` (the message is `unknown tool "<name>": <detail>`).
pub(crate) fn collapse_detail(name: &str) -> String {
    format!("only `{RUN_CODE_NAME}` is callable directly — call `{name}` from inside a `{RUN_CODE_NAME}` program instead")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_accepts_only_positive_integers() {
        assert_eq!(resolve_max_parallel_sub_calls(None), Ok(10));
        assert_eq!(resolve_max_parallel_sub_calls(Some(1.0)), Ok(1));
        assert_eq!(resolve_max_parallel_sub_calls(Some(1e300)), Ok(u64::MAX));
        for bad in [0.0, -0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5] {
            assert_eq!(
                resolve_max_parallel_sub_calls(Some(bad)).map_err(|e| e.message),
                Err(MAX_PARALLEL_SUB_CALLS_MESSAGE.to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn modes_round_trip_and_only_code_collapses() {
        for mode in [ToolMode::Native, ToolMode::Code, ToolMode::Both] {
            assert_eq!(ToolMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(ToolMode::parse("Code"), None);
        assert!(collapses(ToolMode::Code, "echo", false));
        assert!(!collapses(ToolMode::Code, RUN_CODE_NAME, false));
        assert!(!collapses(ToolMode::Code, "echo", true));
        assert!(!collapses(ToolMode::Both, "echo", false));
        assert!(!collapses(ToolMode::Native, "echo", false));
    }
}
