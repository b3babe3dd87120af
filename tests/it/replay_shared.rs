//! The hash seeds' filters share one key table ([`Replays`]): their results
//! must be those of one [`Replay`] per seed, each with a table of its own, bit for bit
//! (counts, per-cycle distributions, time batches, intervals), for every filter variant
//! (one and two phases, sigma- and N-bounded, fixed and per-cycle positions, retaining
//! or not, with and without copy-over), for more filters than share one table, and
//! however the stream is cut into batches.

use rbf_data::filter::{FilterConfig, Positions};
use rbf_data::message::Message;
use rbf_data::synth::Rng;
use rbf_observed::replay::{
    confidence, replica_seed, CycleStats, Replay, ReplayOptions, ReplayReport, Replays,
    DEFAULT_HASH_SEEDS,
};

use super::replay_reference::random_config;

/// What one filter's complete cycles recorded, in a comparable form.
fn stats_text(s: &CycleStats) -> String {
    format!(
        "{:?} {:?} {:?}",
        s.per_cycle(),
        s.totals(),
        s.time_batches()
    )
}

/// The report of `seeds` separate replays (one per replica seed), put together as
/// [`Replays::report`] documents it, and each filter's statistics.
fn separate(
    config: &FilterConfig,
    options: ReplayOptions,
    seeds: u32,
    keys: &[u64],
) -> (ReplayReport, Vec<String>) {
    let replays: Vec<Replay> = (0..seeds)
        .map(|r| {
            let mut c = config.clone();
            c.seed = replica_seed(config.seed, r);
            let mut one = Replay::new(&c, options).expect("config");
            one.run(keys.iter().map(|&k| Message::new(k)));
            one
        })
        .collect();
    let stats: Vec<&CycleStats> = replays.iter().map(Replay::cycle_stats).collect();
    let mut report = replays[0].report();
    report.confidence = confidence(&stats, replays[0].measured(), options.confidence);
    report.hash_seeds = u64::from(seeds);
    (report, stats.iter().map(|s| stats_text(s)).collect())
}

/// `Replays` over `keys`, fed in batches of the sizes `cuts` cycles through (0: one
/// arrival at a time with `push`), against separate replays.
fn check(
    config: &FilterConfig,
    options: ReplayOptions,
    seeds: u32,
    keys: &[u64],
    cuts: &[usize],
    what: &str,
) {
    let mut shared = Replays::new(config, options, seeds).expect("config");
    let mut rest = keys;
    for &n in cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        if n == 0 {
            shared.push(rest[0]);
            rest = &rest[1..];
        } else {
            let (now, later) = rest.split_at(n.min(rest.len()));
            shared.run_keys(now);
            rest = later;
        }
    }
    let (want, want_stats) = separate(config, options, seeds, keys);
    let got = shared.report();
    assert_eq!(
        serde_json::to_string(&got).expect("json"),
        serde_json::to_string(&want).expect("json"),
        "{what}: {}",
        config.describe()
    );
    let got_stats: Vec<String> = shared.cycle_stats().into_iter().map(stats_text).collect();
    assert_eq!(got_stats, want_stats, "{what}: {}", config.describe());
    assert_eq!(shared.seen(), keys.len() as u64);
}

#[test]
fn shared_replays_equal_separate_replays_for_every_variant() {
    let mut rng = Rng::seed(41);
    for case in 0..150 {
        let c = random_config(&mut rng);
        let universe = 5 + rng.below(2000);
        let n = 500 + rng.below(5000) as usize;
        // Skewed keys, key 0 among them.
        let keys: Vec<u64> = (0..n)
            .map(|_| {
                let u = rng.next_f64();
                let id = (u * u * universe as f64) as u64;
                if id == 1 {
                    0
                } else {
                    id.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                }
            })
            .collect();
        let options = ReplayOptions {
            warmup: rng.below(n as u64 / 2),
            ..Default::default()
        };
        // 2 to 9 filters: one or more shared tables, the last one not full.
        let seeds = 2 + rng.below(8) as u32;
        let cuts = [1 + rng.below(700) as usize, 0, 1 + rng.below(300) as usize];
        check(
            &c,
            options,
            seeds,
            &keys,
            &cuts,
            &format!("case {case}, {seeds} seeds"),
        );
    }
}

