//! The count changes of the writer's open transaction not yet written to
//! `task_counts` and `principal_usage` (see `counts.rs`), one level per
//! open savepoint, written once just before the transaction commits.

use std::collections::HashMap;

use mcp_tasks_store::StoreError;
use rusqlite::{Connection, params};

use crate::row::unavailable;

/// A task's tool and status as stored before a change: what a status
/// change moves its count away from.
#[derive(Debug)]
pub(crate) struct CountedAs {
    /// The task's tool.
    pub(crate) tool: String,
    /// Its status before the change.
    pub(crate) status: String,
}

/// Tasks and argument bytes a principal holds (or a change to them).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Tasks.
    pub(crate) tasks: i64,
    /// Bytes of their arguments' JSON text.
    pub(crate) argument_bytes: i64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.tasks += other.tasks;
        self.argument_bytes += other.argument_bytes;
    }
}

/// The count changes of one savepoint level.
#[derive(Debug, Default)]
struct Deltas {
    /// Change in tasks per (tool, status): few pairs, so a list.
    tasks: Vec<(String, String, i64)>,
    /// Change in usage per principal (`''` for none): up to a batch's worth.
    usage: HashMap<String, Usage>,
}

impl Deltas {
    fn add_tasks(&mut self, tool: &str, status: &str, delta: i64) {
        match self.tasks.iter_mut().find(|(t, s, _)| t == tool && s == status) {
            Some((_, _, n)) => *n += delta,
            None => self.tasks.push((tool.to_owned(), status.to_owned(), delta)),
        }
    }

    fn usage_of(&mut self, principal: &str) -> &mut Usage {
        if !self.usage.contains_key(principal) {
            self.usage.insert(principal.to_owned(), Usage::default());
        }
        self.usage.get_mut(principal).expect("just inserted")
    }

    fn absorb(&mut self, other: Deltas) {
        for (tool, status, delta) in other.tasks {
            self.add_tasks(&tool, &status, delta);
        }
        for (principal, u) in other.usage {
            *self.usage.entry(principal).or_default() += u;
        }
    }
}

/// The count changes the writer's open transaction made that are not yet
/// in the tables, one level per open savepoint (the transaction itself at
/// the bottom): releasing a savepoint keeps its level's changes, rolling it
/// back drops them, as SQLite does with the rows.
#[derive(Debug)]
pub(crate) struct Tally {
    levels: Vec<Deltas>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally { levels: vec![Deltas::default()] }
    }
}

impl Tally {
    fn top(&mut self) -> &mut Deltas {
        self.levels.last_mut().expect("the transaction's level is never popped")
    }

    /// One more `working` task of `tool`, and one more task and `bytes` of
    /// arguments for `principal`.
    pub(crate) fn created(&mut self, tool: &str, principal: &str, bytes: i64) {
        let top = self.top();
        top.add_tasks(tool, "working", 1);
        *top.usage_of(principal) += Usage { tasks: 1, argument_bytes: bytes };
    }

    /// A task that was `before` is now `to`.
    pub(crate) fn status_change(&mut self, before: &CountedAs, to: &str) {
        if before.status != to {
            let top = self.top();
            top.add_tasks(&before.tool, &before.status, -1);
            top.add_tasks(&before.tool, to, 1);
        }
    }

    /// What `principal` holds beyond what `principal_usage` says: this
    /// transaction's uncommitted creations.
    pub(crate) fn pending_usage(&self, principal: &str) -> Usage {
        let mut pending = Usage::default();
        for usage in self.levels.iter().filter_map(|level| level.usage.get(principal)) {
            pending += *usage;
        }
        pending
    }

    /// A savepoint opened.
    pub(crate) fn savepoint(&mut self) {
        self.levels.push(Deltas::default());
    }

    /// The innermost savepoint was released: its changes stay.
    pub(crate) fn release(&mut self) {
        if self.levels.len() > 1 {
            let released = self.levels.pop().expect("more than one level");
            self.top().absorb(released);
        }
    }

    /// The innermost savepoint was rolled back (and released): its changes go.
    pub(crate) fn roll_back(&mut self) {
        if self.levels.len() > 1 {
            self.levels.pop();
        }
    }

    /// Forgets everything: the transaction rolled back, or a new one begins.
    pub(crate) fn clear(&mut self) {
        *self = Tally::default();
    }

