//! Error vocabulary: the open [`ErrorCode`] newtype with upstream's code strings, the `{ name, code }`
//! [`ErrorInfo`] a `HarnessError` carries, [`ToolFailure`] (what bodies and listeners fail with),
//! [`RegisterError`] (registration-time rejections with upstream's error class name and exact message) and
//! [`JsonSchemaError`] and [`SchemasError`] (why a checked schema read failed).
//!
//! Spec: REG-002, REG-003, REG-005, REG-006, REG-008, REG-020, ARG-004, OUT-002, UNK-001, PIPE-009.

use std::borrow::Cow;
use std::fmt;

/// An open error-code string; the constants are upstream's codes. Other codes (a tool's own
/// `HarnessError` code) are carried verbatim.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub Cow<'static, str>);

impl ErrorCode {
    /// Arguments failed the definition's parameter schema (`ToolArgsError`).
    pub const INVALID_ARGS: Self = Self::from_static("INVALID_ARGS");
    /// No visible tool of that name (`ToolNotFoundError`).
    pub const UNKNOWN_TOOL: Self = Self::from_static("UNKNOWN_TOOL");
    /// Cancellation replaced a successful outcome after the body was invoked.
    pub const ABORTED: Self = Self::from_static("ABORTED");
    /// Cancellation prevented the body from being invoked.
    pub const ABORTED_BEFORE_DISPATCH: Self = Self::from_static("ABORTED_BEFORE_DISPATCH");
    /// A timeout wrapper owned the outcome.
    pub const TOOL_TIMEOUT: Self = Self::from_static("TOOL_TIMEOUT");
    /// The body or a policy value violated the output declaration (`ToolOutputError`).
    pub const INVALID_TOOL_OUTPUT: Self = Self::from_static("INVALID_TOOL_OUTPUT");
    /// A Code Mode run failed (`CodeRunFailedError`).
    pub const CODE_RUN_FAILED: Self = Self::from_static("CODE_RUN_FAILED");
    /// A raw schema fell outside the enforced subset (`JsonSchemaError`).
    pub const UNSUPPORTED_SCHEMA: Self = Self::from_static("UNSUPPORTED_SCHEMA");

    /// A code from a static string.
    pub const fn from_static(code: &'static str) -> Self {
        Self(Cow::Borrowed(code))
    }

    /// A code from any string.
    pub fn new(code: impl Into<String>) -> Self {
        Self(Cow::Owned(code.into()))
    }

    /// The code string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `{ name, code }` of a `HarnessError`-class failure (absent for plain errors and denials).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The error class name, e.g. `ToolArgsError`, `AbortError`.
    pub name: String,
    /// The routable code.
    pub code: ErrorCode,
}

impl ErrorInfo {
    /// Build an info record.
    pub fn new(name: impl Into<String>, code: ErrorCode) -> Self {
        Self { name: name.into(), code }
    }
}

/// A thrown failure: what a tool body, a pre-execute listener, or a projector fails with. With `info` it
/// is a `HarnessError` (structured, routable); without, a plain `Error` whose message alone survives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolFailure {
    /// Human-readable message; the result content becomes `Error: <message>`.
    pub message: String,
    /// Present only for `HarnessError`-class failures.
    pub info: Option<ErrorInfo>,
}

impl ToolFailure {
    /// A plain error (no info).
    pub fn message(message: impl Into<String>) -> Self {
        Self { message: message.into(), info: None }
    }

    /// A `HarnessError`-class error with a class name and code.
    pub fn harness(message: impl Into<String>, name: impl Into<String>, code: ErrorCode) -> Self {
        Self { message: message.into(), info: Some(ErrorInfo::new(name, code)) }
    }

    /// `AbortError` with code `ABORTED` and message `tool call aborted`: what a body returns to say "I
    /// stopped because I was cancelled". The call's result is then exactly the one the pipeline gives a
    /// cancelled call whose body succeeded, whereas any other `Err` a body returns is kept as that
    /// body's own, uncoded failure (the body's failure wins over cancellation, CANC-003). Typed bodies
    /// get it from [`ToolContext::until_cancelled`](crate::typed::ToolContext::until_cancelled) and
    /// [`ToolContext::check_cancelled`](crate::typed::ToolContext::check_cancelled).
    ///
    /// ```
    /// use dsh_tools::{ErrorCode, ToolExecutionResult, ToolFailure};
    /// let result = ToolExecutionResult::from_failure(ToolFailure::aborted());
    /// assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED));
    /// assert_eq!(result.text(), ToolExecutionResult::aborted(Vec::new()).text());
    /// ```
    pub fn aborted() -> Self {
        Self::harness("tool call aborted", "AbortError", ErrorCode::ABORTED)
    }

    /// `ToolArgsError`: `invalid arguments: <violations joined by "; ">`.
    pub fn invalid_args(violations: &[String]) -> Self {
        Self::harness(
            format!("invalid arguments: {}", violations.join("; ")),
            "ToolArgsError",
            ErrorCode::INVALID_ARGS,
        )
    }

