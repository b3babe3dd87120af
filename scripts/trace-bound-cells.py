#!/usr/bin/env python3
"""FN upper bounds against the observed FN on real and non-stationary traces.

Replays compositions of the shared capture banks (other orders, subsets) and traces of
our own generators (regime switches, scans, flash crowds, packet trains, diurnal rates)
through one- and two-phase filters (M 2^10-2^20, k 3-6), with `rbf compare --json`, and
counts, for every bound printed with a standing other than "not proven", the cells where
the observed point, and the whole observed interval, lie above it. Cells with fewer than
10 complete cycles are left out. Deterministic: fixed seeds throughout.

    python3 scripts/trace-bound-cells.py --rbf target/release/rbf \\
        --bank ../shared/data/pcap-bank --real ../shared/data/pcap-real --out /tmp/cells
"""
import argparse, glob, json, math, os, random, subprocess, statistics, sys

def zipf_sampler(rng, n, s):
    w = [1.0 / (i + 1) ** s for i in range(n)]
    tot = sum(w); c = []; acc = 0.0
    for x in w:
        acc += x / tot; c.append(acc)
    import bisect
    return lambda: min(bisect.bisect_left(c, rng.random()), n - 1)

def gen_regimes(path, seed, arrivals):
    """Zipf phases over working sets that change, with round-robin scans between."""
    rng = random.Random(seed); out = []; base = 0
    while len(out) < arrivals:
        n = rng.choice([2000, 8000, 30000]); z = zipf_sampler(rng, n, rng.choice([0.8, 1.0, 1.2]))
        for _ in range(rng.randint(50000, 200000)):
            out.append(f"r{base + z()}")
        base += n // 2  # half the next working set is new
        if rng.random() < 0.5:  # a scan: new keys, each a few times round-robin
            m = rng.randint(2000, 20000); rounds = rng.randint(1, 3)
            for _ in range(rounds):
                out.extend(f"s{base}-{i}" for i in range(m))
            base += 1
    write(path, out[:arrivals])

def gen_trains(path, seed, arrivals, concurrency=60, mean_len=20, p_return=0.3):
    """Packet trains: flows interleaved, geometric lengths, some flows return later."""
    rng = random.Random(seed); out = []; live = []; nxt = 0; past = []
    while len(out) < arrivals:
        while len(live) < concurrency:
            if past and rng.random() < p_return:
                f = rng.choice(past)
            else:
                f = nxt; nxt += 1
            live.append([f, max(1, int(rng.expovariate(1.0 / mean_len)))])
        i = rng.randrange(len(live)); out.append(f"f{live[i][0]}"); live[i][1] -= 1
        if live[i][1] == 0:
            past.append(live[i][0]);
            if len(past) > 50000: past = past[-50000:]
            live.pop(i)
    write(path, out)

def gen_flash(path, seed, arrivals):
    """A Zipf background with flash crowds: bursts on a few new objects."""
    rng = random.Random(seed); z = zipf_sampler(rng, 20000, 0.9); out = []; crowd = 0
    while len(out) < arrivals:
        if rng.random() < 0.00002:
            objs = [f"c{crowd}-{i}" for i in range(rng.randint(5, 50))]; crowd += 1
            for _ in range(rng.randint(5000, 30000)):
                out.append(rng.choice(objs) if rng.random() < 0.7 else f"b{z()}")
        out.append(f"b{z()}" if rng.random() < 0.8 else f"n{len(out)}")
    write(path, out[:arrivals])

def gen_diurnal(path, seed, arrivals, period=200000):
    """Zipf repeats with a new-message share that swings between 5 % and 50 %."""
    rng = random.Random(seed); z = zipf_sampler(rng, 50000, 1.0); out = []; new = 0
    for t in range(arrivals):
        p_new = 0.275 + 0.225 * math.sin(2 * math.pi * t / period)
        if rng.random() < p_new:
            out.append(f"n{new}"); new += 1
        else:
            out.append(f"z{z()}")
    write(path, out)

def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines)); f.write("\n")

