#!/usr/bin/env bash
# The capture commands of docs/PERFORMANCE.md ("Reading traces") against tcpdump, two rbf
# binaries alternating (the order swapped every round); one line per run, "name wall user
# sys maxrss_kb" (wall to the millisecond).
#
#   scripts/capture-bench.sh MAIN_BIN NEW_BIN [ROUNDS]     in the directory of big.pcap,
#   big.pcapng and big.pcap.gz (scripts/big-pcap.py); CHRT="chrt -f 1" runs every command
#   at real-time priority (the cores to itself on a shared machine, not its memory).
set -euo pipefail
M=${1:?usage: capture-bench.sh MAIN_BIN NEW_BIN [ROUNDS]}
N=${2:?usage: capture-bench.sh MAIN_BIN NEW_BIN [ROUNDS]}
R="--memory 1048576 --hashes 4 --sigma 400000 --hash-seeds 1"
out=$(mktemp -u /tmp/capture-bench-XXXXXX.rbfs)
trap 'rm -f "$out"' EXIT
t() { # NAME CMD...
  # shellcheck disable=SC2086
  ${CHRT:-} python3 -c '
import os, subprocess, sys, time
t = time.perf_counter()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, _, ru = os.wait4(p.pid, 0)
print(f"{sys.argv[1]} {time.perf_counter() - t:.3f} {ru.ru_utime:.3f} {ru.ru_stime:.3f} {ru.ru_maxrss}", flush=True)
' "$@"
}
cat big.pcap big.pcapng big.pcap.gz > /dev/null
for round in $(seq 1 "${3:-5}"); do
  echo "# round $round $(uptime)"
  if [ $((round % 2)) = 1 ]; then A=$M a=main B=$N b=new; else A=$N a=new B=$M b=main; fi
  t tcpdump tcpdump -r big.pcap -w /dev/null
  # shellcheck disable=SC2086
  for args in "replay big.pcap $R" "ingest big.pcap -o $out" "replay big.pcapng $R" "replay big.pcap.gz $R" "replay big.pcap --flows $R"; do
    name=$(echo "$args" | awk '{ print $1 "-" $2 }' | sed 's/big\.//')
    case "$args" in *--flows*) name=flows ;; esac
    [ "$name" = "replay-pcap.gz" ] && t gzip-dc gzip -dc big.pcap.gz
    t "$name-$a" "$A" $args
    t "$name-$b" "$B" $args
  done
  t tcpdump tcpdump -r big.pcap -w /dev/null
done
