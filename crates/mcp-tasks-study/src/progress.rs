//! Progress reporting, so a front end can draw a bar without the study
//! knowing how (the CLI uses indicatif; tests and the library pass nothing).

/// Told how much work a run has and how much is done.
pub trait Progress: Send + Sync {
    /// A new stage of `total` steps begins.
    fn stage(&self, label: &str, total: u64);
    /// `n` more steps of the current stage are done.
    fn advance(&self, n: u64);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn stage(&self, _label: &str, _total: u64) {}
    fn advance(&self, _n: u64) {}
}
