//! What a replay holds in memory, predicted before it starts: the exact ground truth
//! (one slot per distinct key), the filter's bit arrays and clear lists, the reading
//! pipeline's buffers and the process itself. Checked against the machine with
//! [`rbf_foundations::resources::check_memory`] before the work.
//!
//! Ground truth: 16-byte slots (key, record), at most 3/4 full. Grown by doubling, a
//! power of two of them, so 21.3 to 42.7 bytes per distinct key, and the old and the
//! new slots coexist while the keys move over (1.5 times the final table, up to 64
//! bytes per key at that moment). A table sized for a known number of keys (declared
//! by the trace's header or counted from its records) has the fewest slots that hold
//! them, 21.3 bytes per key, and never doubles. docs/PERFORMANCE.md ("Replay") has the
//! measured figures.
//!
//! Several filters (hash seeds) share tables of the same 16-byte slots, four filters to
//! a table (`truth::SharedTruth`, 16-bit records): as much as one filter's table.

use super::truth::SHARED_FILTERS;
use rbf_data::filter::FilterConfig;
use rbf_foundations::slot_table::{grown_slots, prefault_at, slots_of, SLOT_BYTES};

/// Resident memory of the `rbf` process before a replay allocates anything: the
/// binary's pages in use, the allocator, thread stacks (measured: 12-14 MiB for a
/// replay of a few arrivals).
pub const PROCESS_BYTES: u64 = 14 << 20;

/// The reading pipeline's buffers: the decode thread's batches in flight (6 x 8192
/// messages), the replay's batch, the file's read buffer and a decompressor's
/// (1 MiB each), a binary reader's record buffer.
pub const PIPELINE_BYTES: u64 = 6 << 20;

/// Bytes of a ground-truth table holding `distinct` keys, sized for them up front or
/// grown by doubling.
pub fn truth_bytes(distinct: u64, sized_up_front: bool) -> u64 {
    table_bytes(distinct, sized_up_front, SLOT_BYTES)
}

/// [`truth_bytes`] of a table of `slot`-byte slots.
fn table_bytes(distinct: u64, sized_up_front: bool, slot: u64) -> u64 {
    let slots = if sized_up_front {
        slots_of(distinct, slot)
    } else {
        grown_slots(distinct)
    };
    slots * slot
}

/// Most bytes the ground truth holds during a replay that ends with `distinct`
/// keys: the table itself when sized up front, else the last doubling's old and new
/// tables together; plus the doubled successor a mid-sized table prepares once half
/// full (`slot_table::prefault_at`), when the trace gets that far.
pub fn truth_peak_bytes(distinct: u64, sized_up_front: bool) -> u64 {
    table_peak_bytes(distinct, sized_up_front, SLOT_BYTES)
}

/// [`truth_peak_bytes`] of `filters` filters replaying together: their own table for
/// one, else one shared table per [`SHARED_FILTERS`] of them.
pub fn filters_truth_peak_bytes(distinct: u64, sized_up_front: bool, filters: u64) -> u64 {
    if filters <= 1 {
        return truth_peak_bytes(distinct, sized_up_front);
    }
    let tables = filters.div_ceil(SHARED_FILTERS as u64);
    tables * truth_peak_bytes(distinct, sized_up_front)
}

/// [`truth_peak_bytes`] of a table of `slot`-byte slots.
fn table_peak_bytes(distinct: u64, sized_up_front: bool, slot: u64) -> u64 {
    let t = table_bytes(distinct, sized_up_front, slot);
    if sized_up_front {
        return t;
    }
    let slots = t / slot;
    let doubling = if slots <= 1 << 10 { t } else { t + t / 2 };
    let prepared = match prefault_at(slots) {
        Some(at) if distinct >= at => t + 2 * t,
        _ => 0,
    };
    doubling.max(prepared)
}

/// Bytes of a filter's bit arrays (a power of two of 64-bit words each) and their
/// clear lists (one u32 per word, plus one).
pub fn filter_bytes(config: &FilterConfig) -> u64 {
    let words = config.half_memory().div_ceil(64).next_power_of_two();
    u64::from(config.phases) * (words * 8 + (words + 1) * 4)
}

/// [`filter_bytes`] of a filter replaying beside other hash seeds' filters: without
/// its clear list when the shared kernel never writes it (an allocation whose pages
/// are never touched takes no memory).
pub fn shared_filter_bytes(config: &FilterConfig) -> u64 {
    if rbf_data::filter::shared_kernel_unlisted(config) {
        let words = config.half_memory().div_ceil(64).next_power_of_two();
        words * 8
    } else {
        filter_bytes(config)
    }
}

/// A replay's predicted peak memory, by part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryPlan {
    pub distinct: u64,
    /// The ground truth sized for `distinct` keys up front (else grown by doubling).
    pub sized_up_front: bool,
    pub truth: u64,
    pub filter: u64,
    /// Bytes of one filter replaying beside others ([`MemoryPlan::filters`]).
    pub shared_filter: u64,
    /// Pipeline buffers and the process itself.
    pub other: u64,
}

impl MemoryPlan {
    /// The plan of replaying a trace with `distinct` keys through `config`, the
    /// ground truth sized up front or grown.
    pub fn new(config: &FilterConfig, distinct: u64, sized_up_front: bool) -> Self {
        MemoryPlan {
            distinct,
            sized_up_front,
            truth: truth_peak_bytes(distinct, sized_up_front),
            filter: filter_bytes(config),
            shared_filter: shared_filter_bytes(config),
            other: PROCESS_BYTES + PIPELINE_BYTES,
        }
    }

