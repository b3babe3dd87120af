//! False-negative rates of recycling Bloom filters (the FN paper): Markov-chain bounds
//! and approximations (§4) and the renewal upper bound (§5), for a workload given as
//! (Q, p_r, placement zeta).
//!
//! Two models share one vocabulary ([`method`]: the methods, their claims and results)
//! and a few kernels, and this module puts them behind one facade ([`FnModel`]):
//!
//! * [`renewal`]: the renewal upper bound, one and two phases (eqs. 16-28): its engine,
//!   inputs ([`renewal::input`]), a cycle's bit process ([`renewal::process`],
//!   [`renewal::inscount`]), the running sums ([`renewal::cycle`]), the two-phase lagged
//!   sums ([`renewal::correlate`]) and the certified tolerance mode
//!   ([`renewal::certified`]);
//! * [`markov`]: steady state and rates of the Markov chain, one and two phases
//!   (eqs. 12-15), on the bit-measuring profile ([`markov::profile`], eqs. 1-4) with
//!   per-state non-repeat estimates ([`markov::nonrepeat`], eqs. 5-11);
//! * shared kernels: [`bitdist`] (the bit-count distribution, eqs. 1, 19), [`nbounded`]
//!   (the same for an N-bounded filter, §4.1.2), [`powersums`] (sum_j q_j (1 - q_j)^l
//!   in time independent of D, eqs. 6, 10), [`disabling`] and its kernel [`disabling_step`] (eq. 24)
//!   (messages drawn or new in the current cycle, eq. 24, appendix G.2), `simd` (the
//!   kernels' run-time choice of vector width, same results at each).
//!
//! Modelled variants: sigma- or N-bounded ([`nbounded`], §4.1.2), colliding or distinct
//! hashing, retaining or not, one phase, or two phases with copy-over (the FN paper's analysis assumes copy-over
//! and, for independence of the halves, rotating hash positions: appendix G.1).

// Recursions over bit counts, ranks and states read best with explicit indices.
#![allow(clippy::needless_range_loop)]

pub mod bitdist;
pub mod disabling;
pub mod disabling_step;
pub mod markov;
pub mod method;

/// The FN models' truncation unless a caller says otherwise: states and arrivals with
/// probability below it are dropped (the renewal engine adds what it drops to its
/// bound; the Markov chains report it).
pub const DEFAULT_EPS: f64 = 1e-10;
pub mod nbounded;
pub mod powersums;
pub mod renewal;
// The vector level chosen at run time lives with the foundations (the replay uses it too).
pub(crate) use crate::simd;

use crate::error::{Error, Result};
use crate::filter::{FilterConfig, Trigger};
use crate::model::tau::Transitions;
use crate::workload::{ReuseProfile, Workload};

pub use markov::profile::Profile;
pub use markov::ChainRates;
pub use method::{
    Claim, FnReport, Guarantee, Look, Method, MethodEntry, MethodResult, Reads, METHODS,
};
pub use renewal::{RenewalMode, RenewalOptions, RenewalResult};

/// Probability of a still-running cycle at the renewal engine's stop above which, with
/// p_r = 1, the model's cycle lengths no longer describe a filter with fixed hash
/// positions ([`FnModel::renewal_guarantee`]).
pub const UNENDING_CYCLES: f64 = 1e-6;

/// A filter and workload ready for the FN models.
#[derive(Clone, Debug)]
pub struct FnModel {
    /// Transitions of one filter array (M bits, or M/2 for two phases).
    pub t: Transitions,
    pub sigma: u64,
    /// N of an N-bounded filter (then `sigma` is unused).
    pub max_inserts: Option<u64>,
    pub retaining: bool,
    pub phases: u8,
    pub independent_halves: bool,
    pub q: Vec<f64>,
    pub zeta: Vec<f64>,
    pub p_r: f64,
    /// An interval of p_r (the conservative end of a fit): the renewal bound then holds
    /// for every p_r in it ([`renewal::cycle::Draws`]); the other methods use `p_r`.
    pub p_r_interval: Option<(f64, f64)>,
    /// A measured reuse profile (fitted workloads): the renewal bound reads U_j from it.
    pub reuse: Option<ReuseProfile>,
    /// Truncation: states or arrivals beyond probability eps are dropped (§4.1.3, §5.1).
    pub eps: f64,
    /// Q's rates for the power sums, built when drop-pins or markov-swr first asks and
    /// then shared by both (one logarithm per rank and the groups' moments, once): of
    /// `q` as built (nothing changes a model's `q` after [`FnModel::new`]).
    rates: std::sync::OnceLock<std::sync::Arc<powersums::Rates>>,
    /// The renewal bound's per-insertion sums when [`FnModel::share_renewal_bits`]
    /// built them: shared by the model's clones (they depend on the filter only).
    renewal_bits: Option<std::sync::Arc<renewal::SharedBits>>,
}

