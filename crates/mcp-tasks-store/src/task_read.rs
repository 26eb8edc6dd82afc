//! [`TaskRead`]: a task read for an answer, its result possibly left as the
//! JSON text the store holds.

use mcp_tasks_core::TaskRecord;
use serde_json::value::RawValue;

use crate::error::StoreError;

/// A task read to be answered ([`TaskStore::get_visible_for_answer`](crate::TaskStore::get_visible_for_answer)).
///
/// A backend that holds results as JSON text may hand the result over as
/// that text, checked to be JSON but not decoded, with `record.result` left
/// `None`: an answer that only writes the result out then skips building
/// and dropping its tree (most of what a completed task's poll costs more
/// than a live one's).
#[derive(Debug, Clone)]
pub struct TaskRead {
    /// The task; its `result` is `None` when [`result_text`](Self::result_text) holds it.
    pub record: TaskRecord,
    /// The stored result as JSON text, when the backend kept it so.
    pub result_text: Option<Box<RawValue>>,
}

impl TaskRead {
    /// A read whose result, if any, is decoded in the record.
    pub fn decoded(record: TaskRecord) -> Self {
        TaskRead { record, result_text: None }
    }

    /// The record with its result decoded, from the text when it was kept.
    pub fn into_record(self) -> Result<TaskRecord, StoreError> {
        let TaskRead { mut record, result_text } = self;
        if let Some(text) = result_text {
            let result = serde_json::from_str(text.get())
                .map_err(|e| StoreError::Corrupt { id: record.id.to_string(), reason: format!("column result: {e}") })?;
            record.result = Some(result);
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use mcp_tasks_core::TaskStatus;
    use mcp_tasks_core::testing::record;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_kept_text_decodes_into_the_record() {
        let text = RawValue::from_string(r#"{"content":[],"isError":false}"#.to_owned()).unwrap();
        let read = TaskRead { record: record(TaskStatus::Completed, 0), result_text: Some(text) };
        assert_eq!(read.into_record().unwrap().result, Some(json!({"content": [], "isError": false})));
        let mut decoded = record(TaskStatus::Completed, 0);
        decoded.result = Some(json!(7));
        assert_eq!(TaskRead::decoded(decoded.clone()).into_record().unwrap(), decoded);
    }
}
