//! `nfdump -o csv` output: a header line naming the columns (`ts,te,td,sa,da,sp,dp,pr,
//! flg,...`), one flow record per line, then nfdump's summary block (a `Summary` line,
//! a header and one line of totals), which is not a flow and is skipped (counted).
//! The block is those three lines and no more: what follows it is read again, so that
//! concatenated outputs (`cat a.csv b.csv`: a second header, more flows, a second
//! summary) lose no flow; a header line anywhere restarts the records with its columns.
//! Columns are found by name in the header (their set differs between nfdump
//! versions); `te` (the flow's last packet), `sa`, `da`, `sp`, `dp` and `pr` are needed.
//!
//! Times are `YYYY-MM-DD hh:mm:ss` with optional fractional seconds, in the time zone
//! nfdump ran in: rbf reads them as UTC (run `TZ=UTC nfdump ...` for true epoch times;
//! only differences of times matter to the models). `pr` is nfdump's protocol name
//! (its IANA-numbered list: `TCP`, `UDP`, `ICMP`, `ICMP6`, `GRE`, `ESP`, ...) or a
//! number. nfdump's flows are unidirectional, keyed like the flows of a capture.

use super::{port, split, Endpoints, Keyer};
use crate::ingest::options::Format;
use crate::ingest::packet::key::KeySpec;
use crate::ingest::text::LineParser;
use crate::message::Timestamp;

#[derive(Clone, Copy, Debug)]
struct Columns {
    te: usize,
    sa: usize,
    da: usize,
    sp: usize,
    dp: usize,
    pr: usize,
    svln: Option<usize>,
    count: usize,
}

impl Columns {
    fn from_header(line: &[u8]) -> Result<Columns, String> {
        let names: Vec<&[u8]> = split(line, b',').map(<[u8]>::trim_ascii).collect();
        let find = |name: &str| names.iter().position(|n| *n == name.as_bytes());
        let need = |name: &str| {
            find(name).ok_or_else(|| {
                format!(
                    "the nfdump CSV header has no `{name}` column (needs te, sa, da, sp, dp, pr)"
                )
            })
        };
        Ok(Columns {
            te: need("te")?,
            sa: need("sa")?,
            da: need("da")?,
            sp: need("sp")?,
            dp: need("dp")?,
            pr: need("pr")?,
            svln: find("svln"),
            count: names.len(),
        })
    }
}

const HEADER: &str = "nfdump CSV header line";
const SUMMARY: &str = "nfdump summary block (totals, not a flow)";
const BLANK: &str = "blank line";

/// Where the parser is in nfdump's summary block: `Summary`, then a header naming the
/// totals (`flows,bytes,packets,...`), then one line of totals.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Summary {
    Outside,
    /// After the `Summary` line: the totals' header is next.
    Title,
    /// After the totals' header: the totals are next.
    Header,
}

/// The [`LineParser`] for `nfdump -o csv` output.
pub struct NfdumpParser {
    keyer: Keyer,
    columns: Option<Columns>,
    summary: Summary,
    last_skip: &'static str,
}

impl NfdumpParser {
    pub fn new(spec: KeySpec) -> Self {
        NfdumpParser {
            keyer: Keyer::new(spec),
            columns: None,
            summary: Summary::Outside,
            last_skip: HEADER,
        }
    }

    /// Whether a first line is nfdump's CSV header.
    pub fn detect(first_line: &[u8]) -> bool {
        first_line.starts_with(b"ts,te,") || first_line.starts_with(b"ts,te\r")
    }
}

impl NfdumpParser {
    /// Whether line `t` belongs to the summary block (and moves through it). Only the
    /// block's own three lines are taken: anything else is read as what it is.
    fn in_summary(&mut self, t: &[u8]) -> bool {
        let totals = |t: &[u8]| t.iter().all(|&b| b.is_ascii_digit() || b == b',');
        self.summary = match self.summary {
            _ if t == b"Summary" => Summary::Title,
            Summary::Title if t.starts_with(b"flows,") => Summary::Header,
            Summary::Header if totals(t) => Summary::Outside,
            _ => {
                self.summary = Summary::Outside;
                return false;
            }
        };
        true
    }
}

impl LineParser for NfdumpParser {
    const ENCODED_KEYS: bool = true;

    fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        _line_no: u64,
    ) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        let t = line.trim_ascii();
        if t.is_empty() {
            self.last_skip = BLANK;
            return Ok(None);
        }
        if t.starts_with(b"ts,") {
            self.summary = Summary::Outside;
            self.last_skip = HEADER;
            self.columns = Some(Columns::from_header(t)?);
            return Ok(None);
        }
        if self.in_summary(t) {
            self.last_skip = SUMMARY;
            return Ok(None);
        }
        let c = self
            .columns
            .ok_or("a record before the CSV header (expected `nfdump -o csv` output)")?;
        let fields: Vec<&[u8]> = split(line, b',').collect();
        if fields.len() < c.count {
            return Err(format!(
                "{} fields, the header names {}",
                fields.len(),
                c.count
            ));
        }
        let time = date_time(fields[c.te].trim_ascii())
            .ok_or("te is not a date and time `YYYY-MM-DD hh:mm:ss[.fff]`")?;
        let protocol = protocol(fields[c.pr].trim_ascii())?;
        let vlan = match c.svln.map(|i| fields[i].trim_ascii()) {
            None | Some(b"0") | Some(b"") => None,
            Some(v) => Some(port(v, "svln")?),
        };
        let e = Endpoints {
            src: fields[c.sa],
            dst: fields[c.da],
            protocol,
            src_port: port(fields[c.sp], "sp")?,
            dst_port: port(fields[c.dp], "dp")?,
            vlans: [vlan, None],
        };
        Ok(Some((self.keyer.key(&e)?, time)))
    }

    fn format(&self) -> Format {
        Format::NfdumpCsv
    }

    fn skip_reason(&self, _line_no: u64) -> &'static str {
        self.last_skip
    }
}

/// nfdump's protocol names by IANA number (its `protolist`); numbers without a name
/// are printed as numbers. Where nfdump repeats a name (IPIP 4 and 94, IDPR 35 and
/// 38), the first number is taken.
const PROTOCOLS: [&str; 138] = [
    "0", "ICMP", "IGMP", "GGP", "IPIP", "ST", "TCP", "CBT", "EGP", "IGP", "BBN", "NVPII", "PUP",
    "ARGUS", "ENCOM", "XNET", "CHAOS", "UDP", "MUX", "DCN", "HMP", "PRM", "XNS", "Trnk1", "Trnk2",
    "Leaf1", "Leaf2", "RDP", "IRTP", "ISO-4", "NETBK", "MFESP", "MEINP", "DCCP", "3PC", "IDPR",
    "XTP", "DDP", "IDPR", "TP++", "IL", "IPv6", "SDRP", "Rte6", "Frag6", "IDRP", "RSVP", "GRE",
    "MHRP", "BNA", "ESP", "AH", "INLSP", "SWIPE", "NARP", "MOBIL", "TLSP", "SKIP", "ICMP6",
    "NOHE6", "OPTS6", "HOST", "CFTP", "NET", "SATNT", "KLAN", "RVD", "IPPC", "FS", "SATM", "VISA",
    "IPCV", "CPNX", "CPHB", "WSN", "PVP", "BSATM", "SUNND", "WBMON", "WBEXP", "ISOIP", "VMTP",
    "SVMTP", "VINES", "TTP", "NSIGP", "DGP", "TCF", "EIGRP", "OSPF", "S-RPC", "LARP", "MTP",
    "AX.25", "IPIP", "MICP", "SCCSP", "ETHIP", "ENCAP", "99", "GMTP", "IFMP", "PNNI", "PIM",
    "ARIS", "SCPS", "QNX", "A/N", "IPcmp", "SNP", "CpqPP", "IPXIP", "VRRP", "PGM", "0hop", "L2TP",
    "DDX", "IATP", "STP", "SRP", "UTI", "SMP", "SM", "PTP", "ISIS4", "FIRE", "CRTP", "CRUDP",
    "128", "IPLT", "SPS", "PIPE", "SCTP", "FC", "134", "MHEAD", "UDP-L", "MPLS",
];

fn protocol(s: &[u8]) -> Result<u8, String> {
    if let Some(n) = crate::ingest::text::parse_u64(s) {
        return u8::try_from(n).map_err(|_| format!("protocol number {n} is over 255"));
    }
    PROTOCOLS
        .iter()
        .position(|p| p.as_bytes().eq_ignore_ascii_case(s))
        .map(|i| i as u8)
        .ok_or_else(|| {
            format!(
                "unknown protocol {:?} (expected an nfdump protocol name or number)",
                String::from_utf8_lossy(&s[..s.len().min(16)])
            )
        })
}

