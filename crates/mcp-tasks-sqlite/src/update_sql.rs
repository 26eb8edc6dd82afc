//! The text of a guarded update, built once per shape. A change's statement
//! differs from another's only in which columns it sets, which guard terms
//! it checks, the status it moves to and whether it reads the row back, so
//! the writer formats each shape's text the first time it meets it and
//! reuses it after (formatting it on every write was about 3% of a task's
//! instructions end to end). Values are bound by position, in the order the
//! text names them: [`Bindings`] keeps each value in its column's slot, so
//! the order in which a caller fills them cannot matter.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use mcp_tasks_core::TaskStatus;
use rusqlite::types::Value as Sql;

use crate::row::TASK_COLUMNS;
use crate::schema::{LIVE, TERMINAL};

/// A column a change may set, in the order the statement sets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetColumn {
    UpdatedAt,
    Status,
    StatusMessage,
    Attempt,
    MaxAttempts,
    RunAt,
    LeaseOwner,
    LeaseExpiresAt,
    CancelRequested,
    TerminalAt,
    ExpiresAt,
    Result,
    Error,
    InputRequests,
    InputResponses,
}

/// Column names, indexed by [`SetColumn`].
const SET_COLUMNS: [&str; 15] = [
    "updated_at",
    "status",
    "status_message",
    "attempt",
    "max_attempts",
    "run_at",
    "lease_owner",
    "lease_expires_at",
    "cancel_requested",
    "terminal_at",
    "expires_at",
    "result",
    "error",
    "input_requests",
    "input_responses",
];

/// A guard term checked after `id = ?`, in the order the statement checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GuardTerm {
    Version,
    Status,
    Attempt,
    LeaseOwner,
    CancelRequested,
    LastSeenAtOrBefore,
}

/// Guard terms' text, indexed by [`GuardTerm`].
const GUARD_TERMS: [&str; 6] =
    ["version = ?", "status = ?", "attempt = ?", "lease_owner = ?", "cancel_requested = ?", "last_seen_at <= ?"];

/// What a guarded statement does, besides checking the row's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    /// Deletes a terminal row.
    Delete,
    /// Sets columns; `to` is the status it moves to (which decides the
    /// statuses it may start from); with `returning`, answers the new row.
    Change { to: Option<TaskStatus>, returning: bool },
}

/// A guarded statement's values, each in its slot, and what its text is.
#[derive(Debug)]
pub(crate) struct Bindings {
    action: Action,
    id: Sql,
    sets: [Option<Sql>; 15],
    guard: [Option<Sql>; 6],
}

/// What the text depends on: the action and which slots hold a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    action: Action,
    sets: u16,
    guard: u8,
}

impl Bindings {
    /// A statement on the row with `id` that sets nothing and checks no term yet.
    pub(crate) fn new(action: Action, id: String) -> Self {
        Self { action, id: Sql::Text(id), sets: Default::default(), guard: Default::default() }
    }

    /// Sets `column` to `value` (a delete sets nothing: ignored there).
    pub(crate) fn set(&mut self, column: SetColumn, value: Sql) {
        self.sets[column as usize] = Some(value);
    }

    /// Checks `term` against `value`.
    pub(crate) fn check(&mut self, term: GuardTerm, value: Sql) {
        self.guard[term as usize] = Some(value);
    }

    /// The statement's text (built once per shape on this thread) and its
    /// values in the order the text binds them.
    pub(crate) fn into_statement(mut self) -> (Rc<str>, Vec<Sql>) {
        if self.action == Action::Delete {
            self.sets = Default::default();
        }
        let shape = Shape { action: self.action, sets: mask(&self.sets) as u16, guard: mask(&self.guard) as u8 };
        let values = self.sets.into_iter().flatten().chain([self.id]).chain(self.guard.into_iter().flatten()).collect();
        (shape.sql(), values)
    }
}

/// Bit `i` set when slot `i` holds a value.
fn mask(slots: &[Option<Sql>]) -> u32 {
    slots.iter().enumerate().filter(|(_, v)| v.is_some()).fold(0, |m, (i, _)| m | 1 << i)
}

/// Names whose bit is set in `mask`, in index order.
fn named(names: &'static [&'static str], mask: u32) -> impl Iterator<Item = &'static str> {
    names.iter().enumerate().filter(move |(i, _)| mask & 1 << i != 0).map(|(_, n)| *n)
}

impl Shape {
    /// Shapes met so far are few (one per code path that writes), so the
    /// cache stays small; the writer is one thread, so it holds one cache.
    fn sql(self) -> Rc<str> {
        thread_local! {
            static TEXTS: RefCell<HashMap<Shape, Rc<str>>> = RefCell::default();
        }
        TEXTS.with(|texts| Rc::clone(texts.borrow_mut().entry(self).or_insert_with(|| self.build().into())))
    }

