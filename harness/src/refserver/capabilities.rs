//! The `initialize` answer: who the reference is and what it supports.
//!
//! Features are advertised only when the `dsh-tools` stage behind them exists and the server maps the
//! fixtures onto it; a scenario needing one of the others is skipped visibly at list time (see `mod.rs`
//! for the list of what is missing and why).

use serde_json::{Value, json};

use super::rpc::{Failure, Params};

/// `codemode` (profile `dsh-codemode`): `setup.codemode` applies the `dsh-codemode` preset plugin
/// (`engine/codemode.rs`) over the runtime's executor seam.
///
/// The protocol version spoken.
pub const PROTOCOL_VERSION: &str = "1.0";

/// Features of `spec/README.md` § Features the reference implements now: agent scopes (`ScopeKey`
/// layers, scoped hooks, masks), the approval seam (`mount_approval`), `tools/execute` around-wrappers
/// (`on_execute`), the `tools/post-execute` waterfall (`on_post_execute`), the `finalizeContent` stage,
/// `tools/result` observers and `tools/change` observers (`on_change`).
///
/// `code-mode`: the `mode` config (`native` / `code` / `both`), `maxParallelSubCalls` validation, agent
/// `presentAs` and the code-mode collapse of model-direct calls (`dsh_tools::presentation`), and the `run_code`
/// transport; `runtimes`: the backends `setup.runtime` mounts (`code.rs`: TypeScript and Python).
///
/// `dispatch-log`: `dispatchLog` listeners as `tools/code-dispatch-log` listeners
/// (`ToolRuntime::on_code_dispatch_log`, `fixtures/dispatch_log.rs`).
///
/// `session-log`: `setup.sessionLog`, every `ToolRuntime::on_session_append` entry as a `session-append`
/// event (`code.rs`).
///
/// Not declared: `plain-context-restrict`. `ToolRuntime::restrict` takes an agent scope by type, so a
/// plain-context restrict cannot be written against the reference (SCOPE-017); `scope/restrict` without an
/// agent is refused as unsupported rather than answered with a made-up throw.
///
/// `schema`: `schema/check`, `schema/validate` and `schema/compile` through `dsh_tools`' public schema
/// functions (`schema.rs`).
///
/// `sdk`: `sdk/render` through `dsh_tools::sdk` (`render_tools_sdk`, `render_tools_sdk_py`), byte for byte
/// upstream's text on every tool set of `corpus/sdk/` (run as trials by the harness). A malformed tool list
/// is a reference parse error where upstream may render or throw its own JavaScript `TypeError`; no
/// corpus file holds one.
///
/// `presenters`: `tools/present` over `ToolRuntime::presenters` (soft validation in the reference) and
/// the fixtures' `presentCall` / `presentResult` (`fixtures/presenter.rs`).
///
/// `codemode-reference`: the reference is the implementation whose own choices (where seed 002 fixes
/// none) the scenarios requiring this feature pin.
///
/// `prompt`: `prompt/assemble` over `dsh_tools::SystemPrompt` with the runtime's contributions (the tool
/// list per mode, `tools:code-only`, `tools:sdk`) and `setup.prompt.toolOrder` (`prompt.rs`).
pub const FEATURES: &[&str] = &[
    "agents", "approval", "execute-wrappers", "post-execute", "finalize-content", "result-listeners", "change-listeners", "code-mode",
    "prompt", "sdk", "schema", "codemode", "codemode-reference", "plugins", "presenters", "dispatch-log", "session-log",
];

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
            "profiles": ["dsh-tools-0.1", "dsh-codemode"],
            "features": FEATURES,
            "runtimes": super::code::RUNTIMES,
        },
    }))
}
