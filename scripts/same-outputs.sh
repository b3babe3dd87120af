#!/usr/bin/env bash
# Checks that a change is behaviour-preserving for `rbf run`: runs each config with two
# rbf binaries and compares every output file byte for byte (results.csv, .json,
# .parquet, report.md, report.html, every plot) and the printed table.
#
#   scripts/same-outputs.sh BEFORE_BIN AFTER_BIN [CONFIG ...]
#
# e.g. build main, copy target/release/rbf to /tmp/rbf-before, build the change, then
#   scripts/same-outputs.sh /tmp/rbf-before target/release/rbf
# Default configs: configs/quickstart.toml configs/fp-fig6-7.toml. Exit 1 on a difference.
set -euo pipefail
before=${1:?usage: same-outputs.sh BEFORE_BIN AFTER_BIN [CONFIG ...]}
after=${2:?usage: same-outputs.sh BEFORE_BIN AFTER_BIN [CONFIG ...]}
shift 2
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(configs/quickstart.toml configs/fp-fig6-7.toml)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for c in "${configs[@]}"; do
  name=$(basename "$c" .toml)
  for side in before after; do
    bin=$before; [ $side = after ] && bin=$after
    # The closing line states the run's time: everything else must match.
    "$bin" run "$c" -o "$work/$side-$name" 2>/dev/null | grep -v '^finished in' > "$work/$side-$name.out"
  done
  if diff -r "$work/before-$name" "$work/after-$name" > "$work/$name.diff" &&
     diff "$work/before-$name.out" "$work/after-$name.out" >> "$work/$name.diff"; then
    echo "$name: every output identical"
  else
    echo "$name: outputs differ:"; head -20 "$work/$name.diff"; status=1
  fi
done
exit $status
