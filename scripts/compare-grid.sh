#!/usr/bin/env bash
# `rbf compare` against `rbf replay` over cells of examples/fit_level.rs with at most
# 10^6 arrivals (docs/PERFORMANCE.md, "Comparing bound with observed", the grid). Each
# cell is synthesised with `rbf synth` from the cell's parameters; the filter has
# M = 16 bits per message of D (two phases: 32, two halves), k = 4,
# sigma = a third of the bits per array; the warm-up is fit_level's (D + a fifth of the
# arrivals). Every binary given is run ROUNDS times per cell, in alternating order, and
# each run's wall, user and system seconds are printed as one tab-separated line:
#
#   scripts/compare-grid.sh OUT_DIR BINARY [BINARY...] > runs.tsv
#
# ROUNDS (default 3) and CELLS (default: the list below) are read from the environment;
# PHASES (1 or 2), when set, replaces every cell's number of phases. The list holds all 14
# cells of fit_level's 64 with at most 10^6 arrivals.
# The first binary synthesises the traces (into OUT_DIR, reused when present).
set -euo pipefail
out=${1:?usage: compare-grid.sh OUT_DIR BINARY [BINARY...]}
shift
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || { echo "give at least one rbf binary" >&2; exit 2; }
rounds=${ROUNDS:-3}
mkdir -p "$out"

# cell: zipf distinct p_r placement arrivals phases (from fit_level's cell(), docs/FIT.md)
declare -A grid=(
  [0]="0.7 1000 0.7 uniform 100000 1"
  [8]="0.7 10000 1 top 200000 1"
  [11]="0.9 10000 0.5 bottom 200000 1"
  [17]="1.3 1000 1 top 1000000 1"
  [18]="0.5 10000 0.7 segments:0.4,0.3,0.2,0.1 200000 1"
  [23]="1.1 10000 0.98 uniform 200000 1"
  [29]="0.9 10000 0.5 uniform 1000000 1"
  [32]="0.9 1000 1 segments:0.4,0.3,0.2,0.1 1000000 1"
  [33]="1.1 1000 0.9 segments:0.4,0.3,0.2,0.1 100000 1"
  [45]="0.5 1000 0.7 segments:0.4,0.3,0.2,0.1 1000000 1"
  [46]="0.7 1000 0.9 top 100000 1"
  [47]="0.5 10000 0.5 bottom 200000 2"
  [54]="1.3 1000 1 segments:0.4,0.3,0.2,0.1 100000 1"
  [58]="1.3 10000 0.9 bottom 1000000 2"
)
cells=${CELLS:-"0 8 11 17 18 23 29 32 33 45 46 47 54 58"}

timed() { # label binary args...
  local label=$1 bin=$2
  shift 2
  local t
  /usr/bin/time -o "$out/.time" -f "%e %U %S" "$bin" "$@" >/dev/null 2>&1
  t=$(tail -1 "$out/.time")
  printf '%s\t%s\t%s\n' "$label" "$bin" "${t// /$'\t'}"
}

printf 'cell\tcommand\tbinary\twall\tuser\tsys\n'
for c in $cells; do
  read -r zipf d p_r placement arrivals phases <<<"${grid[$c]}"
  phases=${PHASES:-$phases}
  trace="$out/cell$c.csv"
  [ -s "$trace" ] || "${binaries[0]}" synth --distinct "$d" --zipf "$zipf" --p-repeat "$p_r" \
    --placement "$placement" --arrivals "$arrivals" --seed "$c" -o "$trace" 2>/dev/null
  m=$((16 * d * phases))
  sigma=$((m / phases / 3))
  filter=(--memory "$m" --hashes 4 --sigma "$sigma" --phases "$phases" --warmup $((d + arrivals / 5)))
  for ((r = 0; r < rounds; r++)); do
    order=("${binaries[@]}")
    # Alternate: odd rounds run the binaries in reverse order.
    if ((r % 2)); then
      order=()
      for ((i = ${#binaries[@]} - 1; i >= 0; i--)); do order+=("${binaries[i]}"); done
    fi
    for b in "${order[@]}"; do
      timed "$c	replay" "$b" replay "$trace" "${filter[@]}"
      timed "$c	compare" "$b" compare "$trace" "${filter[@]}" --seed "$c"
    done
  done
done
