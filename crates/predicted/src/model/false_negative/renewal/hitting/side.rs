//! One side of the hitting-time engine's bracket (U+ or U-): the renewal sums of
//! eqs. (20)-(26) block by block.
//!
//! Far from the end of a cycle (every law of [`super::law`] still before its window,
//! and the insertion count N surely below that by Bernstein's bound) alive and
//! alive_cap are 1 to within 1e-30 and sets_cap = 1 - E[tau(L_N)] to within that, and
//! E[tau(L_N)] = sum_s w_s E[y_s^N]: the generating function of N, a product of
//! (1 - eta + eta y_s) over the arrivals, and over a block a geometric series. So a
//! block costs O(k) there, whatever its length.
//!
//! Near the end the law of N is followed on a window: at the first such block it is
//! the product of the earlier blocks' binomials ([`Law::product`]); within a block of
//! L arrivals with chance eta, the expected number of them that see N = n is
//! (X * O)(n) with X the law at the block's start and O(d) = P(Bin(L, eta) > d) / eta
//! (sum over t < L of P(Bin(t, eta) = d), telescoped), so a block is two FFT
//! convolutions. Every error (the binomials' windows, the FFTs, the trims, the
//! fields' intervals) is carried into the block's intervals.

use super::binomial::{bernstein, Law, TAIL};
use super::fields::{BitFields, Fields, Span};
use crate::model::false_negative::fft;

const UNIT: f64 = f64::EPSILON / 2.0;

/// How far above its mean the insertion count may be, Bernstein's bound at the tail
/// the flat blocks leave out.
pub fn reach(var: f64) -> f64 {
    bernstein(var, TAIL) + 1.0
}

/// What a block adds to a side's sums.
#[derive(Clone, Copy, Debug, Default)]
pub struct Out {
    /// sum over the block's arrivals of E[alive(N_{j-1})].
    pub a: Span,
    /// sum of p_r U E[sets_cap(N_{j-1})].
    pub c: Span,
    pub lucky: f64,
    /// alive_cap at the first arrival after the block.
    pub cap_next: Span,
    /// alive at the first arrival after the block: the chance that the cycle still
    /// runs there (the two-phase sums read the frozen cycle's length from it).
    pub alive_next: Span,
}

enum State {
    /// The generating function of N at y_s, with a relative error bound, and N's mean
    /// and variance.
    Flat {
        pi: Vec<f64>,
        pi_err: Vec<f64>,
        mean: f64,
        var: f64,
        history: Vec<(u64, f64)>,
    },
    /// The law of N on a window.
    Window(Law),
}

/// One side's state.
pub struct Side<'a> {
    fields: &'a BitFields,
    state: State,
    /// Per-insertion sums cached from `base`.
    base: u64,
    rows: Vec<Fields>,
    /// The widest law followed (for the rounding of its dot products).
    pub widest: usize,
}

