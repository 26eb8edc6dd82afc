//! The integration tests of `mcp-tasks-runtime`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod support;

mod argument_schema;
mod attempt_history;
mod background;
mod cancel;
mod claim_batch;
mod concurrency;
mod context_anchors;
mod create_errors;
mod default_class;
mod dispatch;
mod expiry;
mod fencing_postgres;
mod fleet_wakeups;
mod happy_path;
mod input_round_trip;
mod input_survives_restart;
mod late_completion;
mod leader;
mod lease_expiry_triage;
mod lease_renewal;
mod orphan_poll_race;
mod orphan_window;
mod other_principal;
mod permanent_failure;
mod poison_dead_letter;
mod poll_hint;
mod reaper_order;
mod reask_fencing;
mod restart_triage;
mod retry_after;
mod shutdown;
mod terminal_is_final;
mod terminal_messages;
mod trace_context;
mod transient_retry;
mod waiting_holds_no_slot;
