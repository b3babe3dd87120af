//! False-positive models of recycling Bloom filters (the FP paper, §III-V).
//!
//! * [`renewal`]: the bit-count chain of one cycle, walked state by state with O(k)
//!   memory; every sigma-bounded quantity below is a sum over its visits.
//! * [`sigma`]: f_sigma^1 (eqs. 15-18), E[N_0] (eqs. 20-23), f_sigma^2 (eqs. 24-26).
//! * [`nbounded`]: f_w, f_o, f_a (eqs. 1-3) for N-bounded filters.
//! * [`closed_form`]: eq. 19, the k = 1 closed form, an exact check of the chain.
//! * [`capacity`]: message capacity for a target rate and the best k (§V-B, §V-C), and
//!   the largest sigma meeting a target for a given filter ([`sigma_for_target`]).
//! * [`predict`]: a [`rbf_data::filter::FilterConfig`] in, all of the above out.
//!
//! The four variants of the paper (colliding or distinct hashes x retaining or not)
//! share the chain: hashing lives in [`crate::model::tau::Transitions`] and the
//! recycle target in the renewal's start distribution.

pub mod capacity;
pub mod closed_form;
pub mod nbounded;
pub mod predict;
pub mod renewal;
pub mod sigma;

pub use capacity::{
    capacity, sigma_for_target, sigma_for_target_tracked, sigma_states, Capacity, CapacityQuery,
    KCapacity, SigmaCapacity,
};
pub use nbounded::{held_range, predict_n_bounded, worst_case, NBoundedPrediction};
pub use predict::{predict, FpPrediction};
pub use renewal::{Renewal, Visit};
pub use sigma::{predict_sigma, SigmaPrediction};

#[cfg(test)]
mod tests;
