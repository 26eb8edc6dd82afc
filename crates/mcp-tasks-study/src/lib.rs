//! The paper's study (§6), reproduced exactly on the project's own code, and
//! taken further.
//!
//! Every experiment runs the project's real policy code under a manual
//! clock: E1 the real stores, runtime and restart triage; E2 the real client
//! [`PollScheduler`](mcp_tasks_core::PollScheduler); E3 the real
//! [`Classifier`](mcp_tasks_core::Classifier) and retry policy; E4 the real
//! runtime's reaper and poll recording; E5 the server's real poll hint and
//! the client's orphan-window cap. Each module prints its tables in the
//! paper's layout and serialises to the JSON shapes of `mcp-tasks study --json`.

pub mod e1;
pub mod e2;
pub mod e3;
pub mod e4;
pub mod e5;
pub mod error;
pub mod num;
pub mod plot;
pub mod progress;
pub mod report;
pub mod stats;
pub mod table;
pub mod tool;

pub use error::StudyError;
pub use progress::{Progress, Silent};
pub use report::{Experiment, Report, StudyParams};
pub use table::Table;
