//! Software prefetch: the replay and fit loops touch a random table entry or filter
//! word per arrival, and start those loads several arrivals ahead of use.

/// Starts loading `p`'s cache line (a hint; no effect on results).
#[inline(always)]
pub(crate) fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint and never faults, even on invalid addresses.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
