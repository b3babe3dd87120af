//! The flow table: packets aggregate into flow records, exported like a NetFlow/IPFIX
//! metering process does (RFC 5470 §5.1.1, RFC 7011 terminology): a record ends when
//! its flow has been idle longer than the inactive timeout, when it has lasted longer
//! than the active timeout, or at the end of the capture. Expiry is checked when a
//! packet of the flow arrives and by a sweep once per second of capture time, so
//! memory is bounded by the flows live within the timeouts, not by the trace length.

use crate::ingest::source::{FlowSummary, IngestSummary, MessageSource};
use crate::message::{KeyDictionary, Message, Timestamp};
use rbf_foundations::slot_table::SlotTable;

/// Timeouts in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FlowTimeouts {
    pub inactive_ns: u64,
    pub active_ns: u64,
}

impl Default for FlowTimeouts {
    /// The usual exporter defaults: 15 s inactive, 30 min active.
    fn default() -> Self {
        FlowTimeouts {
            inactive_ns: 15_000_000_000,
            active_ns: 1_800_000_000_000,
        }
    }
}

/// Parses `15`, `15s`, `500ms`, `2m`, `1h` into nanoseconds (a bare number is seconds).
pub fn parse_duration_ns(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration such as 15s, 500ms, 30m or 1h; found {s:?}"))?;
    let scale = match unit.trim() {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        u => {
            return Err(format!(
                "unknown time unit {u:?} in {s:?}; allowed: ns, us, ms, s, m, h"
            ))
        }
    };
    let ns = v * scale;
    if ns.is_nan() || ns <= 0.0 {
        return Err(format!("duration {s:?} must be positive"));
    }
    // u64::MAX as f64 rounds up to 2^64: anything at or above it does not fit.
    if ns >= u64::MAX as f64 {
        return Err(format!(
            "duration {s:?} is too long: at most 2^64 - 1 ns (about 584 years)"
        ));
    }
    Ok(ns as u64)
}

/// Why a record was exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExportReason {
    Inactive,
    Active,
    EndOfCapture,
}

/// One exported flow record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRecord {
    pub key: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    pub packets: u64,
    /// Capture time at which the record was exported.
    pub export_ns: u64,
    pub reason: ExportReason,
}

const SWEEP_INTERVAL_NS: u64 = 1_000_000_000;

/// A flow's slot in the table: its key, then the fields below (rbf_foundations::slot_table's
/// slots hold the key first). `packets == 0` marks a flow that was exported (a
/// tombstone, reused if the key comes back).
const FIRST: usize = 1;
const LAST: usize = 2;
const PACKETS: usize = 3;

/// Tombstones the table tolerates before it is rebuilt from its live flows: at least
/// this many, and at least as many as live flows (so each rebuild moves no more flows
/// than were exported since the last one).
const MIN_TOMBSTONES: usize = 1 << 12;

/// Live flows keyed by their 64-bit message key.
///
/// The table is the replay's open-addressing [`SlotTable`] with 32-byte slots
/// `[key, first_ns, last_ns, packets]`: one cache line per packet, which the caller
/// can ask for ahead ([`FlowTable::prefetch`]). A capture touches its flows at random,
/// and with std's `HashMap` (a control byte and a bucket apart, no prefetch) each
/// packet waited for two cache misses (docs/history/PERFORMANCE-log.md, packet captures,
/// 2026-11-27 18:20 UTC).
/// That table never removes a key: an exported flow's slot keeps its key with its
/// counts zeroed (a tombstone), and the table is rebuilt from the live flows when the
/// tombstones outnumber them, so memory stays bounded by the live flows.
pub struct FlowTable {
    timeouts: FlowTimeouts,
    slots: SlotTable<4>,
    live: usize,
    tombstones: usize,
    next_sweep_ns: Option<u64>,
    now_ns: u64,
    max_live: usize,
    scratch: Vec<FlowRecord>,
}

impl std::fmt::Debug for FlowTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowTable")
            .field("timeouts", &self.timeouts)
            .field("live", &self.live)
            .field("tombstones", &self.tombstones)
            .finish_non_exhaustive()
    }
}

