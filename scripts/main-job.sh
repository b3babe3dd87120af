#!/usr/bin/env bash
# The main job: build rbf and run configs/quickstart.toml on the traces shipped in
# traces/ (a CDN request log, the nDPI captures as one series keyed by 5-tuple per packet
# and per flow record, a synthetic workload):
# exact replay next to the FP model, the renewal upper bound, the Markov lower bound and
# drop-pins. Prints the results table and where the table, plots and report are.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec ./target/release/rbf run configs/quickstart.toml "$@"