#[test]
fn default_replay_equals_four_separate_replays_through_table_growth() {
    // Enough distinct keys for the shared table to double many times while blocks of
    // located slots are in use, and long enough for intervals; the main variants.
    let mut rng = Rng::seed(7);
    let keys: Vec<u64> = (0..300_000)
        .map(|_| {
            let u = rng.next_f64();
            ((u * u * u * 150_000.0) as u64).wrapping_mul(0x2545_F491_4F6C_DD1D) | 1
        })
        .collect();
    let options = ReplayOptions {
        warmup: 20_000,
        ..Default::default()
    };
    let one_phase = FilterConfig::sigma_bounded(1 << 14, 4, 6_000);
    let mut n_bounded = FilterConfig::sigma_bounded(1 << 14, 3, 0);
    n_bounded.sigma = None;
    n_bounded.max_inserts = Some(3_000);
    let mut two_phase = FilterConfig::sigma_bounded(1 << 15, 4, 5_000);
    two_phase.phases = 2;
    let mut per_cycle = one_phase.clone();
    per_cycle.positions = Some(Positions::PerCycle);
    per_cycle.retaining = false;
    let mut two_phase_per_cycle = two_phase.clone();
    two_phase_per_cycle.independent_halves = true;
    two_phase_per_cycle.positions = Some(Positions::PerCycle);
    two_phase_per_cycle.copy_over = false;
    for (what, c) in [
        ("one phase", one_phase),
        ("N-bounded", n_bounded),
        ("two phases", two_phase),
        ("per-cycle positions", per_cycle),
        ("two phases, per-cycle positions", two_phase_per_cycle),
    ] {
        check(&c, options, DEFAULT_HASH_SEEDS, &keys, &[8192], what);
        let report = Replays::new(&c, options, DEFAULT_HASH_SEEDS)
            .map(|mut r| {
                r.run_keys(&keys);
                r.report()
            })
            .expect("config");
        assert!(report.confidence.is_some(), "{what}: intervals to compare");
        assert!(report.per_cycle.complete_cycles >= 5, "{what}");
    }
}

#[test]
fn a_table_sized_up_front_replays_as_a_grown_one() {
    let keys: Vec<u64> = (0..50_000u64).map(|i| (i * i) % 20_011 + 1).collect();
    let config = FilterConfig::sigma_bounded(1 << 12, 3, 1_500);
    let options = ReplayOptions::default();
    let mut sized = Replays::new(&config, options, DEFAULT_HASH_SEEDS).expect("config");
    sized.expect_distinct(20_011);
    let before = sized.truth_bytes();
    sized.run_keys(&keys);
    assert_eq!(sized.truth_bytes(), before, "sized: no growth");
    let (want, _) = separate(&config, options, DEFAULT_HASH_SEEDS, &keys);
    assert_eq!(
        serde_json::to_string(&sized.report()).expect("json"),
        serde_json::to_string(&want).expect("json")
    );
}

