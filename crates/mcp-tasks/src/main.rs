//! `mcp-tasks`: durable, policy-governed tasks for MCP servers.
//!
//! One binary, one subcommand per concern; each lives in its own file under
//! `cmd/` and owns its flags.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// mimalloc rather than glibc's malloc: allocation and freeing were a fifth
/// of a trivial task's instructions end to end (docs/benchmark-history.md). The peer
/// binary `rmcp-task-peer` uses the same, so the benchmark's ratios compare
/// the servers, not their allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Durable, policy-governed tasks for Model Context Protocol servers.
#[derive(Debug, Parser)]
#[command(name = "mcp-tasks", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the MCP server (Streamable HTTP, protocol 2026-07-28) on a durable store.
    // Boxed: serve takes far more flags than any other command (clippy large_enum_variant).
    Serve(Box<cmd::serve::Args>),
    /// Call a tool on an MCP server as a task and follow it to its result.
    Call(cmd::call::Args),
    /// Reproduce the paper's study (Tables 1–5) and the E5 extension.
    Study(cmd::study::Args),
    /// Inspect tasks in a store, and cancel one.
    Tasks(cmd::tasks::Args),
    /// Inspect and act on the dead-letter queue.
    Dlq(cmd::dlq::Args),
    /// Run one reaper pass on a store now, or show what it would do (--dry-run).
    Reap(cmd::reap::Args),
    /// List a server's tools and whether each runs as a task.
    Tools(cmd::tools::Args),
    /// Copy a live task database to a new file, beside a running server.
    Backup(cmd::backup::Args),
    /// Measure a server over loopback HTTP beside rmcp's in-memory peer (see BENCHMARKS.md).
    Bench(cmd::bench::Args),
    /// Check a configuration against the paper's invariants (serve's policy flags, plus what clients do).
    Check(cmd::check::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::Serve(args) => cmd::serve::run(*args).await,
            Command::Call(args) => cmd::call::run(args).await,
            Command::Study(args) => cmd::study::run(args).await,
            Command::Tasks(args) => cmd::tasks::run(args).await,
            Command::Dlq(args) => cmd::dlq::run(args).await,
            Command::Backup(args) => cmd::backup::run(args).await,
            Command::Reap(args) => cmd::reap::run(args).await,
            Command::Tools(args) => cmd::tools::run(args).await,
            Command::Bench(args) => cmd::bench::run(args).await,
            Command::Check(args) => cmd::check::run(args).await,
        }
    });
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_line(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, each said once: many errors already
/// include their cause's text in their own, and printing the chain would
/// repeat it (`… could not be parsed: … could not be parsed`).
fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
