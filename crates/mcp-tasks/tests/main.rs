//! The integration tests of `mcp-tasks`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod fleet_support;
mod serve_support;

mod backup_cli;
mod bench_cli;
mod call_cli;
mod call_errors_cli;
mod call_terminal;
mod check_cli;
mod clean_stop_checkpoint;
mod concurrency_flag;
mod cut_answer_resent;
mod deleted_db;
mod fleet_cross_instance;
mod fleet_database_outage;
mod fleet_sigkill;
mod fleet_zombie;
mod graceful_shutdown;
mod log_flood;
mod operator_cli;
mod otlp_trace;
mod postgres_serve;
mod quota_flag;
mod restart;
mod second_server;
mod serve_listen_cli;
mod serve_log;
mod serve_log_json;
mod serve_metrics_cli;
mod study_cli;
mod tasks_dlq_cli;
mod unreadable_row_start;
mod waiting_survives_kills;
