//! What a model cannot answer for a filter and workload whose settings each lie in
//! their ranges: the combination leaves the model's domain (a filter that stops
//! recycling, cycles that never end). No single setting is at fault, so these are not
//! [`rbf_foundations::error::Setting`]s; the texts say which setting to move.

/// A filter and workload outside what the models cover, found while computing.
#[derive(Debug, thiserror::Error)]
pub enum OutsideModel {
    /// The FP renewal pass reached a state from which no insertion sets a bit: all
    /// `bits` of an array are set, so the filter never recycles again and its rates
    /// have no steady state to average over.
    #[error(
        "the filter can fill all {bits} bits, after which no message sets a bit and it never recycles again (sigma too close to M for k = {k})"
    )]
    FillsForever {
        /// Bits per array (M).
        bits: u64,
        /// Hash functions (k).
        k: u32,
    },

    /// Two phases without copy-over: the frozen half can be completely full, and then
    /// arrivals found in it never advance the cycle, so the cycle's expected length
    /// (and the FP rate averaged over it) is infinite.
    #[error(
        "the frozen half can be completely full, so without copy-over the active half may never fill: lower sigma or use copy-over"
    )]
    FrozenHalfFull,

    /// The renewal bound's bit process (the sigma + k or N + 1 process) still holds
    /// `mass` of its probability after `limit` insertions: following it further would
    /// allocate without bound, so the bound is refused.
    #[error(
        "the renewal bound's bit process is still running after {limit} insertions (mass {mass:.3e} left); sigma is too close to the bits per array"
    )]
    BitProcessRunning {
        /// Insertions followed.
        limit: usize,
        /// Probability of the process still running.
        mass: f64,
    },

    /// The two-phase renewal bound with p_r = 1 once Q is exhausted: no new message
    /// arrives, so a cycle whose `d` messages' bits stay below sigma never ends; `mass`
    /// is the probability of one still running after `arrivals` arrivals.
    #[error(
        "the two-phase renewal bound needs cycles that end: with p_r = 1 the D = {d} messages' bits leave a cycle running with probability {mass:.2e} after {arrivals} arrivals, and no new message ever sets more (use one phase, or a workload with new arrivals)"
    )]
    CyclesNeverEnd {
        /// Distinct messages (D).
        d: usize,
        /// Probability of a cycle still running.
        mass: f64,
        /// Arrivals followed.
        arrivals: u64,
    },
}

// A request the models cannot serve as given: exit status 2, as a bad setting.
rbf_foundations::layer_error!(OutsideModel => rbf_foundations::error::Kind::Request);

#[cfg(test)]
mod tests {
    use super::OutsideModel;
    use rbf_foundations::error::{exit_status, Error};

    #[test]
    fn each_situation_keeps_its_numbers_formats_and_exit_status() {
        let cases = [
            (
                OutsideModel::BitProcessRunning {
                    limit: 1000,
                    mass: 0.0123456,
                },
                "the renewal bound's bit process is still running after 1000 insertions (mass 1.235e-2 left); sigma is too close to the bits per array",
            ),
            (
                OutsideModel::CyclesNeverEnd {
                    d: 10,
                    mass: 0.5,
                    arrivals: 7,
                },
                "the two-phase renewal bound needs cycles that end: with p_r = 1 the D = 10 messages' bits leave a cycle running with probability 5.00e-1 after 7 arrivals, and no new message ever sets more (use one phase, or a workload with new arrivals)",
            ),
            (
                OutsideModel::FillsForever { bits: 64, k: 4 },
                "the filter can fill all 64 bits, after which no message sets a bit and it never recycles again (sigma too close to M for k = 4)",
            ),
        ];
        for (situation, text) in cases {
            let e = Error::from(situation);
            assert_eq!(e.to_string(), text);
            assert_eq!(e.exit_status(), exit_status::USAGE);
            assert!(e.layer::<OutsideModel>().is_some());
        }
    }
}