    /// `ToolOutputError`: `tool "<name>" returned invalid output: <violations joined by "; ">`.
    pub fn invalid_output(tool: &str, violations: &[String]) -> Self {
        Self::harness(
            format!("tool \"{tool}\" returned invalid output: {}", violations.join("; ")),
            "ToolOutputError",
            ErrorCode::INVALID_TOOL_OUTPUT,
        )
    }

    /// `ToolNotFoundError` of the `code` executor collapse, with the message
    /// ``unknown tool "NAME": only `run_code` is callable directly — call `NAME` from inside a `run_code`
    /// program instead``. CODE-006.
    pub fn code_only(tool: &str) -> Self {
        Self::harness(
            format!("unknown tool \"{tool}\": {}", crate::presentation::collapse_detail(tool)),
            "ToolNotFoundError",
            ErrorCode::UNKNOWN_TOOL,
        )
    }

    /// `ToolNotFoundError`: `unknown tool "<name>"`.
    pub fn unknown_tool(tool: &str) -> Self {
        Self::harness(format!("unknown tool \"{tool}\""), "ToolNotFoundError", ErrorCode::UNKNOWN_TOOL)
    }
}

impl From<String> for ToolFailure {
    fn from(message: String) -> Self {
        Self::message(message)
    }
}

impl From<&str> for ToolFailure {
    fn from(message: &str) -> Self {
        Self::message(message)
    }
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolFailure {}

/// A raw schema outside the enforced subset, or a DSL author error (`JsonSchemaError`,
/// code `UNSUPPORTED_SCHEMA`). The message is `unsupported JSON schema: <violations joined by "; ">`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonSchemaError {
    /// Every violation, in walk order.
    pub violations: Vec<String>,
}

impl JsonSchemaError {
    /// Wrap violations.
    pub fn new(violations: Vec<String>) -> Self {
        Self { violations }
    }
}

impl fmt::Display for JsonSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unsupported JSON schema: {}", self.violations.join("; "))
    }
}

impl std::error::Error for JsonSchemaError {}

/// Why a registration was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterErrorKind {
    /// No output declaration (upstream `TypeError`).
    MissingOutput,
    /// The output or parameter schema is unsupported (upstream `JsonSchemaError`).
    UnsupportedSchema(JsonSchemaError),
    /// `timeoutMs` is non-positive or non-finite (upstream `TypeError`, or `Error` from `defineTool`).
    InvalidTimeout,
    /// The reserved `run_code` transport name (upstream `Error`).
    ReservedName,
    /// The name is already registered in this layer (upstream `Error`).
    Duplicate,
    /// A `tools/change` observer panicked (threw) while the registration was announced; the entry was
    /// rolled back (upstream: the listener's error propagates out of `register`).
    ChangeListener,
}

/// A rejected registration: the tool, the error class name and the exact message. Displays as
/// `cannot register tool "<tool>": <message>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterError {
    /// The name of the tool whose registration failed.
    pub tool: String,
    /// What went wrong.
    pub kind: RegisterErrorKind,
    /// The error class: `TypeError`, `Error` or `JsonSchemaError`.
    pub name: &'static str,
    /// The message, without the tool prefix.
    pub message: String,
}

impl RegisterError {
    pub(crate) fn new(kind: RegisterErrorKind, name: &'static str, message: String) -> Self {
        Self { tool: String::new(), kind, name, message }
    }

    pub(crate) fn for_tool(mut self, tool: String) -> Self {
        self.tool = tool;
        self
    }

    pub(crate) fn schema(error: JsonSchemaError) -> Self {
        let message = error.to_string();
        Self { tool: String::new(), kind: RegisterErrorKind::UnsupportedSchema(error), name: "JsonSchemaError", message }
    }

    /// The `HarnessError` code, where upstream's error class has one (`UNSUPPORTED_SCHEMA`).
    pub fn code(&self) -> Option<ErrorCode> {
        match self.kind {
            RegisterErrorKind::UnsupportedSchema(_) => Some(ErrorCode::UNSUPPORTED_SCHEMA),
            _ => None,
        }
    }
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot register tool \"{}\": {}", self.tool, self.message)
    }
}

impl std::error::Error for RegisterError {}

/// Why [`ToolRuntime::try_schemas`](crate::ToolRuntime::try_schemas) failed, where upstream's `schemas()`
/// throws an `Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemasErrorKind {
    /// A visible tool's raw parameters hold a value that is not lossless JSON (`-0`): upstream's
    /// `tool "<name>" parameters must be lossless JSON before schema projection`. REG-020.
    NotLossless,
    /// The mounted code runtime's language has no `run_code` schema flavor (upstream's message from the
    /// flavor lookup).
    Flavor,
}

/// A failed schema read, with upstream's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemasError {
    /// What failed.
    pub kind: SchemasErrorKind,
    /// Upstream's exact message.
    pub message: String,
}

impl std::fmt::Display for SchemasError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SchemasError {}
