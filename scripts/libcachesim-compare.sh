#!/usr/bin/env bash
# rbf against libCacheSim (its Python package: LRU with Bloom-filter admission) on one
# oracleGeneral file, in paired runs on the same machine (docs/PERFORMANCE.md, "Replay"):
#
#   scripts/libcachesim-compare.sh --install-peer     # once: libCacheSim in a venv
#   scripts/libcachesim-compare.sh [--rounds N] [--memory M] [--trace FILE.oracleGeneral.bin]
#
# Without --trace it writes the benchmark trace once (rbf synth: D = 10^6,
# Zipf 1, p_r = 0.9, uniform placement, 10^7 arrivals after the 10^6-arrival prologue,
# seed 7), converted to oracleGeneral by libCacheSim's own converter, into
# target/peer-bench/. Each round runs `rbf replay` at its defaults (four filters, k = 4,
# sigma = 400000, warm-up 10^6, M = 2^20 bits unless --memory), the same with
# `--hash-seeds 1` (one filter, as the peer has) and the peer (a cache of --cache BYTES,
# 2e8 by default: a tenth of the default trace's 2.05 GB working set) back to back,
# alternating which goes first, and prints each run's wall time, CPU time, peak memory
# and the load average; then the medians and their ratios. Timings taken while other work runs are noisy: the load and the CPU time
# the hypervisor gave to other guests while it ran (steal, from /proc/stat) are printed
# with every run so that a figure can be quoted with the conditions it was taken under.
# RBF_BIN=path runs another rbf binary (e.g. an older commit's) instead of building one.
#
# The venv lives in target/peer-venv (PEER_VENV to override); the peer's version is
# pinned below. Needs python3 with venv and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
PEER_VERSION=0.3.5
venv=${PEER_VENV:-target/peer-venv}
work=target/peer-bench
rounds=5
memory=1048576
cache=200000000
trace=
install=0
while [ $# -gt 0 ]; do
  case "$1" in
    --install-peer) install=1 ;;
    --rounds) rounds=$2; shift ;;
    --memory) memory=$2; shift ;;
    --cache) cache=$2; shift ;;
    --trace) trace=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ $install = 1 ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "libcachesim==$PEER_VERSION"
  echo "libCacheSim $PEER_VERSION installed in $venv"
fi
py="$venv/bin/python"
[ -x "$py" ] || { echo "no peer: run $0 --install-peer first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
peer=scripts/libcachesim_peer.py
if [ -n "${RBF_BIN:-}" ]; then
  rbf=$RBF_BIN # another build to compare, e.g. an older commit's
else
  cargo build --release --quiet
  rbf=target/release/rbf
fi
mkdir -p "$work"
if [ -z "$trace" ]; then
  trace=$work/synth-11m.oracleGeneral.bin
  if [ ! -s "$trace" ]; then
    "$rbf" synth --distinct 1000000 --zipf 1 --p-repeat 0.9 --placement uniform \
      --arrivals 10000000 --seed 7 -o "$work/synth-11m.csv" --quiet
    "$py" "$peer" convert "$work/synth-11m.csv" "$trace.tmp" 2>/dev/null
    mv "$trace.tmp" "$trace"
    rm -f "$work/synth-11m.csv"
  fi
fi
echo "trace: $trace ($(stat -c %s "$trace") bytes); rbf M = $memory bits, k = 4, sigma = 400000; peer LRU + Bloom-filter admission, cache $cache bytes"
cat "$trace" > /dev/null # in the page cache for both
steal() { awk '/^cpu /{print $9}' /proc/stat; } # ticks (1/100 s) the hypervisor gave away
run() { # label, command...: one line "label wall cpu rss load steal"
  local label=$1; shift
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  local st0; st0=$(steal)
  /usr/bin/time -o "$work/time.out" -f "%e %U %S %M" "$@" > "$work/$label.out" 2> "$work/$label.err" \
    || { echo "$label failed:" >&2; cat "$work/$label.err" >&2; exit 1; }
  read -r wall user sys rss < "$work/time.out"
  printf '%-11s wall %5.2f s, CPU %5.2f s, peak %4d MB, load %s, steal %s s\n' "$label" "$wall" \
    "$(echo "$user + $sys" | bc)" $((rss / 1024)) "$load" "$(echo "scale=2; ($(steal) - $st0) / 100" | bc)"
  echo "$wall" >> "$work/$label.walls"
  echo "$user + $sys" | bc >> "$work/$label.cpus"
}
rm -f "$work"/*.walls "$work"/*.cpus
rbf_cmd=("$rbf" replay "$trace" --format auto -m "$memory" -k 4 --sigma 400000 --warmup 1000000 --quiet)
peer_cmd=("$py" "$peer" replay "$trace" "$cache")
for ((i = 1; i <= rounds; i++)); do
  if [ $((i % 2)) = 1 ]; then
    run rbf "${rbf_cmd[@]}"; run rbf-seeds1 "${rbf_cmd[@]}" --hash-seeds 1; run libcachesim "${peer_cmd[@]}"
  else
    run libcachesim "${peer_cmd[@]}"; run rbf-seeds1 "${rbf_cmd[@]}" --hash-seeds 1; run rbf "${rbf_cmd[@]}"
  fi
done
median() { sort -n "$1" | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for label in rbf rbf-seeds1; do
  what="rbf replay (default: 4 filters)"
  [ $label = rbf ] || what="rbf replay --hash-seeds 1"
  r=$(median "$work/$label.walls"); p=$(median "$work/libcachesim.walls")
  echo "$what: median wall $r s, libCacheSim $p s: rbf is $(echo "scale=2; $p / $r" | bc)x faster"
  pairs=$(paste "$work/$label.walls" "$work/libcachesim.walls" | awk '{printf "%.2f\n", $2 / $1}' | sort -n | tr '\n' ' ')
  echo "  each round's ratio (libCacheSim wall / rbf wall), sorted: $pairs"
  r=$(median "$work/$label.cpus"); p=$(median "$work/libcachesim.cpus")
  echo "  median CPU (all threads): rbf $r s, libCacheSim $p s: $(echo "scale=2; $p / $r" | bc)x"
done
