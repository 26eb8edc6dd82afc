//! `?` inside a tool: the runtime's errors as [`ToolFailure`]s, so a handler
//! can write `ctx.sleep(d).await?` and `ctx.set_status_message(m).await?`.

use crate::error::{Cancelled, RuntimeError};
use crate::tool::ToolFailure;

/// The handler was told to stop (cancelled, lease lost, shutting down): it
/// ends the attempt; the runtime settles the task by why it was stopped.
impl From<Cancelled> for ToolFailure {
    fn from(_: Cancelled) -> Self {
        ToolFailure::permanent("stopped: the task was cancelled or handed over")
    }
}

/// Stop when told to; anything else is the store's trouble, worth a retry.
impl From<RuntimeError> for ToolFailure {
    fn from(e: RuntimeError) -> Self {
        match e {
            RuntimeError::Cancelled(_) | RuntimeError::LeaseLost(_) | RuntimeError::ShuttingDown => {
                ToolFailure::permanent(format!("stopped: {e}"))
            }
            other => ToolFailure::transient(format!("task store unavailable: {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::FailureKind;

    #[test]
    fn stopping_is_permanent_and_store_trouble_is_transient() {
        assert_eq!(ToolFailure::from(Cancelled).kind, FailureKind::Permanent);
        let lost = RuntimeError::LeaseLost(mcp_tasks_core::TaskId("t".into()));
        assert_eq!(ToolFailure::from(lost).kind, FailureKind::Permanent);
        let store = RuntimeError::Store(mcp_tasks_store::StoreError::Unavailable("disk gone".into()));
        let failure = ToolFailure::from(store);
        assert_eq!(failure.kind, FailureKind::Transient);
        assert!(failure.message.contains("disk gone"), "{}", failure.message);
    }
}
