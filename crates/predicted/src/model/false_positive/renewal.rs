//! The one mechanism behind every sigma-bounded FP model: a renewal (regenerative)
//! pass over the bit-count chain of one cycle.
//!
//! A cycle starts right after a recycle, in state 0 (non-retaining) or wherever the
//! retained insertion left the empty filter (retaining). Let v_i be the expected number
//! of arrivals that find i bits set during one cycle. An arrival at i stays at i with
//! probability tau(i, i) (it sets no bit: a false positive, eq. 17), so each entry into
//! i is followed by a geometric run of mean 1 / (1 - tau(i, i)), and
//!
//! ```text
//! v_i = (init_i + sum_{j = i-k}^{i-1} v_j tau(j, i)) / (1 - tau(i, i))
//! ```
//!
//! where init is delta_0 or the empty filter's row. This is eq. 15 (non-retaining) and
//! replaces the linear system of eq. 16 (retaining): by renewal-reward, the stationary
//! distribution is pi = v / sum v, and sum v is E[N_0] (eqs. 20-23). Rows are produced
//! on demand and pushed forward into a ring of k + 1 pending inflows, so a pass holds
//! O(k) numbers whatever sigma is.
//!
//! For states i <= sigma, v_i does not depend on sigma (only the exits above sigma do),
//! so one pass with no cutoff serves every sigma at once: the capacity search uses that.

use std::ops::ControlFlow;

use crate::model::domain::OutsideModel;
use crate::model::tau::Transitions;
use rbf_foundations::error::Result;
use rbf_foundations::progress::Progress;

/// One state of the pass.
/// States of the chain between two progress reports (a few milliseconds of work).
const PROGRESS_STATES: u64 = 1 << 18;

/// Passes shorter than this many states finish too fast to report progress.
pub const PROGRESS_FROM: u64 = 1 << 22;

#[derive(Clone, Copy, Debug)]
pub struct Visit<'a> {
    /// i: bits set when the arrival comes.
    pub state: u64,
    /// v_i: expected arrivals per cycle at state i.
    pub visits: f64,
    /// Raw row i: `row[d]` = P(i -> i + d) for one unrecorded message; `row[0]` is the
    /// chance it sets no bit, i.e. rho(i) of eq. 17.
    pub row: &'a [f64],
    /// 1 - tau(i, i), summed from the row so it keeps full precision when tau(i, i) ~ 1.
    pub leave: f64,
    /// `pending[d - 1]`: expected entries per cycle into state i + d from states <= i
    /// (and from the start distribution). Without a cutoff, for threshold sigma = i these
    /// are the cycle's exits to each j > sigma: the frozen half's distribution (eq. 24).
    pub pending: &'a [f64],
}

impl Visit<'_> {
    /// rho(i) (eq. 17 as corrected in docs/MODEL.md): (i/M)^k or C(i,k)/C(M,k).
    pub fn rho(&self) -> f64 {
        self.row[0]
    }
}

/// The bit-count chain of one cycle: transitions plus where a recycle restarts it.
#[derive(Clone, Debug)]
pub struct Renewal {
    pub transitions: Transitions,
    /// Distribution of the state a cycle starts in, over states 0..=k.
    init: Vec<f64>,
}

impl Renewal {
    /// `retaining`: the recycling message is inserted into the emptied filter, so a cycle
    /// starts from the empty filter's row (eq. 10 colliding, eq. 14 distinct); otherwise
    /// it starts empty (eqs. 5, 12).
    pub fn new(transitions: Transitions, retaining: bool) -> Self {
        let mut init = vec![0.0; transitions.k as usize + 1];
        if retaining {
            transitions.row(0, &mut init);
        } else {
            init[0] = 1.0;
        }
        Renewal { transitions, init }
    }

    /// Highest state a cycle can start in.
    pub fn init_top(&self) -> u64 {
        self.init.iter().rposition(|p| *p > 0.0).unwrap_or(0) as u64
    }

    /// Runs the pass over states 0..=top and calls `f` for each one, in order.
    ///
    /// With `cutoff = Some(sigma)`, insertions ending above sigma leave the cycle (our
    /// trigger: more than sigma bits set after a bit-setting insertion), and states above
    /// sigma are visited only when the retained insertion starts there (sigma < k).
    /// With `None`, nothing leaves: v_i is exact for every sigma >= i, which is what a
    /// sweep over sigma needs. `f` may stop the pass early. The states done are
    /// reported to `progress` (which also stops the pass after Ctrl-C).
    pub fn pass<F>(&self, cutoff: Option<u64>, progress: &Progress, mut f: F) -> Result<()>
    where
        F: FnMut(&Visit) -> ControlFlow<()>,
    {
        let t = &self.transitions;
        let k = t.k as usize;
        let top = match cutoff {
            Some(sigma) => sigma.max(self.init_top()).min(t.m),
            None => t.m,
        };
        let internal = cutoff.unwrap_or(t.m);
        // inflow[d]: expected entries into state i + d; shifted down one per state so
        // the window always starts at the current state.
        let mut inflow = vec![0.0; k + 2];
        inflow[..self.init.len()].copy_from_slice(&self.init);
        let mut row = vec![0.0; k + 1];
        for i in 0..=top {
            if i % PROGRESS_STATES == 0 && i > 0 {
                progress.advance(PROGRESS_STATES as f64)?;
            }
            let entering = inflow[0];
            t.row(i, &mut row);
            let leave: f64 = row[1..].iter().sum();
            let visits = if entering == 0.0 {
                0.0
            } else if leave > 0.0 {
                entering / leave
            } else {
                return Err(OutsideModel::FillsForever { bits: t.m, k: t.k }.into());
            };
            // Exits above the cutoff are dropped (those insertions recycle).
            let reach = internal.saturating_sub(i).min(k as u64) as usize;
            for d in 1..=k {
                let push = if d <= reach { visits * row[d] } else { 0.0 };
                inflow[d - 1] = inflow[d] + push;
            }
            inflow[k] = 0.0;
            let v = Visit {
                state: i,
                visits,
                row: &row,
                leave,
                pending: &inflow[..k],
            };
            if f(&v).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// pi over states 0..=top for threshold sigma (eqs. 15-16): O(sigma) memory, for
    /// tests and small tables; the models themselves never hold it.
    pub fn stationary(&self, sigma: u64) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        self.pass(Some(sigma), &Progress::hidden(), |x| {
            v.push(x.visits);
            ControlFlow::Continue(())
        })?;
        let total: f64 = v.iter().sum();
        Ok(v.into_iter().map(|x| x / total).collect())
    }
}
