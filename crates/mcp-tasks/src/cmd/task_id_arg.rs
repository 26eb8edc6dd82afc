//! Task ids on the command line: a whole id, or any unambiguous prefix of
//! one (ids are long; operators copy the first few characters). The store
//! answers the prefix query, so resolving never lists the whole table.

use mcp_tasks_core::TaskId;
use mcp_tasks_store::{DeadLetterQuery, ListQuery, StoreError, TaskStore};

/// How many candidates an ambiguous prefix names in its error.
const SHOWN_CANDIDATES: usize = 10;

/// What a task id argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Resolved {
    /// Exactly one id: the whole id, or the one id with this prefix.
    One(TaskId),
    /// No id starts with it.
    None,
    /// Several ids start with it: the first few of them, and whether there are more.
    Ambiguous(Vec<TaskId>, bool),
}

impl Resolved {
    /// The one id, or an error naming the argument and what it matched.
    pub(super) fn one(self, text: &str, what: &str) -> anyhow::Result<Option<TaskId>> {
        match self {
            Resolved::One(id) => Ok(Some(id)),
            Resolved::None => Ok(None),
            Resolved::Ambiguous(ids, more) => {
                let mut names: Vec<String> = ids.iter().map(ToString::to_string).collect();
                if more {
                    names.push("…".to_owned());
                }
                anyhow::bail!("{what} id prefix {text} is ambiguous: it matches {}", names.join(", "))
            }
        }
    }
}

/// The task `text` names: its whole id if a task has it, else the one task
/// whose id starts with it.
pub(super) async fn resolve_task(store: &dyn TaskStore, text: &str) -> Result<Resolved, StoreError> {
    if text.is_empty() {
        return Ok(Resolved::None);
    }
    let whole = TaskId(text.to_owned());
    if store.get(&whole).await?.is_some() {
        return Ok(Resolved::One(whole));
    }
    let query = ListQuery { id_prefix: Some(text.to_owned()), limit: SHOWN_CANDIDATES + 1, ..ListQuery::default() };
    Ok(pick(store.list(query).await?.into_iter().map(|t| t.id).collect()))
}

/// The dead letter `text` names: its whole task id, else the one letter
/// whose task id starts with it (requeued letters included).
pub(super) async fn resolve_dead_letter(store: &dyn TaskStore, text: &str) -> Result<Resolved, StoreError> {
    if text.is_empty() {
        return Ok(Resolved::None);
    }
    let whole = TaskId(text.to_owned());
    if store.get_dead_letter(&whole).await?.is_some() {
        return Ok(Resolved::One(whole));
    }
    let query = DeadLetterQuery {
        id_prefix: Some(text.to_owned()),
        include_requeued: true,
        limit: SHOWN_CANDIDATES + 1,
        ..DeadLetterQuery::default()
    };
    Ok(pick(store.list_dead_letters(query).await?.into_iter().map(|d| d.task_id).collect()))
}

fn pick(mut ids: Vec<TaskId>) -> Resolved {
    match ids.len() {
        0 => Resolved::None,
        1 => Resolved::One(ids.remove(0)),
        n => {
            ids.truncate(SHOWN_CANDIDATES);
            Resolved::Ambiguous(ids, n > SHOWN_CANDIDATES)
        }
    }
}
