//! The storage seam of mcp-tasks: the [`TaskStore`] trait every backend
//! implements, its parameter types, an in-memory store, and the conformance
//! suite every store runs.
//!
//! The suite (`conformance`) is a fixture, compiled only with the
//! `conformance` feature: a backend enables it in its dev-dependencies,
//! `mcp-tasks-store = { version = "…", features = ["conformance"] }`.
//!
//! Stores are deliberately dumb: they create, read, claim and apply guarded
//! updates. Every decision (what a sweep does, how a retry is scheduled) is
//! made in `mcp-tasks-core` and carried out by `mcp-tasks-runtime`.

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
pub mod error;
pub mod events;
pub mod leadership;
pub mod memory;
pub mod params;
pub mod poll_buffer;
pub mod store;
pub mod task_read;
pub mod wrapper;

pub use error::StoreError;
pub use events::StoreEvent;
pub use leadership::{Leadership, SoleLeader};
pub use memory::MemoryStore;
pub use params::*;
pub use poll_buffer::PollBuffer;
pub use store::TaskStore;
pub use task_read::TaskRead;
pub use wrapper::StoreWrapper;