def compare(rbf, inputs, fmt, m, k, phases, extra):
    sigma = int(0.3 * (m // phases))
    cmd = [rbf, "compare", *inputs, "--memory", str(m), "--hashes", str(k), "--sigma", str(sigma),
           "--phases", str(phases), "--method", "renewal,renewal-trace", "--json", "-q", *extra]
    if fmt: cmd += ["--format", fmt]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] 
    return json.loads(p.stdout), None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rbf", default="target/release/rbf")
    ap.add_argument("--bank", default="../shared/data/pcap-bank")
    ap.add_argument("--real", default="../shared/data/pcap-real")
    ap.add_argument("--out", default="/tmp/trace-bound-cells")
    ap.add_argument("--quick", action="store_true", help="banks only, fewer filters")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    bank = sorted(glob.glob(os.path.join(a.bank, "*.zst")))
    real = sorted(glob.glob(os.path.join(a.real, "*.zst")))
    traces = []  # (name, inputs, format, extra, filters)
    small = [(m, k, p) for m in (1024, 2048, 4096) for k in (3, 4, 6) for p in (1, 2)]
    traces.append(("bank", bank, None, [], small))
    for s in (1, 2):
        r = random.Random(s); b = bank[:]; r.shuffle(b)
        traces.append((f"bank-shuffle{s}", b, None, [], small))
    for s in (3, 4):
        r = random.Random(s); b = sorted(r.sample(bank, 200))
        traces.append((f"bank-subset{s}", b, None, [], small))
    traces.append(("bank+real", bank + real, None, [], small))
    traces.append(("real", real, None, [], [(m, k, p) for m in (1024, 2048) for k in (3, 4, 6) for p in (1, 2)]))
    if not a.quick:
        big = [(m, k, p) for m in (1 << 14, 1 << 16, 1 << 18) for k in (3, 4, 6) for p in (1, 2)]
        for name, gen, n in (("regimes", gen_regimes, 3000000), ("trains", gen_trains, 2000000),
                             ("flash", gen_flash, 2000000), ("diurnal", gen_diurnal, 2000000)):
            path = os.path.join(a.out, f"{name}.txt")
            if not os.path.exists(path):
                gen(path, 7, n)
            traces.append((name, [path], "lines", [], big + [(1 << 20, 4, p) for p in (1, 2)]))
    rows = []
    for name, inputs, fmt, extra, filters in traces:
        for (m, k, p) in filters:
            d, err = compare(a.rbf, inputs, fmt, m, k, p, extra)
            if d is None:
                print(f"{name} M={m} k={k} P={p}: error {err}", file=sys.stderr); continue
            cycles = d["replay"]["cycles"]
            obs, iv = d["observed_fn"], d["observed_fn_interval"]
            if cycles < 10 or iv is None:
                continue
            row = dict(trace=name, m=m, k=k, phases=p, cycles=cycles, observed=obs, low=iv["low"], high=iv["high"])
            for r in d["models"]:
                if r["claim"] != "upper-bound":
                    continue
                row[r["bound"]] = (r["value"], r["standing"])
            t = d.get("fn_renewal_trace_detail")
            if t:
                row["trace-estimate"] = t["estimate"]
            rows.append(row); print(json.dumps(row), flush=True)
    with open(os.path.join(a.out, "cells.jsonl"), "w") as f:
        for r in rows: f.write(json.dumps(r) + "\n")
    summarize(rows)

def summarize(rows):
    print(f"\n{len(rows)} cells with >= 10 complete cycles")
    for b in ("renewal", "renewal-conservative", "renewal-trace"):
        judged = [(r, r[b][0]) for r in rows if b in r and r[b][1] != "not-proven"]
        demoted = sum(1 for r in rows if b in r and r[b][1] == "not-proven")
        pt = sum(1 for r, v in judged if r["observed"] > v)
        whole = sum(1 for r, v in judged if r["low"] > v)
        ratios = sorted(v / r["observed"] for r, v in judged if r["observed"] > 0)
        med = statistics.median(ratios) if ratios else float("nan")
        p90 = ratios[int(0.9 * (len(ratios) - 1))] if ratios else float("nan")
        print(f"{b:22s} with a standing: {len(judged):3d}  not proven: {demoted:3d}  point above: {pt:3d}"
              f"  whole interval above: {whole:3d}  bound/observed median {med:.3f} p90 {p90:.3f}")

if __name__ == "__main__":
    main()
