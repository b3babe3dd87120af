use super::*;

fn cfg(memory: u64, k: u32, sigma: u64) -> FilterConfig {
    FilterConfig::sigma_bounded(memory, k, sigma)
}

/// Keys whose positions in array 0 are pairwise disjoint and internally distinct.
fn disjoint_keys(f: &RecyclingFilter, n: usize) -> Vec<u64> {
    let mut used = std::collections::HashSet::new();
    let mut keys = Vec::new();
    for key in 0.. {
        let p = f.positions(key, 0);
        let set: std::collections::HashSet<_> = p.iter().copied().collect();
        if set.len() == p.len() && set.iter().all(|x| !used.contains(x)) {
            used.extend(set);
            keys.push(key);
            if keys.len() == n {
                break;
            }
        }
    }
    keys
}

#[test]
fn sigma_trigger_fires_above_sigma_not_at_it() {
    for retaining in [true, false] {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            let mut c = cfg(256, 2, 6);
            c.retaining = retaining;
            c.hashing = hashing;
            let mut f = RecyclingFilter::new(&c).unwrap();
            let keys = disjoint_keys(&f, 4);
            for &key in &keys[..3] {
                let o = f.process(key);
                assert!(!o.found && !o.recycled && o.inserted);
                assert_eq!(o.new_bits, 2);
            }
            // Exactly sigma = 6 bits set: still within the cycle.
            assert_eq!(f.active_bits(), 6);
            assert_eq!(f.recycles(), 0);
            // A repeat sets nothing and cannot trigger.
            assert!(f.process(keys[0]).found);
            // sigma + 2 bits: recycle.
            let o = f.process(keys[3]);
            assert!(o.recycled && !o.found);
            assert_eq!(f.recycles(), 1);
            assert_eq!(f.active_bits(), if retaining { 2 } else { 0 });
            assert_eq!(f.process(keys[3]).found, retaining);
            assert!(!f.process(keys[0]).found, "recycled message must look new");
        }
    }
}

#[test]
fn sigma_trigger_at_sigma_plus_one_bits() {
    // k = 1: one bit per message, so the count passes through sigma + 1 exactly.
    let mut f = RecyclingFilter::new(&cfg(128, 1, 3)).unwrap();
    let keys = disjoint_keys(&f, 4);
    for &key in &keys[..3] {
        assert!(!f.process(key).recycled);
    }
    assert_eq!(f.active_bits(), 3);
    assert!(f.process(keys[3]).recycled);
    assert_eq!(f.active_bits(), 1);
}

#[test]
fn max_inserts_counts_bit_setting_insertions_only() {
    let mut c = cfg(1024, 3, 0);
    c.sigma = None;
    c.max_inserts = Some(2);
    c.retaining = false;
    let mut f = RecyclingFilter::new(&c).unwrap();
    let keys = disjoint_keys(&f, 3);
    assert!(!f.process(keys[0]).recycled);
    assert!(f.process(keys[0]).found);
    assert!(!f.process(keys[1]).recycled);
    assert_eq!(f.active_inserts(), 2);
    assert!(f.process(keys[2]).recycled);
    assert_eq!(f.active_inserts(), 0);
    assert_eq!(f.active_bits(), 0);
}

#[test]
fn colliding_positions_may_coincide_distinct_never() {
    let c = cfg(4, 4, 3);
    let f = RecyclingFilter::new(&c).unwrap();
    let coincide = (0..1000u64).any(|key| {
        let mut p = f.positions(key, 0);
        p.sort_unstable();
        p.dedup();
        p.len() < 4
    });
    assert!(
        coincide,
        "with M=4, k=4 colliding hashes must collide sometimes"
    );
    let mut d = c.clone();
    d.hashing = Hashing::Distinct;
    d.sigma = Some(3);
    let mut f = RecyclingFilter::new(&d).unwrap();
    for key in 0..50 {
        let before = f.active_bits();
        let o = f.process(key);
        if before == 0 {
            assert_eq!(o.new_bits, 4);
        }
    }
}

fn two_phase(copy_over: bool) -> FilterConfig {
    let mut c = cfg(512, 2, 4);
    c.phases = 2;
    c.copy_over = copy_over;
    c.retaining = true;
    c
}

#[test]
fn two_phase_frozen_half_remembers_one_cycle() {
    let mut f = RecyclingFilter::new(&two_phase(true)).unwrap();
    let keys = disjoint_keys(&f, 8);
    f.process(keys[0]);
    f.process(keys[1]);
    assert_eq!(f.active_bits(), 4);
    // Third key: 6 > 4 bits, recycle; the old active becomes frozen.
    assert!(f.process(keys[2]).recycled);
    assert_eq!(f.frozen_bits(), 6);
    assert_eq!(f.active_bits(), 2); // retained keys[2]
    assert!(f.process(keys[0]).found, "frozen half still knows keys[0]");
    // Copy-over put keys[0] into the active half too.
    assert_eq!(f.active_bits(), 4);
    assert!(f.process(keys[3]).recycled);
    // keys[1] was only in the (now cleared) first array.
    assert!(!f.process(keys[1]).found);
}

#[test]
fn two_phase_without_copy_over_does_not_refresh() {
    let mut f = RecyclingFilter::new(&two_phase(false)).unwrap();
    let keys = disjoint_keys(&f, 6);
    f.process(keys[0]);
    f.process(keys[1]);
    assert!(f.process(keys[2]).recycled);
    let before = f.active_bits();
    let o = f.process(keys[0]);
    assert!(o.found && !o.inserted && o.new_bits == 0);
    assert_eq!(f.active_bits(), before);
}

#[test]
fn independent_halves_use_other_positions() {
    let mut c = two_phase(true);
    c.independent_halves = true;
    let f = RecyclingFilter::new(&c).unwrap();
    let differ = (0..100u64)
        .filter(|&k| f.positions(k, 0) != f.positions(k, 1))
        .count();
    assert!(differ > 90);
    let shared = RecyclingFilter::new(&two_phase(true)).unwrap();
    assert!((0..100u64).all(|k| shared.positions(k, 0) == shared.positions(k, 1)));
}

#[test]
fn set_bit_count_stays_exact_over_many_recycles() {
    for phases in [1u8, 2] {
        let mut c = cfg(1000, 5, 300);
        c.phases = phases;
        let mut f = RecyclingFilter::new(&c).unwrap();
        for key in 0..20_000u64 {
            f.process(key % 3000);
            assert!(f.active_bits() <= 300 + 5);
        }
        assert!(f.recycles() > 10);
        for a in &f.arrays {
            assert_eq!(a.count_ones(), a.recount());
        }
    }
}
