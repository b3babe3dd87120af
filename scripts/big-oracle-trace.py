#!/usr/bin/env python3
"""A big oracleGeneral trace for the memory measurements of docs/PERFORMANCE.md ("Replay",
A big trace): 2 * 10^8 requests, a quarter of them objects requested once, the rest
log-uniform over 10^6 ids, with next-access links computed from a stable sort (about
5.1 * 10^7 objects, 4.8 GB; 90 s and 8 GB of memory). Needs numpy (the peer venv of
scripts/libcachesim-compare.sh has it):

    target/peer-venv/bin/python scripts/big-oracle-trace.py big.oracleGeneral.bin [requests]
"""
import sys

import numpy as np


def main(path, n=200_000_000):
    rng = np.random.default_rng(31)
    new = rng.random(n) < 0.25
    ids = np.empty(n, dtype=np.uint64)
    k = int(new.sum())
    ids[new] = np.arange(10_000_000, 10_000_000 + k, dtype=np.uint64)
    ids[~new] = np.floor(np.exp(rng.random(n - k) * np.log(1e6))).astype(np.uint64)
    del new
    # Requests of one object are adjacent in a stable sort, in request order: each
    # one's next access is the next position there, -1 for the last.
    order = np.argsort(ids, kind="stable")
    nxt = np.full(n, -1, dtype=np.int64)
    same = ids[order[1:]] == ids[order[:-1]]
    nxt[order[:-1][same]] = order[1:][same]
    del order, same
    print(f"{n} requests, {int((nxt == -1).sum())} objects", file=sys.stderr)
    rec = np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])
    with open(path + ".tmp", "wb") as f:
        step = 10_000_000
        for s in range(0, n, step):
            e = min(n, s + step)
            a = np.empty(e - s, dtype=rec)
            a["t"] = np.arange(s, e) // 1000
            a["id"] = ids[s:e]
            a["sz"] = 1
            a["nx"] = nxt[s:e]
            a.tofile(f)
    import os

    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
