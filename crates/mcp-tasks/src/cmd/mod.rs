//! One module per subcommand. Each exposes `Args` (its flags) and
//! `run(Args) -> anyhow::Result<ExitCode>`.

pub(crate) mod backup;
pub(crate) mod bench;
pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod config_file;
pub(crate) mod dlq;
pub(crate) mod inspect;
pub(crate) mod instant_arg;
pub(crate) mod listen_addr;
pub(crate) mod observability;
pub(crate) mod otlp;
pub(crate) mod policy_args;
pub(crate) mod reap;
pub(crate) mod request_state_key;
pub(crate) mod serve;
pub(crate) mod study;
pub(crate) mod task_id_arg;
pub(crate) mod tasks;
pub(crate) mod tools;