    /// Adds the transaction's changes to the tables (every savepoint must
    /// have ended) and forgets them.
    pub(crate) fn write(&mut self, conn: &Connection) -> Result<(), StoreError> {
        debug_assert_eq!(self.levels.len(), 1, "a savepoint is still open");
        let changes = std::mem::take(self.top());
        if changes.tasks.iter().any(|(_, _, n)| *n != 0) {
            let mut add = conn
                .prepare_cached(
                    "INSERT INTO task_counts (tool, status, tasks) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + excluded.tasks",
                )
                .map_err(unavailable)?;
            for (tool, status, n) in changes.tasks.iter().filter(|(_, _, n)| *n != 0) {
                add.execute(params![tool, status, n]).map_err(unavailable)?;
            }
        }
        if !changes.usage.is_empty() {
            let mut add = conn
                .prepare_cached(
                    "INSERT INTO principal_usage (principal, tasks, argument_bytes) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (principal) DO UPDATE SET tasks = tasks + excluded.tasks, \
                       argument_bytes = argument_bytes + excluded.argument_bytes",
                )
                .map_err(unavailable)?;
            for (principal, u) in changes.usage.iter().filter(|(_, u)| **u != Usage::default()) {
                add.execute(params![principal, u.tasks, u.argument_bytes]).map_err(unavailable)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A migrated store's count tables, holding five `report` tasks of
    /// alice's (the directory lives as long as the connection needs it).
    fn tables() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::open::open_writer(&dir.path().join("tally.db"), crate::DEFAULT_BUSY_TIMEOUT).unwrap();
        conn.execute_batch(
            "INSERT INTO task_counts (tool, status, tasks) VALUES ('report', 'working', 5);
             INSERT INTO principal_usage (principal, tasks, argument_bytes) VALUES ('alice', 5, 500);",
        )
        .unwrap();
        (dir, conn)
    }

    fn rows(conn: &Connection, sql: &str) -> Vec<(String, i64, i64)> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    }

    fn counts(conn: &Connection) -> Vec<(String, i64, i64)> {
        rows(conn, "SELECT tool || '/' || status, tasks, 0 FROM task_counts ORDER BY 1")
    }

    fn usage(conn: &Connection) -> Vec<(String, i64, i64)> {
        rows(conn, "SELECT principal, tasks, argument_bytes FROM principal_usage ORDER BY 1")
    }

    fn created(tally: &mut Tally, principal: &str, bytes: i64) {
        tally.created("report", principal, bytes);
    }

    #[test]
    fn released_savepoints_keep_their_changes_and_rolled_back_ones_drop_them() {
        let (_dir, conn) = tables();
        let mut tally = Tally::default();
        created(&mut tally, "alice", 10);
        tally.savepoint();
        created(&mut tally, "bob", 20);
        tally.savepoint();
        created(&mut tally, "carol", 30);
        tally.roll_back();
        tally.release();
        tally.savepoint();
        created(&mut tally, "dave", 40);
        tally.roll_back();
        tally.write(&conn).unwrap();
        assert_eq!(counts(&conn), vec![("report/working".into(), 7, 0)]);
        assert_eq!(usage(&conn), vec![("alice".into(), 6, 510), ("bob".into(), 1, 20)]);
        // Written once: a second write adds nothing.
        tally.write(&conn).unwrap();
        assert_eq!(counts(&conn), vec![("report/working".into(), 7, 0)]);
    }

    #[test]
    fn a_status_change_moves_one_task_a_same_status_change_nothing_and_net_zero_pairs_write_nothing() {
        let (_dir, conn) = tables();
        let mut tally = Tally::default();
        created(&mut tally, "alice", 10);
        let before = CountedAs { tool: "report".into(), status: "working".into() };
        tally.status_change(&before, "completed");
        tally.status_change(&CountedAs { tool: "report".into(), status: "completed".into() }, "completed");
        assert_eq!(tally.top().tasks.iter().find(|(_, s, _)| s == "working").map(|t| t.2), Some(0));
        tally.write(&conn).unwrap();
        assert_eq!(counts(&conn), vec![("report/completed".into(), 1, 0), ("report/working".into(), 5, 0)]);
        assert_eq!(usage(&conn), vec![("alice".into(), 6, 510)]);
    }

    #[test]
    fn clearing_forgets_every_level() {
        let (_dir, conn) = tables();
        let mut tally = Tally::default();
        created(&mut tally, "alice", 10);
        tally.savepoint();
        created(&mut tally, "alice", 10);
        tally.clear();
        tally.write(&conn).unwrap();
        assert_eq!(counts(&conn), vec![("report/working".into(), 5, 0)]);
        assert_eq!(usage(&conn), vec![("alice".into(), 5, 500)]);
    }
}
