//! [`CachingHints`]: the `ttlMs` and `cacheScope` a cacheable result carries
//! (SEP-2549: `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`, `resources/read`).
//!
//! [`Durable`](crate::Durable) puts [`CachingHints::NOT_CACHEABLE`] on a
//! `tools/list` whose handler gave none: a client may not reuse it, which is
//! always true; a handler whose lists are fixed says so with its own hints.

use std::time::Duration;

use rmcp::model::CacheScope;

/// How long a result stays fresh, and who may share a cached copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachingHints {
    /// Milliseconds the result may be treated as fresh.
    pub ttl_ms: u64,
    /// `Public`: any client or intermediary may serve it to anyone;
    /// `Private`: only the requesting user's client may keep it.
    pub scope: CacheScope,
}

impl CachingHints {
    /// Stale at once, kept by no one else: safe for any result.
    pub const NOT_CACHEABLE: CachingHints = CachingHints { ttl_ms: 0, scope: CacheScope::Private };

    /// The same for every caller, fresh for `ttl`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use mcp_tasks_server::list_cache::CachingHints;
    /// use rmcp::model::ListToolsResult;
    ///
    /// let mut tools = ListToolsResult::with_all_items(vec![]);
    /// CachingHints::public(Duration::from_secs(60)).fill(&mut tools.ttl_ms, &mut tools.cache_scope);
    /// assert_eq!(tools.ttl_ms, Some(60_000));
    /// ```
    pub fn public(ttl: Duration) -> Self {
        CachingHints { ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX), scope: CacheScope::Public }
    }

    /// Sets both hints where neither is set; hints a handler chose stay.
    pub fn fill(&self, ttl_ms: &mut Option<u64>, scope: &mut Option<CacheScope>) {
        if ttl_ms.is_none() && scope.is_none() {
            *ttl_ms = Some(self.ttl_ms);
            *scope = Some(self.scope);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_a_handler_chose_are_kept() {
        let (mut ttl, mut scope) = (Some(5), Some(CacheScope::Public));
        CachingHints::NOT_CACHEABLE.fill(&mut ttl, &mut scope);
        assert_eq!((ttl, scope), (Some(5), Some(CacheScope::Public)));
        let (mut ttl, mut scope) = (None, None);
        CachingHints::NOT_CACHEABLE.fill(&mut ttl, &mut scope);
        assert_eq!((ttl, scope), (Some(0), Some(CacheScope::Private)));
    }
}
