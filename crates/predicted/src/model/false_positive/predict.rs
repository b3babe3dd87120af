//! One entry point: a filter configuration in, the FP paper's predictions out.

use serde::Serialize;

use super::nbounded::{held_range, predict_n_bounded, NBoundedPrediction};
use super::renewal::Renewal;
use super::sigma::{predict_sigma, SigmaPrediction};
use crate::model::tau::Transitions;
use rbf_data::filter::{FilterConfig, Hashing, Trigger};
use rbf_foundations::error::Result;

/// Predicted average FP rates of one filter configuration, for new messages arriving
/// (the FP paper's count-instance measure: each message's first arrival in a cycle).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FpPrediction {
    pub filter: FilterConfig,
    pub description: String,
    /// sigma-bounded filters: f_sigma^1 or f_sigma^2 and E[N_0].
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<SigmaPrediction>,
    /// N-bounded filters: f_w, f_o, f_a.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub n_bounded: Option<NBoundedPrediction>,
    /// Where the model's assumptions do not hold exactly for this configuration.
    pub notes: Vec<String>,
}

/// What every prediction's rate is (the last of its notes).
pub const COUNT_INSTANCE: &str = "rates are per first-in-cycle arrival (count-instance); arrivals already recorded never set bits and are not counted";

/// Predicts the FP rates of `config` (validated first).
pub fn predict(config: &FilterConfig) -> Result<FpPrediction> {
    config.validate()?;
    let m = config.half_memory();
    let two = config.phases == 2;
    let mut notes = Vec::new();
    let (sigma, n_bounded) = match config.trigger()? {
        Trigger::Sigma(s) => {
            let renewal = Renewal::new(
                Transitions::new(m, config.hashes, config.hashing),
                config.retaining,
            );
            let p = predict_sigma(&renewal, s, config.phases, config.copy_over)?;
            if two && !config.independent_halves {
                notes.push(
                    "two phases with shared bit positions: f_sigma^2 treats the halves as independent (eq. 26); exact only with independent halves".into(),
                );
                if !config.copy_over && config.hashes == 1 && 2 * s + 1 >= m {
                    notes.push(format!(
                        "NOT VALID HERE: with k = 1, shared positions and no copy-over a message whose bit is set in the frozen half is never inserted, so the active half holds at most {m} - {} bits <= sigma: after its first recycle the filter never recycles again and its FP rate tends to 1",
                        s + 1
                    ));
                }
            }
            (Some(p), None)
        }
        Trigger::MaxInserts(n) => {
            if config.hashing == Hashing::Distinct {
                notes.push(
                    "f_o and f_a use eq. 1 (colliding hashes); for distinct hashes they are estimates, not proven lower bounds".into(),
                );
            }
            if two {
                notes.push(
                    "N-bounded formulas describe one array of M/2 bits; the frozen half's false positives are not included".into(),
                );
            }
            let p = predict_n_bounded(m, config.hashes, held_range(n, config.retaining))?;
            (None, Some(p))
        }
    };
    notes.push(COUNT_INSTANCE.into());
    Ok(FpPrediction {
        filter: config.clone(),
        description: config.describe(),
        sigma,
        n_bounded,
        notes,
    })
}
