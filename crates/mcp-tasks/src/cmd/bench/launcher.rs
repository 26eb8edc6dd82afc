//! Starts fresh servers under test: `mcp-tasks serve` on a new store of the
//! chosen kind (a new SQLite file, a new PostgreSQL schema, or memory), or
//! the rmcp peer. Every measurement that depends on what is stored starts
//! from a fresh one.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::pg_schema::PgSchema;
use super::spawned::{Spawned, peer_binary};

/// The store `mcp-tasks serve` keeps its tasks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoreKind {
    /// In memory (`serve --in-memory`): nothing durable.
    Memory,
    /// A SQLite file (synchronous=FULL, WAL), in the benchmark's directory.
    Sqlite,
    /// A fresh schema of the PostgreSQL database `--database-url` names.
    Postgres,
}

/// Which server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Server {
    /// `mcp-tasks serve` on the chosen store.
    McpTasks,
    /// `rmcp-task-peer`: rmcp's in-memory `TaskManager`.
    RmcpPeer,
}

impl Server {
    /// The name a table shows.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Server::McpTasks => "mcp-tasks",
            Server::RmcpPeer => "rmcp in-memory",
        }
    }

    /// The subject its measurements are reported under.
    pub(crate) fn subject(self) -> &'static str {
        match self {
            Server::McpTasks => super::report::OURS,
            Server::RmcpPeer => super::report::PEER,
        }
    }
}

/// A running server and what it stores into (dropped together).
pub(crate) struct Running {
    pub(crate) process: Spawned,
    _schema: Option<PgSchema>,
}

/// Starts servers for one benchmark run.
pub(crate) struct Launcher {
    store: StoreKind,
    database_url: Option<String>,
    dir: PathBuf,
    started: usize,
}

impl Launcher {
    /// Files go under `dir` (SQLite stores, the raw commit test's file).
    pub(crate) fn new(store: StoreKind, database_url: Option<String>, dir: &Path) -> anyhow::Result<Launcher> {
        if store == StoreKind::Postgres && database_url.is_none() {
            anyhow::bail!("--store postgres needs --database-url (or MCP_TASKS_DATABASE_URL)");
        }
        Ok(Launcher { store, database_url, dir: dir.to_owned(), started: 0 })
    }

    /// Starts `server` with nothing stored.
    pub(crate) async fn fresh(&mut self, server: Server) -> anyhow::Result<Running> {
        self.started += 1;
        match server {
            Server::RmcpPeer => {
                let peer = peer_binary()?;
                let args = vec!["--listen".to_owned(), "127.0.0.1:0".to_owned()];
                let process = tokio::task::spawn_blocking(move || Spawned::start(&peer, &args)).await??;
                Ok(Running { process, _schema: None })
            }
            Server::McpTasks => {
                let exe = std::env::current_exe().context("cannot find this executable")?;
                let mut args: Vec<String> = [
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--tools",
                    "fleet",
                    // The benchmark is one principal with a million tasks.
                    "--max-tasks-per-principal",
                    "0",
                    "--max-argument-bytes-per-principal",
                    "0",
                    "--max-connections",
                    "4096",
                ]
                .map(str::to_owned)
                .to_vec();
                let mut schema = None;
                match self.store {
                    StoreKind::Memory => args.push("--in-memory".to_owned()),
                    StoreKind::Sqlite => {
                        let file = self.dir.join(format!("tasks-{}.db", self.started));
                        args.extend(["--db".to_owned(), file.display().to_string()]);
                    }
                    StoreKind::Postgres => {
                        let base = self.database_url.as_deref().expect("checked in new");
                        let fresh = PgSchema::create(base).await?;
                        args.extend(["--database-url".to_owned(), fresh.url()]);
                        schema = Some(fresh);
                    }
                }
                let process = tokio::task::spawn_blocking(move || Spawned::start(&exe, &args)).await??;
                Ok(Running { process, _schema: schema })
            }
        }
    }
}
