"""The libCacheSim side of scripts/libcachesim-compare.sh (run in its virtual
environment, where `pip install libcachesim` put the peer).

    python libcachesim_peer.py convert TRACE.csv OUT.oracleGeneral.bin
        JEDI request log (`time,object_id,size`, no header) -> oracleGeneral, with
        libCacheSim's own CSV reader and converter (next-access times filled in).
    python libcachesim_peer.py convert-lcs TRACE.oracleGeneral.bin OUT.lcs [VERSION]
        oracleGeneral -> lcs (versioned header, version 1 by default).
    python libcachesim_peer.py count TRACE [oracleGeneral|lcs]
        Requests and distinct objects as libCacheSim's reader sees them.
    python libcachesim_peer.py replay TRACE.oracleGeneral.bin CACHE
        LRU with libCacheSim's Bloom-filter admission over the trace; prints one JSON
        line: miss ratios and the seconds inside the simulation call. CACHE is bytes
        (a whole number) or a fraction of the working set (with a decimal point: the
        reader then makes a first pass to measure the working set).
"""

import json
import sys
import time

import libcachesim as lcs


def reader(path, kind="oracleGeneral"):
    trace_type = {
        "oracleGeneral": lcs.TraceType.ORACLE_GENERAL_TRACE,
        "lcs": lcs.TraceType.LCS_TRACE,
    }[kind]
    return lcs.TraceReader(path, trace_type)


def main(argv):
    cmd = argv[1]
    if cmd == "convert":
        params = lcs.ReaderInitParam()
        params.time_field = 1
        params.obj_id_field = 2
        params.obj_size_field = 3
        params.has_header = False
        params.delimiter = ","
        params.obj_id_is_num = True
        r = lcs.TraceReader(argv[2], lcs.TraceType.CSV_TRACE, params)
        lcs.Util.convert_to_oracleGeneral(r._reader, argv[3])
    elif cmd == "convert-lcs":
        version = int(argv[4]) if len(argv) > 4 else 1
        lcs.Util.convert_to_lcs(reader(argv[2])._reader, argv[3], lcs_ver=version)
    elif cmd == "count":
        n, ids = 0, set()
        for req in reader(argv[2], argv[3] if len(argv) > 3 else "oracleGeneral"):
            n += 1
            ids.add(req.obj_id)
        print(json.dumps({"requests": n, "objects": len(ids)}))
    elif cmd == "replay":
        r = reader(argv[2])
        size = float(argv[3]) if "." in argv[3] else int(argv[3])
        cache = lcs.LRU(
            cache_size=size,
            admissioner=lcs.BloomFilterAdmissioner(),
            reader=r if isinstance(size, float) else None,
        )
        t = time.perf_counter()
        miss_ratio, byte_miss_ratio = cache.process_trace(r)
        secs = time.perf_counter() - t
        print(
            json.dumps(
                {
                    "miss_ratio": miss_ratio,
                    "byte_miss_ratio": byte_miss_ratio,
                    "simulation_seconds": secs,
                }
            )
        )
    else:
        sys.exit(f"unknown command {cmd!r}; see the docstring")


if __name__ == "__main__":
    main(sys.argv)
