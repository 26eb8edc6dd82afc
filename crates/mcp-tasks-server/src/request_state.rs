//! [`RequestStateSeal`]: integrity protection for the `requestState` a server
//! issues in a multi-round-trip `InputRequiredResult` (SEP-2322).
//!
//! The client echoes `requestState` back on its next round, so what comes
//! back is attacker-controlled. A sealed state is
//! `base64url(expires_at_ms ‖ payload) "." base64url(HMAC-SHA256(key, context ‖ expires_at_ms ‖ payload))`:
//! a changed byte, a state issued for another tool or caller (the
//! `context`), or one older than its time to live is refused with `-32602`
//! naming why. The payload is signed, not encrypted: keep secrets out of it.
//!
//! The key comes from configuration (`mcp-tasks serve
//! --request-state-key-file`) or is drawn at start; every instance of a fleet
//! must share one key, or a round answered by another instance is refused.
//! Expiry is read from the [`Clock`] the runtime uses, so tests step it.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use mcp_tasks_core::{Clock, Timestamp};
use rmcp::ErrorData as McpError;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Shortest key accepted: 32 bytes (the HMAC-SHA256 block's security level).
pub const MIN_KEY_BYTES: usize = 32;

/// Default time a sealed state stays valid: 10 minutes, long enough for a
/// person to answer a question.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// Why an echoed `requestState` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestStateError {
    /// Not a sealed state, or its tag does not match (changed, forged, or
    /// issued for another context or by a server with another key).
    #[error("requestState failed its integrity check (tampered, or issued for another request)")]
    Tampered,
    /// Its tag matches but its time to live has passed.
    #[error("requestState expired {ago_ms} ms ago; start the request again")]
    Expired {
        /// How long ago it expired.
        ago_ms: u64,
    },
}

impl From<RequestStateError> for McpError {
    /// `-32602` (invalid params), the code the specification gives a request
    /// whose parameters fail validation, with the reason in `data`.
    fn from(e: RequestStateError) -> Self {
        let reason = match e {
            RequestStateError::Tampered => "tampered",
            RequestStateError::Expired { .. } => "expired",
        };
        McpError::invalid_params(e.to_string(), Some(serde_json::json!({"requestState": reason})))
    }
}

/// Why a key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a requestState key needs at least {MIN_KEY_BYTES} bytes, got {0}")]
pub struct ShortKey(pub usize);

/// Seals and opens `requestState` values with one key, one clock and one
/// time to live. Cheap to clone.
#[derive(Clone)]
pub struct RequestStateSeal {
    mac: HmacSha256,
    clock: Arc<dyn Clock>,
    ttl: Duration,
}

impl std::fmt::Debug for RequestStateSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("RequestStateSeal").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl RequestStateSeal {
    /// A seal over `key` (at least [`MIN_KEY_BYTES`]), expiring states after
    /// `ttl` on `clock`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::time::Duration;
    /// use mcp_tasks_core::{ManualClock, Timestamp};
    /// use mcp_tasks_server::RequestStateSeal;
    ///
    /// let clock = Arc::new(ManualClock::new(Timestamp(0)));
    /// let seal = RequestStateSeal::new(&[7u8; 32], clock.clone(), Duration::from_secs(60))?;
    /// let state = seal.seal(b"step=2", b"tools/call:deploy");
    /// assert_eq!(seal.open(&state, b"tools/call:deploy")?, b"step=2");
    /// assert!(seal.open(&state, b"tools/call:other").is_err());
    /// clock.advance(Duration::from_secs(61));
    /// assert!(seal.open(&state, b"tools/call:deploy").is_err());
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(key: &[u8], clock: Arc<dyn Clock>, ttl: Duration) -> Result<Self, ShortKey> {
        if key.len() < MIN_KEY_BYTES {
            return Err(ShortKey(key.len()));
        }
        let mac = <HmacSha256 as KeyInit>::new_from_slice(key).map_err(|_| ShortKey(key.len()))?;
        Ok(RequestStateSeal { mac, clock, ttl })
    }

    /// A seal over a fresh random key: states survive only this process.
    /// A fleet must configure one shared key instead.
    pub fn generated(clock: Arc<dyn Clock>, ttl: Duration) -> Self {
        let mut key = [0u8; MIN_KEY_BYTES];
        if let Err(e) = getrandom::fill(&mut key) {
            // No OS entropy is no state to trust: every state is refused by a key nobody has.
            tracing::error!(error = %e, "no OS randomness for the requestState key");
        }
        match Self::new(&key, clock, ttl) {
            Ok(seal) => seal,
            Err(_) => unreachable!("the generated key has MIN_KEY_BYTES"),
        }
    }