    /// The plan of `n` filters replaying the same trace (one per hash seed,
    /// [`super::Replays`]): each has its own bit arrays, and they share ground-truth
    /// tables ([`filters_truth_peak_bytes`]).
    pub fn filters(self, n: u64) -> Self {
        MemoryPlan {
            truth: filters_truth_peak_bytes(self.distinct, self.sized_up_front, n),
            filter: if n > 1 {
                self.shared_filter * n
            } else {
                self.filter
            },
            ..self
        }
    }

    pub fn total(&self) -> u64 {
        self.truth + self.filter + self.other
    }

    /// "1.1 GiB (ground truth 1.0 GiB for 50000000 keys, filter 48 MiB, buffers and
    /// process 20 MiB)".
    pub fn describe(&self) -> String {
        let b = |x: u64| rbf_foundations::resources::bytes_text(x as f64);
        format!(
            "{} (ground truth {} for {} distinct keys, filter {}, buffers and process {})",
            b(self.total()),
            b(self.truth),
            self.distinct,
            b(self.filter),
            b(self.other)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::GroundTruth;

    #[test]
    fn table_sizes_follow_the_growth_rule() {
        // Grow a table key by key and compare with the prediction at every size.
        let mut t = GroundTruth::new();
        for n in 1..=100_000u64 {
            t.lookup(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, 0, 1);
            if n % 997 == 0 || n.is_power_of_two() {
                assert_eq!(
                    t.allocated_bytes() as u64,
                    truth_bytes(n, false),
                    "{n} keys"
                );
            }
        }
        for n in [1u64, 768, 769, 3 << 20, (3 << 20) + 1, 50_000_000] {
            let sized = GroundTruth::with_capacity(n);
            assert_eq!(sized.allocated_bytes() as u64, truth_bytes(n, true));
            assert!(truth_bytes(n, false) as f64 / n as f64 <= 43.0 || n < 1000);
            // Sized: at most 3/4 full, and no more than 2 MiB (one huge page) over.
            let bytes = truth_bytes(n, true);
            assert!(bytes * 3 >= n * 4 * SLOT_BYTES, "{n} keys fit");
            assert!(bytes < (n * 4).div_ceil(3) * SLOT_BYTES + (2 << 20), "{n}");
        }
        // 5e7 keys grown: 2^26 slots, 1 GiB, 21.5 bytes per key (1.5 GiB while the
        // last doubling copies); sized up front: 509 huge pages, 21.3 bytes per key.
        assert_eq!(truth_bytes(50_000_000, false), 1 << 30);
        assert_eq!(truth_peak_bytes(50_000_000, false), 3 << 29);
        assert_eq!(truth_bytes(50_000_000, true), 509 << 21);
        assert_eq!(truth_peak_bytes(50_000_000, true), 509 << 21);
    }

    #[test]
    fn shared_filters_without_an_unwritten_clear_list() {
        // sigma 2^27 on 2^28 bits: every recycle zeroes the whole array, the shared
        // kernel lists nothing; the words alone (32 MiB) are predicted per filter.
        let big = FilterConfig::sigma_bounded(1 << 28, 4, 1 << 27);
        let plan = MemoryPlan::new(&big, 1_000, true);
        assert_eq!(plan.filters(4).filter, 4 << 25);
        assert_eq!(plan.filters(1).filter, filter_bytes(&big));
        // A clear by the list (sigma far below a word in eight), two phases: with it.
        let listed = FilterConfig::sigma_bounded(1 << 20, 4, 1_000);
        let mut two = FilterConfig::sigma_bounded(1 << 21, 4, 400_000);
        two.phases = 2;
        for c in [listed, two] {
            assert_eq!(shared_filter_bytes(&c), filter_bytes(&c), "{c:?}");
        }
    }

    #[test]
    fn filters_share_tables_of_four() {
        use crate::replay::{ReplayOptions, Replays};
        let config = FilterConfig::sigma_bounded(1 << 12, 3, 1_000);
        let one = MemoryPlan::new(&config, 2_000_000, true);
        // Four filters: one table of 16-byte slots, as for one filter.
        let four = one.filters(4);
        assert_eq!(four.filter, 4 * shared_filter_bytes(&config));
        assert_eq!(four.truth, one.truth, "{four:?} {one:?}");
        assert_eq!(one.filters(5).truth, 2 * four.truth);
        // What the tables allocate, sized and grown (the keys of a small replay).
        for (seeds, sized) in [(4, true), (4, false), (6, true), (1, false)] {
            let mut r = Replays::new(&config, ReplayOptions::default(), seeds).unwrap();
            if sized {
                r.expect_distinct(30_000);
            }
            r.run_keys(&(1..=30_000u64).collect::<Vec<_>>());
            let plan = MemoryPlan::new(&config, 30_000, sized).filters(u64::from(seeds));
            let tables = u64::from(seeds).div_ceil(4);
            let final_bytes = if sized || seeds == 1 {
                plan.truth
            } else {
                // Grown: the plan's peak is the last doubling, old and new together.
                plan.truth * 2 / 3
            };
            if seeds == 1 {
                assert_eq!(r.truth_bytes() as u64, truth_bytes(30_000, false));
            } else {
                assert_eq!(
                    r.truth_bytes() as u64,
                    final_bytes,
                    "{seeds} seeds, {tables} tables"
                );
            }
        }
    }
}
