//! The policy file parser: any text as `mcp-tasks serve --config` reads it
//! (TOML, or JSON for a `.json` file) into the core's `Policy`, its
//! durations through the core's human-duration serde.
//!
//! Properties: no panic, in parsing or in anything done with what parsed;
//! a parsed policy writes out and reads back to the same policy (its two
//! floats to within a rounding); `check`
//! (with no client assumption) finds an error exactly when `validate`
//! refuses, so `serve` and the runtime agree; fitting a valid policy to its
//! windows changes nothing; a valid policy's hints stay within its bounds,
//! whatever duration a tool is expected to take.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_tasks_core::config_check::has_errors;
use mcp_tasks_core::{ClientExpectations, HintPolicy, Policy, check_config};

/// Equal, or both NaN, or a rounding apart (serde_json reads floats on a
/// best-effort basis: the shortest text of an `f64` may read back one step off).
fn close(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-15 * a.abs().max(b.abs())
}

fn properties(policy: &Policy, written: String, mut read_back: Policy, write_again: impl Fn(&Policy) -> String) {
    assert!(close(read_back.poll_hint.fraction, policy.poll_hint.fraction), "{written}");
    assert!(close(read_back.retry.multiplier, policy.retry.multiplier), "{written}");
    (read_back.poll_hint.fraction, read_back.retry.multiplier) = (policy.poll_hint.fraction, policy.retry.multiplier);
    // Compared as text: a NaN fraction is not equal to itself.
    assert_eq!(write_again(&read_back), written, "a policy reads back as written");
    let valid = policy.validate().is_ok();
    assert_eq!(has_errors(&check_config(policy, &ClientExpectations::default())), !valid);
    let gap = Some(policy.poll_flush_interval);
    let _ = check_config(policy, &ClientExpectations { max_poll_gap: gap });
    if valid {
        assert_eq!(&policy.clone().fitted_to_windows(), policy, "a valid policy already fits its windows");
        let largest = HintPolicy::largest_hint(policy.retention.orphan_after);
        for expected in [None, Some(Duration::ZERO), Some(Duration::from_millis(1500)), Some(Duration::MAX)] {
            let hint = policy.poll_hint.hint_for(expected);
            assert!(hint >= policy.poll_hint.min && hint <= policy.poll_hint.max && hint <= largest, "{hint:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(policy) = toml::from_str::<Policy>(text) {
        let write = |p: &Policy| toml::to_string(p).expect("a parsed policy writes as TOML");
        let written = write(&policy);
        let read_back = toml::from_str(&written).unwrap_or_else(|e| panic!("{e}\n{written}"));
        properties(&policy, written, read_back, write);
    }
    if let Ok(policy) = serde_json::from_str::<Policy>(text) {
        let write = |p: &Policy| serde_json::to_string(p).expect("a parsed policy writes as JSON");
        let written = write(&policy);
        let read_back = serde_json::from_str(&written).unwrap_or_else(|e| panic!("{e}\n{written}"));
        properties(&policy, written, read_back, write);
    }
});