#[test]
fn four_filters_together_equal_separate_replays() {
    // Four seeds of one-phase filters in the caches take the quad kernel for the
    // arrivals no filter can recycle in, the per-filter kernel for the rest: k 1 to 8,
    // recycles every few arrivals to every few thousand, sigma- and N-bounded,
    // retaining or not, fixed and per-cycle positions, key 0, every batch size.
    // Repeats recorded in the current cycle skip their probes (CycleCut::recorded_now),
    // in the quad kernel and the per-filter kernel alike: the separate replays probe
    // every arrival.
    let mut rng = Rng::seed(4141);
    let (mut together, mut left_out) = (0, 0);
    for case in 0..60 {
        let m = [256u64, 1024, 4096, 1 << 16][rng.below(4) as usize];
        let k = 1 + rng.below(8) as u32;
        // At least one word in eight set at a recycle: no list of touched words.
        let limit = m / 8 + rng.below(m / 2);
        let mut c = FilterConfig::sigma_bounded(m, k, limit);
        if rng.below(3) == 0 {
            c.sigma = None;
            c.max_inserts = Some(limit);
        }
        c.retaining = rng.below(2) == 0;
        if rng.below(3) == 0 {
            c.positions = Some(Positions::PerCycle);
        }
        c.seed = rng.below(1 << 40);
        let universe = 5 + rng.below(3 * m);
        let n = 2_000 + rng.below(8_000) as usize;
        let keys: Vec<u64> = (0..n)
            .map(|_| match rng.below(universe) {
                1 => 0,
                id => id.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            })
            .collect();
        let options = ReplayOptions {
            warmup: rng.below(n as u64 / 2),
            ..Default::default()
        };
        let cuts = [1 + rng.below(1000) as usize, 0, 1 + rng.below(300) as usize];
        let what = format!("case {case}");
        check(&c, options, DEFAULT_HASH_SEEDS, &keys, &cuts, &what);
        let mut r = Replays::new(&c, options, DEFAULT_HASH_SEEDS).expect("config");
        r.run_keys(&keys);
        let quad = r.arrivals_together();
        assert!(quad > 0, "{what}: {}", c.describe());
        together += quad;
        left_out += r.probes_left_out();
    }
    assert!(together > 100_000, "{together}");
    assert!(left_out > 100_000, "{left_out}");
}

#[test]
fn filters_beyond_the_caches_replay_as_separate_replays() {
    // Arrays larger than the caches (above 1 MiB of words): the shared kernel
    // prefetches further ahead and before each block; above 2^26 bits the block
    // positions are drawn one per value. Recycles every few
    // thousand arrivals; batches cut below, at and above a block, and single pushes.
    let mut rng = Rng::seed(406);
    let keys: Vec<u64> = (0..200_000)
        .map(|_| {
            let u = rng.next_f64();
            ((u * u * 60_000.0) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        })
        .collect();
    let options = ReplayOptions {
        warmup: 10_000,
        ..Default::default()
    };
    let singles = FilterConfig::sigma_bounded((1 << 26) + 64, 4, 12_000);
    let mut singles_per_cycle = FilterConfig::sigma_bounded((1 << 26) + 64, 3, 9_000);
    singles_per_cycle.positions = Some(Positions::PerCycle);
    singles_per_cycle.retaining = false;
    let mut pairs_n_bounded = FilterConfig::sigma_bounded((1 << 23) + 64, 5, 0);
    pairs_n_bounded.sigma = None;
    pairs_n_bounded.max_inserts = Some(2_500);
    for (what, c) in [
        ("2^26 + 64 bits", singles),
        ("2^26 + 64 bits, per-cycle positions", singles_per_cycle),
        ("2^23 + 64 bits, N-bounded", pairs_n_bounded),
    ] {
        check(
            &c,
            options,
            DEFAULT_HASH_SEEDS,
            &keys,
            &[8192, 0, 300],
            what,
        );
        let (report, left_out) = Replays::new(&c, options, DEFAULT_HASH_SEEDS)
            .map(|mut r| {
                r.run_keys(&keys);
                (r.report(), r.probes_left_out())
            })
            .expect("config");
        assert!(report.per_cycle.complete_cycles >= 5, "{what}");
        // Repeats recorded in the current cycle (a few in a hundred with cycles this
        // short) left their probes out, and the separate replays, which probe them,
        // agree (check above).
        assert!(left_out > 4 * keys.len() as u64 / 100, "{what}: {left_out}");
    }
}
