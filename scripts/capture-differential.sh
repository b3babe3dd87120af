#!/usr/bin/env bash
# Checks that a change to the capture readers or the flow table is behaviour-preserving:
# runs two rbf binaries over every capture in traces/pcap and tests/data, intact, cut at 3
# random places and with 3 random bytes changed (uncompressed ones), and compares
# `rbf ingest` (its output text without the time, and the .rbfs bytes), `rbf replay --json`
# of the capture and of the .rbfs written, and `rbf replay --flows` with three timeout
# settings (output text, warnings included).
#
#   scripts/capture-differential.sh BEFORE_BIN AFTER_BIN [SEED]
#
# Prints each input that differs and a count; exit 1 on a difference.
set -uo pipefail
before=${1:?usage: capture-differential.sh BEFORE_BIN AFTER_BIN [SEED]}
after=${2:?usage: capture-differential.sh BEFORE_BIN AFTER_BIN [SEED]}
RANDOM=${3:-41}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
R="-m 4096 -k 2 --sigma 1000"
run() { # BIN SIDE INPUT
  "$1" ingest "$3" -o "$w/$2.rbfs" 2>&1 | sed 's/ ([0-9.]* s)$//; s#'"$w"'/[a-z]*\.rbfs#OUT#' > "$w/$2.txt"
  # shellcheck disable=SC2086
  "$1" replay "$3" --json $R 2>&1 | grep -v "^reading \|expected to take" >> "$w/$2.txt"
  if [ -e "$w/$2.rbfs" ]; then
    # shellcheck disable=SC2086
    "$1" replay "$w/$2.rbfs" --json $R 2>&1 | grep -v "^reading \|expected to take" |
      sed 's#'"$w"'/[a-z]*\.rbfs#OUT#' >> "$w/$2.txt"
  fi
  for t in "" "--inactive-timeout 1s --active-timeout 5s" "--inactive-timeout 50ms --active-timeout 200ms"; do
    # shellcheck disable=SC2086
    "$1" replay "$3" --flows $t $R 2>&1 | grep -v "^reading \|expected to take" >> "$w/$2.txt"
  done
}
runs=0
diffs=0
for f in traces/pcap/*pcap* tests/data/*pcap*; do
  cp "$f" "$w/intact"
  n=$(stat -c %s "$f")
  variants=("$w/intact")
  case "$f" in
    *.zst | *.gz) ;;
    *)
      for k in 1 2 3; do
        head -c $(((RANDOM * 32768 + RANDOM) % n)) "$f" > "$w/cut$k"
        cp "$f" "$w/changed$k"
        printf "\\x$(printf %02x $((RANDOM % 256)))" |
          dd of="$w/changed$k" bs=1 seek=$(((RANDOM * 32768 + RANDOM) % n)) conv=notrunc status=none
        variants+=("$w/cut$k" "$w/changed$k")
      done
      ;;
  esac
  for v in "${variants[@]}"; do
    rm -f "$w/before.rbfs" "$w/after.rbfs"
    run "$before" before "$v"
    run "$after" after "$v"
    runs=$((runs + 1))
    same_rbfs=1
    if [ -e "$w/before.rbfs" ] || [ -e "$w/after.rbfs" ]; then
      cmp -s "$w/before.rbfs" "$w/after.rbfs" || same_rbfs=0
    fi
    if ! cmp -s "$w/before.txt" "$w/after.txt" || [ $same_rbfs = 0 ]; then
      diffs=$((diffs + 1))
      echo "differs: $f ($(basename "$v"))"
      diff "$w/before.txt" "$w/after.txt" | head -5
    fi
  done
done
echo "$runs inputs, 6 commands each: $diffs with a difference"
[ "$diffs" -eq 0 ]
