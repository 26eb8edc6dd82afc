//! `get_visible`: a task is visible only to the principal that owns it.

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

/// `get_visible` returns a task to its owner only: another principal, the
/// anonymous caller and an unknown id all read as missing, and an anonymous
/// task is visible to the anonymous caller alone.
pub async fn get_visible_checks_the_owner(store: &dyn TaskStore) {
    let owned = create(store, NewTask { principal: Some("alice".into()), ..new_task("report", at(0)) }).await;
    let anonymous = create(store, new_task("report", at(1))).await;
    let visible = |id, principal: Option<&'static str>| {
        let id = Clone::clone(id);
        async move {
            store.get_visible(&id, principal).await.unwrap_or_else(|e| panic!("get_visible {id} as {principal:?}: {e}"))
        }
    };
    assert_eq!(visible(&owned.id, Some("alice")).await, Some(owned.clone()), "the owner sees its task");
    assert_eq!(visible(&owned.id, Some("bob")).await, None, "another principal's task reads as missing");
    assert_eq!(visible(&owned.id, None).await, None, "an anonymous caller does not see a principal's task");
    assert_eq!(
        visible(&anonymous.id, None).await,
        Some(anonymous.clone()),
        "an anonymous task is visible to the anonymous caller"
    );
    assert_eq!(visible(&anonymous.id, Some("alice")).await, None, "an anonymous task is not visible to a named principal");
    assert_eq!(visible(&mcp_tasks_core::TaskId::random(), Some("alice")).await, None, "an unknown id reads as missing");
}
