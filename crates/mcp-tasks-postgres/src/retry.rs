//! Running a transaction again when PostgreSQL aborted it to break a
//! deadlock (or a serialization conflict): nothing of it was kept, so
//! running it again is safe.

use std::future::Future;

use crate::failure::Failure;

/// Most runs of one transaction.
const MAX_RUNS: usize = 5;

/// Runs `transaction` until it succeeds, fails for another reason, or has
/// run [`MAX_RUNS`] times.
pub(crate) async fn retrying<T, F, Fut>(mut transaction: F) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let mut runs = 1;
    loop {
        match transaction().await {
            Err(e) if e.is_retryable() && runs < MAX_RUNS => {
                tracing::debug!("transaction aborted as a deadlock victim; running it again");
                runs += 1;
            }
            result => return result,
        }
    }
}
