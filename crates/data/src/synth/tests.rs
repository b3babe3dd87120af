use super::*;
use rbf_foundations::stats::normal_quantile;
use std::collections::HashSet;

fn synth(d: usize, alpha: f64, p: f64, placement: Placement, n: u64, seed: u64) -> Synthesizer {
    Synthesizer::new(&SynthConfig {
        workload: Workload::zipf(d, alpha, p, placement),
        arrivals: n,
        seed,
        prologue: true,
    })
    .unwrap()
}

/// z such that a two-sided deviation beyond z sd has probability 1e-6: the test fails by
/// chance once in a million runs per check, and catches any real bias of that size.
fn z() -> f64 {
    normal_quantile(1.0 - 0.5e-6)
}

#[test]
fn repeat_fraction_matches_p_repeat() {
    for (p, placement) in [
        (0.9, Placement::Uniform),
        (0.5, Placement::Top),
        (0.2, Placement::Bottom),
    ] {
        let n = 200_000u64;
        let mut seen = HashSet::new();
        let mut repeats = 0u64;
        let mut s = synth(1000, 1.0, p, placement, n, 11);
        let prologue = s.prologue_len();
        assert_eq!(prologue, 1000);
        for (i, a) in (&mut s).enumerate() {
            let before = !seen.insert(a.object);
            if i >= prologue {
                repeats += u64::from(before);
            }
        }
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let dev = (repeats as f64 - n as f64 * p).abs();
        assert!(
            dev < z() * sd,
            "p = {p}: {repeats} repeats of {n}, {:.1} sd",
            dev / sd
        );
    }
}

#[test]
fn top_ranks_follow_q() {
    // Bottom placement leaves ranks 0..D-2 in place, so object i keeps rank i and its
    // share of all arrivals is p_r q_i, observable from the trace alone.
    let (d, alpha, p, n) = (1000, 1.0, 0.8, 400_000u64);
    let q = crate::workload::zipf(d, alpha);
    let mut counts = [0u64; 10];
    let s = synth(d, alpha, p, Placement::Bottom, n, 5);
    let prologue = s.prologue_len();
    for a in s.skip(prologue) {
        if (a.object as usize) < 10 {
            counts[a.object as usize] += 1;
        }
    }
    for i in 0..10 {
        let pi = p * q[i];
        let sd = (n as f64 * pi * (1.0 - pi)).sqrt();
        let dev = (counts[i] as f64 - n as f64 * pi).abs();
        assert!(
            dev < z() * sd,
            "rank {i}: {} vs {:.0} ({:.1} sd)",
            counts[i],
            n as f64 * pi,
            dev / sd
        );
    }
}

#[test]
fn rank_draws_follow_q_under_uniform_placement() {
    let (d, alpha, p, n) = (500, 2.0, 0.9, 300_000u64);
    let q = crate::workload::zipf(d, alpha);
    let mut counts = [0u64; 5];
    let mut new_ranks = 0u64;
    let mut new_count = 0u64;
    for a in synth(d, alpha, p, Placement::Uniform, n, 8) {
        match a.origin {
            Origin::Repeat { rank } if rank < 5 => counts[rank] += 1,
            Origin::New { rank } => {
                new_ranks += rank as u64;
                new_count += 1;
            }
            _ => {}
        }
    }
    for i in 0..5 {
        let pi = p * q[i];
        let sd = (n as f64 * pi * (1.0 - pi)).sqrt();
        assert!(
            (counts[i] as f64 - n as f64 * pi).abs() < z() * sd,
            "rank {i}"
        );
    }
    // Uniform placement: mean rank (D-1)/2, sd of the mean sqrt((D^2-1)/12 / n_new).
    let mean = new_ranks as f64 / new_count as f64;
    let sd = (((d * d - 1) as f64 / 12.0) / new_count as f64).sqrt();
    assert!((mean - (d - 1) as f64 / 2.0).abs() < z() * sd);
}

#[test]
fn same_seed_same_trace_and_new_ids_are_fresh() {
    let a: Vec<_> = synth(100, 1.0, 0.5, Placement::Uniform, 1000, 3).collect();
    let b: Vec<_> = synth(100, 1.0, 0.5, Placement::Uniform, 1000, 3).collect();
    let c: Vec<_> = synth(100, 1.0, 0.5, Placement::Uniform, 1000, 4).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut max = 99;
    for x in &a {
        if let Origin::New { .. } = x.origin {
            assert_eq!(x.object, max + 1);
            max = x.object;
        }
    }
}

#[test]
fn request_log_format() {
    let mut out = Vec::new();
    let n = write_request_log(synth(3, 1.0, 0.5, Placement::Top, 2, 1), &mut out).unwrap();
    assert_eq!(n, 5);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    for (i, l) in lines.iter().enumerate() {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0], i.to_string());
        f[1].parse::<u64>().unwrap();
        assert!(f[2].parse::<u64>().unwrap() >= 1);
    }
    let mut buf = [0u8; 20];
    assert_eq!(format_u64(0, &mut buf), b"0");
    assert_eq!(format_u64(u64::MAX, &mut buf), b"18446744073709551615");
}

#[test]
fn the_log_size_estimate_brackets_the_written_size() {
    for (d, alpha, p, arrivals) in [
        (300, 1.0, 0.9, 200_000u64),
        (10, 3.0, 0.99, 50_000),
        (5000, 0.0, 0.2, 100_000),
    ] {
        let w = Workload::zipf(d, alpha, p, Placement::Uniform);
        let s = Synthesizer::new(&SynthConfig {
            workload: w.clone(),
            arrivals,
            seed: 3,
            prologue: true,
        })
        .unwrap();
        let mut bytes = Vec::new();
        write_request_log(s, &mut bytes).unwrap();
        let size = super::request_log_size(&w, arrivals, true);
        let real = bytes.len() as f64;
        assert!(size.at_least <= real, "{size:?} vs {real}");
        assert!(size.at_least > 0.6 * real, "{size:?} vs {real}");
        assert!(
            (size.about - real).abs() < 0.35 * real,
            "{size:?} vs {real}"
        );
    }
}
