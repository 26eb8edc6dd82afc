//! Operator actions on the dead-letter queue: list, show, requeue (a fresh
//! task with a fresh attempt budget), purge.

use mcp_tasks_core::TaskId;
use mcp_tasks_store::{DeadLetter, DeadLetterQuery, NewTask, PurgeQuery};

use crate::error::RuntimeError;
use crate::runtime::Runtime;
use crate::view::TaskView;

/// The dead-letter queue of a runtime's store.
#[derive(Debug, Clone, Copy)]
pub struct DeadLetters<'a> {
    runtime: &'a Runtime,
}

impl Runtime {
    /// The dead-letter queue.
    pub fn dead_letters(&self) -> DeadLetters<'_> {
        DeadLetters { runtime: self }
    }
}

impl DeadLetters<'_> {
    /// Dead letters matching `query`, newest first.
    pub async fn list(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, RuntimeError> {
        Ok(self.runtime.store().list_dead_letters(query).await?)
    }

    /// The dead letter of `task`.
    pub async fn show(&self, task: &TaskId) -> Result<DeadLetter, RuntimeError> {
        self.runtime
            .store()
            .get_dead_letter(task)
            .await?
            .ok_or_else(|| RuntimeError::Store(mcp_tasks_store::StoreError::DeadLetterNotFound(task.clone())))
    }

    /// Runs the dead-lettered call again as a fresh task (new id, the
    /// policy's attempt budget, a new deadline) and marks the letter requeued.
    pub async fn requeue(&self, task: &TaskId) -> Result<TaskView, RuntimeError> {
        let letter = self.show(task).await?;
        let runtime = self.runtime;
        let policy = runtime.policy();
        let now = runtime.now();
        let new = NewTask {
            id: TaskId::minted_at(now), // in creation order, like every task the runtime mints
            tool: letter.tool,
            arguments: letter.arguments,
            principal: letter.principal,
            idempotency_key: None,
            trace_parent: None,
            max_attempts: policy.retry.max_attempts,
            created_at: now,
            deadline_at: now.plus(policy.retention.max_execution),
            run_at: now,
            status_message: Some(format!("requeued from dead letter of task {task}")),
            quota: None,
            lease: None,
        };
        let record = runtime.store().requeue_dead_letter(task, new).await?;
        runtime.work_available();
        Ok(runtime.view(record).await)
    }

    /// Deletes dead letters matching `query`; returns how many.
    pub async fn purge(&self, query: PurgeQuery) -> Result<u64, RuntimeError> {
        Ok(self.runtime.store().purge_dead_letters(query).await?)
    }
}
