//! The flow table: packets aggregate into flow records, exported like a NetFlow/IPFIX
//! metering process does (RFC 5470 §5.1.1, RFC 7011 terminology): a record ends when
//! its flow has been idle longer than the inactive timeout, when it has lasted longer
//! than the active timeout, or at the end of the capture. Expiry is checked when a
//! packet of the flow arrives and by a sweep once per second of capture time, so
//! memory is bounded by the flows live within the timeouts, not by the trace length.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::ingest::{FlowSummary, IngestSummary, MessageSource};
use crate::message::{KeyDictionary, Message, Timestamp};

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

#[derive(Clone, Copy, Debug)]
struct Live {
    first_ns: u64,
    last_ns: u64,
    packets: u64,
}

const SWEEP_INTERVAL_NS: u64 = 1_000_000_000;

/// The table's hash of a message key. Message keys are already XXH3 hashes of the
/// flow's fields: one folded multiplication spreads them over the buckets, where the
/// standard library's SipHash cost as much per packet as decoding the packet.
#[derive(Clone, Copy, Debug, Default)]
struct KeyMix(u64);

impl Hasher for KeyMix {
    #[inline]
    fn write_u64(&mut self, k: u64) {
        let m = u128::from(k ^ self.0) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Live flows keyed by their 64-bit message key.
#[derive(Debug)]
pub struct FlowTable {
    timeouts: FlowTimeouts,
    live: HashMap<u64, Live, BuildHasherDefault<KeyMix>>,
    next_sweep_ns: Option<u64>,
    now_ns: u64,
    max_live: usize,
    scratch: Vec<FlowRecord>,
}

impl FlowTable {
    pub fn new(timeouts: FlowTimeouts) -> Self {
        FlowTable {
            timeouts,
            live: HashMap::default(),
            next_sweep_ns: None,
            now_ns: 0,
            max_live: 0,
            scratch: Vec::new(),
        }
    }

    pub fn live_flows(&self) -> usize {
        self.live.len()
    }

    /// The most flows that were live at once (what the table's memory is bounded by).
    pub fn max_live_flows(&self) -> usize {
        self.max_live
    }

    fn expired(timeouts: FlowTimeouts, l: &Live, now: u64) -> Option<ExportReason> {
        if now.saturating_sub(l.last_ns) > timeouts.inactive_ns {
            Some(ExportReason::Inactive)
        } else if now.saturating_sub(l.first_ns) > timeouts.active_ns {
            Some(ExportReason::Active)
        } else {
            None
        }
    }

    fn record(key: u64, l: &Live, export_ns: u64, reason: ExportReason) -> FlowRecord {
        FlowRecord {
            key,
            first_ns: l.first_ns,
            last_ns: l.last_ns,
            packets: l.packets,
            export_ns,
            reason,
        }
    }

    /// Accounts a packet of flow `key` at `time_ns`; pushes the records it causes to be
    /// exported onto `out`, in export order. Capture times that go backwards are
    /// treated as "now" for expiry (no negative idle times).
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
        let fresh = Live {
            first_ns: time_ns,
            last_ns: time_ns,
            packets: 1,
        };
        // The flow's own idle and active times are measured at this packet's time: in
        // a capture whose times jump back, a flow is not split by packets of others.
        let timeouts = self.timeouts;
        match self.live.get_mut(&key) {
            Some(l) => match Self::expired(timeouts, l, time_ns) {
                Some(reason) => {
                    out.push(Self::record(key, l, now, reason));
                    *l = fresh;
                }
                None => {
                    l.last_ns = l.last_ns.max(time_ns);
                    l.packets += 1;
                }
            },
            None => {
                self.live.insert(key, fresh);
                self.max_live = self.max_live.max(self.live.len());
            }
        }
    }

    /// Exports every expired flow, oldest last packet first (ties by key, so the
    /// order is deterministic whatever the hash map's iteration order).
    fn sweep(&mut self, now: u64, out: &mut Vec<FlowRecord>) {
        self.scratch.clear();
        for (&k, l) in &self.live {
            if let Some(reason) = Self::expired(self.timeouts, l, now) {
                self.scratch.push(Self::record(k, l, now, reason));
            }
        }
        self.scratch.sort_by_key(|r| (r.last_ns, r.key));
        for r in &self.scratch {
            self.live.remove(&r.key);
        }
        out.append(&mut self.scratch);
    }

    /// Exports every live flow at the end of the capture (oldest last packet first).
    pub fn finish(&mut self, out: &mut Vec<FlowRecord>) {
        let now = self.now_ns;
        let mut all: Vec<FlowRecord> = self
            .live
            .drain()
            .map(|(k, l)| Self::record(k, &l, now, ExportReason::EndOfCapture))
            .collect();
        all.sort_by_key(|r| (r.last_ns, r.key));
        out.append(&mut all);
    }
}

/// A packet stream (one capture or a series of them) turned into a stream of exported
/// flow records: one message per record, at its export time. One table spans every
/// file of a series, so a flow cut by a file rotation is still one flow.
pub struct FlowExport {
    packets: Box<dyn MessageSource>,
    table: FlowTable,
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
            pending: Vec::new(),
            at: 0,
            exported: 0,
            summary: None,
        }
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
            match self.packets.next() {
                // Captures time every packet (a simple packet block gets the time of
                // the packet before it).
                Some(m) => self.table.packet(
                    m.key,
                    m.time.nanos().unwrap_or(self.table.now_ns),
                    &mut self.pending,
                ),
                None => self.finish(),
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
        t.finish(&mut out);
        assert_eq!(out.len(), 100_000);
    }
}
