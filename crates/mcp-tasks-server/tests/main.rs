//! The integration tests of `mcp-tasks-server`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod common;
mod examples_support;
mod rmcp_app;

mod body_budget;
mod cancel;
mod client_traceparent;
mod conformance_server;
mod connection_limits;
mod create_and_poll;
mod database_outage;
mod deploy_monitoring;
mod drop_in;
mod examples_run;
mod fast_create_differential;
mod fast_get_differential;
mod header_mismatch;
mod health_probes;
mod idempotency_key;
mod inline_disconnect;
mod input_capabilities;
mod input_round_trip;
mod invalid_answer;
mod invalid_arguments;
mod invalid_envelope;
mod malformed_json;
mod metrics_scrape;
mod missing_meta;
mod missing_task_name;
mod mrtr_then_task;
mod non_declaring_client;
mod origin;
mod oversized_body;
mod poison;
mod poll_hint;
mod poll_rate_limit;
mod principal_isolation;
mod principal_quota;
mod request_state;
mod transient_retry;
mod typed_arguments;
mod typed_elicitation;
mod unknown_method;
mod unknown_task;
mod wrong_typed_task_id;