impl FnModel {
    /// Checks that the variant is one the FN models cover; errors name the setting.
    pub fn new(filter: &FilterConfig, workload: &Workload, eps: f64) -> Result<FnModel> {
        filter.validate()?;
        workload.validate()?;
        let (sigma, max_inserts) = match filter.trigger()? {
            Trigger::Sigma(s) => (s, None),
            Trigger::MaxInserts(n) => {
                // N insertions that set bits need at least N bits; the joint law of
                // (insertions, bits) has O(N^2 k) cells, so N is kept moderate.
                if n >= filter.half_memory() || n > 20_000 {
                    return Err(Error::config(
                        "max_inserts",
                        format!(
                            "the N-bounded FN models need N below the bits per array ({}) and at most 20000; found {n}",
                            filter.half_memory()
                        ),
                    ));
                }
                (u64::from(filter.hashes), Some(n))
            }
        };
        // Bit-count distributions over up to sigma states (eq. 1's chain, a few arrays).
        crate::resources::check_memory(
            &format!("the FN models' bit-count distribution for sigma = {sigma}"),
            32.0 * sigma as f64,
        )?;
        if sigma < u64::from(filter.hashes) {
            return Err(Error::config(
                "sigma",
                format!(
                    "the FN models need sigma >= k (= {}), found {sigma}",
                    filter.hashes
                ),
            ));
        }
        if filter.phases == 2 && !filter.copy_over {
            return Err(Error::config(
                "copy_over",
                "the FN paper's two-phase analysis assumes copy-over (§4.2.7); --no-copy-over is not modelled",
            ));
        }
        if workload.p_repeat_interval.is_some() && workload.reuse.is_none() {
            return Err(Error::config(
                "p_repeat_interval",
                "an interval of p_r needs a measured reuse profile (`reuse`): with Q and zeta the sequence U_j itself depends on p_r",
            ));
        }
        check_eps(eps)?;
        Ok(FnModel {
            t: Transitions::new(filter.half_memory(), filter.hashes, filter.hashing),
            sigma,
            max_inserts,
            retaining: filter.retaining,
            phases: filter.phases,
            independent_halves: filter.independent_halves,
            q: workload.repeat_distribution()?.into(),
            zeta: workload.placement_distribution()?.into(),
            p_r: workload.p_repeat,
            p_r_interval: workload.p_repeat_interval.map(|[l, h]| (l, h)),
            reuse: workload.reuse.clone(),
            eps,
            rates: std::sync::OnceLock::new(),
            renewal_bits: None,
        })
    }

    /// The renewal bound (§5). Errors when sigma + k reaches the bits per array.
    pub fn renewal(&self, options: RenewalOptions) -> Result<RenewalResult> {
        renewal::renewal(&self.renewal_input(), options)
    }

