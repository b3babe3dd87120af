#!/usr/bin/env bash
# Checks that a change is behaviour-preserving for the single commands (replay, fit,
# synth, ingest, model fn, model capacity, size, run): runs each command below with two
# rbf binaries, each in a directory of its own, and compares stdout, stderr, the exit
# status and every file written, byte for byte. Times (`in 0.3 s`, "seconds" in JSON)
# are masked; nothing else is.
#
#   scripts/same-commands.sh BEFORE_BIN AFTER_BIN
#
# Exit 1 on a difference. Complements scripts/same-outputs.sh (whole `rbf run` configs).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Both binaries named `rbf`: usage lines name the program.
mkdir -p "$work/bin-before" "$work/bin-after"
cp "${1:?usage: same-commands.sh BEFORE_BIN AFTER_BIN}" "$work/bin-before/rbf"
cp "${2:?usage: same-commands.sh BEFORE_BIN AFTER_BIN}" "$work/bin-after/rbf"
before=$work/bin-before/rbf
after=$work/bin-after/rbf
data=$work/data
mkdir -p "$data"
# Inputs shared by both sides (made with the BEFORE binary).
"$before" -q synth --distinct 1000 --p-repeat 0.9 --arrivals 40000 -o "$data/t.txt" 2>/dev/null
"$before" -q synth --distinct 500 --zipf 0.8 --p-repeat 0.7 --arrivals 20000 --seed 3 -o "$data/z.txt.zst" 2>/dev/null
"$before" -q fit "$data/t.txt" -o "$data/w.json" >/dev/null 2>/dev/null
: > "$data/empty.txt"
printf '0,1,2\n1,2,3\nnot a line\n' > "$data/bad.txt"
printf '[filter]\nmemory = 4096\nhashes = 3\nsigma = 300\nbogus = 1\n' > "$data/badfilter.toml"
printf '[filter]\nmemory = 8192\nhashes = 4\nsigma = 900\n' > "$data/filter.toml"
head -c 200 "$data/z.txt.zst" > "$data/trunc.txt.zst"
sed 's/^name = .*/&\nbogus_key = 1/' "$repo/configs/quickstart.toml" > "$data/badkey.toml"
# Experiment configs with one bad setting each (the error paths of the config reader).
cat > "$data/base.toml" <<'TOML'
name = "e"
seeds = [1]
measures = ["observed", "fp-model", "renewal"]
[[synthetic]]
name = "s"
distinct = 100
zipf = 1.0
p_repeat = 0.9
placement = "uniform"
arrivals = 2000
[grid]
memory = [2048]
hashes = [4]
target_fp = [1e-3]
phases = [1]
TOML
bad_config() { # NAME SED-EXPRESSION
  sed -E "$2" "$data/base.toml" > "$data/bad-$1.toml"
}
bad_config measures-empty 's/^measures = .*/measures = []/'
bad_config measures-bogus 's/^measures = .*/measures = ["bogus"]/'
bad_config confidence 's/^seeds = .*/&\nconfidence = 1.5/'
bad_config hash-seeds 's/^seeds = .*/&\nhash_seeds = 0/'
bad_config tolerance 's/^seeds = .*/&\nrenewal_tolerance = 2/'
bad_config memory-empty 's/^memory = .*/memory = []/'
bad_config memory-both 's/^memory = .*/&\nbits_per_distinct = [8]/'
bad_config bits-negative 's/^memory = .*/bits_per_distinct = [-1]/'
bad_config hashes-twice 's/^hashes = .*/hashes = [4, 4]/'
bad_config sigma-both 's/^target_fp = .*/&\nsigma = [300]/'
bad_config sigma-fraction 's/^target_fp = .*/sigma_fraction = [1.5]/'
bad_config target-fp 's/^target_fp = .*/target_fp = [2]/'
bad_config phases 's/^phases = .*/phases = [3]/'
bad_config distinct 's/^distinct = .*/distinct = 0/'
bad_config placement 's/^placement = .*/placement = "bogus"/'
bad_config zipf 's/^zipf = .*/zipf = -1/'
bad_config p-repeat 's/^p_repeat = .*/p_repeat = 2/'
bad_config fit-window 's/^arrivals = .*/&\nfit_window = 1/'
bad_config capacity 's/^measures = .*/measures = ["capacity"]/; s/^target_fp = .*/sigma = [300]/'
bad_config trace-stdin 's/^\[\[synthetic\]\]/[[trace]]\nname = "t"\npath = "-"\n&/'
bad_config trace-empty 's/^\[\[synthetic\]\]/[[trace]]\nname = "t"\npath = []\n&/'
F="--memory 4096 --hashes 3 --sigma 300"
W="--distinct 1000 --p-repeat 0.9"
cmds=(
  # rbf replay
  "replay $data/t.txt $F"
  "replay $data/t.txt $F --json"
  "replay $data/t.txt $F --warmup 1000 --hash-seeds 1"
  "replay $data/t.txt $F --warmup 100000"
  "replay $data/t.txt $F --confidence 1.5"
  "replay $data/t.txt $F --confidence 0.9 --json"
  "replay $data/missing.txt $F"
  "replay $data/t.txt $F --bogus"
  "replay $data/t.txt --memory 4096"
  "replay $data/empty.txt $F"
  "replay $data/bad.txt $F"
  "replay $data/trunc.txt.zst $F"
  "replay $data/z.txt.zst --memory 8192 --hashes 4 --max-inserts 400 --phases 2 --json"
  "replay $data/t.txt --filter-config $data/badfilter.toml"
  "replay $data/t.txt --filter-config $data/filter.toml --positions per-cycle"
  "replay $data/t.txt $F --hash-seeds 0"
  "-q replay $data/t.txt $F"
  "replay --help"
  "replay $data/t.txt $F --non-retaining --hashing distinct --seed 9"
  "replay $data/t.txt --memory 4096 --hashes 3 --sigma 5000"
  # rbf fit
  "fit $data/t.txt"
  "fit $data/t.txt --json"
  "fit $data/t.txt -o w.json --table r.csv"
  "fit $data/z.txt.zst -o - --json"
  "fit $data/t.txt --table -"
  "fit $data/t.txt --table r.parquet --window 5000 --warmup 1000"
  "fit $data/t.txt --table r.txt"
  "fit $data/t.txt -o $data/t.txt"
  "fit $data/t.txt -o $data/t.txt/w.json"
  "fit $data/t.txt -o nodir/w.json"
  "fit $data/t.txt --confidence 2"
  "fit $data/t.txt --window 0"
  "fit $data/missing.txt"
  "fit $data/empty.txt"
  "fit $data/bad.txt --json"
  "fit $data/trunc.txt.zst"
  "fit $data/t.txt --pair-cap 10 --json"
  "fit --help"
  "fit $data/t.txt --bogus"
  "fit $data/t.txt -o w.json --table w.json"
  # rbf synth
  "synth $W --arrivals 1000 -o s.txt"
  "synth $W --arrivals 1000 -o s.txt.zst --seed 5"
  "synth --distinct 50 --p-repeat 0.5 --arrivals 100 -o -"
  "synth --workload $data/w.json --arrivals 1000 -o s2.txt --no-prologue"
  "synth --workload $data/w.json --arrivals 1000 -o $data/w.json"
  "synth $W --arrivals 1000 -o $data/t.txt/s.txt"
  "synth $W --arrivals 1000 -o nodir/s.txt"
  "synth $W -o s.txt"
  "synth --distinct 1000 --p-repeat 1.5 --arrivals 10 -o s.txt"
  "synth --distinct 100 --p-repeat 0.5 --placement top --zipf 1.2 --arrivals 500 -o s3.txt"
  "synth --distinct 100 --p-repeat 0.5 --placement bogus --arrivals 500 -o s4.txt"
  "synth --workload $data/missing.json --arrivals 10 -o s5.txt"
  "synth --help"
  "synth $W --arrivals 1e3 -o s6.txt"
  "synth --distinct 0 --p-repeat 0.5 --arrivals 10 -o s7.txt"
  # rbf model fn
  "model fn $F $W"
  "model fn $F $W --json"
  "model fn $F --workload $data/w.json"
  "model fn $F --workload $data/w.json --json --method renewal"
  "model fn $F $W --method markov"
  "model fn $F $W --method bogus"
  "model fn $F --distinct 1000"
  "model fn --memory 4096 --hashes 3 --max-inserts 200 $W"
  "model fn --memory 8192 --hashes 3 --sigma 600 --phases 2 $W --zipf 1.1 --placement top"
  "model fn $F --workload $data/missing.json"
  "model fn $F --workload $data/t.txt"
  "model fn $F $W --eps 1e-3 --json"
  "model fn $F --distinct 100 --p-repeat 0.5 --placement 1,2,3"
  "model fn --help"
  "model fn $F $W --filter-config $data/badfilter.toml"
  # rbf model capacity
  "model capacity --memory 8192 --target-fp 0.01"
  "model capacity --memory 8192 --target-fp 0.01 --json"
  "model capacity --memory 8192 --target-fp 0.01 --non-retaining --max-hashes 6"
  "model capacity --memory 8192 --target-fp 0.01 --hashing distinct --no-copy-over"
  "model capacity --memory 8192 --target-fp 1.5"
  "model capacity --memory 0 --target-fp 0.01"
  "model capacity --target-fp 0.01"
  "model capacity --memory 8192 --target-fp 0.01 --max-hashes 0"
  "model capacity --help"
  "model capacity --memory 2^14 --target-fp 1e-3 --retaining"
  # rbf ingest
  "ingest $data/t.txt -o t.rbfs"
  "ingest $data/t.txt -o t2.rbfs --json"
  "ingest $data/z.txt.zst -o -"
  "ingest $data/t.txt -o $data/t.txt"
  "ingest $data/missing.txt -o m.rbfs"
  "ingest $data/empty.txt -o e.rbfs"
  "ingest $data/bad.txt -o b.rbfs"
  "ingest $data/trunc.txt.zst -o tr.rbfs"
  "ingest $repo/tests/data/tcpdump_tcp-handshake-nano_sll.pcap -o p.rbfs --flows --key src-dst"
  "ingest $repo/tests/data/zeek_trunc_ip4-trunc.pcap -o p2.rbfs --json"
  "ingest $repo/tests/data/tragen-100k.csv --format jedi -o j.rbfs"
  "ingest $data/t.txt -o nodir/x.rbfs"
  "ingest $data/t.txt"
  "ingest --help"
  "ingest $data/t.txt -o x.rbfs --format bogus"
  # rbf size (the hashing flag)
  "size $W --target-fp 0.01 --memory 16384 --hashing distinct --confirm-arrivals 20000 --phases 1 --max-hashes 4"
  "size $W --target-fp 0.01 --target-fn 0.5 --confirm-arrivals 0 --max-hashes 3 --json"
  # rbf run
  "run $repo/configs/quickstart.toml -o out-q"
  "run $repo/configs/quickstart.toml -o out-q2 --shard 1/2 --threads 1"
  "run $data/badkey.toml -o out-b"
  "run $data/missing.toml"
  "run $repo/configs/quickstart.toml -o -"
  "run $repo/configs/quickstart.toml -o out-s --shard 3/2"
  "run $repo/configs/quickstart.toml -o $data/t.txt/out"
  "run --help"
  # error paths: one bad setting, flag or combination each
  "replay $data/t.txt $F --key dst-prefix --prefix-v4 40"
  "replay $data/t.txt $F --prefix-v4 8"
  "replay $data/t.txt $F --format csv --csv-delimiter ab"
  "replay $data/t.txt $F --format csv --csv-key-column 0"
  "replay $data/t.txt $F --format csv --csv-key-column 1 --csv-time-column 1"
  "replay $data/t.txt $F --format csv --csv-time-unit ms"
  "replay $data/t.txt $F --flows"
  "replay $repo/tests/data/tcpdump_tcp-handshake-nano_sll.pcap $F --flows --active-timeout 1 --inactive-timeout 5"
  "replay - - $F"
  "replay $data/t.txt - $F"
  "replay $data/[z $F"
  "replay $data/t.txt --memory 4096 --hashes 3"
  "replay $data/t.txt --memory 4096 --hashes 3 --sigma 300 --copy-over"
  "replay $data/t.txt --hashes 3 --sigma 300"
  "model fn $F $W --eps 0.5"
  "model fn --memory 4096 --hashes 3 --max-inserts 30000 $W"
  "model fn --memory 4096 --hashes 3 --sigma 300 --phases 2 --no-copy-over $W"
  "model fn --memory 4096 --hashes 3 --sigma 2 $W"
  "model fn $F $W --tolerance 2"
  "model capacity --memory 8192 --target-fp 1e-300"
  "synth --distinct 100 --p-repeat 0.5 --zipf -1 --arrivals 10 -o s8.txt"
  "synth --distinct 100 --p-repeat 0.5 --placement segments:0 --arrivals 10 -o s9.txt"
  "synth --distinct 3 --p-repeat 0.5 --placement segments:1,1,1,1 --arrivals 10 -o s10.txt"
  "size $W --target-fp 2 --target-fn 0.1 --confirm-arrivals 0"
  "size $W --target-fp 0.01 --target-fn 0.1 --phases 3 --confirm-arrivals 0"
  "size $W --target-fp 0.01 --target-fn 0.1 --seed 3 --confirm-arrivals 0"
  "size $W --target-fp 0.01 --target-fn 0.1 --max-hashes 0 --confirm-arrivals 0"
  "compare $data/t.txt --memory 4096 --hashes 3 --max-inserts 200"
  "fit $data/t.txt --warmup 100000"
  "run $repo/configs/quickstart.toml -o out-q3 --threads 0"
  "merge -o m1 $data/t.txt"
  "merge -o m2 out-q2"
  "merge -o m3 out-q2 out-q2"
)
for c in "$data"/bad-*.toml; do
  cmds+=("run $c -o out-$(basename "$c" .toml)")
