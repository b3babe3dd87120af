"""In-memory replay speed from Python next to `rbf-bench replay` (docs/PERFORMANCE.md,
"The Python package"). Run from the repository root with the package installed:

    python scripts/python-bench-replay.py [--arrivals 10000000] [--repeats 5]
    python scripts/python-bench-replay.py --four-vs-one [--repeats 15]

The stream follows the bench's arrival model (D = 1 M messages with Zipf(1.0)
popularity, p_r = 0.9, new messages otherwise), drawn with NumPy; the filter is the
bench's (one phase, M = 2^20 bits, k = 4, sigma = M/2).

`--four-vs-one` times the default four filters (hash_seeds=4) against one, alternating
call by call, with the flags of the oracleGeneral benchmark (sigma 400 000, warm-up 10^6),
and prints the medians and their ratio.
"""

import argparse
import statistics
import subprocess
import time

import numpy as np

import rbf


def stream(n: int, distinct: int, p_repeat: float, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, distinct + 1)
    cdf = np.cumsum(weights / weights.sum())
    repeat = rng.random(n) < p_repeat
    keys = np.searchsorted(cdf, rng.random(n)).astype(np.uint64)
    fresh = ~repeat
    keys[fresh] = np.arange(distinct, distinct + fresh.sum(), dtype=np.uint64)
    return keys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrivals", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rbf-bench", default="target/release/rbf-bench")
    ap.add_argument("--four-vs-one", action="store_true")
    a = ap.parse_args()
    keys = stream(a.arrivals, 1_000_000, 0.9)
    if a.four_vs_one:
        four_vs_one(keys, a.repeats)
        return
    # One filter, as `rbf-bench replay` replays (rbf.replay replays 4 hash seeds by default).
    flags = dict(memory=1 << 20, hashes=4, sigma=1 << 19, hash_seeds=1, quiet=True)
    for name, prehashed in [("python, uint64 keys as rbf keys (prehashed)", True),
                            ("python, uint64 keys hashed as decimal text", False)]:
        times, cpu = [], []
        for _ in range(a.repeats):
            t, c = time.perf_counter(), time.process_time()
            rbf.replay(keys, prehashed=prehashed, **flags)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        rate = lambda s: a.arrivals / s / 1e6
        print(f"{name}: wall median {rate(statistics.median(times)):.1f} M arrivals/s, "
              f"best {rate(min(times)):.1f}; CPU median {rate(statistics.median(cpu)):.1f}, "
              f"best {rate(min(cpu)):.1f}")
    out = subprocess.run([a.rbf_bench, "replay", "--arrivals", str(a.arrivals),
                          "--repeats", str(a.repeats)], capture_output=True, text=True, check=True)
    print("CLI `rbf-bench replay`:", [l for l in out.stdout.splitlines() if l.startswith("replay:")][0])


def four_vs_one(keys: np.ndarray, repeats: int) -> None:
    flags = dict(prehashed=True, memory=1 << 20, hashes=4, sigma=400_000, warmup=1_000_000,
                 quiet=True)
    wall = {1: [], 4: []}
    cpu = {1: [], 4: []}
    for r in range(repeats):
        for seeds in (1, 4) if r % 2 == 0 else (4, 1):
            t, c = time.perf_counter(), time.process_time()
            rbf.replay(keys, hash_seeds=seeds, **flags)
            wall[seeds].append(time.perf_counter() - t)
            cpu[seeds].append(time.process_time() - c)
    med = statistics.median
    for seeds in (1, 4):
        print(f"hash_seeds={seeds}: wall median {med(wall[seeds]):.3f} s "
              f"(min {min(wall[seeds]):.3f}, max {max(wall[seeds]):.3f}), CPU median {med(cpu[seeds]):.3f} s")
    print(f"four filters / one: wall {med(wall[4]) / med(wall[1]):.2f}x, "
          f"CPU {med(cpu[4]) / med(cpu[1]):.2f}x")


if __name__ == "__main__":
    main()
