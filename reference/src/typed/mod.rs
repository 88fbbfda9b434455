//! Typed tools (cargo feature `typed`): a tool whose arguments and output are Rust types. The schemas are
//! derived from the types with [`schemars`] and lowered into the subset the registry supports
//! ([`crate::schema::lower::lower_json_schema`]); arguments are deserialized with
//! `serde` before the body runs, and the body's output is serialized into the result's value.
//!
//! ```
//! use dsh_tools::typed::{JsonSchema, TypedTool};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs { a: f64, b: f64 }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Sum { sum: f64 }
//!
//! let add = TypedTool::new("add", "Add two numbers", |args: AddArgs, _ctx| async move {
//!     Ok(Sum { sum: args.a + args.b })
//! })
//! .concurrency_safe(true)
//! .build()?;
//!
//! let rt = dsh_tools::ToolRuntime::new(Default::default());
//! let _add = rt.register(add, None)?;
//! let schema = rt.get("add", None).expect("registered");
//! assert_eq!(schema.parameters["required"], serde_json::json!(["a", "b"]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `#[derive(JsonSchema)]` expands to paths into the `schemars` crate, so a crate using it depends on
//! `schemars = "1"` itself (the version this crate re-exports as [`schemars`]). Doc comments on fields
//! become the schema's descriptions; `#[serde(deny_unknown_fields)]` closes an object.
//!
//! Arguments are checked against the arguments type's full schema — the one `schemars` derived, before
//! lowering dropped what the model's schema cannot say (`#[schemars(range(min = 1))]`, `length`,
//! `regex`, integer widths) — and a violation is an `INVALID_ARGS` result naming its path
//! (`invalid arguments: "limit" is less than the minimum of 1`); the handler is not called. A constraint
//! the check cannot enforce (an unknown `format`) fails [`TypedTool::build`] with the reason; turn the
//! check off with [`TypedTool::check_arguments`]. A failed deserialization is an `INVALID_ARGS` result
//! too (`invalid arguments: <serde's message>`). Without [`TypedTool::render`], the content is one text block: the value itself
//! when it is a string, its JSON text otherwise.

mod context;
mod error;

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::definition::{OutputDeclaration, Parameters, RenderFn, ToolBody, ToolDefinition};
use crate::error::ToolFailure;
use crate::execution::ToolRunContext;
use crate::schema::arguments::ArgumentCheck;
use crate::schema::check::assert_supported_json_schema;
use crate::schema::lower::{LoweringChange, lower_json_schema};

pub use context::ToolContext;
pub use error::{Declaration, TypedToolError, TypedToolErrorKind};
pub use schemars::{self, JsonSchema};

/// A typed tool under construction: `A` is the arguments type, `O` the output type. Finish it with
/// [`build`](Self::build) and register the [`ToolDefinition`].
pub struct TypedTool<A, O> {
    name: String,
    description: String,
    body: ToolBody,
    render: Option<RenderFn>,
    concurrency_safe: bool,
    timeout: Option<Duration>,
    check_arguments: bool,
    types: PhantomData<fn(A) -> O>,
}

impl<A, O> TypedTool<A, O>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
{
    /// A tool named `name` whose body is `handler`: it receives the deserialized arguments and the call's
    /// [`ToolContext`], and resolves to the output or a [`ToolFailure`] (`Err("text".into())` for a plain
    /// error).
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolFailure>> + Send + 'static,
    {
        let name = name.into();
        let tool = name.clone();
        let handler = Arc::new(handler);
        let body: ToolBody = Arc::new(move |args: Arc<Value>, run: ToolRunContext| {
            let (handler, tool) = (Arc::clone(&handler), tool.clone());
            Box::pin(async move {
                let args = A::deserialize(&*args).map_err(|e| ToolFailure::invalid_args(&[e.to_string()]))?;
                let output = handler(args, ToolContext::new(run)).await?;
                serde_json::to_value(&output).map_err(|e| ToolFailure::invalid_output(&tool, &[e.to_string()]))
            })
        });
        Self {
            name,
            description: description.into(),
            body,
            render: None,
            concurrency_safe: false,
            timeout: None,
            check_arguments: true,
            types: PhantomData,
        }
    }

    /// Whether calls may overlap other concurrency-safe calls (a read-only tool: `true`). Default `false`:
    /// each call runs alone, as a barrier in the turn.
    pub fn concurrency_safe(mut self, safe: bool) -> Self {
        self.concurrency_safe = safe;
        self
    }

    /// Declare a timeout (`ToolDefinition::timeout_ms`); it is enforced only by a `tools/execute` wrapper
    /// that reads it.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether each call's arguments are checked against the arguments type's full derived schema before
    /// the handler runs (default `true`; see the module docs). With `false` only `serde` checks them, and
    /// the constraints lowering dropped (`range`, `length`, `regex`, …) are enforced by nothing.
    ///
    /// ```
    /// use dsh_tools::typed::{JsonSchema, TypedTool};
    /// use dsh_tools::{ErrorCode, ToolExecutionInput, ToolRuntime};
    ///
    /// #[derive(serde::Deserialize, JsonSchema)]
    /// struct Page {
    ///     #[schemars(range(min = 1, max = 20))]
    ///     limit: u32,
    /// }
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let page = TypedTool::new("page", "One page", |p: Page, _| async move { Ok(p.limit) }).build()?;
    /// let rt = ToolRuntime::new(Default::default());
    /// let _page = rt.register(page, None)?;
    /// // The model's schema has no maximum (the subset cannot say it), but the call is still checked:
    /// let result = rt.execute(ToolExecutionInput::new("c1", "page", serde_json::json!({ "limit": 50 }))).await;
    /// assert_eq!(result.error_code(), Some(&ErrorCode::INVALID_ARGS));
    /// assert_eq!(result.text(), r#"Error: invalid arguments: "limit" is greater than the maximum of 20"#);
    /// # Ok(()) }
    /// ```
    pub fn check_arguments(mut self, check: bool) -> Self {
        self.check_arguments = check;
        self
    }

