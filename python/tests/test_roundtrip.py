"""The package gives what the command line gives for the same inputs and flags."""

import json
from pathlib import Path

import polars as pl

import rbf
from conftest import ROOT, TRACE, cli, cli_json

FILTER = dict(memory=10000, hashes=5, sigma=1500)
FLAGS = ["--memory", "10000", "--hashes", "5", "--sigma", "1500"]


def without_timings(x):
    """Drops wall-clock fields (they differ between any two runs)."""
    if isinstance(x, dict):
        return {k: without_timings(v) for k, v in x.items() if "seconds" not in k}
    if isinstance(x, list):
        return [without_timings(v) for v in x]
    return x


def test_replay_equals_cli():
    r = rbf.replay(TRACE, warmup=20000, **FILTER)
    assert r == cli_json("replay", str(TRACE), "--warmup", "20000", *FLAGS)
    assert r.fn_rate == r["fn_rate"] and r.filter.memory == 10000


def test_replay_of_a_series_of_paths_equals_cli():
    pcaps = sorted(str(p) for p in (ROOT / "traces" / "ndpi").glob("*.pcap*"))[:3]
    r = rbf.replay(pcaps, memory=4096, hashes=4, sigma=1000, sort_by_time=True)
    assert r == cli_json("replay", *pcaps, "--memory", "4096", "--hashes", "4", "--sigma",
                         "1000", "--sort-by-time")


def test_fit_equals_cli_and_its_tables_are_frames(tmp_path):
    f = rbf.fit(TRACE, warmup=20000, output=tmp_path / "w.json")
    c = cli_json("fit", str(TRACE), "--warmup", "20000", "--table", str(tmp_path / "r.csv"))
    assert without_timings({k: v for k, v in f.items() if k not in ("rank_table", "window_table", "reuse_table", "workload")}) \
        == without_timings(c)
    ranks = pl.read_csv(tmp_path / "r.csv")
    assert f.rank_table.columns == ["rank", "q", "zeta"]
    assert f.rank_table.height == ranks.height
    assert (f.rank_table["q"] - ranks["q"]).abs().max() < 1e-12
    assert f.window_table.height == len(c["per_window"])
    workload = json.loads((tmp_path / "w.json").read_text())
    assert workload["p_repeat"] == f.p_repeat and f.workload == workload
    assert f.reuse_table["n"].to_list() == workload["reuse"]["n"]
    assert f.reuse_table["survival"][0] == 1.0 and f.reuse_table["survival"].is_sorted(descending=True)


def test_compare_equals_cli():
    r = rbf.compare(TRACE, warmup=20000, method="renewal,drop-pins", **FILTER)
    c = cli_json("compare", str(TRACE), "--warmup", "20000", "--method", "renewal,drop-pins",
                 *FLAGS)
    assert without_timings({k: v for k, v in r.items() if k != "table"}) == without_timings(c)
    assert r.table["bound"].to_list() == [m["bound"] for m in c["models"]]
    assert r.table["value"].to_list() == [m["value"] for m in c["models"]]


def test_models_equal_cli():
    assert rbf.model_fp(**FILTER) == cli_json("model", "fp", *FLAGS)
    assert rbf.model_capacity(memory=100000, target_fp=0.01) == cli_json(
        "model", "capacity", "--memory", "100000", "--target-fp", "0.01")
    w = dict(zipf=1.0, distinct=1000, p_repeat=0.9, method="renewal,drop-pins")
    r = rbf.model_fn(**FILTER, **w)
    c = cli_json("model", "fn", *FLAGS, "--zipf", "1", "--distinct", "1000", "--p-repeat",
                 "0.9", "--method", "renewal,drop-pins")
    assert without_timings({k: v for k, v in r.items() if k != "table"}) == without_timings(c)


def test_size_equals_cli():
    args = dict(zipf=1.0, distinct=200, p_repeat=0.9, target_fp=0.01, target_fn=0.05,
                confirm_arrivals=20000, max_hashes=3, phases="1")
    r = rbf.size(**args)
    c = cli_json("size", "--zipf", "1", "--distinct", "200", "--p-repeat", "0.9", "--target-fp",
                 "0.01", "--target-fn", "0.05", "--confirm-arrivals", "20000", "--max-hashes",
                 "3", "--phases", "1")
    assert without_timings({k: v for k, v in r.items() if k != "table"}) == without_timings(c)
    assert r.table.height == len(c["models"])


def test_size_on_a_trace_equals_cli_for_a_file_and_for_keys_in_memory(tmp_path):
    keys = [f"k{(i * 7919) % 600 + (i // 2000) * 300}" for i in range(12000)]
    trace = tmp_path / "t.txt"
    trace.write_text("\n".join(keys) + "\n")
    args = dict(target_fp=0.01, target_fn=0.01, max_hashes=3, phases="1", format="lines")
    r = rbf.size(str(trace), **args)
    c = cli_json("size", str(trace), "--target-fp", "0.01", "--target-fn", "0.01",
                 "--max-hashes", "3", "--phases", "1", "--format", "lines")
    assert without_timings({k: v for k, v in r.items() if k != "table"}) == without_timings(c)
    assert r.table.height == len(c["models"])
    # Keys in memory (ints: a list of strings is a list of paths) are sized the same way.
    ints = [int(k[1:]) for k in keys]
    m = rbf.size(ints, target_fp=0.01, target_fn=0.01, max_hashes=3, phases="1")
    assert m.arrivals == len(keys) and m.chosen.bound.upper <= 0.01
    assert m.by_replay.observed_fn.rate <= 0.01 and m.table.height == len(m.models)


def test_run_writes_the_experiment_and_returns_its_results(tmp_path):
    config = tmp_path / "grid.toml"
    config.write_text(
        'name = "py"\nmeasures = ["observed", "fp-model"]\n[[synthetic]]\ndistinct = 100\n'
        'zipf = 1.0\np_repeat = 0.9\narrivals = 5000\n[grid]\nmemory = [2000, 4000]\n'
        'hashes = [3]\nsigma_fraction = [0.5]\n')
    r = rbf.run(config, output=tmp_path / "py-out", quiet=True)
    cli("run", str(config), "-o", str(tmp_path / "cli-out"), "-q")
    expected = pl.read_parquet(tmp_path / "cli-out" / "results.parquet")
    assert r.results.height == 2
    timing = [c for c in expected.columns if "seconds" in c]
    assert r.results.drop(timing).equals(expected.drop(timing))
    assert Path(r.output) == tmp_path / "py-out"
    assert Path(r.report_html).is_file()