    /// How long a sealed state stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// `payload` sealed for `context` (what the state may only be used for:
    /// the method and tool, the caller), valid for the time to live.
    pub fn seal(&self, payload: &[u8], context: &[u8]) -> String {
        let expires = self.clock.now().plus(self.ttl).as_millis();
        let mut body = Vec::with_capacity(8 + payload.len());
        body.extend_from_slice(&expires.to_be_bytes());
        body.extend_from_slice(payload);
        let tag = self.tag(context, &body);
        format!("{}.{}", URL_SAFE_NO_PAD.encode(&body), URL_SAFE_NO_PAD.encode(tag))
    }

    /// The payload of `sealed` if it was sealed by this key for `context`
    /// and has not expired.
    pub fn open(&self, sealed: &str, context: &[u8]) -> Result<Vec<u8>, RequestStateError> {
        let (body, tag) = sealed.split_once('.').ok_or(RequestStateError::Tampered)?;
        let body = URL_SAFE_NO_PAD.decode(body).map_err(|_| RequestStateError::Tampered)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| RequestStateError::Tampered)?;
        let mut mac = self.mac.clone();
        mac.update(&(context.len() as u64).to_be_bytes());
        mac.update(context);
        mac.update(&body);
        // Constant-time comparison.
        mac.verify_slice(&tag).map_err(|_| RequestStateError::Tampered)?;
        let (expires, payload) = body.split_at_checked(8).ok_or(RequestStateError::Tampered)?;
        let expires = Timestamp(i64::from_be_bytes(expires.try_into().map_err(|_| RequestStateError::Tampered)?));
        let now = self.clock.now();
        if now > expires {
            return Err(RequestStateError::Expired { ago_ms: now.since(expires).as_millis() as u64 });
        }
        Ok(payload.to_vec())
    }

    fn tag(&self, context: &[u8], body: &[u8]) -> Vec<u8> {
        let mut mac = self.mac.clone();
        // The context's length first: ("ab", "c…") and ("a", "bc…") differ.
        mac.update(&(context.len() as u64).to_be_bytes());
        mac.update(context);
        mac.update(body);
        mac.finalize().into_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use mcp_tasks_core::ManualClock;

    use super::*;

    fn seal(clock: Arc<ManualClock>) -> RequestStateSeal {
        RequestStateSeal::new(&[42u8; 32], clock, Duration::from_secs(10)).unwrap()
    }

    #[test]
    fn a_sealed_state_opens_with_its_context_only() {
        let s = seal(Arc::new(ManualClock::new(Timestamp(1_000))));
        let state = s.seal(b"round=1", b"ctx");
        assert_eq!(s.open(&state, b"ctx").unwrap(), b"round=1");
        assert_eq!(s.open(&state, b"other"), Err(RequestStateError::Tampered));
    }

    #[test]
    fn every_changed_character_is_refused() {
        let s = seal(Arc::new(ManualClock::new(Timestamp(1_000))));
        let state = s.seal(b"round=1", b"ctx");
        for i in 0..state.len() {
            let mut bytes = state.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            if changed != state {
                assert!(s.open(&changed, b"ctx").is_err(), "accepted a change at {i}: {changed}");
            }
        }
        assert_eq!(s.open(&format!("{state}-TAMPERED"), b"ctx"), Err(RequestStateError::Tampered));
        assert_eq!(s.open("", b"ctx"), Err(RequestStateError::Tampered));
    }

    #[test]
    fn another_key_does_not_open_it() {
        let clock = Arc::new(ManualClock::new(Timestamp(0)));
        let state = seal(clock.clone()).seal(b"x", b"ctx");
        let other = RequestStateSeal::new(&[43u8; 32], clock, Duration::from_secs(10)).unwrap();
        assert_eq!(other.open(&state, b"ctx"), Err(RequestStateError::Tampered));
    }

    #[test]
    fn a_state_expires_after_its_time_to_live() {
        let clock = Arc::new(ManualClock::new(Timestamp(5_000)));
        let s = seal(clock.clone());
        let state = s.seal(b"x", b"ctx");
        clock.advance(Duration::from_secs(10));
        assert!(s.open(&state, b"ctx").is_ok(), "valid up to and including its expiry");
        clock.advance(Duration::from_millis(1));
        assert_eq!(s.open(&state, b"ctx"), Err(RequestStateError::Expired { ago_ms: 1 }));
    }

    #[test]
    fn short_keys_are_refused() {
        assert_eq!(
            RequestStateSeal::new(&[1u8; 31], Arc::new(ManualClock::new(Timestamp(0))), Duration::from_secs(1)).unwrap_err(),
            ShortKey(31)
        );
    }

    #[test]
    fn refusals_are_invalid_params_naming_the_reason() {
        let e = McpError::from(RequestStateError::Expired { ago_ms: 3 });
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("expired"));
        assert_eq!(e.data.unwrap()["requestState"], "expired");
    }
}
