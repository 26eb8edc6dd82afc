//! What the store-inspecting subcommands (`tasks`, `dlq`) share: the `--db`
//! and `--database-url` flags, opening an existing store, and printing records as a table, as
//! `key: value` lines, or as JSON.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use mcp_tasks_core::Timestamp;
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::TaskStore;
use serde::Serialize;

/// Exit code for "no such task" / "no such dead letter".
pub(super) const EXIT_NOT_FOUND: u8 = 1;

/// Flags of a store-inspecting subcommand: `--db`, then its own `C`.
#[derive(Debug, clap::Args)]
pub(crate) struct InspectArgs<C: clap::Subcommand> {
    #[command(flatten)]
    pub(super) db: DbArg,
    #[command(subcommand)]
    pub(super) command: C,
}

/// The `--db` and `--database-url` flags.
#[derive(Debug, clap::Args)]
pub(crate) struct DbArg {
    /// The task database (SQLite).
    #[arg(long = "db", value_name = "PATH", env = "MCP_TASKS_DB", default_value = "./mcp-tasks.db", global = true)]
    pub(super) path: PathBuf,
    /// A PostgreSQL task database instead of --db (postgres://user@host/db).
    #[arg(long, value_name = "URL", env = "MCP_TASKS_DATABASE_URL", global = true)]
    database_url: Option<String>,
}

impl DbArg {
    /// Opens the existing task database these flags name.
    pub(super) async fn open(&self) -> anyhow::Result<Arc<dyn TaskStore>> {
        match &self.database_url {
            Some(url) => Ok(Arc::new(mcp_tasks_postgres::PostgresStore::open(url).await?)),
            None => open_store(&self.path),
        }
    }

    /// Where the store is, for messages (a URL without its password).
    pub(super) fn location(&self) -> String {
        match &self.database_url {
            Some(url) => mcp_tasks_postgres::redact_url(url),
            None => self.path.display().to_string(),
        }
    }
}

/// Opens an existing task database; a missing file is an error rather than
/// a new, empty database (a mistyped path must not look like "no tasks").
fn open_store(db: &Path) -> anyhow::Result<Arc<dyn TaskStore>> {
    if !db.exists() {
        bail!("no task database at {} (pass --db PATH or set MCP_TASKS_DB)", db.display());
    }
    let store = SqliteStore::open(db).with_context(|| format!("opening {}", db.display()))?;
    Ok(Arc::new(store))
}

/// The flags every `list` subcommand takes.
#[derive(Debug, clap::Args)]
pub(crate) struct ListFlags {
    /// At most this many.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    limit: u64,
    /// Print JSON (an array of records) instead of a table.
    #[arg(long)]
    json: bool,
}

impl ListFlags {
    /// `--limit` as a length (saturating where `usize` is narrower).
    pub(super) fn limit(&self) -> usize {
        usize::try_from(self.limit).unwrap_or(usize::MAX)
    }

    /// Prints `items` as pretty JSON (`--json`), as `none` when there are
    /// none, or as a table of `header` with one `row` per item.
    pub(super) fn print<T: Serialize>(
        &self,
        items: &[T],
        none: &str,
        header: &[&str],
        row: impl Fn(&T) -> Vec<String>,
    ) -> anyhow::Result<()> {
        if self.json {
            print_json(items)?;
        } else if items.is_empty() {
            println!("{none}");
        } else {
            print!("{}", table(header, items.iter().map(row).collect()));
        }
        Ok(())
    }
}

/// Prints one item as pretty JSON or as its `details` text.
pub(super) fn print_one<T: Serialize>(item: &T, json: bool, details: impl Fn(&T) -> String) -> anyhow::Result<()> {
    if json {
        print_json(item)
    } else {
        print!("{}", details(item));
        Ok(())
    }
}

/// Prints `value` as pretty JSON on one line of output.
pub(super) fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// `key: value` lines with the values aligned.
pub(super) fn key_values(rows: &[(&str, String)]) -> String {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter().map(|(k, v)| format!("{:width$}  {v}\n", format!("{k}:"), width = width + 1)).collect()
}

/// An instant as RFC 3339 text (UTC, milliseconds when there are any).
pub(super) fn when(at: Timestamp) -> String {
    at.to_rfc3339()
}

/// An optional value as text, `-` when absent.
pub(super) fn or_dash<T: ToString>(value: Option<&T>) -> String {
    value.map_or_else(|| "-".to_owned(), ToString::to_string)
}

/// `s` on one line, cut to `max` characters.
pub(super) fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A plain table: columns padded to their widest cell, two spaces apart.
pub(super) fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(w - cell.chars().count() + 2));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for row in rows {
        out.push_str(&line(row));
    }
    out
}
