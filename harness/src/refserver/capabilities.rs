//! The `initialize` answer: who the reference is and what it supports.
//!
//! Features are advertised only when the `dsh-tools` stage behind them exists; a scenario needing one of
//! the others is skipped visibly at list time (see `mod.rs` for the list of what is missing and why).

use serde_json::{Value, json};

use super::rpc::{Failure, Params};

/// The protocol version spoken.
pub const PROTOCOL_VERSION: &str = "1.0";

/// Features of `spec/README.md` § Features the reference implements now: agent scopes (`ScopeKey`
/// layers, scoped hooks), the `finalizeContent` stage, and `tools/result` observers.
///
/// Not advertised, because `dsh-tools` has no such stage yet: `execute-wrappers` (no `tools/execute`
/// around-chain), `post-execute` (no `tools/post-execute` waterfall), `approval` (no approval seam),
/// `code-mode` (native mode only, no `presentAs`), `prompt` (no system-prompt contribution), `sdk` (no SDK
/// renderers); no code runtimes.
pub const FEATURES: &[&str] = &["agents", "finalize-content", "result-listeners"];

/// The `initialize` result. A different protocol major version is the harness's to report; the answer
/// always names ours.
pub fn initialize(_params: Params<'_>) -> Result<Value, Failure> {
    Ok(json!({
        "protocolVersion": PROTOCOL_VERSION,
        "implementation": {
            "name": "dsh-tools (Rust reference)",
            // The workspace versions every crate together, so this is the `dsh-tools` crate's version.
            "version": env!("CARGO_PKG_VERSION"),
            "language": "rust",
        },
        "capabilities": {
            "profiles": ["dsh-tools-0.1"],
            "features": FEATURES,
            "runtimes": [],
        },
    }))
}
