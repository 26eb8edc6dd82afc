//! The CLI's configuration files and values: a `Policy` file (TOML or
//! JSON), a bearer token file, and human durations ("500ms", "15m").

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mcp_tasks_core::Policy;

use mcp_tasks_server::TokenMap;

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file's content does not parse.
    #[error("{path} is not valid {format}: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// TOML or JSON.
        format: &'static str,
        /// The parser's words.
        reason: String,
    },
}

/// Parses a human duration such as `"500ms"`, `"30s"` or `"15m"`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim()).map_err(|e| format!("bad duration {text:?}: {e} (examples: 500ms, 30s, 15m)"))
}

/// Reads a file as TOML, or as JSON when its name ends in `.json`.
fn read_structured<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: shown.clone(), source })?;
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        serde_json::from_str(&text).map_err(|e| ConfigError::Parse { path: shown, format: "JSON", reason: e.to_string() })
    } else {
        toml::from_str(&text).map_err(|e| ConfigError::Parse { path: shown, format: "TOML", reason: e.to_string() })
    }
}

/// Reads a [`Policy`] (unset fields take their defaults; unknown fields are
/// refused). Not validated here: the caller validates after applying flags.
pub(crate) fn load_policy(path: &Path) -> Result<Policy, ConfigError> {
    read_structured(path)
}

/// Reads a bearer token file: a table from token to principal, e.g. in TOML
/// `"s3cr3t-alice" = "alice"`, or in JSON `{"s3cr3t-alice": "alice"}`.
pub(crate) fn load_tokens(path: &Path) -> Result<TokenMap, ConfigError> {
    let map: BTreeMap<String, String> = read_structured(path)?;
    Ok(TokenMap::new(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_or_say_why_not() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("15m"), Ok(Duration::from_secs(900)));
        assert!(parse_duration("soon").unwrap_err().contains("soon"));
    }

    #[test]
    fn policy_files_in_toml_and_json() {
        let dir = tempfile::tempdir().unwrap();
        let toml_path = dir.path().join("policy.toml");
        std::fs::write(&toml_path, "reaper_interval = \"5s\"\n[retry]\nmax_attempts = 5\n").unwrap();
        let p = load_policy(&toml_path).unwrap();
        assert_eq!((p.retry.max_attempts, p.reaper_interval), (5, Duration::from_secs(5)));
        let json_path = dir.path().join("policy.json");
        std::fs::write(&json_path, r#"{"retention": {"orphan_after": "20m"}}"#).unwrap();
        assert_eq!(load_policy(&json_path).unwrap().retention.orphan_after, Duration::from_secs(1200));
        std::fs::write(&json_path, r#"{"retension": {}}"#).unwrap();
        assert!(load_policy(&json_path).unwrap_err().to_string().contains("retension"));
    }

    #[test]
    fn token_files_map_tokens_to_principals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        std::fs::write(&path, "\"tok-a\" = \"alice\"\n\"tok-b\" = \"bob\"\n").unwrap();
        let tokens = load_tokens(&path).unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens.principal("tok-b").unwrap().0, "bob");
    }
}
