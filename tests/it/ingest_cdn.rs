//! The real TRAGEN CDN trace (first 100 000 requests, tests/data/tragen-100k.csv,
//! BSD 2-Clause, see TRAGEN-LICENSE.txt). Expected figures from an independent count:
//!
//! ```text
//! awk -F, '{c[$2]++} END {n=0; o=0; for (k in c) {n++; if (c[k]==1) o++}; print NR, n, o}' tragen-100k.csv
//! 100001 64050 40977
//! ```

use std::collections::HashMap;

use crate::ingest_support::*;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::Format;

#[test]
fn tragen_arrivals_objects_and_one_hit_wonders() {
    let (ms, s) = read(
        &data("tragen-100k.csv"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    assert_eq!(s.format.name(), "jedi");
    assert_eq!((s.records, s.messages, s.malformed), (100_001, 100_001, 0));
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for m in &ms {
        *counts.entry(m.key).or_default() += 1;
    }
    let one_hit = counts.values().filter(|&&c| c == 1).count();
    assert_eq!(counts.len(), 64_050);
    assert_eq!(one_hit, 40_977);
    // 64.0% of the objects are requested once.
    let frac = one_hit as f64 / counts.len() as f64;
    assert!((frac - 0.639_766).abs() < 1e-6, "{frac}");
    // Integer-second timestamps from 0 to 99 394, never decreasing.
    assert_eq!(ms[0].time.nanos(), Some(0));
    assert_eq!(ms[ms.len() - 1].time.nanos(), Some(99_394_000_000_000));
    assert!(ms.windows(2).all(|w| w[0].time <= w[1].time));
}
