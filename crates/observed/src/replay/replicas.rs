//! One stream replayed through the same filter hashed with several seeds.
//!
//! Why: the models describe a filter averaged over hash positions as well as over
//! arrivals, but one replay fixes the positions of every message for the whole trace.
//! With few popular messages (D = 1000, say) a filter's long-run FN differs from the
//! hash average by as much as a long replay's batch-means interval is wide, and an
//! interval from one filter cannot see that (docs/coverage/README.md measures it: 85.5 %
//! coverage for a nominal 99 % in one cell, 98-100 % with four filters). Each seed's filter runs the
//! whole stream with its own ground-truth records; their complete cycles are cut into the same
//! time batches and the intervals come from the two-way table (hash seeds x batches,
//! [`rbf_foundations::stats::replicated_ratio_interval`]), so they cover the hash positions'
//! randomness, and the point estimate is the ratio over every seed's complete cycles.
//!
//! The first filter is the one configured (its seed, its counts in the report); the
//! others use seeds derived from it.
//!
//! Cost: the filters share the ground truth's key table, up to four per table
//! ([`SharedTruth`]: one lookup per arrival, the filters' records side by side in the
//! key's slot), and replay a batch of arrivals one after the other while the batch's
//! slots are in the cache; only their bit arrays are their own. The results are those
//! of one [`Replay`] per seed, bit for bit (tests/it/replay_shared.rs).

use super::cycles::{confidence, CycleStats};
use super::lane::{Lane, Quad, Records};
use super::sizing::distinct_up_front;
use super::truth::{
    compress, expand, Rebase, SharedSlot, SharedTruth, Slot, SHARED_FILTERS, SHARED_REL_MAX,
};
use super::{check_growth, source_batches, Replay, ReplayOptions, ReplayReport};
use rbf_data::filter::{mix64, FilterConfig};
use rbf_data::ingest::MessageSource;
use rbf_data::message::{for_each_key_batch, Message};
use rbf_foundations::error::{Error, Problem, Result};

/// Hash seeds a replay uses unless told otherwise (docs/coverage/README.md: the fewest
/// with which the printed FN interval covers at 98 % or more in every complete cell of
/// the coverage study; 2 gave 97.5 % in one).
pub const DEFAULT_HASH_SEEDS: u32 = 4;

/// Most hash seeds accepted.
pub const MAX_HASH_SEEDS: u32 = 64;

/// Arrivals whose slots are located before the filters replay them: the slots of a
/// block (16 bytes each, one cache line for up to four) stay in L1/L2 while every filter of
/// the group goes through it.
const BLOCK: usize = 256;

/// Arrivals ahead whose slot is prefetched while a block's keys are located (the
/// locating loop does little else, so it needs a long lead).
const LOCATE_AHEAD: usize = 32;

/// The filter seed of replica `r` (replica 0 keeps the configured seed).
pub fn replica_seed(seed: u64, r: u32) -> u64 {
    if r == 0 {
        seed
    } else {
        mix64(seed ^ mix64(0x6861_7368_0000_0000 | u64::from(r)))
    }
}

/// Replays of one stream through one filter per hash seed.
pub struct Replays {
    kind: Kind,
    options: ReplayOptions,
}

enum Kind {
    /// One filter: a table of its own, with 64-bit records (boxed: a replay is large
    /// next to the other variant).
    One(Box<Replay>),
    /// Several: groups of up to [`SHARED_FILTERS`] sharing a table.
    Shared { groups: Vec<Group>, seen: u64 },
}

/// Up to [`SHARED_FILTERS`] filters and the table they share.
struct Group {
    truth: SharedTruth,
    lanes: Vec<Lane>,
    /// Each filter's record base ([`SharedTruth`]'s records are relative to it).
    bases: Vec<u64>,
    /// The current block's slots (index, whether the key was new).
    located: Vec<(usize, bool)>,
    /// The same as pointers, once the block's keys are all located.
    slots: Vec<SharedSlot>,
    /// Largest relative record allowed before a rebase ([`SHARED_REL_MAX`]; smaller
    /// in tests, so that rebasing is exercised).
    rel_max: u64,
    /// The four filters together, where they qualify ([`Quad::for_lanes`]).
    quad: Option<Quad>,
}