impl<'a> Side<'a> {
    pub fn new(fields: &'a BitFields) -> Side<'a> {
        let k1 = fields.tau().weights().len();
        Side {
            fields,
            state: State::Flat {
                pi: vec![1.0; k1],
                pi_err: vec![0.0; k1],
                mean: 0.0,
                var: 0.0,
                history: Vec::new(),
            },
            base: 0,
            rows: Vec::new(),
            widest: 0,
        }
    }

    /// Whether the side still follows N in closed form.
    pub fn is_flat(&self) -> bool {
        matches!(self.state, State::Flat { .. })
    }

    /// Adds a block of arrivals with bit-setting chance `eta`: `pieces` (length, weight
    /// p_r U) in order, used while N is followed in closed form, or the whole block
    /// with the weight `w_block` once it is followed on a window. `each`, when given,
    /// receives the numerator's part of every piece (one entry per piece in closed
    /// form, one for the whole block on a window).
    pub fn block(
        &mut self,
        pieces: &[(u64, f64)],
        w_block: f64,
        eta: f64,
        mut each: Option<&mut Vec<Span>>,
    ) -> Out {
        let len: u64 = pieces.iter().map(|p| p.0).sum();
        if self.flat_fits(len, eta) {
            let mut out = Out::default();
            for &(l, w) in pieces {
                let o = self.flat_piece(l, w, eta);
                out.a.lo += o.a.lo;
                out.a.hi += o.a.hi;
                out.c.lo += o.c.lo;
                out.c.hi += o.c.hi;
                out.lucky += o.lucky;
                out.cap_next = o.cap_next;
                out.alive_next = o.alive_next;
                if let Some(each) = each.as_deref_mut() {
                    each.push(o.c);
                }
            }
            return out;
        }
        if let State::Flat { history, .. } = &mut self.state {
            let laws = std::mem::take(history)
                .into_iter()
                .map(|(l, e)| Law::binomial(l, e))
                .collect();
            let x = Law::product(laws);
            self.base = x.x0;
            self.state = State::Window(x);
        }
        let out = self.window_block(len, w_block, eta);
        if let Some(each) = each {
            each.push(out.c);
        }
        out
    }

    /// Whether N surely stays below the first window's insertion count over `len`
    /// more arrivals with chance `eta`, while followed in closed form.
    fn flat_fits(&self, len: u64, eta: f64) -> bool {
        let State::Flat { mean, var, .. } = &self.state else {
            return false;
        };
        let l = len as f64;
        let mean2 = *mean + l * eta;
        let var2 = *var + l * eta * (1.0 - eta);
        mean2 + reach(var2) < self.fields.n_first() as f64
    }

    /// A piece of `len` arrivals with weight `w` and chance `eta`, in closed form
    /// (after [`Side::flat_fits`] for its block).
    fn flat_piece(&mut self, len: u64, w: f64, eta: f64) -> Out {
        let tau = self.fields.tau();
        let State::Flat {
            pi,
            pi_err,
            mean,
            var,
            history,
        } = &mut self.state
        else {
            unreachable!("a closed-form piece while N is on a window");
        };
        let l = len as f64;
        let mean2 = *mean + l * eta;
        let var2 = *var + l * eta * (1.0 - eta);
        let gap = self.fields.flat_gap() + TAIL;
        let (mut et, mut et_err) = (0.0, 0.0);
        for s in 0..pi.len() {
            // g = 1 - eta (1 - y_s); sum_{t < L} g^t; the generating function times g^L.
            let one_minus_g = eta * -tau.log_y()[s].exp_m1();
            let ln_g = (-one_minus_g).ln_1p();
            let x = l * ln_g;
            let geo = if one_minus_g > 0.0 {
                -x.exp_m1() / one_minus_g
            } else {
                l
            };
            let term = tau.weights()[s] * pi[s] * geo;
            et += term;
            et_err += term.abs() * (pi_err[s] + (x.abs() + 12.0) * 4.0 * UNIT);
            pi[s] *= x.exp();
            pi_err[s] += (x.abs() + 6.0) * 4.0 * UNIT;
        }
        et_err += (pi.len() as f64 + 2.0) * UNIT * et.abs();
        *mean = mean2;
        *var = var2;
        // Pieces of one block share eta: one binomial for the window's product.
        match history.last_mut() {
            Some(last) if last.1 == eta => last.0 += len,
            _ => history.push((len, eta)),
        }
        let pu = w;
        let near_one = Span {
            lo: 1.0 - gap,
            hi: 1.0,
        };
        Out {
            a: Span {
                lo: l * (1.0 - gap),
                hi: l,
            },
            c: Span {
                lo: (pu * (l - et - et_err - l * gap)).max(0.0),
                hi: pu * (l - et + et_err),
            },
            lucky: et,
            cap_next: near_one,
            alive_next: near_one,
        }
    }

    /// An upper bound of P(N <= n) for the insertion count N after the blocks so far
    /// (1 while they are followed in closed form).
    pub fn at_most(&self, n: u64) -> f64 {
        match &self.state {
            State::Flat { .. } => 1.0,
            State::Window(x) => x
                .expect(|i| if i <= n { (1.0, 1.0) } else { (0.0, 0.0) })
                .1
                .min(1.0),
        }
    }

    /// The per-insertion sums at n (cached from the first window's start on).
    fn row(&mut self, n: u64) -> Fields {
        if n < self.base {
            return self.fields.at(n);
        }
        let i = (n - self.base) as usize;
        while self.rows.len() <= i {
            let m = self.base + self.rows.len() as u64;
            self.rows.push(self.fields.at(m));
        }
        self.rows[i]
    }

    fn window_block(&mut self, len: u64, w: f64, eta: f64) -> Out {
        let State::Window(x) = std::mem::replace(&mut self.state, State::Window(Law::point(0)))
        else {
            unreachable!("a window block follows the switch to a window");
        };
        let bin = Law::binomial(len, eta);
        let (o, o_rel, o_abs) = occupation_kernel(&bin, eta);
        let (x_mass, o_mass) = (x.p.iter().sum::<f64>(), o.iter().sum::<f64>());
        let (occ, e) = if x.p.len().min(o.len()) <= 256 {
            let short = x.p.len().min(o.len()) as f64;
            let occ = fft::convolve_direct(&x.p, &o);
            (occ, (short + 2.0) * UNIT * x_mass * o_mass)
        } else {
            fft::convolve(&x.p, &o)
        };
        // The occupation's L1 error: the convolution's, the inputs' relative errors
        // (entrywise, so relative on the products) and their absolute ones.
        let err_occ = e
            + (x.rel + o_rel + x.rel * o_rel) * x_mass * o_mass * 1.01
            + x.abs * (o_mass * (1.0 + o_rel) + o_abs)
            + o_abs * x_mass * (1.0 + x.rel);
        let [a_lo, a_hi, c_lo, c_hi, lucky] = self.weighed(x.x0, &occ);
        let dot = (occ.len() as f64 + 2.0) * UNIT;
        let next = x.convolve(&bin);
        let [cap_next, alive_next] = self.under(&next);
        self.widest = self.widest.max(occ.len()).max(next.p.len());
        self.state = State::Window(next);
        Out {
            a: Span {
                lo: (a_lo * (1.0 - dot) - err_occ).max(0.0),
                hi: a_hi * (1.0 + dot) + err_occ,
            },
            c: Span {
                lo: (w * (c_lo * (1.0 - dot) - err_occ)).max(0.0),
                hi: w * (c_hi * (1.0 + dot) + err_occ),
            },
            lucky,
            cap_next,
            alive_next,
        }
    }

    /// sum_n occ(n) f(n) for f = alive (low, high), sets_cap (low, high) and lucky,
    /// occ starting at insertion count `x0`.
    fn weighed(&mut self, x0: u64, occ: &[f64]) -> [f64; 5] {
        let mut s = [0.0; 5];
        for (i, &v) in occ.iter().enumerate() {
            if v == 0.0 {
                continue;
            }
            let f = self.row(x0 + i as u64);
            s[0] += v * f.alive.lo;
            s[1] += v * f.alive.hi;
            s[2] += v * f.sets.lo;
            s[3] += v * f.sets.hi;
            s[4] += v * f.lucky;
        }
        s
    }

    /// alive_cap's and alive's intervals under the law `x` of N.
    fn under(&mut self, x: &Law) -> [Span; 2] {
        let rows: Vec<Fields> = (0..x.p.len() as u64).map(|i| self.row(x.x0 + i)).collect();
        let expect = |f: fn(&Fields) -> Span| {
            let (lo, hi) = x.expect(|n| {
                let c = f(&rows[(n - x.x0) as usize]);
                (c.lo, c.hi)
            });
            Span {
                lo,
                hi: hi.min(1.0),
            }
        };
        [expect(|f| f.cap), expect(|f| f.alive)]
    }
}

/// O(d) = P(Bin > d) / eta for d below the binomial's window's end (1 / eta below the
/// window): suffix sums of its values, so within its relative error plus the sums'
/// rounding, and its absolute error at every d. Returns O, its relative error and its
/// L1 absolute error.
fn occupation_kernel(bin: &Law, eta: f64) -> (Vec<f64>, f64, f64) {
    let end = bin.end() as usize;
    let mut o = vec![0.0; end.max(1)];
    let mut above: f64 = bin.p.iter().sum();
    for (d, v) in o.iter_mut().enumerate() {
        if d as u64 >= bin.x0 {
            above -= bin.p[d - bin.x0 as usize];
        }
        *v = above.max(0.0) / eta;
    }
    let rel = bin.rel + (2.0 * bin.p.len() as f64 + 4.0) * UNIT;
    (o, rel, bin.abs * end as f64 / eta)
}
