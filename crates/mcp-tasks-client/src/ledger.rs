//! Which input requests of one task have been handled, so the user is asked
//! each key once even though `tasks/update` is eventually consistent (the
//! next `tasks/get` may still list a key that was just answered).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// One task's input bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct InputLedger {
    /// Keys whose answer the server acknowledged.
    acknowledged: BTreeSet<String>,
    /// Answers obtained but not yet acknowledged (resent until they are).
    unsent: BTreeMap<String, Value>,
    /// Keys the responder chose not to answer; not asked again.
    skipped: BTreeSet<String>,
}

impl InputLedger {
    /// A ledger that already knows `acknowledged` keys (e.g. from the handle book).
    pub fn with_acknowledged(acknowledged: impl IntoIterator<Item = String>) -> Self {
        InputLedger { acknowledged: acknowledged.into_iter().collect(), ..Self::default() }
    }

    /// The keys among `pending` (the server's current `inputRequests`) that
    /// still need asking: not acknowledged, not awaiting resend, not skipped.
    pub fn to_ask<'a>(&self, pending: impl IntoIterator<Item = &'a String>) -> Vec<String> {
        pending
            .into_iter()
            .filter(|k| !self.acknowledged.contains(*k) && !self.unsent.contains_key(*k) && !self.skipped.contains(*k))
            .cloned()
            .collect()
    }

    /// Stores the responder's answer for `key`, to be sent.
    pub fn answer(&mut self, key: String, value: Value) {
        if !self.acknowledged.contains(&key) {
            self.unsent.insert(key, value);
        }
    }

    /// Notes that the responder chose not to answer `key`.
    pub fn skip(&mut self, key: String) {
        self.skipped.insert(key);
    }

    /// The answers waiting to be sent (a copy; call [`InputLedger::acknowledge`] on success).
    pub fn unsent(&self) -> BTreeMap<String, Value> {
        self.unsent.clone()
    }

    /// Marks `keys` acknowledged by the server.
    pub fn acknowledge<'a>(&mut self, keys: impl IntoIterator<Item = &'a String>) {
        for k in keys {
            self.unsent.remove(k);
            self.acknowledged.insert(k.clone());
        }
    }

    /// Whether `key` was acknowledged.
    pub fn is_acknowledged(&self, key: &str) -> bool {
        self.acknowledged.contains(key)
    }
}
