//! `serve --request-state-key-file`: the key that seals the `requestState`
//! of multi-round-trip answers. Every instance of a fleet must read the same
//! key; without one each process draws its own, and a round answered by
//! another instance (or after a restart) is refused.

use std::path::Path;

use anyhow::Context;
use mcp_tasks_server::request_state::MIN_KEY_BYTES;

/// The key in `path`: its bytes with surrounding whitespace trimmed (so
/// `openssl rand -hex 32 > key` works), at least [`MIN_KEY_BYTES`].
pub(crate) fn load_request_state_key(path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read the requestState key {}", path.display()))?;
    let key = bytes.trim_ascii().to_vec();
    if key.len() < MIN_KEY_BYTES {
        anyhow::bail!(
            "the requestState key {} has {} bytes; it needs at least {MIN_KEY_BYTES} (e.g. `openssl rand -hex 32`)",
            path.display(),
            key.len()
        );
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_trimmed_and_must_be_long_enough() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, format!("{}\n", "ab".repeat(32))).unwrap();
        assert_eq!(load_request_state_key(&path).unwrap().len(), 64);
        std::fs::write(&path, "short\n").unwrap();
        assert!(load_request_state_key(&path).unwrap_err().to_string().contains("at least 32"));
        assert!(load_request_state_key(&dir.path().join("missing")).is_err());
    }
}
