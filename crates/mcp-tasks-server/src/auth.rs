//! Bearer tokens mapped to principals: who a request acts for. Tasks are bound
//! to the principal that created them.

use std::collections::HashMap;

/// The authenticated caller of one request (an axum request extension, set
/// by the [`guard`](crate::guard) and read by the handler).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

/// Which bearer token stands for which principal.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TokenMap {
    principals: HashMap<String, String>,
}

impl std::fmt::Debug for TokenMap {
    // Never print the tokens themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenMap").field("tokens", &self.principals.len()).finish()
    }
}

impl TokenMap {
    /// A map from `(token, principal)` pairs.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        TokenMap { principals: pairs.into_iter().collect() }
    }

    /// The principal `token` stands for.
    pub fn principal(&self, token: &str) -> Option<Principal> {
        self.principals.get(token).map(|p| Principal(p.clone()))
    }

    /// How many tokens are known.
    pub fn len(&self) -> usize {
        self.principals.len()
    }

    /// Whether no token is known.
    pub fn is_empty(&self) -> bool {
        self.principals.is_empty()
    }

    /// The principal of an `Authorization` header value (`Bearer <token>`).
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, AuthError> {
        let value = authorization.ok_or(AuthError::Missing)?;
        let (scheme, token) = value.trim().split_once(' ').ok_or(AuthError::NotBearer)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(AuthError::NotBearer);
        }
        self.principal(token.trim()).ok_or(AuthError::Unknown)
    }
}

/// Why a request could not be authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header.
    #[error("this server requires an Authorization: Bearer <token> header")]
    Missing,
    /// An `Authorization` header of another scheme.
    #[error("the Authorization header must use the Bearer scheme")]
    NotBearer,
    /// A token the server does not know.
    #[error("the bearer token is not recognised")]
    Unknown,
}

/// The principal the guard authenticated for this request, if any.
pub(crate) fn request_principal(cx: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Option<String> {
    cx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .map(|p| p.0.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_resolve_to_principals() {
        let m = TokenMap::new([("t1".to_owned(), "alice".to_owned())]);
        assert_eq!(m.authenticate(Some("Bearer t1")), Ok(Principal("alice".into())));
        assert_eq!(m.authenticate(Some("bearer  t1 ")), Ok(Principal("alice".into())));
        assert_eq!(m.authenticate(Some("Bearer t2")), Err(AuthError::Unknown));
        assert_eq!(m.authenticate(Some("Basic dDE=")), Err(AuthError::NotBearer));
        assert_eq!(m.authenticate(None), Err(AuthError::Missing));
        assert!(!format!("{m:?}").contains("t1"));
    }
}