done
status=0
for side in before after; do mkdir -p "$work/$side"; done
i=0
for c in "${cmds[@]}"; do
  i=$((i + 1))
  for side in before after; do
    bin=$before; [ $side = after ] && bin=$after
    (cd "$work/$side" && $bin $c >"$work/$side.$i.out" 2>"$work/$side.$i.err" </dev/null; echo "exit $?" >>"$work/$side.$i.err")
    sed -i -E 's/[0-9]+(\.[0-9]+)? ?(s|ms|µs)\b/T s/g; s/"seconds": [0-9.e-]+/"seconds": T/' "$work/$side.$i.out" "$work/$side.$i.err"
  done
  for k in out err; do
    if ! cmp -s "$work/before.$i.$k" "$work/after.$i.$k"; then
      echo "DIFF ($k) in: rbf $c"; diff "$work/before.$i.$k" "$work/after.$i.$k" | head -10; status=1
    fi
  done
done
# Outputs written: the run directories hold no times, so everything is compared.
if ! diff -r "$work/before" "$work/after" >"$work/files.diff"; then
  echo "DIFF in the files written:"; head -20 "$work/files.diff"; status=1
fi
echo "exit statuses (before): $(cat "$work"/before.*.err | grep "^exit" | sort | uniq -c | tr -s " \n" " ")"
echo "${#cmds[@]} commands compared: $([ $status = 0 ] && echo 'all identical' || echo 'differences above')"
exit $status
