//! N-bounded average FP rates (FP paper §III): the worst-case formula f_w (eq. 1), the
//! oracle user's average f_o (eq. 2) and the real user's lower bound f_a (eq. 3).
//!
//! All three use eq. 1, the classic colliding-hash estimate of the chance that a message
//! finds its k bits set after n insertions. By Jensen's inequality eq. 1 underestimates
//! E[(B_n/M)^k] (B_n the bits set), and a real user's R_i (false positives between
//! bit-setting insertions, mean p/(1-p)) is convex in p, so f_o and f_a are lower bounds
//! of the colliding filter's count-instance rate. For distinct hashes C(b,k)/C(M,k) <=
//! (b/M)^k and more bits are set per message, so the "bound" is not proven there.
//!
//! Our N-bounded trigger recycles when the bit-setting insertions of a cycle exceed N.
//! Non-retaining, a cycle's bit-setting arrivals find 0, 1, ..., N messages held (N + 1
//! of them: the paper's N is our N + 1); retaining, the cycle starts with the recycling
//! message held, so they find 1, ..., N. [`held_range`] gives that range.

use serde::Serialize;

use rbf_foundations::error::Result;
use rbf_foundations::progress::Progress;

/// Terms of the f_a sum between two progress reports (a few milliseconds of work).
pub const PROGRESS_TERMS: u64 = 1 << 20;

/// Eq. 1: [1 - (1 - 1/M)^{kn}]^k, the chance that a message finds its k (colliding) bits
/// set after n messages were inserted into M bits. Computed with ln_1p / exp_m1 so it
/// keeps its precision for M up to 2^40 and tiny n.
pub fn worst_case(m: u64, k: u32, n: u64) -> f64 {
    let filled = -((k as f64) * (n as f64) * (-1.0 / m as f64).ln_1p()).exp_m1();
    filled.powi(k as i32)
}

/// Messages held when the bit-setting arrivals of one cycle come, for our trigger
/// "recycle when more than `max_inserts` bit-setting insertions were made".
pub fn held_range(max_inserts: u64, retaining: bool) -> (u64, u64) {
    if retaining {
        (1, max_inserts)
    } else {
        (0, max_inserts)
    }
}

/// N-bounded predictions for one filter array.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NBoundedPrediction {
    /// f_w: eq. 1 for the last bit-setting arrival of a cycle (the most messages held).
    pub fp_worst_case: f64,
    /// f_o (eq. 2): mean of eq. 1 over the bit-setting arrivals of a cycle.
    pub fp_oracle: f64,
    /// f_a (eq. 3): the real user's rate with p_i replaced by eq. 1 (a lower bound for
    /// colliding hashes).
    pub fp_actual_lower_bound: f64,
    /// Expected arrivals per cycle under f_a's model: bit-setting arrivals plus
    /// sum f_i / (1 - f_i) false positives (a lower bound, as for f_a).
    pub expected_messages_per_cycle: f64,
    /// Bit-setting arrivals per cycle.
    pub bit_setting_per_cycle: u64,
}

/// Sums of f_o and f_a over held counts lo..=hi, grown one count at a time so the
/// capacity search can scan N without recomputing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NBoundedSums {
    pub count: u64,
    pub f: f64,
    pub odds: f64,
    pub last: f64,
}

impl NBoundedSums {
    pub fn add(&mut self, f: f64) {
        self.count += 1;
        self.f += f;
        self.odds += f / (1.0 - f);
        self.last = f;
    }

    pub fn oracle(&self) -> f64 {
        self.f / self.count as f64
    }

    /// Eq. 3: sum f_i/(1-f_i) / sum (1 + f_i/(1-f_i)).
    pub fn actual(&self) -> f64 {
        if self.odds.is_infinite() {
            return 1.0;
        }
        self.odds / (self.count as f64 + self.odds)
    }

    pub fn messages(&self) -> f64 {
        self.count as f64 + self.odds
    }
}

/// f_w, f_o and f_a for an array of `m` bits whose cycles' bit-setting arrivals find
/// `held.0..=held.1` messages (see [`held_range`]).
/// One term per held count: long for a large N, so it reports progress (with an
/// estimate up front) and stops on Ctrl-C.
pub fn predict_n_bounded(m: u64, k: u32, held: (u64, u64)) -> Result<NBoundedPrediction> {
    let mut s = NBoundedSums::default();
    let terms = held.1.saturating_sub(held.0) + 1;
    let progress = if terms >= PROGRESS_TERMS {
        Progress::new(
            format!("FP model (eqs. 1-3), N = {}", held.1),
            terms as f64,
            "terms",
        )
    } else {
        Progress::hidden()
    };
    for n in held.0..=held.1 {
        if (n - held.0) % PROGRESS_TERMS == PROGRESS_TERMS - 1 {
            progress.step((n - held.0) as f64)?;
        }
        s.add(worst_case(m, k, n));
    }
    Ok(NBoundedPrediction {
        fp_worst_case: s.last,
        fp_oracle: s.oracle(),
        fp_actual_lower_bound: s.actual(),
        expected_messages_per_cycle: s.messages(),
        bit_setting_per_cycle: s.count,
    })
}