impl FlowTable {
    pub fn new(timeouts: FlowTimeouts) -> Self {
        FlowTable {
            timeouts,
            slots: SlotTable::in_place(),
            live: 0,
            tombstones: 0,
            next_sweep_ns: None,
            now_ns: 0,
            max_live: 0,
            scratch: Vec::new(),
        }
    }

    pub fn live_flows(&self) -> usize {
        self.live
    }

    /// The most flows that were live at once (what the table's memory is bounded by).
    pub fn max_live_flows(&self) -> usize {
        self.max_live
    }

    /// Slots the table holds, live flows and tombstones (for the memory test).
    #[cfg(test)]
    fn stored(&self) -> usize {
        self.slots.len()
    }

    /// Starts loading the slot of `key` (a hint: call it a few packets ahead).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.slots.prefetch(key);
    }

    fn expired(timeouts: FlowTimeouts, s: &[u64; 4], now: u64) -> Option<ExportReason> {
        if now.saturating_sub(s[LAST]) > timeouts.inactive_ns {
            Some(ExportReason::Inactive)
        } else if now.saturating_sub(s[FIRST]) > timeouts.active_ns {
            Some(ExportReason::Active)
        } else {
            None
        }
    }

    fn record(key: u64, s: &[u64; 4], export_ns: u64, reason: ExportReason) -> FlowRecord {
        FlowRecord {
            key,
            first_ns: s[FIRST],
            last_ns: s[LAST],
            packets: s[PACKETS],
            export_ns,
            reason,
        }
    }

    /// Accounts a packet of flow `key` at `time_ns`; pushes the records it causes to be
    /// exported onto `out`, in export order. Capture times that go backwards are
    /// treated as "now" for expiry (no negative idle times).
    #[inline(always)]
    pub fn packet(&mut self, key: u64, time_ns: u64, out: &mut Vec<FlowRecord>) {
        self.now_ns = self.now_ns.max(time_ns);
        let now = self.now_ns;
        match self.next_sweep_ns {
            None => self.next_sweep_ns = Some(now.saturating_add(SWEEP_INTERVAL_NS)),
            Some(t) if now >= t => {
                self.sweep(now, out);
                self.next_sweep_ns = Some(now.saturating_add(SWEEP_INTERVAL_NS));
            }
            Some(_) => {}
        }
        let fresh = [key, time_ns, time_ns, 1];
        // The flow's own idle and active times are measured at this packet's time: in
        // a capture whose times jump back, a flow is not split by packets of others.
        let timeouts = self.timeouts;
        let (s, new_key) = self.slots.entry_slot(key);
        if s[PACKETS] == 0 {
            *s = fresh;
            self.tombstones -= usize::from(!new_key);
            self.live += 1;
            self.max_live = self.max_live.max(self.live);
            return;
        }
        match Self::expired(timeouts, s, time_ns) {
            Some(reason) => {
                out.push(Self::record(key, s, now, reason));
                *s = fresh;
            }
            None => {
                s[LAST] = s[LAST].max(time_ns);
                s[PACKETS] += 1;
            }
        }
    }

    /// Exports every expired flow, oldest last packet first (ties by key, so the
    /// order is deterministic whatever the table's order).
    #[cold]
    fn sweep(&mut self, now: u64, out: &mut Vec<FlowRecord>) {
        self.scratch.clear();
        for s in self.slots.slots_mut() {
            if s[PACKETS] == 0 {
                continue;
            }
            if let Some(reason) = Self::expired(self.timeouts, s, now) {
                self.scratch.push(Self::record(s[0], s, now, reason));
                s[FIRST..].fill(0);
            }
        }
        self.live -= self.scratch.len();
        self.tombstones += self.scratch.len();
        // The table holds a key once: (last packet, key) has no ties, so an unstable
        // sort gives the stable one's order, without its buffer.
        self.scratch.sort_unstable_by_key(|r| (r.last_ns, r.key));
        out.append(&mut self.scratch);
        if self.tombstones > self.live.max(MIN_TOMBSTONES) {
            self.rebuild();
        }
    }

    /// A fresh table holding only the live flows.
    #[cold]
    fn rebuild(&mut self) {
        let mut slots = SlotTable::<4>::in_place();
        slots.reserve(self.live);
        for s in self.slots.slots_mut().filter(|s| s[PACKETS] != 0) {
            *slots.entry_slot(s[0]).0 = *s;
        }
        self.slots = slots;
        self.tombstones = 0;
    }

    /// Exports every live flow at the end of the capture (oldest last packet first).
    pub fn finish(&mut self, out: &mut Vec<FlowRecord>) {
        let now = self.now_ns;
        // Sized for the live flows (no doubling copies); handed over whole when nothing
        // is pending (no copy); sorted unstably, as `sweep`: the table holds a key once,
        // so (last packet, key) has no ties. At the end of a capture this is wall time
        // with the decoding thread idle: 75 -> 42 ms for 561 627 flows
        // (docs/history/PERFORMANCE-log.md, "Kept: the end-of-capture export").
        let mut all = Vec::with_capacity(self.live);
        all.extend(
            self.slots
                .slots_mut()
                .filter(|s| s[PACKETS] != 0)
                .map(|s| Self::record(s[0], s, now, ExportReason::EndOfCapture)),
        );
        all.sort_unstable_by_key(|r| (r.last_ns, r.key));
        if out.is_empty() {
            *out = all;
        } else {
            out.append(&mut all);
        }
        self.slots = SlotTable::in_place();
        self.live = 0;
        self.tombstones = 0;
    }
}

