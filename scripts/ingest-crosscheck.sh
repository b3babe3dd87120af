#!/usr/bin/env bash
# Independent counts for every shipped capture, from tshark (Debian package `tshark`),
# recorded in tests/data/tshark-counts.tsv; tests/it/ingest_crosscheck.rs compares
# rbf's counts with that file. Not run by CI (tshark is not needed to build or test):
# run it by hand after adding a capture, and commit the TSV:
#
#   scripts/ingest-crosscheck.sh            # every capture in tests/data, traces/pcap, traces/ndpi
#   scripts/ingest-crosscheck.sh FILE...    # just these (printed, not recorded)
#
# Per capture: frames, IPv4/IPv6 packets (the outermost IP header), and distinct keys
# for five-tuple, five-tuple-vlan, src-dst, dst, dst-prefix (/24, /48), src-prefix.
# Ports count only when the outermost IP header's protocol is TCP/UDP/SCTP (tshark's
# first tcp/udp layer could otherwise be the header quoted inside an ICMP error), and
# only in the first fragment of a fragmented packet (the others carry no ports).
# A row `traces/ndpi/` counts the nDPI captures as one series (distinct keys over all).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tshark >/dev/null || { echo "needs tshark (apt-get install tshark)" >&2; exit 1; }
record=1
files=("$@")
if [ ${#files[@]} -gt 0 ]; then
  record=0
else
  files=(tests/data/*.pcap tests/data/*.pcapng tests/data/*.pcap.zst traces/pcap/*.pcap* traces/ndpi/*.zst)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
i=0
for f in "${files[@]}"; do
  in="$f"
  if [[ "$f" == *.zst ]]; then in="$work/in"; zstd -dqf "$f" -o "$in"; fi
  i=$((i + 1))
  printf '%s\n' "$f" > "$work/$i.name"
  tshark -r "$in" -T fields -e frame.number 2>/dev/null | wc -l > "$work/$i.frames"
  # No reassembly: a fragment's frame shows only what that fragment carries.
  tshark -r "$in" -o ip.defragment:FALSE -o ipv6.defragment:FALSE \
      -T fields -E separator=/t -E occurrence=f \
      -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst -e ip.proto -e ipv6.nxt \
      -e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport -e sctp.srcport -e sctp.dstport \
      -e ip.frag_offset -e ipv6.fraghdr.offset \
      -e ipv6.hopopts.nxt -e ipv6.dstopts.nxt -e ipv6.routing.nxt -e ipv6.fraghdr.nxt 2>/dev/null \
    | paste - <(tshark -r "$in" -T fields -E occurrence=a -E aggregator=, -e vlan.id 2>/dev/null) \
    > "$work/$i.fields"
done
out=/dev/stdout
[ $record = 1 ] && out=tests/data/tshark-counts.tsv
python3 - "$work" "$i" "$(tshark --version | head -1)" > "$out" <<'PY'
import sys, ipaddress
work, n, version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
KINDS = ["five-tuple", "five-tuple-vlan", "src-dst", "dst", "dst-prefix", "src-prefix"]
print(f"# {version}; written by scripts/ingest-crosscheck.sh")
print("\t".join(["file", "frames", "ip"] + KINDS))
series = {k: set() for k in KINDS}
series_frames = series_ip = 0
for i in range(1, n + 1):
    name = open(f"{work}/{i}.name").read().strip()
    frames = int(open(f"{work}/{i}.frames").read())
    keys = {k: set() for k in KINDS}
    ip = 0
    for line in open(f"{work}/{i}.fields"):
        f = line.rstrip("\n").split("\t")
        f += [""] * (19 - len(f))
        s4, d4, s6, d6, p4, p6, ts, td, us, ud, ss, sd, fo4, fo6, hop, dst_opts, rt, fr, vl = f[:19]
        # IPv6: the protocol after the extension headers (the last one present).
        for nxt in (hop, dst_opts, rt, fr):
            if nxt:
                p6 = nxt
        # A header cut before its addresses is undecodable (rbf counts it as malformed).
        if (s4 and not d4) or (s6 and not d6):
            continue
        if s4 and (not s6):
            src, dst, proto, plen, frag = s4, d4, p4, 24, fo4
        elif s6:
            src, dst, proto, plen, frag = s6, d6, p6, 48, fo6
        else:
            continue
        ip += 1
        sp = dp = "0"
        if frag in ("", "0"):
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
    print("\t".join([name, str(frames), str(ip)] + [str(len(keys[k])) for k in KINDS]))
    if name.startswith("traces/ndpi/"):
        series_frames += frames
        series_ip += ip
        for k in KINDS:
            series[k] |= keys[k]
if series_frames:
    print("\t".join(["traces/ndpi/", str(series_frames), str(series_ip)] + [str(len(series[k])) for k in KINDS]))
PY
[ $record = 1 ] && { echo "recorded in $out:"; cat "$out"; }
exit 0
