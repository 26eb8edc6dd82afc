//! Typed durable tools: the arguments are a Rust type (`Deserialize +
//! JsonSchema`), the input schema is derived from it the way rmcp derives a
//! `#[tool]`'s (`schema_for_input`, JSON Schema 2020-12), and the result may
//! be typed too ([`IntoTaskResult`]).
//!
//! ```
//! use mcp_tasks_server::{TaskContext, ToolFailure, TypedTool};
//! use rmcp::schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct SumArgs {
//!     a: i64,
//!     b: i64,
//! }
//!
//! async fn slow_sum(args: SumArgs, ctx: TaskContext) -> Result<String, ToolFailure> {
//!     ctx.sleep(std::time::Duration::from_millis(10)).await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
//!     Ok((args.a + args.b).to_string())
//! }
//!
//! let tool = TypedTool::new("slow_sum", "Sums two numbers, slowly", slow_sum);
//! assert_eq!(tool.input_schema().unwrap()["required"], serde_json::json!(["a", "b"]));
//! ```

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_core::TaskError;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a typed tool may return: turned into the stored `CallToolResult`.
///
/// Implemented for [`CallToolResult`] (as is), [`String`] (one text block)
/// and [`rmcp::Json<T>`] (structured content, with `T`'s schema as the
/// tool's `outputSchema`), the same shapes an rmcp `#[tool]` returns.
pub trait IntoTaskResult: Send + 'static {
    /// The result as the JSON of a `CallToolResult`.
    fn into_task_result(self) -> Result<Value, ToolFailure>;

    /// The tool's `outputSchema`, when the result type has one.
    fn output_schema() -> Option<Arc<JsonObject>> {
        None
    }
}

impl IntoTaskResult for CallToolResult {
    fn into_task_result(self) -> Result<Value, ToolFailure> {
        serde_json::to_value(self).map_err(|e| ToolFailure::permanent(format!("the result did not serialise: {e}")))
    }
}

impl IntoTaskResult for String {
    fn into_task_result(self) -> Result<Value, ToolFailure> {
        CallToolResult::success(vec![ContentBlock::text(self)]).into_task_result()
    }
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoTaskResult for rmcp::Json<T> {
    fn into_task_result(self) -> Result<Value, ToolFailure> {
        let value = serde_json::to_value(self.0)
            .map_err(|e| ToolFailure::permanent(format!("the result did not serialise: {e}")))?;
        CallToolResult::structured(value).into_task_result()
    }

    fn output_schema() -> Option<Arc<JsonObject>> {
        Some(schema_for_output::<T>())
    }
}

/// Checks raw arguments by decoding them into the tool's type: `Err` says
/// why they do not decode.
pub(crate) type DecodeCheck = Arc<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;

/// What the server registers for a typed tool.
pub(crate) struct TypedParts {
    /// The tool, for the runtime.
    pub(crate) tool: Arc<dyn TaskTool>,
    /// Decoding into its argument type, checked before creation.
    pub(crate) decode: DecodeCheck,
    /// Its `outputSchema`, if its result type has one.
    pub(crate) output_schema: Option<Arc<JsonObject>>,
}

/// A durable tool whose arguments are `A` and whose body is an async
/// function `run(args: A, ctx: TaskContext) -> Result<R, ToolFailure>`.
///
/// Register it with [`DurableTasksBuilder::typed_tool`](crate::DurableTasksBuilder::typed_tool)
/// (or in one line with [`DurableTasksBuilder::task`](crate::DurableTasksBuilder::task)):
/// `tools/call` arguments are then checked against `A`'s schema and decoded
/// into `A` before a task is created, so a bad call gets `-32602` naming the
/// field and nothing is queued. It is also a plain [`TaskTool`].
pub struct TypedTool<A, F> {
    spec: ToolSpec,
    schema: Result<Arc<JsonObject>, String>,
    output_schema: Option<Arc<JsonObject>>,
    run: F,
    _args: PhantomData<fn(A)>,
}

impl<A, F> std::fmt::Debug for TypedTool<A, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedTool").field("spec", &self.spec).finish_non_exhaustive()
    }
}

impl<A, F, Fut, R> TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
    R: IntoTaskResult,
{
    /// A task-required, re-runnable tool named `name` running `run`, its
    /// input schema derived from `A`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, run: F) -> Self {
        let schema = schema_for_input::<A>();
        let mut spec = ToolSpec::new(name, description);
        if let Ok(schema) = &schema {
            spec.input_schema = Value::Object((**schema).clone());
        }
        TypedTool { spec, schema, output_schema: R::output_schema(), run, _args: PhantomData }
    }

    /// How long the tool usually takes (sets the poll hint at once instead of
    /// learning it from history).
    pub fn expected_duration(mut self, duration: Duration) -> Self {
        self.spec.expected_duration = Some(duration);
        self
    }

    /// Lets a client that did not declare the tasks extension get the result
    /// inline (the default is task-required: such a client gets `-32021`).
    pub fn task_optional(mut self) -> Self {
        self.spec.execution = Execution::TaskOptional;
        self
    }

    /// Whether the tool may be run again from the start after a crash
    /// (default `true`); a tool that is not is failed by restart triage instead.
    pub fn rerunnable(mut self, yes: bool) -> Self {
        self.spec.rerunnable = yes;
        self
    }

    /// The derived input schema, or why `A` cannot be a tool's arguments (its
    /// schema's root is not an object).
    pub fn input_schema(&self) -> Result<&JsonObject, &str> {
        self.schema.as_deref().map_err(String::as_str)
    }

    /// The `outputSchema` derived from the result type, if it has one.
    pub fn output_schema(&self) -> Option<&JsonObject> {
        self.output_schema.as_deref()
    }

    /// The parts the server registers, or why `A` cannot be a tool's arguments.
    pub(crate) fn into_parts(self) -> Result<TypedParts, String> {
        if let Err(reason) = &self.schema {
            return Err(reason.clone());
        }
        let decode: DecodeCheck =
            Arc::new(|arguments: &Value| A::deserialize(arguments).map(drop).map_err(|e| e.to_string()));
        let output_schema = self.output_schema.clone();
        Ok(TypedParts { tool: Arc::new(self), decode, output_schema })
    }
}

#[async_trait]
impl<A, F, Fut, R> TaskTool for TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
    R: IntoTaskResult,
{
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        // Checked before the task was created; a stored row that no longer
        // decodes (the type changed across a deploy) fails as invalid params.
        let args = A::deserialize(ctx.arguments()).map_err(|e| {
            ToolFailure::protocol(TaskError {
                code: -32602,
                message: format!("arguments of tool \"{}\" no longer decode: {e}", self.spec.name),
                data: None,
            })
        })?;
        (self.run)(args, ctx).await?.into_task_result()
    }
}
