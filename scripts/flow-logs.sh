#!/usr/bin/env bash
# Writes the flow logs in tests/data/flowlogs/ from the shipped nDPI captures:
#
# nfpcapd keys an IPv6 packet with extension headers by the first Next Header field
# (e.g. 0, hop-by-hop options, for MLD), rbf and Zeek by the upper-layer protocol after
# them (58, ICMPv6): tests/it/ingest_flowlogs.rs allows exactly that difference.
#
# * nfdump: the real tools (Debian package `nfdump` 1.7.1): `nfpcapd -r CAPTURE -w DIR
#   -e 1800,15` (active 30 min, inactive 15 s: rbf's --flows defaults), then
#   `TZ=UTC nfdump -R DIR -o csv`, zstd-compressed.
# * Zeek: Zeek is not packaged for Debian, so its conn.log cannot be written by Zeek
#   here. These files follow the layout of Zeek's documentation exactly (TSV header
#   lines #separator \x09, #set_separator, #empty_field, #unset_field, #path, #open,
#   #fields, #types, #close; JSON lines with the same field names: docs.zeek.org,
#   "Zeek Logs" and "conn.log"), with one connection per bidirectional 5-tuple as
#   tshark sees it (originator: the sender of its first packet; ts: its first packet;
#   duration: last minus first packet). Only the fields rbf reads and the counters
#   are filled; `uid` is a made-up unique id and `service` is unset.
#
# Not run by CI; run by hand (needs tshark, nfdump, zstd) and commit the output.
set -euo pipefail
cd "$(dirname "$0")/.."
for t in tshark nfpcapd nfdump zstd; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install tshark nfdump zstd)" >&2; exit 1; }
done
out=tests/data/flowlogs
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in traces/ndpi/*.zst; do
  b=$(basename "$f" .zst); b=${b%.pcapng}; b=${b%.pcap}
  zstd -dqf "$f" -o "$work/cap"
  rm -rf "$work/nf" && mkdir "$work/nf"
  nfpcapd -r "$work/cap" -w "$work/nf" -e 1800,15 >/dev/null 2>&1
  TZ=UTC nfdump -R "$work/nf" -o csv | zstd -q -19 -f -o "$out/$b.nfdump.csv.zst"
  tshark -r "$work/cap" -o ip.defragment:FALSE -o ipv6.defragment:FALSE \
      -T fields -E separator=/t -E occurrence=f \
      -e frame.time_epoch -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst -e ip.proto -e ipv6.nxt \
      -e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport -e icmp.type -e icmp.code \
      -e icmpv6.type -e icmpv6.code -e ip.len -e ipv6.plen \
      -e ipv6.hopopts.nxt -e ipv6.dstopts.nxt -e ipv6.routing.nxt -e ipv6.fraghdr.nxt 2>/dev/null > "$work/pkts"
  python3 - "$work/pkts" "$out/$b.conn.log" "$out/$b.conn.json" <<'PY'
import json, sys
pkts, tsv_path, json_path = sys.argv[1:]
conns, order = {}, []
for line in open(pkts):
    f = line.rstrip("\n").split("\t") + [""] * 21
    t, s4, d4, s6, d6, p4, p6, ts, td, us, ud, it, ic, i6t, i6c, l4, l6 = f[:17]
    # IPv6: the protocol after the extension headers, as Zeek names it.
    for nxt in f[17:21]:
        if nxt:
            p6 = nxt
    src, dst = (s4, d4) if s4 else (s6, d6)
    if not src or not dst:
        continue
    proto = {"6": "tcp", "17": "udp", "1": "icmp", "58": "icmp"}.get(p4 if s4 else p6, "unknown_transport")
    sp, dp = {"tcp": (ts, td), "udp": (us, ud)}.get(proto, ("0", "0"))
    if proto == "icmp":
        sp, dp = (it, ic) if s4 else (i6t, i6c)
    if not sp or not dp:
        sp, dp = "0", "0"
    a, b = (src, sp), (dst, dp)
    k = (proto,) + tuple(sorted([a, b]))
    size = int(l4 or 0) if s4 else 40 + int(l6 or 0)
    if k not in conns:
        conns[k] = {"orig": a, "resp": b, "proto": proto, "first": float(t), "last": float(t),
                    "orig_pkts": 0, "resp_pkts": 0, "orig_ip_bytes": 0, "resp_ip_bytes": 0}
        order.append(k)
    c = conns[k]
    c["last"] = max(c["last"], float(t))
    side = "orig" if a == c["orig"] else "resp"
    c[side + "_pkts"] += 1
    c[side + "_ip_bytes"] += size
fields = ["ts", "uid", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "service",
          "duration", "orig_pkts", "orig_ip_bytes", "resp_pkts", "resp_ip_bytes"]
types = ["time", "string", "addr", "port", "addr", "port", "enum", "string", "interval",
         "count", "count", "count", "count"]
# Zeek writes a connection when it ends: order by last packet.
recs = sorted((conns[k] for k in order), key=lambda c: (c["last"], c["first"]))
with open(tsv_path, "w") as tsv, open(json_path, "w") as js:
    tsv.write("#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\tconn\n")
    tsv.write("#open\t2024-01-01-00-00-00\n")
    tsv.write("#fields\t" + "\t".join(fields) + "\n#types\t" + "\t".join(types) + "\n")
    for i, c in enumerate(recs):
        uid = f"C{i:017d}"
        dur = c["last"] - c["first"]
        row = [f"{c['first']:.6f}", uid, c["orig"][0], c["orig"][1], c["resp"][0], c["resp"][1],
               c["proto"], "-", f"{dur:.6f}", str(c["orig_pkts"]), str(c["orig_ip_bytes"]),
               str(c["resp_pkts"]), str(c["resp_ip_bytes"])]
        tsv.write("\t".join(row) + "\n")
        js.write(json.dumps({"ts": round(c["first"], 6), "uid": uid, "id.orig_h": c["orig"][0],
                             "id.orig_p": int(c["orig"][1]), "id.resp_h": c["resp"][0],
                             "id.resp_p": int(c["resp"][1]), "proto": c["proto"],
                             "duration": round(dur, 6), "orig_pkts": c["orig_pkts"],
                             "orig_ip_bytes": c["orig_ip_bytes"], "resp_pkts": c["resp_pkts"],
                             "resp_ip_bytes": c["resp_ip_bytes"]}, separators=(",", ":")) + "\n")
    tsv.write("#close\t2024-01-01-00-00-01\n")
PY
  zstd -q -19 -f --rm "$out/$b.conn.log" "$out/$b.conn.json"
done
ls -la "$out"
