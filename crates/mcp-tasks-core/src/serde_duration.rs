//! Durations in configuration files, as human strings ("500ms", "30s", "15m").

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// Serialises as a `humantime` string.
pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&humantime::format_duration(*d).to_string())
}

/// Parses a `humantime` string such as `"500ms"` or `"15m"`.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = String::deserialize(d)?;
    humantime::parse_duration(&s).map_err(|e| serde::de::Error::custom(format!("bad duration {s:?}: {e}")))
}
