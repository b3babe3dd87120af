//! The per-insertion sums one renewal computation builds and others reuse
//! ([`SharedBits`]), apart from the bit process that builds them
//! ([`super::process`]: `SharedBits::build`), so that the computation's input
//! ([`super::input`]) can carry them without importing the process.

use super::inscount::Decomposed;
use crate::model::tau::Transitions;

/// The per-insertion sums of a renewal computation, built once and shared by the
/// computations that differ only in Q, U or p_r (the worst case over an interval of
/// p_r: [`super::worst`]).
pub struct SharedBits {
    pub(super) key: BitsKey,
    pub(super) bits: Decomposed,
}

impl std::fmt::Debug for SharedBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBits")
            .field("key", &self.key)
            .finish()
    }
}

/// What the per-insertion sums depend on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct BitsKey {
    pub(super) t: Transitions,
    pub(super) sigma: u64,
    pub(super) max_inserts: Option<u64>,
    pub(super) retaining: bool,
    pub(super) tiny: f64,
}