/// Packets read and accounted at a time: the size of the decoding thread's batches
/// ([`crate::ingest::readahead::BATCH`]), which then change hands without a copy.
const PACKET_BATCH: usize = crate::ingest::readahead::BATCH;
/// How many packets ahead a flow's slot is asked for: enough to cover a miss to
/// memory (about 100 ns) with the work on the packets in between.
const PREFETCH_AHEAD: usize = 16;

/// A packet stream (one capture or a series of them) turned into a stream of exported
/// flow records: one message per record, at its export time. One table spans every
/// file of a series, so a flow cut by a file rotation is still one flow.
pub struct FlowExport {
    packets: Box<dyn MessageSource>,
    table: FlowTable,
    /// Packets read but not yet accounted, a batch at a time (see [`FlowExport::account`]).
    batch: Vec<Message>,
    pending: Vec<FlowRecord>,
    at: usize,
    exported: u64,
    summary: Option<IngestSummary>,
}

impl FlowExport {
    pub fn new(packets: Box<dyn MessageSource>, timeouts: FlowTimeouts) -> Self {
        FlowExport {
            packets,
            table: FlowTable::new(timeouts),
            batch: Vec::with_capacity(PACKET_BATCH),
            pending: Vec::new(),
            at: 0,
            exported: 0,
            summary: None,
        }
    }

    /// Reads a batch of packets and accounts them in order; false at the end of the
    /// packets. The slot of the packet [`PREFETCH_AHEAD`] places on is asked for before
    /// each one is accounted, so that its cache miss overlaps the work in between
    /// (prefetching changes no result).
    fn account(&mut self) -> bool {
        self.batch.clear();
        self.packets.fill(&mut self.batch, PACKET_BATCH);
        let FlowExport {
            table,
            batch,
            pending,
            ..
        } = self;
        for m in batch.iter().take(PREFETCH_AHEAD) {
            table.prefetch(m.key);
        }
        for (i, m) in batch.iter().enumerate() {
            if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                table.prefetch(ahead.key);
            }
            // Captures time every packet (a simple packet block gets the time of the
            // packet before it).
            let t = m.time.nanos().unwrap_or(table.now_ns);
            table.packet(m.key, t, pending);
        }
        !batch.is_empty()
    }

    fn finish(&mut self) {
        self.table.finish(&mut self.pending);
        let t = self.table.timeouts;
        let mut s = self.packets.summary().clone();
        s.messages = self.exported + (self.pending.len() - self.at) as u64;
        s.flows = Some(FlowSummary {
            inactive_timeout_s: t.inactive_ns as f64 / 1e9,
            active_timeout_s: t.active_ns as f64 / 1e9,
            records: s.messages,
            max_live_flows: self.table.max_live_flows() as u64,
        });
        self.summary = Some(s);
    }
}

impl Iterator for FlowExport {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(r) = self.pending.get(self.at) {
                self.at += 1;
                self.exported += 1;
                return Some(Message::at(r.key, Timestamp::from_nanos(r.export_ns)));
            }
            self.pending.clear();
            self.at = 0;
            if self.summary.is_some() {
                return None;
            }
            if !self.account() {
                self.finish();
            }
        }
    }
}

