//! Keeping logs bounded: values from clients are truncated before they reach
//! a log line, and a warning that repeats (connection limit reached, bodies
//! refused) is written at most once per interval with a count of the rest.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest client-supplied value written to a log line, in bytes.
pub const MAX_LOGGED_VALUE_BYTES: usize = 128;

/// `value` cut to at most [`MAX_LOGGED_VALUE_BYTES`] (at a character
/// boundary), with the original length appended when it was cut.
pub fn truncated(value: &str) -> String {
    if value.len() <= MAX_LOGGED_VALUE_BYTES {
        return value.to_owned();
    }
    let mut end = MAX_LOGGED_VALUE_BYTES;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &value[..end], value.len())
}

/// A warning written at most once per interval.
#[derive(Debug)]
pub struct RateLimitedWarning {
    interval: Duration,
    state: Mutex<WarningState>,
}

#[derive(Debug)]
struct WarningState {
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimitedWarning {
    /// A warning written at most once every `interval`.
    pub const fn new(interval: Duration) -> Self {
        RateLimitedWarning { interval, state: Mutex::new(WarningState { last: None, suppressed: 0 }) }
    }

    /// Calls `write(suppressed)` if the interval has passed since the last
    /// write, with how many occurrences were skipped meanwhile; else counts this one.
    pub fn warn(&self, write: impl FnOnce(u64)) {
        let now = Instant::now();
        let suppressed = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.last.is_some_and(|last| now.duration_since(last) < self.interval) {
                state.suppressed += 1;
                return;
            }
            state.last = Some(now);
            std::mem::take(&mut state.suppressed)
        };
        write(suppressed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_and_say_how_long_they_were() {
        assert_eq!(truncated("short"), "short");
        let long = "é".repeat(1000);
        let cut = truncated(&long);
        assert!(cut.len() < MAX_LOGGED_VALUE_BYTES + 32, "{cut}");
        assert!(cut.ends_with("(2000 bytes)"), "{cut}");
    }

    #[test]
    fn repeated_warnings_are_written_once_per_interval_with_a_count() {
        let warning = RateLimitedWarning::new(Duration::from_secs(3600));
        let mut written = Vec::new();
        for _ in 0..5 {
            warning.warn(|skipped| written.push(skipped));
        }
        assert_eq!(written, vec![0]);
        let warning = RateLimitedWarning::new(Duration::ZERO);
        warning.warn(|_| {});
        warning.warn(|skipped| written.push(skipped));
        assert_eq!(written, vec![0, 0]);
    }
}
