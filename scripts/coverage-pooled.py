"""Coverage of the observed intervals against the pooled estimate of all seeds, beside
the study's own coverage against the long replays (docs/coverage/README.md).

Why: in a cell whose long-run rate depends on the hash positions with a skewed spread
(D = 1 000 messages), the truth from a few tens of long replays is itself off by a
few per cent (one filter in a few tens lands far out in the tail), while the mean of
1 000 seeds x 8 hash seeds is about ten times more precise. Both use the same records;
this script only reads them:

    python3 scripts/coverage-pooled.py [docs/coverage] [cell ...]

For each cell and number of hash seeds: coverage against the truth (long replays:
mean over traces of the mean over hash seeds) and against the pooled estimate (mean of
the seeds' estimates with the most hash seeds), misses below / above.
"""

import collections
import glob
import json
import statistics
import sys


def load(directory):
    observed = collections.defaultdict(dict)
    truth = collections.defaultdict(list)
    for path in sorted(glob.glob(f"{directory}/records/*.jsonl")):
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if r["kind"] == "observed":
                    observed[r["cell"]][r["seed"]] = r
                elif r["kind"] == "truth" and not r.get("salted"):
                    truth[(r["cell"], r["fingerprint"])].append(r)
    # A cell's truth: the records of its current fingerprint (the most numerous).
    best = {}
    for (cell, _), recs in truth.items():
        if cell not in best or len(recs) > len(best[cell]):
            best[cell] = recs
    return observed, best


def truth_rate(records, key):
    by_trace = collections.defaultdict(list)
    for r in records:
        by_trace[r["trace"]].append(r[key])
    return statistics.mean(statistics.mean(v) for v in by_trace.values())


def coverage(records, variant, key, target):
    low = high = 0
    for r in records:
        iv = r["variants"][variant][key]["interval"]
        if iv is None or iv["high"] < target:
            low += 1
        elif iv["low"] > target:
            high += 1
    n = len(records)
    return f"{100 * (n - low - high) / n:.1f} % ({low}/{high})"


def main():
    args = sys.argv[1:]
    directory = args.pop(0) if args and "/" in args[0] else "docs/coverage"
    observed, truth = load(directory)
    cells = args or list(observed)
    print("| cell | seeds | interval | hash seeds | vs long replays | vs pooled seeds | pooled / truth |")
    print("|---|---:|---|---:|---|---|---:|")
    for cell in cells:
        records = list(observed[cell].values())
        if not records or cell not in truth:
            continue
        for key, name in [("fn_rate", "FN"), ("fp_count_instance", "FP count-instance")]:
            most = len(records[0]["variants"]) - 1
            pooled = statistics.mean(r["variants"][most][key]["estimate"] for r in records)
            t = truth_rate(truth[cell], key)
            for v, var in enumerate(records[0]["variants"]):
                print(
                    f"| {cell} | {len(records)} | {name} | {var['hash_seeds']} | "
                    f"{coverage(records, v, key, t)} | {coverage(records, v, key, pooled)} | "
                    f"{pooled / t:.4f} |"
                )


if __name__ == "__main__":
    main()
