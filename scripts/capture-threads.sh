#!/usr/bin/env bash
# CPU per thread of one rbf run (as in docs/history/PERFORMANCE-log.md, packet captures,
# 2026-11-27 23:30 UTC): perf's cpu-clock samples at 2999 Hz, counted by thread name
# (rbf-decode: reading and decoding; the binary's own name: the consumer, replay or the
# .rbfs writer).
#
#   scripts/capture-threads.sh RBF_BIN ARGS...    e.g. ... target/release/rbf replay big.pcap
#
# Prints "thread=ms ..." for the run. Needs perf; no symbols are needed.
set -euo pipefail
bin=${1:?usage: capture-threads.sh RBF_BIN ARGS...}
shift
data=$(mktemp)
trap 'rm -f "$data"' EXIT
perf record -q -F 2999 -e cpu-clock -o "$data" "$bin" "$@" > /dev/null 2> /dev/null
perf report -i "$data" --sort comm --stdio -n 2> /dev/null |
  awk '/%/ { printf "%s=%.0fms ", $3, $2 / 2.999 } END { print "" }'
