//! Run-time choice of the widest vector instructions for the model kernels.
//!
//! The kernels are plain Rust marked `#[inline(always)]`; [`Simd::run`] calls them
//! from inside a function compiled for AVX2 or AVX-512, so they are inlined there and
//! vectorised four or eight doubles wide. Rust never contracts `a * b + c` into a fused
//! multiply-add and the kernels fix the order of every sum (eight partial sums), so the
//! results are bit for bit the same at every level: the level changes the speed, never
//! a number.

/// Vector instruction level of the current CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// Whatever the build targets (SSE2 on x86_64).
    Base,
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
            if std::is_x86_feature_detected!("avx2") {
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

    /// Runs `f` compiled for this level. `self` must not exceed [`Simd::detect`]
    /// (it is clamped to it, so a wrong level is slow, never unsound).
    #[inline(always)]
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        #[cfg(target_arch = "x86_64")]
        {
            /// # Safety
            /// The CPU must support AVX2.
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            /// # Safety
            /// The CPU must support AVX-512F.
            #[target_feature(enable = "avx512f")]
            unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            match self.min(Simd::detect_cached()) {
                // SAFETY: the level is at most what the CPU reported.
                Simd::Avx512 => return unsafe { avx512(f) },
                Simd::Avx2 => return unsafe { avx2(f) },
                Simd::Base => {}
            }
        }
        f()
    }

    /// [`Simd::detect`], asked once per process.
    fn detect_cached() -> Simd {
        static LEVEL: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
        *LEVEL.get_or_init(Simd::detect)
    }
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

/// sum_i x_i with eight partial sums, like [`dot`].
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