// SAFETY: the only pointers a group holds are `slots`, into its own `truth` table's
// heap storage, written and read within one block (`Group::run_block`) and located
// afresh for the next; moving the group moves the table's owner, not its storage, and
// nothing else shares it. So a group can be replayed on another thread (`rbf size
// TRACE` replays its candidate filters side by side).
unsafe impl Send for Group {}

/// A filter's records in a located block: arrival `i`'s is filter `filter`'s record
/// in `slots[i]`.
struct Column<'a> {
    slots: &'a [SharedSlot],
    filter: usize,
    base: u64,
}

impl Records for Column<'_> {
    /// The block's slots were loaded when located (prefetching them again into L1
    /// before each filter's use gained nothing: docs/history/PERFORMANCE-log.md,
    /// "16-bit records, positions by the block").
    #[inline(always)]
    fn prefetch(&self, _: usize, _: u64) {}

    #[inline(always)]
    fn visit<R>(
        &mut self,
        i: usize,
        _: u64,
        cycle: u64,
        window: u64,
        f: impl FnOnce(Slot<'_>) -> R,
    ) -> R {
        let slot = self.slots[i];
        // SAFETY: the slots were taken from the table's view after the block's keys
        // were located, and it has not grown since (Group::run_block); filter <
        // SHARED_FILTERS.
        let p = unsafe { slot.record(self.filter) };
        // SAFETY: as above; nothing else accesses the record meanwhile.
        let mut v = expand(unsafe { *p }, self.base);
        let r = f(Slot::classify(&mut v, slot.fresh, cycle, window));
        // SAFETY: as above.
        unsafe { *p = compress(v, self.base) };
        r
    }
}

impl Group {
    fn new(lanes: Vec<Lane>) -> Self {
        debug_assert!(lanes.len() <= SHARED_FILTERS);
        Group {
            quad: Quad::for_lanes(&lanes),
            truth: SharedTruth::default(),
            bases: vec![0; lanes.len()],
            lanes,
            located: Vec::with_capacity(BLOCK),
            slots: Vec::with_capacity(BLOCK),
            rel_max: SHARED_REL_MAX,
        }
    }

    /// Replays `keys`, the first being arrival `seen`, block by block.
    fn run_keys(&mut self, keys: &[u64], seen: u64) {
        for &k in keys.iter().take(LOCATE_AHEAD) {
            self.truth.prefetch(k);
        }
        for (b, block) in keys.chunks(BLOCK).enumerate() {
            let at = b * BLOCK;
            self.run_block(
                block,
                &keys[(at + LOCATE_AHEAD).min(keys.len())..],
                seen + at as u64,
            );
        }
    }

    /// Locates the slots of `block`'s keys (prefetching those of `ahead`, the keys
    /// after it), then replays the block through each filter.
    fn run_block(&mut self, block: &[u64], ahead: &[u64], seen: u64) {
        self.rebase_if_near(block.len() as u64);
        // No growth while the block's slots are in use.
        self.truth.reserve(block.len());
        self.located.clear();
        for (i, &k) in block.iter().enumerate() {
            if let Some(&a) = ahead.get(i) {
                self.truth.prefetch(a);
            }
            self.located.push(self.truth.locate(k));
        }
        let view = self.truth.view();
        self.slots.clear();
        // SAFETY: located in this table, which has not grown since (reserved above).
        let slots = self
            .located
            .iter()
            .map(|&(i, fresh)| unsafe { view.slot(i, fresh) });
        self.slots.extend(slots);
        // The arrivals no filter can recycle in, the four filters together; the rest
        // filter by filter.
        let done = match &mut self.quad {
            Some(quad) => quad.run(&mut self.lanes, block, &self.slots, &self.bases, seen),
            None => 0,
        };
        let (block, slots, seen) = (&block[done..], &self.slots[done..], seen + done as u64);
        if block.is_empty() {
            return;
        }
        for (f, lane) in self.lanes.iter_mut().enumerate() {
            let base = self.bases[f];
            if lane.shared_kernel() {
                lane.run_shared(block, slots, f, base, seen);
            } else {
                let mut column = Column {
                    slots,
                    filter: f,
                    base,
                };
                lane.run_keys(block, &mut column, seen);
            }
        }
    }

