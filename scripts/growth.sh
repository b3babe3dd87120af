#!/usr/bin/env bash
# How the cost of each path grows: wall time, CPU and peak memory of replay, fit, every
# model and compare, against the filter's size M (2^16 to 2^29 bits, the trace fixed) and
# against the trace's length N (10^6 to 10^8 arrivals, the filter fixed). The tables of
# docs/PERFORMANCE.md ("How the cost grows") come from this script.
#
#   scripts/growth.sh RBF_BINARY WORK_DIR [CAP_SECONDS]
#
# The workload is the FN arrival model's: D = 10^6 messages, Zipf 1, p_r = 0.9, uniform
# placement (`rbf synth ... --seed 7`), read as an oracleGeneral file: a prologue of one
# arrival per message (10^6, the warm-up of every command) and N arrivals drawn; k = 4,
# one phase, sigma = 0.38 M.
# A command that runs longer than CAP_SECONDS (default 120) is stopped and reported as
# "> CAP"; a model stopped at one M is not run at larger M (every cost grows with M).
# Needs about 2.5 GB of disk in WORK_DIR for the 10^8-arrival trace and a few GB of memory.
# Output: one line per run, tab-separated, on stdout (path, M, N, wall s, CPU s, peak MB,
# status), also in WORK_DIR/growth.tsv.
set -uo pipefail
rbf=$(realpath "${1:?usage: growth.sh RBF_BINARY WORK_DIR [CAP_SECONDS]}")
work=${2:?usage: growth.sh RBF_BINARY WORK_DIR [CAP_SECONDS]}
cap=${3:-120}
mkdir -p "$work"
out=$work/growth.tsv
: > "$out"
printf 'path\tM\tN\twall_s\tcpu_s\tpeak_MB\tstatus\n' | tee -a "$out"

# One measured run: LABEL M N COMMAND... Prints a line; returns 1 when stopped at the cap.
measure() {
  local label=$1 m=$2 n=$3
  shift 3
  local t=$work/time.txt
  /usr/bin/time -o "$t" -f '%e %U %S %M' timeout "$cap" "$@" >/dev/null 2>"$work/stderr.txt"
  local status=$?
  local wall cpu_u cpu_s kb
  read -r wall cpu_u cpu_s kb < <(tail -1 "$t")
  local state=ok
  if [ "$status" = 124 ]; then
    state="stopped at ${cap} s"
  elif [ "$status" != 0 ]; then
    state="exit $status: $(head -c 160 "$work/stderr.txt" | tr '\n\t' '  ')"
  fi
  printf '%s\t%s\t%s\t%s\t%.2f\t%.0f\t%s\n' "$label" "$m" "$n" "$wall" \
    "$(echo "$cpu_u + $cpu_s" | bc)" "$(echo "$kb / 1024" | bc)" "$state" | tee -a "$out"
  [ "$status" != 124 ]
}

sigma_of() { echo $(( $1 * 38 / 100 )); }

# The traces: one stream of 10^8 arrivals and its first 10^6 and 10^7 (the same seed
# draws the same prefix).
for n in 1000000 10000000 100000000; do
  f=$work/t$n.oracleGeneral
  [ -s "$f" ] || "$rbf" -q synth --distinct 1000000 --zipf 1 --p-repeat 0.9 \
    --arrivals "$n" --seed 7 -o "$f"
done

# Against N, M = 2^20.
m=1048576
s=$(sigma_of $m)
for n in 1000000 10000000 100000000; do
  f=$work/t$n.oracleGeneral
  w=1000000
  measure replay $m $n "$rbf" -q replay "$f" --memory $m --hashes 4 --sigma "$s" --warmup $w --json
  measure fit $m $n "$rbf" -q fit "$f" --warmup $w -o "$work/w$n.json"
  measure compare $m $n "$rbf" -q compare "$f" --memory $m --hashes 4 --sigma "$s" --warmup $w --json
done

# Against M, N = 10^7 (the fit above is the workload of the models).
n=10000000
f=$work/t$n.oracleGeneral
w=1000000
methods=(renewal markov-lower markov-swr markov-uniform markov-biuniform drop-pins markov-disabling)
declare -A stopped=()
for log2 in 16 18 20 22 23 24 26 29; do
  m=$((1 << log2))
  s=$(sigma_of $m)
  measure replay $m $n "$rbf" -q replay "$f" --memory $m --hashes 4 --sigma "$s" --warmup $w --json
  [ -n "${stopped[fp]:-}" ] ||
    measure fp-model $m - "$rbf" -q model fp --memory $m --hashes 4 --sigma "$s" --json ||
    stopped[fp]=1
  for meth in "${methods[@]}"; do
    [ -n "${stopped[$meth]:-}" ] && continue
    # The renewal bound's exact engine (from 2^19 bits the default is the certified one).
    exact=()
    [ "$meth" = renewal ] && exact=(--tolerance 0)
    measure "$(echo fn "$meth" "${exact[@]}")" $m - "$rbf" -q model fn --workload "$work/w$n.json" --memory $m \
      --hashes 4 --sigma "$s" --method "$meth" "${exact[@]}" --json || stopped[$meth]=1
  done
  # The renewal bound certified within 1e-3 (the hitting-time engine on the profile; the
  # default from 2^19 bits).
  [ -n "${stopped[certified]:-}" ] ||
    measure "fn renewal --tolerance 1e-3" $m - "$rbf" -q model fn --workload "$work/w$n.json" \
      --memory $m --hashes 4 --sigma "$s" --method renewal --tolerance 1e-3 --json ||
    stopped[certified]=1
  [ -n "${stopped[compare]:-}" ] ||
    measure compare $m $n "$rbf" -q compare "$f" --memory $m --hashes 4 --sigma "$s" \
      --warmup $w --json || stopped[compare]=1
done