    fn build(self) -> String {
        let guard: String = named(&GUARD_TERMS, self.guard.into()).map(|term| format!(" AND {term}")).collect();
        match self.action {
            Action::Delete => format!("DELETE FROM tasks WHERE id = ?{guard} AND {TERMINAL}"),
            Action::Change { to, returning } => {
                let sets: Vec<String> =
                    named(&SET_COLUMNS, self.sets.into()).map(|column| format!("{column} = ?")).collect();
                let comma = if sets.is_empty() { "" } else { ", " };
                let returning = if returning { format!(" RETURNING {TASK_COLUMNS}") } else { String::new() };
                format!(
                    "UPDATE tasks SET {}{comma}version = version + 1 WHERE id = ?{guard} AND {}{returning}",
                    sets.join(", "),
                    allowed_sources(to)
                )
            }
        }
    }
}

/// The statuses a change may start from: live ones (terminal rows never
/// change) from which the core's lifecycle allows the new status.
fn allowed_sources(to: Option<TaskStatus>) -> String {
    match to.map(TaskStatus::live_sources_sql) {
        None => LIVE.to_owned(),
        Some(Some(from)) => format!("{LIVE} AND status IN ({from})"),
        Some(None) => "0".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use mcp_tasks_core::status::ALL_STATUSES;

    use super::*;
    use proptest::prelude::*;

    const SETS: [SetColumn; 15] = [
        SetColumn::UpdatedAt,
        SetColumn::Status,
        SetColumn::StatusMessage,
        SetColumn::Attempt,
        SetColumn::MaxAttempts,
        SetColumn::RunAt,
        SetColumn::LeaseOwner,
        SetColumn::LeaseExpiresAt,
        SetColumn::CancelRequested,
        SetColumn::TerminalAt,
        SetColumn::ExpiresAt,
        SetColumn::Result,
        SetColumn::Error,
        SetColumn::InputRequests,
        SetColumn::InputResponses,
    ];
    const TERMS: [GuardTerm; 6] = [
        GuardTerm::Version,
        GuardTerm::Status,
        GuardTerm::Attempt,
        GuardTerm::LeaseOwner,
        GuardTerm::CancelRequested,
        GuardTerm::LastSeenAtOrBefore,
    ];

    fn action() -> impl Strategy<Value = Action> {
        let to = proptest::option::of(proptest::sample::select(ALL_STATUSES.to_vec()));
        prop_oneof![Just(Action::Delete), (to, any::<bool>()).prop_map(|(to, returning)| Action::Change { to, returning })]
    }

    /// Each value names the placeholder it must land on: its column or term.
    fn marked(name: &str) -> Sql {
        Sql::Text(name.to_owned())
    }

    proptest! {
        /// Whatever order the slots are filled in, and whether the text is
        /// built or taken from the cache, each value lands on its own
        /// column's or term's placeholder.
        #[test]
        fn each_value_binds_to_its_own_placeholder(
            action in action(),
            sets in proptest::sample::subsequence(SETS.to_vec(), 0..=15).prop_shuffle(),
            terms in proptest::sample::subsequence(TERMS.to_vec(), 0..=6).prop_shuffle(),
        ) {
            let mut bindings = Bindings::new(action, "id".to_owned());
            for &column in &sets {
                bindings.set(column, marked(SET_COLUMNS[column as usize]));
            }
            for &term in &terms {
                bindings.check(term, marked(GUARD_TERMS[term as usize]));
            }
            let (sql, values) = bindings.into_statement();
            let placeholders: Vec<&str> = sql.split('?').collect();
            prop_assert_eq!(placeholders.len() - 1, values.len(), "{}", sql);
            let mut text_so_far = String::new();
            for (before, value) in placeholders.iter().zip(&values) {
                text_so_far.push_str(before);
                let Sql::Text(name) = value else { unreachable!() };
                let (expected, in_where) = match name.as_str() {
                    "id" => ("id = ".to_owned(), true),
                    term if GUARD_TERMS.contains(&term) => (term.trim_end_matches('?').to_owned(), true),
                    column => (format!("{column} = "), false),
                };
                prop_assert!(before.ends_with(&expected), "{:?} before the value {}: {}", before, name, sql);
                prop_assert_eq!(text_so_far.contains(" WHERE "), in_where, "{} on the wrong side of WHERE: {}", name, sql);
            }
            let is_delete = action == Action::Delete;
            prop_assert_eq!(sql.starts_with("DELETE"), is_delete);
            if is_delete {
                prop_assert_eq!(values.len(), 1 + terms.len(), "a delete binds no column");
            }
        }
    }

    #[test]
    fn a_shape_met_again_answers_the_same_text() {
        let statement = || {
            let mut b = Bindings::new(Action::Change { to: Some(TaskStatus::Completed), returning: false }, "x".into());
            b.set(SetColumn::Status, Sql::Text("completed".into()));
            b.check(GuardTerm::Version, Sql::Integer(3));
            b.into_statement().0
        };
        let (first, again) = (statement(), statement());
        assert!(Rc::ptr_eq(&first, &again), "built once, then reused");
        assert_eq!(
            &*first,
            "UPDATE tasks SET status = ?, version = version + 1 WHERE id = ? AND version = ? \
             AND status IN ('working', 'input_required') AND status IN ('working', 'input_required')"
        );
    }
}