    /// Render the model-facing content from the arguments and the output, instead of the default text.
    /// The output is read back from the result's value (a hook may have replaced it), so `O` must also
    /// deserialize.
    pub fn render<R>(mut self, render: R) -> Self
    where
        O: DeserializeOwned,
        R: Fn(&A, &O) -> Vec<Value> + Send + Sync + 'static,
    {
        self.render = Some(Arc::new(move |args: &Value, value: &Value| {
            let args = A::deserialize(args).map_err(|e| format!("arguments do not deserialize: {e}"))?;
            let output = O::deserialize(value).map_err(|e| format!("output does not deserialize: {e}"))?;
            Ok(render(&args, &output))
        }));
        self
    }

    /// The definition, with both schemas derived and lowered; fails naming the tool and the keyword a
    /// schema could not be lowered for.
    pub fn build(self) -> Result<ToolDefinition, TypedToolError> {
        self.build_with_changes().map(|(definition, _)| definition)
    }

    /// [`build`](Self::build), also returning what lowering dropped or rewrote in each schema (say, a
    /// `format` or `minimum` the model will not see).
    pub fn build_with_changes(self) -> Result<(ToolDefinition, SchemaChanges), TypedToolError> {
        let arguments = derive::<A>(&self.name, Declaration::Arguments)?;
        if arguments.0.get("type").and_then(Value::as_str) != Some("object") {
            return Err(TypedToolError::new(&self.name, Declaration::Arguments, TypedToolErrorKind::ArgumentsNotObject));
        }
        let body = match self.check_arguments {
            false => self.body,
            true => {
                let check = ArgumentCheck::new(&arguments.2)
                    .map_err(|e| TypedToolError::new(&self.name, Declaration::Arguments, TypedToolErrorKind::ArgumentCheck(e)))?;
                checked(Arc::new(check), self.body)
            }
        };
        let output = derive::<O>(&self.name, Declaration::Output)?;
        let render = self.render.unwrap_or_else(|| Arc::new(default_render));
        let declaration = OutputDeclaration { schema: output.0, render, presentation_meta: None };
        let mut definition =
            ToolDefinition::new(self.name, self.description, Parameters::Raw(arguments.0), declaration, body);
        if self.concurrency_safe {
            definition = definition.concurrency_safe(true);
        }
        if let Some(timeout) = self.timeout {
            definition = definition.with_timeout(timeout);
        }
        Ok((definition, SchemaChanges { arguments: arguments.1, output: output.1 }))
    }
}

/// A simple typed tool in one call: [`TypedTool::new`] then [`build`](TypedTool::build).
///
/// ```
/// use dsh_tools::typed::{JsonSchema, tool};
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// struct Name { name: String }
///
/// let greet = tool("greet", "Greet someone", |args: Name, _| async move { Ok(format!("Hello, {}!", args.name)) })?;
/// assert_eq!(greet.name, "greet");
/// # Ok::<(), dsh_tools::typed::TypedToolError>(())
/// ```
pub fn tool<A, O, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    handler: F,
) -> Result<ToolDefinition, TypedToolError>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolFailure>> + Send + 'static,
{
    TypedTool::new(name, description, handler).build()
}

/// What lowering changed in a typed tool's two schemas.
#[derive(Debug, Default)]
pub struct SchemaChanges {
    /// Changes to the arguments schema.
    pub arguments: Vec<LoweringChange>,
    /// Changes to the output schema.
    pub output: Vec<LoweringChange>,
}

/// `body` behind the argument check: a violation fails the call before `body` runs.
fn checked(check: Arc<ArgumentCheck>, body: ToolBody) -> ToolBody {
    Arc::new(move |args: Arc<Value>, run: ToolRunContext| match check.check(&args) {
        Ok(()) => body(args, run),
        Err(failure) => Box::pin(std::future::ready(Err(failure))),
    })
}

/// `T`'s schema, derived (for deserializing arguments, for serializing output), lowered and checked;
/// the derived schema itself comes third (the argument check's).
fn derive<T: JsonSchema>(tool: &str, declaration: Declaration) -> Result<(Value, Vec<LoweringChange>, Value), TypedToolError> {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let settings = match declaration {
        Declaration::Arguments => settings.for_deserialize(),
        Declaration::Output => settings.for_serialize(),
    };
    let derived = settings.into_generator().into_root_schema_for::<T>();
    let lowered = lower_json_schema(derived.as_value())
        .map_err(|e| TypedToolError::new(tool, declaration, TypedToolErrorKind::Lowering(e)))?;
    assert_supported_json_schema(&lowered.schema)
        .map_err(|e| TypedToolError::new(tool, declaration, TypedToolErrorKind::Unsupported(e)))?;
    Ok((lowered.schema, lowered.changes, derived.to_value()))
}

/// The default content: one text block, the value itself when it is a string, else its JSON text.
fn default_render(_args: &Value, value: &Value) -> Result<Vec<Value>, String> {
    let text = match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string(other).map_err(|e| e.to_string())?,
    };
    Ok(vec![crate::content::text(text)])
}
