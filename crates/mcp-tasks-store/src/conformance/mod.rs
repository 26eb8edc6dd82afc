//! The conformance suite every [`TaskStore`] runs (in the manner of
//! object_store's `integration.rs` and River's `riverdrivertest`).
//!
//! Each public `async fn` tests one behaviour against a fresh, empty store
//! and panics with a message naming what broke. Most take `&dyn TaskStore`;
//! the concurrency tests take an `Arc<dyn TaskStore>` because they spawn.
//! A backend runs the whole suite, one `#[tokio::test]` per behaviour, with
//! [`store_conformance_tests!`](crate::store_conformance_tests):
//!
//! ```
//! use std::sync::Arc;
//! use mcp_tasks_store::MemoryStore;
//! use mcp_tasks_store::conformance::Fixture;
//!
//! async fn fresh_store() -> Fixture {
//!     Fixture::new(Arc::new(MemoryStore::new()))
//! }
//! mcp_tasks_store::store_conformance_tests!(fresh_store);
//! # fn main() {}
//! ```
//!
//! Capability differences between backends are arguments of the test
//! functions, never `cfg`s.

mod attempts;
mod claim;
mod concurrency;
mod create;
mod dead_letters;
pub mod differential;
mod guards;
mod idempotency;
mod listing;
mod polls;
mod quota;
pub mod support;
mod sweeps;
mod terminal;
mod unread;
mod visibility;

use std::any::Any;
use std::sync::Arc;

pub use attempts::*;
pub use claim::*;
pub use concurrency::*;
pub use create::*;
pub use dead_letters::*;
pub use guards::*;
pub use idempotency::*;
pub use listing::*;
pub use polls::*;
pub use quota::*;
pub use sweeps::*;
pub use terminal::*;
pub use unread::*;
pub use visibility::*;

use crate::store::TaskStore;

/// A fresh, empty store for one conformance test, and whatever must outlive
/// it (a temporary directory, a database handle).
pub struct Fixture {
    /// The store under test.
    pub store: Arc<dyn TaskStore>,
    /// Dropped after the store.
    _keep: Box<dyn Any + Send>,
}

impl Fixture {
    /// A fixture that needs nothing kept alive.
    pub fn new(store: Arc<dyn TaskStore>) -> Self {
        Fixture { store, _keep: Box::new(()) }
    }

    /// A fixture that keeps `keep` alive until the test ends.
    pub fn keeping(store: Arc<dyn TaskStore>, keep: impl Any + Send) -> Self {
        Fixture { store, _keep: Box::new(keep) }
    }
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture").field("store", &self.store).finish_non_exhaustive()
    }
}

/// Generates one `#[tokio::test]` per conformance behaviour. The argument is
/// the path of an `async fn() -> Fixture` returning a fresh, empty store.
/// The calling crate needs `tokio` (with `macros` and `rt-multi-thread`) as a
/// dev-dependency.
#[macro_export]
macro_rules! store_conformance_tests {
    ($make:path) => {
        $crate::store_conformance_tests!(@borrowed $make;
            create_get_round_trip,
            every_change_field_round_trips,
            only_visible_changes_move_updated_at,
            duplicate_id_is_rejected,
            a_dispatched_creation_is_born_leased,
            same_call_with_same_key_returns_existing_task,
            other_call_with_same_key_is_a_conflict,
            idempotency_key_is_released_when_the_row_expires,
            each_guard_field_must_hold,
            stale_version_never_applies,
            missing_task_is_not_found,
            batch_applies_in_order,
            terminal_rows_never_change,
            delete_requires_a_terminal_row,
            claim_takes_only_due_tasks_oldest_first,
            sweep_past_deadline,
            sweep_unseen,
            sweep_expired,
            sweep_leased,
            record_polls_is_monotonic_and_version_neutral,
            dead_letter_is_written_with_its_change,
            dead_letter_lifecycle,
            list_filters_and_orders,
            count_by_status_counts_every_status,
            count_by_status_and_tool_counts_each_pair,
            recent_durations_newest_first,
            get_visible_checks_the_owner,
            quota_caps_tasks_per_principal,
            quota_caps_argument_bytes,
            retry_then_success_records_two_attempts,
            a_lost_race_records_no_attempt,
            attempts_are_deleted_with_their_task,
            list_filters_by_principal_age_and_id_prefix,
            dead_letters_filter_by_age,
            apply_unread_writes_what_apply_writes,
            apply_unread_loses_races_like_apply,
        );
        $crate::store_conformance_tests!(@shared $make;
            concurrent_claimers_never_share_a_task,
            concurrent_creates_are_all_visible,
            concurrent_creates_with_one_key_agree,
            concurrent_guarded_updates_have_one_winner,
            concurrent_creates_never_overshoot_a_quota,
        );
    };
    (@borrowed $make:path; $($name:ident),* $(,)?) => {
        $(
            #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let fixture: $crate::conformance::Fixture = $make().await;
                $crate::conformance::$name(&*fixture.store).await;
            }
        )*
    };
    (@shared $make:path; $($name:ident),* $(,)?) => {
        $(
            #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let fixture: $crate::conformance::Fixture = $make().await;
                $crate::conformance::$name(::std::sync::Arc::clone(&fixture.store)).await;
            }
        )*
    };
}
