#!/usr/bin/env python3
"""`rbf size TRACE` over the capture banks: the memory the renewal-trace bound asks for
next to the smallest memory a replay of the same trace shows sufficient.

Each cell is one trace (the bank in its own order, two shuffles, two random 200-capture
subsets, bank + the six other captures, the six alone; with --generators also two of
scripts/trace-bound-cells.py's generated traces) and one FN target (FP target 1e-2).
It prints the bound's memory, the replay's, their ratio and the chosen filter's
recycles on the trace, then the median and 90th percentile of the ratio over every
cell and over the cells whose chosen filter recycles 10 times or more (where the
trace says something about its steady state). Deterministic: fixed seeds throughout.

    python3 scripts/size-from-trace.py --rbf target/release/rbf \\
        --bank ../shared/data/pcap-bank --real ../shared/data/pcap-real --out /tmp/size-cells
"""
import argparse, glob, importlib.util, json, os, random, statistics, subprocess, sys

def size(rbf, inputs, fmt, target_fp, target_fn):
    cmd = [rbf, "size", *inputs, "--target-fp", str(target_fp), "--target-fn", str(target_fn),
           "--json", "-q"]
    if fmt: cmd += ["--format", fmt]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:]
    return json.loads(p.stdout), None

def quantile(xs, q):
    xs = sorted(xs)
    return xs[int(q * (len(xs) - 1))] if xs else float("nan")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rbf", default="target/release/rbf")
    ap.add_argument("--bank", default="../shared/data/pcap-bank")
    ap.add_argument("--real", default="../shared/data/pcap-real")
    ap.add_argument("--out", default="/tmp/size-cells")
    ap.add_argument("--generators", action="store_true", help="also two generated traces (2-3 M arrivals each, slow)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    bank = sorted(glob.glob(os.path.join(a.bank, "*.zst")))
    real = sorted(glob.glob(os.path.join(a.real, "*.zst")))
    traces = [("bank", bank, None)]
    for s in (1, 2):
        r = random.Random(s); b = bank[:]; r.shuffle(b); traces.append((f"bank-shuffle{s}", b, None))
    for s in (3, 4):
        r = random.Random(s); traces.append((f"bank-subset{s}", sorted(r.sample(bank, 200)), None))
    traces.append(("bank+real", bank + real, None))
    traces.append(("real", real, None))
    targets = [(name, inputs, fmt, g) for name, inputs, fmt in traces for g in (3e-3, 1e-3, 3e-4)]
    if a.generators:
        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("cells", os.path.join(here, "trace-bound-cells.py"))
        cells = importlib.util.module_from_spec(spec); spec.loader.exec_module(cells)
        for name, gen, n in (("regimes", cells.gen_regimes, 3000000), ("trains", cells.gen_trains, 2000000)):
            path = os.path.join(a.out, f"{name}.txt")
            if not os.path.exists(path):
                gen(path, 7, n)
            targets.append((name, [path], "lines", 1e-2))
    rows = []
    for name, inputs, fmt, g in targets:
        d, err = size(a.rbf, inputs, fmt, 1e-2, g)
        if d is None:
            print(f"{name} FN {g}: error {err}", file=sys.stderr); continue
        c, r = d["chosen"], d["by_replay"]
        row = dict(trace=name, target_fn=g, bound_memory=c["memory"], bound_k=c["hashes"],
                   bound_phases=c["phases"], bound=c["bound"]["upper"], observed_there=c["observed_fn"]["rate"],
                   replay_memory=r["memory"], replay_k=r["hashes"], replay_phases=r["phases"],
                   replay_observed=r["observed_fn"]["rate"], ratio=d["memory_ratio"],
                   cycles=c["cycles"], passes=d["passes"], seconds=round(d["seconds"], 1))
        rows.append(row); print(json.dumps(row), flush=True)
    with open(os.path.join(a.out, "size-cells.jsonl"), "w") as f:
        for r in rows: f.write(json.dumps(r) + "\n")
    for label, sel in (("every cell", rows), (">= 10 recycles", [r for r in rows if r["cycles"] >= 10])):
        ratios = [r["ratio"] for r in sel]
        print(f"{label}: {len(sel)} cells, bound memory / replay memory median "
              f"{quantile(ratios, 0.5):.3f}, p90 {quantile(ratios, 0.9):.3f}, max {max(ratios) if ratios else float('nan'):.3f}")

if __name__ == "__main__":
    main()
