//! The `fleet` tool set: fixtures for testing several `serve` instances on
//! one database. Each tool appends what it does (start, finish, stop, answer
//! received) to a journal file shared by every instance on the machine
//! ([`JOURNAL_ENV`]), so a test can count how often a task was started and
//! on which process, across SIGKILLs.

mod await_answer;
mod counted_job;
mod journal;
mod once_only_job;

pub use await_answer::AwaitAnswer;
pub use counted_job::CountedJob;
pub use journal::{JOURNAL_ENV, JournalEntry};
pub use once_only_job::OnceOnlyJob;

use crate::builder::TaskServerBuilder;

/// Registers every fleet fixture.
pub fn register(builder: TaskServerBuilder) -> TaskServerBuilder {
    builder.tool(CountedJob).tool(OnceOnlyJob).tool(AwaitAnswer)
}
