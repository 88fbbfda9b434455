//! [`TypedToolError`]: why a typed tool's definition could not be built, naming the tool, the schema and
//! the keyword.

use std::fmt;

use crate::error::JsonSchemaError;
use crate::schema::arguments::ArgumentCheckError;
use crate::schema::lower::LowerError;

/// Which of a typed tool's two schemas an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declaration {
    /// The arguments type's schema.
    Arguments,
    /// The output type's schema.
    Output,
}

impl fmt::Display for Declaration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Arguments => "arguments",
            Self::Output => "output",
        })
    }
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum TypedToolErrorKind {
    /// A keyword of the derived schema cannot be expressed in the supported subset (say, a recursive
    /// type's `$ref` cycle).
    Lowering(LowerError),
    /// The lowered schema is still outside the supported subset.
    Unsupported(JsonSchemaError),
    /// The arguments schema holds a constraint the argument check cannot enforce (an unknown `format`,
    /// an invalid `pattern`); fix the type or build with
    /// [`TypedTool::check_arguments(false)`](super::TypedTool::check_arguments).
    ArgumentCheck(ArgumentCheckError),
    /// The arguments type does not derive an object schema (tool arguments are a JSON object: use a
    /// struct).
    ArgumentsNotObject,
}

/// A typed tool whose definition could not be built. Displays as
/// `tool "<name>": <arguments|output> schema: <what failed>`.
#[derive(Debug)]
pub struct TypedToolError {
    /// The tool's name.
    pub tool: String,
    /// The schema concerned.
    pub declaration: Declaration,
    /// What went wrong.
    pub kind: TypedToolErrorKind,
}

impl TypedToolError {
    pub(super) fn new(tool: &str, declaration: Declaration, kind: TypedToolErrorKind) -> Self {
        Self { tool: tool.to_owned(), declaration, kind }
    }
}

impl fmt::Display for TypedToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool \"{}\": {} schema: ", self.tool, self.declaration)?;
        match &self.kind {
            TypedToolErrorKind::Lowering(e) => {
                write!(f, "cannot lower `{}` at {}: {}", e.keyword, e.path, e.reason)
            }
            TypedToolErrorKind::Unsupported(e) => write!(f, "{e}"),
            TypedToolErrorKind::ArgumentCheck(e) => write!(f, "{e}"),
            TypedToolErrorKind::ArgumentsNotObject => f.write_str("the arguments type must be a struct (a JSON object)"),
        }
    }
}

impl std::error::Error for TypedToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            TypedToolErrorKind::Lowering(e) => Some(e),
            TypedToolErrorKind::Unsupported(e) => Some(e),
            TypedToolErrorKind::ArgumentCheck(e) => Some(e),
            TypedToolErrorKind::ArgumentsNotObject => None,
        }
    }
}