/// `YYYY-MM-DD hh:mm:ss[.fff]` as UTC.
fn date_time(s: &[u8]) -> Option<Timestamp> {
    let text = std::str::from_utf8(s).ok()?;
    let (date, time) = text.split_once(' ')?;
    let mut d = date.splitn(3, '-').map(str::parse::<i64>);
    let (y, mo, da) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(str::parse::<i64>);
    let (h, mi, se) = (t.next()?.ok()?, t.next()?.ok()?, t.next()?.ok()?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().ok()? * 10i64.pow(9 - frac.len() as u32)
    };
    let secs = days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60 + se;
    let ns = secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)?;
    u64::try_from(ns).ok().map(Timestamp::from_nanos)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_epoch_times() {
        let t = |s: &str| date_time(s.as_bytes()).and_then(Timestamp::nanos);
        assert_eq!(t("1970-01-01 00:00:00"), Some(0));
        assert_eq!(t("2019-09-21 07:34:07"), Some(1_569_051_247_000_000_000));
        assert_eq!(t("2000-02-29 12:00:00.5"), Some(951_825_600_500_000_000));
        assert_eq!(t("2019-13-01 00:00:00"), None);
        assert_eq!(t("yesterday"), None);
    }

    #[test]
    fn protocols_by_name_or_number() {
        assert_eq!(protocol(b"TCP"), Ok(6));
        assert_eq!(protocol(b"UDP"), Ok(17));
        assert_eq!(protocol(b"ICMP6"), Ok(58));
        assert_eq!(protocol(b"ESP"), Ok(50));
        assert_eq!(protocol(b"SCTP"), Ok(132));
        assert_eq!(protocol(b"253"), Ok(253));
        assert!(protocol(b"999").is_err());
        assert!(protocol(b"FOO").is_err());
    }

    #[test]
    fn records_header_and_summary() {
        let mut p = NfdumpParser::new(KeySpec::default());
        assert!(NfdumpParser::detect(b"ts,te,td,sa,da,sp,dp,pr,flg"));
        assert_eq!(p.parse(b"ts,te,td,sa,da,sp,dp,pr,flg", 1), Ok(None));
        let (k, t) = p
            .parse(b"2019-09-21 07:34:07,2019-09-21 07:34:08,0.359,34.225.240.173,192.168.2.17,443,57020,TCP,...AP.S.", 2)
            .expect("ok")
            .expect("record");
        assert_eq!(
            crate::ingest::packet::key::render_encoded(k),
            "tcp 34.225.240.173:443 -> 192.168.2.17:57020"
        );
        assert_eq!(t.nanos(), Some(1_569_051_248_000_000_000));
        assert!(p.parse(b"2019-09-21 07:34:07,x", 3).is_err());
        assert_eq!(p.parse(b"Summary", 4), Ok(None));
        assert_eq!(p.parse(b"flows,bytes,packets", 5), Ok(None));
        assert_eq!(p.skip_reason(5), SUMMARY);
        assert_eq!(p.parse(b"335,1124321,3074", 6), Ok(None));
        assert_eq!(p.skip_reason(6), SUMMARY);
        // The block is over: a second output's header and flows are read again.
        assert_eq!(p.parse(b"ts,te,td,sa,da,sp,dp,pr,flg", 7), Ok(None));
        assert_eq!(p.skip_reason(7), HEADER);
        let flow = b"2019-09-21 07:34:07,2019-09-21 07:34:08,0.359,10.0.0.1,10.0.0.2,1,2,UDP,....";
        assert!(matches!(p.parse(flow, 8), Ok(Some(_))));
        // So is a line after the totals that is not a header (a flow, or malformed).
        for (i, line) in [&b"Summary"[..], b"flows,bytes", b"1,2"].iter().enumerate() {
            assert_eq!(p.parse(line, 9 + i as u64), Ok(None));
        }
        assert!(matches!(p.parse(flow, 12), Ok(Some(_))));
        assert!(p.parse(b"Time window: 0", 13).is_err());
    }
}
