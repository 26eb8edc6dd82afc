//! Instants given on the command line (`--before`, `--since`,
//! `--created-before`, `--created-since`): an RFC 3339 instant, an age (`2h`,
//! `30m`, also written `2h ago`: that long ago), `now`, or `today` /
//! `yesterday` (midnight UTC, as every instant the CLI prints is UTC).

use std::time::Duration;

use mcp_tasks_core::Timestamp;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The forms an instant argument takes, for `--help` and for the error.
pub(super) const FORMS: &str = "an RFC 3339 instant (2026-07-28T10:30:00Z), an age such as 2h or 30m (that long ago), or today or yesterday (midnight UTC)";

/// The optional word after an age: `2h ago` is `2h`.
const AGO: &str = " ago";

/// Parses an instant argument against the clock (clap's `value_parser`).
pub(super) fn parse_instant(text: &str) -> Result<Timestamp, String> {
    instant_at(text, OffsetDateTime::now_utc())
}

/// Parses an instant argument, ages and days counted back from `now`. The
/// error names the accepted forms once (clap already quotes the value).
pub(super) fn instant_at(text: &str, now: OffsetDateTime) -> Result<Timestamp, String> {
    let text = text.trim();
    let midnight = now.replace_time(time::Time::MIDNIGHT);
    let age_text = match text.len().checked_sub(AGO.len()) {
        Some(cut) if text.is_char_boundary(cut) && text[cut..].eq_ignore_ascii_case(AGO) => text[..cut].trim_end(),
        _ => text,
    };
    let at = if text.eq_ignore_ascii_case("now") {
        Some(now)
    } else if text.eq_ignore_ascii_case("today") {
        Some(midnight)
    } else if text.eq_ignore_ascii_case("yesterday") {
        midnight.checked_sub(time::Duration::DAY)
    } else if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        Some(at)
    } else if let Ok(age) = humantime::parse_duration(age_text) {
        ago(now, age)
    } else {
        return Err(format!("expected {FORMS}"));
    };
    let at = at.ok_or_else(|| format!("{text} reaches before the earliest instant this CLI can represent"))?;
    let ms = i64::try_from(at.unix_timestamp_nanos() / 1_000_000)
        .map_err(|_| format!("{text} is outside the instants this CLI can represent"))?;
    Ok(Timestamp::from_millis(ms))
}

fn ago(now: OffsetDateTime, age: Duration) -> Option<OffsetDateTime> {
    now.checked_sub(time::Duration::try_from(age).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-07-28T10:30:00Z.
    fn now() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_785_234_600).unwrap()
    }

    fn at(text: &str) -> Result<String, String> {
        instant_at(text, now()).map(Timestamp::to_rfc3339)
    }

    #[test]
    fn rfc3339_ages_and_days_are_accepted() {
        assert_eq!(at("2026-07-01T00:00:00Z").unwrap(), "2026-07-01T00:00:00Z");
        assert_eq!(at("2026-07-01T02:00:00+02:00").unwrap(), "2026-07-01T00:00:00Z");
        assert_eq!(at("2h").unwrap(), "2026-07-28T08:30:00Z");
        assert_eq!(at("30m").unwrap(), "2026-07-28T10:00:00Z");
        assert_eq!(at("1day 30m").unwrap(), "2026-07-27T10:00:00Z");
        assert_eq!(at("today").unwrap(), "2026-07-28T00:00:00Z");
        assert_eq!(at("Yesterday").unwrap(), "2026-07-27T00:00:00Z");
        assert_eq!(at("2h ago").unwrap(), "2026-07-28T08:30:00Z");
        assert_eq!(at("90m AGO").unwrap(), "2026-07-28T09:00:00Z");
        assert_eq!(at("now").unwrap(), "2026-07-28T10:30:00Z");
    }

    #[test]
    fn anything_else_names_the_accepted_forms_once() {
        for bad in ["last tuesday", "2026-07-28", "-2h", "", "ago", "yesterday ago", "2026-07-28T10:30:00Z ago"] {
            let e = at(bad).unwrap_err();
            assert_eq!(e, format!("expected {FORMS}"), "{bad}");
            assert_eq!(e.matches("RFC 3339").count(), 1);
        }
        assert!(at("999999999years").unwrap_err().contains("earliest instant"));
    }
}
