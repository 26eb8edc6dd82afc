//! Whether a tool runs as a task, as a `tools/list` entry tells a client.
//!
//! The tasks extension lets each tool say whether a call of it may or must
//! become a task; rmcp's `Tool` has no field for it, so an mcp-tasks server
//! writes it in the tool's `_meta` under [`TASK_SUPPORT_META_KEY`] (a vendor
//! key), and a tool without it is `forbidden`: it always answers inline.

use rmcp::model::{MetaObject, Tool};
use serde_json::Value;

/// The `_meta` key of a `tools/list` entry whose value is the tool's
/// [`TaskSupport`] (`"required"` or `"optional"`).
pub const TASK_SUPPORT_META_KEY: &str = "dev.mcp-tasks/taskSupport";

/// How a tool relates to tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Only as a task: a client without the tasks extension gets an error.
    Required,
    /// As a task when the client declared the extension, else inline.
    Optional,
    /// Never a task (a plain tool).
    Forbidden,
}

impl TaskSupport {
    /// The value as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Required => "required",
            TaskSupport::Optional => "optional",
            TaskSupport::Forbidden => "forbidden",
        }
    }

    /// Marks `tool`'s listing entry with this support (a forbidden tool
    /// needs no mark, and gets none).
    pub fn mark(self, tool: &mut Tool) {
        if self == TaskSupport::Forbidden {
            return;
        }
        tool.meta
            .get_or_insert_with(|| MetaObject(Default::default()))
            .0
            .insert(TASK_SUPPORT_META_KEY.to_owned(), Value::from(self.as_str()));
    }

    /// What a listing entry says: its mark, else `forbidden`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_tasks_wire::TaskSupport;
    /// let mut tool = rmcp::model::Tool::new("report", "Writes a report", Arc::new(Default::default()));
    /// assert_eq!(TaskSupport::of(&tool), TaskSupport::Forbidden);
    /// TaskSupport::Required.mark(&mut tool);
    /// assert_eq!(TaskSupport::of(&tool), TaskSupport::Required);
    /// ```
    pub fn of(tool: &Tool) -> TaskSupport {
        match tool.meta.as_ref().and_then(|m| m.0.get(TASK_SUPPORT_META_KEY)).and_then(Value::as_str) {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }
}

impl std::fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
