//! The `demo` tool set: a few realistic durable tools.

mod ask_user;
mod flaky_upstream;
mod long_running_report;

pub use ask_user::AskUser;
pub use flaky_upstream::FlakyUpstream;
pub use long_running_report::LongRunningReport;

use crate::builder::TaskServerBuilder;

/// Registers every demo tool.
pub fn register(builder: TaskServerBuilder) -> TaskServerBuilder {
    builder.tool(LongRunningReport).tool(FlakyUpstream).tool(AskUser)
}
