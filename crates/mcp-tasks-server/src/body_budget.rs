//! A byte-weighted budget for request bodies in flight. Each body larger than
//! [`SMALL_BODY_BYTES`] takes its size from the budget until the request has
//! been handed on (parsed by rmcp); one that does not fit is refused at once
//! rather than queued, so memory stays bounded, no connection waits holding
//! a slot, and the client learns to retry (`Retry-After`).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bodies with a declared `Content-Length` up to this size are not counted:
/// their memory is bounded by the connection limit, and they must keep
/// flowing while large ones arrive.
pub const SMALL_BODY_BYTES: usize = 64 * 1024;

/// The budget is counted in units of this many bytes (a semaphore holds at
/// most `u32::MAX` permits per acquisition).
const UNIT: usize = 1024;

/// Bytes of request bodies that may be in flight at once.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    units: Arc<Semaphore>,
    total_bytes: usize,
}

/// A body's share of the budget, given back when dropped.
#[derive(Debug)]
pub struct BodyAdmission {
    _permit: Option<OwnedSemaphorePermit>,
}

/// The budget is spent; the body was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetExhausted {
    /// The whole budget, in bytes.
    pub budget_bytes: usize,
}

impl BodyBudget {
    /// A budget of `total_bytes`.
    pub fn new(total_bytes: usize) -> Self {
        BodyBudget { units: Arc::new(Semaphore::new(units_of(total_bytes).max(1) as usize)), total_bytes }
    }

    /// Admits a body of `declared` bytes (`None`: undeclared, so up to
    /// `max_body_bytes`) if the budget has room for it now.
    pub fn admit(&self, declared: Option<usize>, max_body_bytes: usize) -> Result<BodyAdmission, BudgetExhausted> {
        match declared {
            Some(bytes) if bytes <= SMALL_BODY_BYTES => Ok(BodyAdmission { _permit: None }),
            _ => {
                let weight = units_of(declared.unwrap_or(max_body_bytes).min(max_body_bytes));
                match self.units.clone().try_acquire_many_owned(weight) {
                    Ok(permit) => Ok(BodyAdmission { _permit: Some(permit) }),
                    Err(_) => Err(BudgetExhausted { budget_bytes: self.total_bytes }),
                }
            }
        }
    }
}

fn units_of(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_bodies_share_the_budget_and_small_ones_are_not_counted() {
        let budget = BodyBudget::new(300 * 1024);
        let first = budget.admit(Some(200 * 1024), 1 << 20).unwrap();
        assert!(budget.admit(Some(200 * 1024), 1 << 20).is_err());
        assert!(budget.admit(None, 1 << 20).is_err(), "undeclared counts as the body limit");
        assert!(budget.admit(Some(1000), 1 << 20).is_ok());
        drop(first);
        assert!(budget.admit(Some(200 * 1024), 1 << 20).is_ok());
    }
}