    fn renewal_input(&self) -> renewal::RenewalInput<'_> {
        renewal::RenewalInput {
            t: self.t,
            sigma: self.sigma,
            max_inserts: self.max_inserts,
            retaining: self.retaining,
            phases: self.phases,
            q: &self.q,
            zeta: &self.zeta,
            p_r: self.p_r,
            p_r_interval: self.p_r_interval,
            reuse: self.reuse.as_ref(),
            shared_bits: self.renewal_bits.as_deref(),
        }
    }

    /// Builds the renewal bound's per-insertion sums for `options` now, to be shared
    /// by this model's clones: renewal computations that differ only in p_r, its
    /// interval or U then skip building them (the same values; a clone whose filter
    /// fields or `tiny` differ builds its own).
    pub fn share_renewal_bits(&mut self, options: RenewalOptions) -> Result<()> {
        let shared = renewal::SharedBits::build(&self.renewal_input(), options)?;
        self.renewal_bits = shared.map(std::sync::Arc::new);
        Ok(())
    }

    /// The bit-measuring profile of the Markov chain (§4.1.1); an N-bounded one shows
    /// its progress when `progress` is set and stops at Ctrl-C or SIGTERM.
    pub fn profile(&self, progress: bool) -> Result<Profile> {
        match self.max_inserts {
            Some(n) => Profile::n_bounded(self.t, n, self.retaining, self.eps, progress),
            None => Ok(Profile::new(self.t, self.sigma, self.retaining, self.eps)),
        }
    }

    /// Per-state non-repeat estimates for a Markov method (None for the renewal model,
    /// which has no states).
    pub fn estimates(&self, method: Method, profile: &Profile) -> Option<Vec<f64>> {
        let states = profile.start..=profile.last();
        Some(match method {
            Method::MarkovLower => markov::nonrepeat::lower(&self.q, states),
            Method::MarkovSwr => markov::nonrepeat::with_replacement_of(self.power_sums(), states),
            Method::MarkovUniform => markov::nonrepeat::uniform(self.q.len(), states),
            Method::MarkovBiuniform => markov::nonrepeat::biuniform(&self.q, states).0,
            Method::DropPins => markov::nonrepeat::drop_pins_of(self.power_sums(), states),
            Method::MarkovDisabling => {
                markov::disabling_estimates(&self.q, &self.zeta, self.p_r, profile)
            }
            Method::Renewal => return None,
        })
    }

    /// Power sums of Q, on rates built once per model ([`powersums::Rates`]).
    fn power_sums(&self) -> powersums::PowerSums {
        let rates = self
            .rates
            .get_or_init(|| std::sync::Arc::new(powersums::Rates::new(&self.q, &self.q)));
        powersums::PowerSums::from_rates(rates.clone())
    }

    /// Rates of the Markov chain for a method (None for the renewal model).
    pub fn markov(&self, method: Method, profile: &Profile) -> Option<ChainRates> {
        let f = self.estimates(method, profile)?;
        Some(if self.phases == 2 {
            markov::two_phase(profile, &f, self.p_r)
        } else {
            markov::one_phase(profile, &f, self.p_r)
        })
    }

    /// What each method's number is for this filter and workload, under the FN
    /// paper's arrival model with this workload (whether the workload describes a
    /// trace is the caller's to say: [`crate::compare`] calls a bound on a fitted
    /// workload a bound for the fitted model).
    pub fn guarantee(&self, method: Method) -> Guarantee {
        self.variant_guarantee(method)
    }

    /// The renewal bound's guarantee once it is computed: without new arrivals, a cycle
    /// the engine saw still running when the messages ran out is, in the model, a cycle
    /// whose messages' bits happened to stay at or below sigma and that never ends
    /// (each cycle draws fresh hash positions). A real filter's hash positions are fixed:
    /// its cycles either all end or never do, so the model's cycle lengths, and with
    /// them this number, are not a bound for it (measured: 1.0e-2 against an observed
    /// 3.0e-2 at D = 1000, M = 10 560, k = 8, sigma = 5640, p_r = 1).
    pub fn renewal_guarantee(&self, r: &RenewalResult) -> Guarantee {
        self.renewal_guarantee_truncated(r.truncated_mass)
    }

    /// [`FnModel::renewal_guarantee`] from the largest probability of a still-running
    /// cycle at the engine's stop over the computations behind a bound (several for a
    /// bound over an interval of p_r, which reaches p_r = 1 when its high end does).
    pub fn renewal_guarantee_truncated(&self, truncated_mass: f64) -> Guarantee {
        let mut g = self.guarantee(Method::Renewal);
        let high = self.p_r_interval.map_or(self.p_r, |(_, h)| h.max(self.p_r));
        if high >= 1.0 && truncated_mass > UNENDING_CYCLES {
            g.guaranteed = false;
            g.note = format!(
                "a bound for the model, not for a real filter: with p_r = 1 the model's cycles were still running with probability {:.2} when the D messages ran out (their bits stayed at or below sigma); the model draws fresh hash positions per cycle, a real filter's are fixed, so its cycles end far more often than the model's and its FN can exceed this number ({})",
                truncated_mass, g.note
            );
        }
        g
    }

    fn variant_guarantee(&self, method: Method) -> Guarantee {
        let repeats_only = self.p_r >= 1.0;
        let one = self.phases == 1;
        // The claim is the method's own (its entry of METHODS); what varies with the
        // filter and the workload is whether it is proven.
        let g = |guaranteed, note: &str| Guarantee {
            claim: method.claim(),
            guaranteed,
            note: note.to_string(),
        };
        match method {
            Method::Renewal if one && self.max_inserts.is_some() => g(true,
                "renewal bound, N-bounded: one more message adds at most one bit-setting insertion (the N + 1 analogue of Theorem 7), appendix E.1, window error added",
            ),
            Method::Renewal if one => g(true,
                "renewal bound: Theorem 7 and appendix E.1, window error added",
            ),
            Method::Renewal if self.independent_halves => g(true,
                "two-phase renewal bound (eqs. 27-28); assumes copy-over and independent halves",
            ),
            Method::Renewal => g(false,
                "eqs. 27-28 assume independent hash positions in the two halves (appendix G.1); this filter reuses them",
            ),
            Method::MarkovLower if one && repeats_only => g(true,
                "lower bound for repeat draws (eq. 5, Theorem 3)",
            ),
            Method::MarkovLower => g(false,
                if one {
                    "eq. 5 is argued for repeat draws only and p_r < 1"
                } else {
                    "the two-phase product form (eq. 15) ignores the correlation of the halves"
                },
            ),
            Method::MarkovSwr | Method::MarkovUniform | Method::MarkovBiuniform
                if one && repeats_only =>
            {
                g(true,
                    "upper bound for repeat draws (Theorems 3-6, appendix B)",
                )
            }
            Method::MarkovSwr | Method::MarkovUniform | Method::MarkovBiuniform => g(false,
                if one {
                    "the Markov bounds are proven for repeat draws only and p_r < 1"
                } else {
                    "the two-phase product form (eq. 15) multiplies per-half averages, which under-estimates the joint miss probability"
                },
            ),
            Method::DropPins => g(false, "average-case approximation (eqs. 10-11)"),
            Method::MarkovDisabling => g(false,
                "mean-field approximation with new arrivals (appendix G.2)",
            ),
        }
    }

    /// Runs the requested methods. The profile is computed once for all Markov methods.
    pub fn evaluate(&self, methods: &[Method], options: RenewalOptions) -> Result<FnReport> {
        let mut results = Vec::new();
        let mut renewal = None;
        let mut profile: Option<Profile> = None;
        for &m in methods {
            let t = std::time::Instant::now();
            let chain = if m == Method::Renewal {
                None
            } else {
                if profile.is_none() {
                    profile = Some(self.profile(options.progress)?);
                }
                profile.as_ref().and_then(|p| self.markov(m, p))
            };
            let (fn_rate, fp_rate) = match chain {
                Some(r) => (r.fn_rate, r.fp_rate),
                None => {
                    let r = self.renewal(options)?;
                    renewal = Some(r);
                    (r.fn_upper, r.fp_rate)
                }
            };
            results.push(MethodResult {
                method: m,
                fn_rate,
                fp_rate,
                guarantee: match (m, &renewal) {
                    (Method::Renewal, Some(r)) => self.renewal_guarantee(r),
                    _ => self.guarantee(m),
                },
                seconds: t.elapsed().as_secs_f64(),
            });
        }
        Ok(FnReport {
            results,
            renewal,
            markov_states: profile.as_ref().map(|p| p.len()),
        })
    }
}

/// eps, the truncation of the FN models (appendix E.1), in (0, 0.01): checked wherever
/// it is read (flags, configs), before any trace is read, with the models' own rule.
pub fn check_eps(eps: f64) -> Result<()> {
    if eps > 0.0 && eps < 1e-2 {
        Ok(())
    } else {
        Err(Error::config(
            "eps",
            format!("must lie in (0, 0.01), found {eps}"),
        ))
    }
}
