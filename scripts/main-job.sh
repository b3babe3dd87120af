#!/usr/bin/env bash
# The main job: synthesize a small trace from the FN paper's arrival model and replay it
# through a one-phase and a two-phase recycling Bloom filter with exact ground truth.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p out
./target/release/rbf synth --distinct 1000 --zipf 1 --p-repeat 0.9 --placement uniform \
  --arrivals 200000 --seed 1 -o out/synth-zipf1.csv
for phases in 1 2; do
  echo
  echo "== ${phases}-phase =="
  ./target/release/rbf replay out/synth-zipf1.csv --memory 10000 --hashes 5 --sigma 1500 \
    --phases "$phases" --warmup 20000
done
