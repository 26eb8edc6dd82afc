//! Database URLs as they may appear in messages: without the password.

/// `url` with any password removed, for error messages and logs. Handles the
/// URL form (`postgres://user:secret@host/db`, `?password=…`) and the
/// key/value form (`host=… password=…`).
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return redact_key_value(url);
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{user}{host}")
        }
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query.split('&').filter(|pair| !pair.starts_with("password=")).collect();
            if kept.is_empty() { path.to_owned() } else { format!("{path}?{}", kept.join("&")) }
        }
        None => tail.to_owned(),
    };
    format!("{scheme}{authority}{tail}")
}

fn redact_key_value(conninfo: &str) -> String {
    conninfo.split_whitespace().filter(|pair| !pair.starts_with("password=")).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_are_removed_and_the_rest_kept() {
        for (url, shown) in [
            ("postgres://app:s3cret@db.example:5432/tasks", "postgres://app@db.example:5432/tasks"),
            ("postgresql://app@db/tasks", "postgresql://app@db/tasks"),
            ("postgres://db/tasks?password=s3cret&sslmode=disable", "postgres://db/tasks?sslmode=disable"),
            ("postgres://a:b@h/d?password=s3cret", "postgres://a@h/d"),
            ("postgres://h", "postgres://h"),
            ("host=db user=app password=s3cret dbname=tasks", "host=db user=app dbname=tasks"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
            assert!(!redact(url).contains("s3cret"));
        }
    }
}
