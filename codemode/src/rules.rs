//! The preset's fixed names and texts: the `code_run` transport, the discovery tools, the name rule that
//! masks `mcp__*`, `code_tools_*` and `code_debug` whatever owns them, the self-healing rejection, the
//! host-mount warning.
//!
//! Spec: CDM-012, CDM-019, CDM-026.

use dsh_tools::{ErrorCode, ToolFailure};

/// The plugin's transport. `run_code` is reserved by the registry in every mode, hence the other name.
pub const CODE_RUN_NAME: &str = "code_run";
/// Lists every tool the calling agent sees, with its presentation class.
pub const CODE_TOOLS_LIST: &str = "code_tools_list";
/// The entries of [`CODE_TOOLS_LIST`] whose name or description contains a query.
pub const CODE_TOOLS_SEARCH: &str = "code_tools_search";
/// One tool's name, description, parameters and presentation class.
pub const CODE_TOOLS_DESCRIBE: &str = "code_tools_describe";
/// The plugin's view of the calling agent: scope label, ownership rule, masked names.
pub const CODE_DEBUG: &str = "code_debug";
/// The four discovery tools, in registration order.
pub const DISCOVERY_TOOLS: [&str; 4] = [CODE_TOOLS_LIST, CODE_TOOLS_SEARCH, CODE_TOOLS_DESCRIBE, CODE_DEBUG];
/// The `code_run` text of a run that logged nothing and returned nothing (rc.8's names `run_code`).
pub const NO_OUTPUT_TEXT: &str = "(code_run completed with no output)";
/// The sub-call id marker: program calls are `<code_run callId>:ptc:<n>`.
pub const PTC_ID_MARKER: &str = ":ptc:";
/// Logged once when the plugin is mounted where no preset scope label can be read.
pub const HOST_MOUNT_WARNING: &str = "dsh-codemode: no preset scope label; ownership masking is off, masking by name only";

/// The name rule: masked even when the preset owns the tool (seed 002: "丢掉 mcp__* 与 code_tools_*/code_debug").
pub fn masked_by_name(name: &str) -> bool {
    name.starts_with("mcp__") || name.starts_with("code_tools_") || name == CODE_DEBUG
}

/// The executor's rejection of a model-direct call to a masked tool: `UNKNOWN_TOOL`, naming the tool and
/// the way to reach it (CDM-019).
pub fn rejection(name: &str) -> ToolFailure {
    ToolFailure::harness(
        format!("unknown tool \"{name}\": it is not callable directly — call `{name}` from inside a `{CODE_RUN_NAME}` program instead"),
        "ToolNotFoundError",
        ErrorCode::UNKNOWN_TOOL,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_rule_matches_prefixes_and_code_debug_only() {
        for masked in ["mcp__fake__ticker", "mcp__", "code_tools_list", "code_debug"] {
            assert!(masked_by_name(masked), "{masked}");
        }
        for native in ["code_run", "mcp_x", "code_debugger", "read", "code_tools"] {
            assert!(!masked_by_name(native), "{native}");
        }
    }

    #[test]
    fn the_rejection_names_the_tool_and_code_run() {
        let failure = rejection("g_echo");
        assert_eq!(
            failure.message,
            "unknown tool \"g_echo\": it is not callable directly — call `g_echo` from inside a `code_run` program instead"
        );
        assert_eq!(failure.info.map(|i| (i.name, i.code)), Some(("ToolNotFoundError".to_owned(), ErrorCode::UNKNOWN_TOOL)));
    }
}
