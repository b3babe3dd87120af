#!/usr/bin/env bash
# A sweep at capture scale (docs/PERFORMANCE.md, "Experiments"): `rbf run` of a 24-point
# grid (M = 2^18 ... 2^23 bits, k = 3 ... 6, sigma 0.38 of the bits) over the 10^7-packet
# capture of scripts/big-pcap.py, with every measure, next to one `rbf compare` of the
# same capture. Each binary given runs both, in turn, and prints a tab-separated line
# per run: binary, command, wall seconds, user seconds, peak KB.
#
#   scripts/capture-grid.sh WORK_DIR BINARY [BINARY...]
#
# MEASURES (default: every measure) replaces the grid's measures, e.g.
# MEASURES='"observed", "fp-model"'. The capture is written to WORK_DIR/big.pcap when it
# is not there (about 40 s, 700 MB). Outputs go to WORK_DIR/out-N (N: the binary's place).
set -euo pipefail
work=${1:?usage: capture-grid.sh WORK_DIR BINARY [BINARY...]}
shift
[ $# -gt 0 ] || { echo "give at least one rbf binary" >&2; exit 2; }
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$work/big.pcap" ] || python3 "$here/big-pcap.py" "$work/big.pcap"
measures=${MEASURES:-'"observed", "fp-model", "renewal", "renewal-trace", "markov-lower", "markov-swr", "markov-uniform", "markov-biuniform", "drop-pins", "markov-disabling"'}
n=0
for bin in "$@"; do
  n=$((n + 1))
  config="$work/grid-$n.toml"
  cat > "$config" <<EOF
name = "capture-grid"
description = "24 points over the 10^7-packet capture."
output = "out-$n"
seeds = [1]
measures = [$measures]

[[trace]]
name = "big"
path = "big.pcap"

[grid]
memory = [262144, 524288, 1048576, 2097152, 4194304, 8388608]
hashes = [3, 4, 5, 6]
sigma_fraction = [0.38]
EOF
  rm -rf "$work/out-$n"
  /usr/bin/time -f "$bin	run	%e	%U	%M" "$bin" run "$config" > /dev/null 2> "$work/run-$n.err" || { cat "$work/run-$n.err" >&2; exit 1; }
  tail -n 1 "$work/run-$n.err"
  /usr/bin/time -f "$bin	compare	%e	%U	%M" "$bin" compare "$work/big.pcap" --memory 1048576 --hashes 4 --sigma 400000 --json > /dev/null 2> "$work/compare-$n.err"
  tail -n 1 "$work/compare-$n.err"
done
