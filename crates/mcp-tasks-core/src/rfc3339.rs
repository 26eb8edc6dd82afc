//! A [`Timestamp`] as the RFC 3339 text that the wire and the CLI show.

use ::time::OffsetDateTime;
use ::time::format_description::well_known::Rfc3339;

use crate::time::Timestamp;

impl Timestamp {
    /// This instant as RFC 3339 / ISO 8601 text in UTC, with as many
    /// fraction digits as the milliseconds need (`2026-07-28T10:10:00.25Z`).
    /// An instant `time` cannot represent (beyond year 9999) reads as the epoch.
    ///
    /// ```
    /// use mcp_tasks_core::Timestamp;
    /// assert_eq!(Timestamp::from_millis(1_785_233_400_250).to_rfc3339(), "2026-07-28T10:10:00.25Z");
    /// ```
    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.as_millis()) * 1_000_000;
        OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(Timestamp::from_millis(0).to_rfc3339(), "1970-01-01T00:00:00Z");
        assert_eq!(Timestamp::from_millis(1_785_233_400_250).to_rfc3339(), "2026-07-28T10:10:00.25Z");
        assert_eq!(Timestamp::from_millis(1_785_233_400_007).to_rfc3339(), "2026-07-28T10:10:00.007Z");
    }
}
