//! Software prefetch: the replay and fit loops touch a random table entry or filter
//! word per arrival, and start those loads several arrivals ahead of use.

/// Starts loading `p`'s cache line (a hint; no effect on results).
#[inline(always)]
pub fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint and never faults, even on invalid addresses.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the kernel to back `v`'s memory with transparent huge pages (2 MiB) where it
/// is large enough, before its zeroed pages are first touched (so that the faults take
/// huge pages). Used for tables and filters looked up at random: with 4 KiB pages
/// nearly every lookup of a table larger than the TLB's reach (a few MB) also misses
/// the TLB, and the page walk costs as much as the cache miss prefetching hides; 2 MiB
/// pages cut the walks by 512x. Only advice: kernels with THP off ignore it.
pub fn advise_huge_pages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = std::mem::size_of_val(v);
        if bytes >= 2 * HUGE {
            let start = v.as_ptr() as usize;
            let aligned = (start + HUGE - 1) & !(HUGE - 1);
            let len = (start + bytes).saturating_sub(aligned) & !(HUGE - 1);
            if len > 0 {
                // SAFETY: the range lies inside the slice's allocation, and
                // MADV_HUGEPAGE changes neither its contents nor its validity.
                unsafe {
                    libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}