    /// Moves a filter's records to a new base when the next `n` arrivals could take
    /// its cycles past what a record holds relative to the old one (at most one
    /// recycle per arrival; a retained message is recorded one cycle ahead). The
    /// filters that are past half of that move in the same pass: filters of one
    /// configuration recycle at about the same pace, so they mostly share one pass
    /// over the table instead of taking one each.
    fn rebase_if_near(&mut self, n: u64) {
        let past =
            |lane: &Lane, base: u64, limit: u64| lane.filter.recycles() + 2 + n - base > limit;
        let due = self
            .lanes
            .iter()
            .zip(&self.bases)
            .any(|(lane, &base)| past(lane, base, self.rel_max));
        if !due {
            return;
        }
        let mut moves = Vec::with_capacity(self.lanes.len());
        for (f, lane) in self.lanes.iter().enumerate() {
            if past(lane, self.bases[f], self.rel_max / 2) {
                // Records before cycle + 1 - window no longer count for anything.
                let from = self.bases[f];
                let to = (lane.filter.recycles() + 1)
                    .saturating_sub(lane.window)
                    .max(from);
                moves.push(Rebase {
                    filter: f,
                    from,
                    to,
                });
                self.bases[f] = to;
            }
        }
        self.truth.rebase(&moves);
    }
}

