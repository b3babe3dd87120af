//! Run-time choice of the widest vector instructions for the model kernels, and the
//! sums they share.
//!
//! Rust never contracts `a * b + c` into a fused multiply-add (kernels that want one
//! ask for it at every level), and the kernels fix the order of every sum, so the
//! results are bit for bit the same at every level: the level changes the speed, never
//! a number.

/// Vector instruction level of the current CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// Whatever the build targets (SSE2 on x86_64).
    Base,
    /// AVX2 with FMA (every AVX2 CPU has both).
    Avx2,
    Avx512,
}

impl Simd {
    /// The widest level this CPU supports.
    pub fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return Simd::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Simd::Avx2;
            }
        }
        Simd::Base
    }

    /// Every level up to the detected one (for tests that compare them).
    pub fn available() -> Vec<Simd> {
        let top = Simd::detect();
        [Simd::Base, Simd::Avx2, Simd::Avx512]
            .into_iter()
            .filter(|&s| s <= top)
            .collect()
    }
}

/// Runs `f` compiled for AVX2 and FMA when `wide` is true (`wide` must come from
/// [`Simd::detect`] `>= Simd::Avx2`): the `#[inline(always)]` kernels `f` calls are
/// inlined into the AVX2 copy and vectorised four doubles wide. Same operations in the
/// same order either way, so the same bits. (Kernels with an AVX-512 path, such as the
/// eq. 24 update in `rbf_predicted::model::false_negative::disabling_step`, use
/// intrinsics per level instead.)
#[inline(always)]
pub fn with_avx2<R>(wide: bool, f: impl FnOnce() -> R) -> R {
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide` is true only when the CPU supports AVX2 and FMA.
        return unsafe { avx2(f) };
    }
    let _ = wide;
    f()
}

/// sum_i x_i y_i with eight partial sums (vectorisable without reassociating floats
/// behind the compiler's back).
#[inline(always)]
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f64 = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in xc.zip(yc) {
        for l in 0..8 {
            acc[l] += a[l] * b[l];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// The partial sums of a kernel's lanes added one after another, first to last (the
/// fixed final step of every lane-summed kernel).
pub fn sum_lanes(lanes: &[f64]) -> f64 {
    lanes.iter().fold(0.0, |s, x| s + x)
}

/// sum_i x_i with eight partial sums, like [`dot`] (the reference of the bit
/// distribution's one-pass sums, which replaced it).
/// The sum in the kernels' lane order (tests compare kernels with it).
#[inline(always)]
pub fn sum(x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let c = x.chunks_exact(8);
    let tail: f64 = c.remainder().iter().sum();
    for a in c {
        for l in 0..8 {
            acc[l] += a[l];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// One cache line of doubles.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f64; 8]);

/// A vector of doubles whose first element starts a cache line, so that vector loads
/// of chunks starting at multiples of eight never straddle two lines.
#[derive(Clone)]
pub struct AlignedVec {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedVec {
    /// `len` zeros.
    pub fn zeros(len: usize) -> Self {
        AlignedVec {
            lines: vec![Line([0.0; 8]); len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `x` followed by zeros up to `len` (at least `x.len()`).
    pub fn padded(x: &[f64], len: usize) -> Self {
        let mut v = AlignedVec::zeros(len.max(x.len()));
        v[..x.len()].copy_from_slice(x);
        v
    }
}

impl std::ops::Deref for AlignedVec {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        // SAFETY: `Line` is `repr(C)` around `[f64; 8]`, so the lines are contiguous
        // doubles, and `len <= 8 * lines.len()`.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<f64>(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedVec {
    fn deref_mut(&mut self) -> &mut [f64] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<f64>(), self.len) }
    }
}

/// Whether two runs gave the same values to the last bit (for the tests that compare
/// vector levels or thread counts).
/// Whether two slices hold the same bits (tests of "same bits at every level").
pub fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}
