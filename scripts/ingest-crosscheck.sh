#!/usr/bin/env bash
# Independent counts for the captures in tests/data, from tshark (Debian package
# `tshark`), to compare with what tests/it/ingest_pcap.rs asserts. Not needed by the test
# suite; run by hand: scripts/ingest-crosscheck.sh [capture...]
#
# Per capture: frames, IPv4/IPv6 packets (the outermost IP header), and distinct keys
# for five-tuple, five-tuple-vlan, src-dst, dst, dst-prefix (/24, /48), src-prefix.
# Ports count only when the outermost IP header's protocol is TCP/UDP/SCTP (tshark's
# first tcp/udp layer could otherwise be the header quoted inside an ICMP error).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tshark >/dev/null || { echo "needs tshark (apt-get install tshark)" >&2; exit 1; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(tests/data/*.pcap tests/data/*.pcapng tests/data/*.pcap.zst)
for f in "${files[@]}"; do
  in="$f"
  if [[ "$f" == *.zst ]]; then in=$(mktemp); zstd -dqf "$f" -o "$in"; fi
  frames=$(tshark -r "$in" -T fields -e frame.number 2>/dev/null | wc -l)
  tshark -r "$in" -T fields -E separator=/t -E occurrence=f \
      -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst -e ip.proto -e ipv6.nxt \
      -e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport -e sctp.srcport -e sctp.dstport 2>/dev/null \
    | paste - <(tshark -r "$in" -T fields -E occurrence=a -E aggregator=, -e vlan.id 2>/dev/null) \
    | python3 -c '
import sys, ipaddress
name = sys.argv[1]; frames = int(sys.argv[2])
keys = {k: set() for k in ["five-tuple", "five-tuple-vlan", "src-dst", "dst", "dst-prefix", "src-prefix"]}
ip = 0
for line in sys.stdin:
    f = line.rstrip("\n").split("\t")
    f += [""] * (13 - len(f))
    s4, d4, s6, d6, p4, p6, ts, td, us, ud, ss, sd, vl = f[:13]
    # A header cut before its addresses is undecodable (rbf counts it as malformed).
    if (s4 and not d4) or (s6 and not d6):
        continue
    if s4 and (not s6):
        src, dst, proto, plen = s4, d4, p4, 24
    elif s6:
        src, dst, proto, plen = s6, d6, p6, 48
    else:
        continue
    ip += 1
    sp = dp = "0"
    if proto == "6" and ts: sp, dp = ts, td
    elif proto == "17" and us: sp, dp = us, ud
    elif proto == "132" and ss: sp, dp = ss, sd
    vlans = tuple(vl.split(",")[:2]) if vl else ()
    net = lambda a: ipaddress.ip_network(f"{a}/{plen}", strict=False)
    keys["five-tuple"].add((src, dst, proto, sp, dp))
    keys["five-tuple-vlan"].add((src, dst, proto, sp, dp, vlans))
    keys["src-dst"].add((src, dst))
    keys["dst"].add(dst)
    keys["dst-prefix"].add(net(dst))
    keys["src-prefix"].add(net(src))
print(f"{name}: frames {frames}, ip {ip}, " + ", ".join(f"{k} {len(v)}" for k, v in keys.items()))
' "$(basename "$f")" "$frames"
  if [[ "$f" == *.zst ]]; then rm -f "$in"; fi
done