impl MessageSource for FlowExport {
    fn summary(&self) -> &IngestSummary {
        self.summary
            .as_ref()
            .unwrap_or_else(|| self.packets.summary())
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.packets.dictionary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn inactive_and_active_timeouts_split_records() {
        let mut t = FlowTable::new(FlowTimeouts {
            inactive_ns: 15 * S,
            active_ns: 60 * S,
        });
        let mut out = Vec::new();
        // Flow 1: packets every 10 s for 100 s -> active timeout splits it.
        for i in 0..=10 {
            t.packet(1, i * 10 * S, &mut out);
        }
        // Flow 2: two packets 20 s apart -> inactive timeout (found by the sweep).
        t.packet(2, 100 * S, &mut out);
        t.packet(3, 121 * S, &mut out);
        t.finish(&mut out);
        let f1: Vec<_> = out.iter().filter(|r| r.key == 1).collect();
        assert_eq!(f1.len(), 2);
        assert_eq!(f1[0].reason, ExportReason::Active);
        assert_eq!(
            (f1[0].first_ns, f1[0].last_ns, f1[0].packets),
            (0, 60 * S, 7)
        );
        assert_eq!(f1[1].packets, 4);
        let f2: Vec<_> = out.iter().filter(|r| r.key == 2).collect();
        assert_eq!(f2.len(), 1);
        assert_eq!(f2[0].reason, ExportReason::Inactive);
        assert_eq!(out.iter().map(|r| r.packets).sum::<u64>(), 13);
        assert_eq!(t.live_flows(), 0);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("15s"), Ok(15_000_000_000));
        assert_eq!(parse_duration_ns("15"), Ok(15_000_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("30m"), Ok(1_800_000_000_000));
        assert!(parse_duration_ns("5 parsecs").is_err());
        assert!(parse_duration_ns("0").unwrap_err().contains("positive"));
        for long in [
            "18446744073709551615s",
            "18446744073709551615",
            "9999999999999999h",
        ] {
            let e = parse_duration_ns(long).unwrap_err();
            assert!(e.contains("too long") && e.contains("584 years"), "{e}");
        }
        assert!(parse_duration_ns("584y")
            .unwrap_err()
            .contains("unknown time unit"));
    }

    #[test]
    fn memory_is_bounded_by_live_flows() {
        let mut t = FlowTable::new(FlowTimeouts {
            inactive_ns: S,
            active_ns: 100 * S,
        });
        let mut out = Vec::new();
        // 100 000 short flows, ten new ones every 0.1 s: at most ~a few hundred live.
        for i in 0..100_000u64 {
            t.packet(i, i * S / 100, &mut out);
        }
        assert!(t.max_live_flows() < 400, "{}", t.max_live_flows());
        // Exported flows leave tombstones, which the rebuilds keep in check.
        assert!(t.stored() <= 2 * MIN_TOMBSTONES + 400, "{}", t.stored());
        t.finish(&mut out);
        assert_eq!(out.len(), 100_000);
    }

    /// The flow table as first written, on std's HashMap: the reference the slot table
    /// with tombstones, fed in prefetched batches, must reproduce record for record.
    struct Reference {
        timeouts: FlowTimeouts,
        live: std::collections::HashMap<u64, [u64; 4]>,
        next_sweep_ns: Option<u64>,
        now_ns: u64,
        out: Vec<FlowRecord>,
    }

    impl Reference {
        fn new(timeouts: FlowTimeouts) -> Self {
            Reference {
                timeouts,
                live: Default::default(),
                next_sweep_ns: None,
                now_ns: 0,
                out: Vec::new(),
            }
        }

        fn sorted(&mut self, mut records: Vec<FlowRecord>) {
            records.sort_by_key(|r| (r.last_ns, r.key));
            self.out.append(&mut records);
        }

        fn packet(&mut self, key: u64, time: Option<u64>) {
            let time_ns = time.unwrap_or(self.now_ns);
            self.now_ns = self.now_ns.max(time_ns);
            let now = self.now_ns;
            if self.next_sweep_ns.is_some_and(|t| now >= t) {
                let t = self.timeouts;
                let gone: Vec<FlowRecord> = (self.live.iter())
                    .filter_map(|(&k, l)| {
                        let reason = FlowTable::expired(t, l, now)?;
                        Some(FlowTable::record(k, l, now, reason))
                    })
                    .collect();
                for r in &gone {
                    self.live.remove(&r.key);
                }
                self.sorted(gone);
            }
            if self.next_sweep_ns.is_none_or(|t| now >= t) {
                self.next_sweep_ns = Some(now.saturating_add(SWEEP_INTERVAL_NS));
            }
            let fresh = [key, time_ns, time_ns, 1];
            let Some(l) = self.live.get_mut(&key) else {
                self.live.insert(key, fresh);
                return;
            };
            match FlowTable::expired(self.timeouts, l, time_ns) {
                Some(reason) => {
                    self.out.push(FlowTable::record(key, l, now, reason));
                    *l = fresh;
                }
                None => {
                    l[LAST] = l[LAST].max(time_ns);
                    l[PACKETS] += 1;
                }
            }
        }
    }

    /// Messages from a vector, as a capture's packets.
    struct Packets(std::vec::IntoIter<Message>, IngestSummary);

    impl Iterator for Packets {
        type Item = Message;
        fn next(&mut self) -> Option<Message> {
            self.0.next()
        }
    }

    impl MessageSource for Packets {
        fn summary(&self) -> &IngestSummary {
            &self.1
        }
    }

    /// Packets of flows that start and die over time (so that sweeps export them and
    /// the table rebuilds), some long-lived ones (active timeouts), key 0, times that
    /// jump back and packets without a time.
    fn generated_packets(seed: u64, n: u64) -> Vec<Message> {
        let mut rng = crate::synth::Rng::seed(seed);
        let mut t = 1_000 * S;
        (0..n)
            .map(|i| {
                t += rng.below(S / 500);
                let key = match rng.below(100) {
                    0 => 0,
                    1..=5 => 1 + rng.below(8),
                    _ => (i / 64 + rng.below(3_000)).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                };
                match rng.below(200) {
                    0 => Message::new(key),
                    1 => Message::at(key, Timestamp::from_nanos(t - rng.below(3 * S))),
                    _ => Message::at(key, Timestamp::from_nanos(t)),
                }
            })
            .collect()
    }

    #[test]
    fn batched_slot_table_exports_what_a_hash_map_exports() {
        for (seed, inactive, active) in
            [(1, 2 * S, 7 * S), (2, S / 2, 3 * S), (3, 15 * S, 1_800 * S)]
        {
            let timeouts = FlowTimeouts {
                inactive_ns: inactive,
                active_ns: active,
            };
            let packets = generated_packets(seed, 300_000);
            let mut reference = Reference::new(timeouts);
            for m in &packets {
                reference.packet(m.key, m.time.nanos());
            }
            let now = reference.now_ns;
            let rest: Vec<FlowRecord> = (reference.live.drain())
                .map(|(k, l)| FlowTable::record(k, &l, now, ExportReason::EndOfCapture))
                .collect();
            reference.sorted(rest);
            let source = Packets(packets.into_iter(), IngestSummary::default());
            let got: Vec<Message> = FlowExport::new(Box::new(source), timeouts).collect();
            let want: Vec<Message> = (reference.out.iter())
                .map(|r| Message::at(r.key, Timestamp::from_nanos(r.export_ns)))
                .collect();
            assert!(want.len() > 5_000, "{} records", want.len());
            assert_eq!(got, want, "seed {seed}");
        }
    }

    /// The records themselves (not only their keys and export times) match, and the
    /// table rebuilt itself on the way.
    #[test]
    fn slot_table_records_match_the_hash_map_s() {
        let timeouts = FlowTimeouts {
            inactive_ns: S,
            active_ns: 4 * S,
        };
        let mut reference = Reference::new(timeouts);
        let mut table = FlowTable::new(timeouts);
        let mut out = Vec::new();
        let mut distinct = std::collections::HashSet::new();
        for m in generated_packets(4, 400_000) {
            reference.packet(m.key, m.time.nanos());
            table.packet(m.key, m.time.nanos().unwrap_or(table.now_ns), &mut out);
            distinct.insert(m.key);
        }
        assert!(
            table.stored() < distinct.len() / 2,
            "{} of {}",
            table.stored(),
            distinct.len()
        );
        assert_eq!(out, reference.out);
    }
}
