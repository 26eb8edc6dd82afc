//! The five task statuses of the MCP Tasks extension and the legal moves
//! between them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A task's status, exactly as the MCP Tasks extension names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running, queued, or waiting to be retried.
    Working,
    /// Waiting for the client to answer `inputRequests`.
    InputRequired,
    /// Finished with a tool result (which may itself carry `isError: true`).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled by the client, by the orphan sweep, or by an operator.
    Cancelled,
}

/// Every status, in declaration order (handy for tests and sweeps).
pub const ALL_STATUSES: [TaskStatus; 5] =
    [TaskStatus::Working, TaskStatus::InputRequired, TaskStatus::Completed, TaskStatus::Failed, TaskStatus::Cancelled];

impl TaskStatus {
    /// The wire and database spelling (`working`, `input_required`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Terminal statuses are final: nothing moves a task out of them.
    pub const fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// Live is the opposite of terminal: the task still owes the client an outcome.
    pub const fn is_live(self) -> bool {
        !self.is_terminal()
    }

    /// Whether the extension's lifecycle allows moving from `self` to `to`:
    /// a live task may become anything (`working → working` is a retry or a
    /// new status message); a terminal task may become nothing.
    pub const fn can_become(self, _to: TaskStatus) -> bool {
        self.is_live()
    }

    /// Checks a transition, naming both states when it is illegal.
    pub fn check_transition(self, to: TaskStatus) -> Result<(), IllegalTransition> {
        if self.can_become(to) { Ok(()) } else { Err(IllegalTransition { from: self, to }) }
    }

    /// The live statuses a task may move to `self` from (terminal ones never
    /// change): what a store's guarded write checks the stored status against.
    pub fn live_sources(self) -> impl Iterator<Item = TaskStatus> {
        ALL_STATUSES.into_iter().filter(move |from| from.is_live() && from.can_become(self))
    }

    /// [`live_sources`](Self::live_sources) as an SQL list of quoted
    /// spellings (`'working', 'input_required'`), or `None` when there are none.
    pub fn live_sources_sql(self) -> Option<String> {
        let quoted: Vec<String> = self.live_sources().map(|s| format!("'{}'", s.as_str())).collect();
        (!quoted.is_empty()).then(|| quoted.join(", "))
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status string that is not one of the five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown task status {0:?} (expected working, input_required, completed, failed or cancelled)")]
pub struct UnknownStatus(pub String);

impl FromStr for TaskStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL_STATUSES.into_iter().find(|st| st.as_str() == s).ok_or_else(|| UnknownStatus(s.to_owned()))
    }
}

/// An attempt to move a task between two statuses the lifecycle does not connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal task transition from {from} to {to}: {from} is terminal")]
pub struct IllegalTransition {
    /// The status the task has.
    pub from: TaskStatus,
    /// The status somebody tried to give it.
    pub to: TaskStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_reached_only_from_live_ones() {
        for to in ALL_STATUSES {
            let sources: Vec<_> = to.live_sources().collect();
            assert_eq!(sources, [TaskStatus::Working, TaskStatus::InputRequired], "{to}");
            assert_eq!(to.live_sources_sql().as_deref(), Some("'working', 'input_required'"));
        }
    }

    #[test]
    fn terminal_states_are_final() {
        for from in ALL_STATUSES.into_iter().filter(|s| s.is_terminal()) {
            for to in ALL_STATUSES {
                let err = from.check_transition(to).unwrap_err();
                assert!(err.to_string().contains(from.as_str()));
                assert!(err.to_string().contains(to.as_str()));
            }
        }
    }

    #[test]
    fn live_states_reach_everything() {
        for from in [TaskStatus::Working, TaskStatus::InputRequired] {
            for to in ALL_STATUSES {
                assert!(from.check_transition(to).is_ok(), "{from} -> {to}");
            }
        }
    }

    #[test]
    fn round_trips_through_strings() {
        for s in ALL_STATUSES {
            assert_eq!(s.as_str().parse::<TaskStatus>().unwrap(), s);
        }
        assert!("running".parse::<TaskStatus>().unwrap_err().to_string().contains("running"));
    }
}