impl Replays {
    /// `hash_seeds` filters like `config`, the first with its seed.
    pub fn new(config: &FilterConfig, options: ReplayOptions, hash_seeds: u32) -> Result<Self> {
        if hash_seeds == 0 || hash_seeds > MAX_HASH_SEEDS {
            return Err(Error::setting(
                "hash-seeds",
                Problem::range(format!("allowed range is 1..={MAX_HASH_SEEDS}"), hash_seeds),
            ));
        }
        if hash_seeds == 1 {
            return Ok(Replays {
                kind: Kind::One(Box::new(Replay::new(config, options)?)),
                options,
            });
        }
        let lanes = (0..hash_seeds)
            .map(|r| {
                let mut c = config.clone();
                c.seed = replica_seed(config.seed, r);
                Lane::new(&c, options)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut lanes = lanes.into_iter().peekable();
        let mut groups = Vec::new();
        while lanes.peek().is_some() {
            groups.push(Group::new(lanes.by_ref().take(SHARED_FILTERS).collect()));
        }
        Ok(Replays {
            kind: Kind::Shared { groups, seen: 0 },
            options,
        })
    }

    /// The replay of one stream: [`Replays::new`] with its ground truth sized up front
    /// for `distinct` keys when the stream's count is known (what the source declares or
    /// estimates, [`super::sizing::distinct_up_front`], or what a caller that read the
    /// source already asked), else grown as keys arrive. Every command and study that
    /// replays builds its replay here.
    pub fn sized(
        config: &FilterConfig,
        options: ReplayOptions,
        hash_seeds: u32,
        distinct: Option<u64>,
    ) -> Result<Self> {
        let mut r = Replays::new(config, options, hash_seeds)?;
        if let Some(d) = distinct {
            r.expect_distinct(d);
        }
        Ok(r)
    }

    /// [`Replays::sized`] for a trace `source`, sized by what it declares or estimates
    /// ([`super::sizing::distinct_up_front`]).
    pub fn for_source(
        config: &FilterConfig,
        options: ReplayOptions,
        hash_seeds: u32,
        source: &dyn MessageSource,
    ) -> Result<Self> {
        let distinct = distinct_up_front(config, source, u64::from(hash_seeds));
        Replays::sized(config, options, hash_seeds, distinct)
    }

    /// Replays every message of a stream.
    pub fn run<I: IntoIterator<Item = Message>>(&mut self, stream: I) {
        for_each_key_batch(stream, |keys| self.run_keys(keys));
    }

    /// Sizes the ground truth for `distinct` keys up front
    /// ([`Replay::expect_distinct`]).
    pub fn expect_distinct(&mut self, distinct: u64) {
        match &mut self.kind {
            Kind::One(r) => r.expect_distinct(distinct),
            Kind::Shared { groups, .. } => {
                for g in groups {
                    if g.truth.distinct() == 0 {
                        g.truth = SharedTruth::with_capacity(distinct);
                    }
                }
            }
        }
    }

    /// Replays every message of a trace source in batches, like
    /// [`Replay::run_source`]: the tables grow together, so a growth is checked
    /// against the machine for all of them at once; Ctrl-C stops it between batches.
    pub fn run_source(&mut self, source: &mut dyn rbf_data::ingest::MessageSource) -> Result<()> {
        if let Kind::One(r) = &mut self.kind {
            return r.run_source(source);
        }
        source_batches(source, |keys| {
            let growth = self.growth_bytes(keys.len());
            if growth > 0 {
                check_growth(self.distinct(), growth)?;
            }
            self.run_keys(keys);
            Ok(())
        })
    }

    /// Bytes the ground-truth tables would allocate together if `more` new keys
    /// arrived (0 when none of them would grow): what a caller replaying several
    /// streams' worth of filters side by side checks against the machine first.
    pub fn growth_bytes(&self, more: usize) -> u64 {
        match &self.kind {
            Kind::One(r) => r.growth_bytes(more).unwrap_or(0),
            Kind::Shared { groups, .. } => groups
                .iter()
                .filter_map(|g| g.truth.growth_bytes(more))
                .sum(),
        }
    }

    /// Distinct keys seen so far (the first table's: every table sees every key).
    pub fn distinct(&self) -> usize {
        match &self.kind {
            Kind::One(r) => r.distinct(),
            Kind::Shared { groups, .. } => groups[0].truth.distinct(),
        }
    }

    /// Replays a slice of keys through every filter.
    pub fn run_keys(&mut self, keys: &[u64]) {
        match &mut self.kind {
            Kind::One(r) => r.run_keys(keys),
            Kind::Shared { groups, seen } => {
                for g in groups {
                    g.run_keys(keys, *seen);
                }
                *seen += keys.len() as u64;
            }
        }
    }

    /// Replays one arrival through every filter.
    pub fn push(&mut self, key: u64) {
        self.run_keys(&[key]);
    }

    /// Arrivals replayed so far, warm-up included.
    pub fn seen(&self) -> u64 {
        match &self.kind {
            Kind::One(r) => r.seen(),
            Kind::Shared { seen, .. } => *seen,
        }
    }

    /// Measured arrivals so far (after the warm-up).
    pub fn measured(&self) -> u64 {
        self.seen().saturating_sub(self.options.warmup)
    }

    pub fn hash_seeds(&self) -> usize {
        self.cycle_stats().len()
    }

    /// Every filter's complete-cycle statistics, the configured filter's first.
    pub fn cycle_stats(&self) -> Vec<&CycleStats> {
        match &self.kind {
            Kind::One(r) => vec![r.cycle_stats()],
            Kind::Shared { groups, .. } => groups
                .iter()
                .flat_map(|g| g.lanes.iter().map(Lane::cycle_stats))
                .collect(),
        }
    }

    /// The configured filter's report, its intervals over its own cycles only.
    pub fn first_report(&self) -> ReplayReport {
        match &self.kind {
            Kind::One(r) => r.report(),
            Kind::Shared { groups, seen } => {
                groups[0].lanes[0].report(*seen, groups[0].truth.distinct() as u64)
            }
        }
    }

    /// Arrivals that the groups of four filters replayed together
    /// ([`super::lane::Quad`]), counted once per group (for tests and benchmarks).
    pub fn arrivals_together(&self) -> u64 {
        match &self.kind {
            Kind::One(_) => 0,
            Kind::Shared { groups, .. } => groups
                .iter()
                .filter_map(|g| g.quad.as_ref())
                .map(Quad::arrivals)
                .sum(),
        }
    }

    /// Arrivals whose probes of a filter were left out because the message was
    /// recorded in the filter's current cycle ([`super::lane`]'s `CycleCut::recorded_now`),
    /// counted per filter, and per group where the four filters left them out together
    /// (for tests and benchmarks).
    pub fn probes_left_out(&self) -> u64 {
        match &self.kind {
            Kind::One(_) => 0,
            Kind::Shared { groups, .. } => groups
                .iter()
                .map(|g| {
                    let quad = g.quad.as_ref().map_or(0, Quad::left_out);
                    quad + g.lanes.iter().map(|l| l.left_out).sum::<u64>()
                })
                .sum(),
        }
    }

    /// Bytes held by the ground-truth tables.
    pub fn truth_bytes(&self) -> usize {
        match &self.kind {
            Kind::One(r) => r.truth_bytes(),
            Kind::Shared { groups, .. } => groups.iter().map(|g| g.truth.allocated_bytes()).sum(),
        }
    }

    /// Bytes held by the filters.
    pub fn filter_bytes(&self) -> usize {
        match &self.kind {
            Kind::One(r) => r.filter_bytes(),
            Kind::Shared { groups, .. } => groups
                .iter()
                .flat_map(|g| &g.lanes)
                .map(|l| l.filter.allocated_bytes())
                .sum(),
        }
    }

    /// The configured filter's report, with the intervals (and the point estimates
    /// they belong to) over every hash seed's complete cycles.
    pub fn report(&self) -> ReplayReport {
        let mut r = self.first_report();
        let stats = self.cycle_stats();
        r.confidence = confidence(&stats, self.measured(), self.options.confidence);
        r.hash_seeds = stats.len() as u64;
        r
    }

    /// Makes every shared table rebase its records once they reach `rel_max` cycles
    /// (tests: rebasing happens once every 2^14 cycles or more otherwise).
    #[cfg(test)]
    fn set_rel_max(&mut self, rel_max: u64) {
        if let Kind::Shared { groups, .. } = &mut self.kind {
            for g in groups {
                g.rel_max = rel_max;
            }
        }
    }
}

/// Replays a whole stream with `hash_seeds` filters and reports.
pub fn replay_seeds<I: IntoIterator<Item = Message>>(
    config: &FilterConfig,
    options: ReplayOptions,
    hash_seeds: u32,
    stream: I,
) -> Result<ReplayReport> {
    let mut r = Replays::new(config, options, hash_seeds)?;
    r.run(stream);
    Ok(r.report())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base each filter's records are relative to (0 until a rebase).
    fn bases(r: &Replays) -> Vec<u64> {
        match &r.kind {
            Kind::One(_) => vec![0],
            Kind::Shared { groups, .. } => groups.iter().flat_map(|g| g.bases.clone()).collect(),
        }
    }

    /// Replays `keys` through `seeds` filters like `config` together (rebasing at
    /// `rel_max` if given) and one by one, and checks that the reports, intervals and
    /// per-cycle totals agree; returns the shared replay's bases.
    fn shared_equals_separate(
        config: &FilterConfig,
        options: ReplayOptions,
        seeds: u32,
        rel_max: Option<u64>,
        keys: &[u64],
    ) -> Vec<u64> {
        let mut shared = Replays::new(config, options, seeds).unwrap();
        if let Some(m) = rel_max {
            shared.set_rel_max(m);
        }
        shared.run_keys(keys);
        let separate: Vec<Replay> = (0..seeds)
            .map(|r| {
                let mut c = config.clone();
                c.seed = replica_seed(config.seed, r);
                let mut one = Replay::new(&c, options).unwrap();
                one.run_keys(keys);
                one
            })
            .collect();
        let mut want = separate[0].report();
        let stats: Vec<_> = separate.iter().map(Replay::cycle_stats).collect();
        want.confidence = confidence(&stats, separate[0].measured(), options.confidence);
        want.hash_seeds = u64::from(seeds);
        assert_eq!(
            serde_json::to_string(&shared.report()).unwrap(),
            serde_json::to_string(&want).unwrap(),
            "{config:?}"
        );
        for (got, want) in shared.cycle_stats().iter().zip(&stats) {
            assert_eq!(got.totals(), want.totals());
        }
        bases(&shared)
    }

    #[test]
    fn rebased_records_replay_as_before() {
        // Records rebased whenever a filter's cycles run 40 past its base (every 2^14
        // cycles or more otherwise): thousands of rebases, and the same results as
        // separate replays, whose records never are.
        let keys: Vec<u64> = (0..60_000u64)
            .map(|i| (i.wrapping_mul(i) ^ i >> 3) % 3_001)
            .collect();
        for (phases, retaining) in [(1, true), (1, false), (2, true), (2, false)] {
            let mut config = FilterConfig::sigma_bounded(256 * u64::from(phases), 3, 0);
            config.sigma = None;
            config.max_inserts = Some(8);
            config.phases = phases;
            config.retaining = retaining;
            let options = ReplayOptions {
                warmup: 1_000,
                ..Default::default()
            };
            let bases = shared_equals_separate(&config, options, 5, Some(BLOCK as u64 + 40), &keys);
            assert!(bases.iter().all(|&b| b > 1_000), "{bases:?}");
        }
    }

    #[test]
    fn four_filters_together_at_every_simd_level() {
        // The quad kernel (the prefix of each block no filter can recycle in) against
        // the filters one by one, with block positions at every level the CPU has.
        use rbf_foundations::simd::Simd;
        let keys: Vec<u64> = (0..40_000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) ^ i >> 7) % 9_001)
            .collect();
        let options = ReplayOptions {
            warmup: 3_000,
            ..Default::default()
        };
        for (k, sigma) in [(1, 1_500), (4, 2_000), (8, 3_000)] {
            let config = FilterConfig::sigma_bounded(1 << 13, k, sigma);
            let mut want = None;
            for level in Simd::available() {
                for together in [true, false] {
                    let mut r = Replays::new(&config, options, 4).unwrap();
                    if let Kind::Shared { groups, .. } = &mut r.kind {
                        for g in groups.iter_mut() {
                            g.lanes
                                .iter_mut()
                                .for_each(|l| l.set_avx2(level >= Simd::Avx2));
                            if !together {
                                g.quad = None;
                            }
                        }
                    }
                    r.run_keys(&keys);
                    assert_eq!(r.arrivals_together() > 0, together, "k {k}");
                    let got = serde_json::to_string(&r.report()).unwrap();
                    let want = want.get_or_insert_with(|| got.clone());
                    assert_eq!(&got, want, "k {k}, {level:?}, together {together}");
                }
            }
            want.take();
        }
    }

    #[test]
    fn records_rebase_at_their_width() {
        // Filters recycling every few arrivals pass 2^15 cycles, the most a 16-bit
        // record holds, within 200 000 arrivals: rebased at the real limit, they
        // replay as separate replays do.
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) ^ i >> 5) % 5_003)
            .collect();
        for phases in [1, 2] {
            let mut config = FilterConfig::sigma_bounded(64 * u64::from(phases), 2, 0);
            config.sigma = None;
            config.max_inserts = Some(2);
            config.phases = phases;
            let bases = shared_equals_separate(&config, ReplayOptions::default(), 4, None, &keys);
            assert!(bases.iter().all(|&b| b > 0), "{phases} phases: {bases:?}");
        }
    }
}
