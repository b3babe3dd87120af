"""Recycling Bloom filters: replay traces with exact ground truth, fit workloads, and
compare the FP/FN models and bounds with what happened, from Python.

Every function is one ``rbf`` command: its keyword arguments are the command's flags
(``--max-inserts`` is ``max_inserts=``), with the command line's defaults, checks and
error messages, because the command line's own code parses and runs them.
``help(rbf.replay)`` lists them. A switch is ``True``; a flag left out, or ``None``,
keeps its default.

Results are :class:`Result` objects: the JSON object the command prints with
``--json``, as a dict whose keys are also attributes (``r.fn_rate`` is
``r["fn_rate"]``), plus polars DataFrames for its tables.

A trace is a path (a ``str``, ``bytes`` or ``os.PathLike``; or a list of paths read as
one series), in any format the command line reads, or keys already in memory: a NumPy
array or polars Series of integers, read in place without a copy, or of strings; or
a list of ``bytes`` or ``int`` keys (a list of ``str`` is a list of paths). A key means what it means on a line of a text trace (an integer is
its decimal text), so an array and a file listing the same keys give the same
results; with ``prehashed=True`` 64-bit integers are rbf's hashed keys themselves (as
in an ``.rbfs`` stream).

Errors: what the command line reports with exit status 2 (bad flags, values, configs)
raises ``ValueError`` with the same message, a bad setting :class:`SettingError` (a
``ValueError`` whose ``key`` names the flag or config key); unreadable files
``OSError``; bad trace data :class:`TraceError` (a ``ValueError``); a bug
``RuntimeError``. Long work runs without the GIL and stops on Ctrl-C with
``KeyboardInterrupt``.
"""

from __future__ import annotations

import inspect
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from . import _native
from ._errors import SettingError, TraceError

__all__ = [
    "Result",
    "SettingError",
    "TraceError",
    "compare",
    "fit",
    "model_capacity",
    "model_fn",
    "model_fp",
    "replay",
    "run",
    "size",
]

#: Every command's flags, from the command line's own definitions.
_SCHEMA: dict[tuple[str, ...], dict] = {
    tuple(c["path"]): c for c in json.loads(_native.schema())
}
#: Flags the package sets itself: results always come back as JSON.
_MANAGED = {"json"}


class Result(dict):
    """A command's JSON result: a dict whose keys are also attributes.

    Nested objects are Results too. Tables a command produces are attributes holding
    polars DataFrames (see each function's documentation).
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> Iterable[str]:
        return list(super().__dir__()) + [k for k in self if k.isidentifier()]


def _result(value: Any) -> Any:
    if isinstance(value, dict):
        return Result((k, _result(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_result(v) for v in value]
    return value


def _is_path(x: Any) -> bool:
    # A bytes object is a path, as os.open takes it (os.fsdecode), never keys.
    return isinstance(x, (str, bytes, os.PathLike))


def _path(x: Any) -> str:
    return os.fsdecode(os.fspath(x))


def _trace(trace: Any) -> tuple[list[str], Any]:
    """The positional trace arguments and the keys in memory (None for paths)."""
    if _is_path(trace):
        return [_path(trace)], None
    if isinstance(trace, (list, tuple)) and trace and all(_is_path(t) for t in trace):
        if all(isinstance(t, bytes) for t in trace):
            # A list of bytes is a list of keys (as documented), not of paths.
            return ["-"], trace
        return [_path(t) for t in trace], None
    keys = trace
    module = type(trace).__module__.split(".")[0]
    if module == "polars":
        import polars as pl

        if trace.dtype.is_float() or trace.dtype == pl.Boolean:
            raise TypeError(
                f"keys: expected str, bytes or int, found a Series of {trace.dtype} "
                "(a float or Boolean is not a key; cast it to what it stands for)"
            )
        if trace.dtype.is_integer():
            if trace.null_count():
                raise ValueError("keys: the Series has nulls; a key cannot be missing")
            keys = trace.to_numpy()  # no copy for an integer Series without nulls
        else:
            keys = trace.cast(pl.String).to_list() if trace.dtype != pl.Binary else trace.to_list()
    elif module == "numpy":
        import numpy as np

        if trace.dtype.kind in "iu":
            keys = np.ascontiguousarray(trace)  # no copy when it is contiguous already
    # "-" stands for the trace on the command line; the keys are read instead.
    return ["-"], keys


def _argv(path: tuple[str, ...], positional: dict[str, Any], options: dict[str, Any]) -> list[str]:
    """The command line for `path` with these arguments, checked against the schema."""
    schema = _SCHEMA[path]
    flags = {f["name"]: f for f in schema["flags"]} | {
        f["name"]: f for f in _SCHEMA[()]["flags"]
    }
    name = "_".join(path)
    head: list[str] = []
    argv: list[str] = list(path)
    for key, value in positional.items():
        argv.extend(value if isinstance(value, list) else [value])
    for key, value in options.items():
        flag = flags.get(key)
        if flag is None or key in _MANAGED or flag["long"] is None:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
        if value is None:
            continue
        target = head if path and flag in _SCHEMA[()]["flags"] else argv
        if flag["kind"] == "switch":
            if not isinstance(value, bool):
                raise TypeError(f"{name}(): {key} is a switch: True or False, not {value!r}")
            if value:
                target.append(flag["long"])
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, bool):
                raise TypeError(f"{name}(): {key} takes a {flag['value_type']}, not {v!r}")
            target.extend([flag["long"], _path(v) if isinstance(v, (bytes, os.PathLike)) else str(v)])
    if "json" in flags:
        argv.append("--json")
    return head + argv


def _call(path: tuple[str, ...], positional: dict[str, Any], options: dict[str, Any],
          keys: Any = None, prehashed: bool = False) -> tuple[str, list[str]]:
    outputs: list[str] = []
    text = _native.call(_argv(path, positional, options), keys, prehashed, outputs)
    return text, outputs


def _json_call(path, positional, options, keys=None, prehashed=False) -> Result:
    text, _ = _call(path, positional, options, keys, prehashed)
    return _result(json.loads(text))


def _frame(rows: list) -> "pl.DataFrame":
    import polars as pl

    return pl.DataFrame(rows, infer_schema_length=None)


def _records_frame(records: list) -> "pl.DataFrame":
    """The judged bounds (the JSON's ``models``), one row per bound, nested objects as
    struct columns."""
    return _frame([dict(r) for r in records])


def replay(trace: Any, *, prehashed: bool = False, **options: Any) -> Result:
    paths, keys = _trace(trace)
    return _json_call(("replay",), {"trace": paths}, options, keys, prehashed)


def fit(trace: Any, *, prehashed: bool = False, **options: Any) -> Result:
    import polars as pl

    paths, keys = _trace(trace)
    with tempfile.TemporaryDirectory(prefix="rbf-fit-") as tmp:
        # The tables come from the files the command writes: the rank table, and the
        # workload file's reuse profile (in the caller's files when they asked for them).
        if options.get("table") is None:
            options = dict(options, table=os.path.join(tmp, "rank.parquet"))
        if options.get("output") is None:
            options = dict(options, output=os.path.join(tmp, "workload.json"))
        r = _json_call(("fit",), {"trace": paths}, options, keys, prehashed)
        ranks = Path(options["table"])
        r.rank_table = pl.read_parquet(ranks) if ranks.suffix == ".parquet" else pl.read_csv(ranks)
        r.workload = _result(json.loads(Path(options["output"]).read_text()))
    reuse = r.workload.get("reuse") or {"n": [], "survival": []}
    r.reuse_table = pl.DataFrame({"n": reuse["n"], "survival": reuse["survival"]},
                                 schema={"n": pl.UInt64, "survival": pl.Float64})
    r.window_table = _frame(r.get("per_window") or [])
    return r


def compare(trace: Any, *, prehashed: bool = False, **options: Any) -> Result:
    paths, keys = _trace(trace)
    r = _json_call(("compare",), {"trace": paths}, options, keys, prehashed)
    r.table = _records_frame(r["models"])
    return r


def model_fp(**options: Any) -> Result:
    return _json_call(("model", "fp"), {}, options)


def model_capacity(**options: Any) -> Result:
    return _json_call(("model", "capacity"), {}, options)


def model_fn(**options: Any) -> Result:
    r = _json_call(("model", "fn"), {}, options)
    r.table = _records_frame(r["models"])
    return r


def size(trace: Any = None, *, prehashed: bool = False, **options: Any) -> Result:
    if trace is None:
        if prehashed:
            raise TypeError("size: prehashed applies to a trace of keys in memory, and no trace was given")
        r = _json_call(("size",), {}, options)
    else:
        # Sized on the trace itself: by the renewal-trace bound, next to the memory
        # its replay shows sufficient.
        paths, keys = _trace(trace)
        r = _json_call(("size",), {"trace": paths}, options, keys, prehashed)
    r.table = _records_frame(r["models"])
    return r


def run(config: str | os.PathLike, **options: Any) -> Result:
    import polars as pl

    text, outputs = _call(("run",), {"config": os.fspath(config)}, options)
    out = Path(outputs[-1])
    r = _result(json.loads((out / "results.json").read_text()))
    if not isinstance(r, Result):
        r = Result(rows=r)
    r.output = str(out)
    r.report_html = str(out / "report.html")
    r.results = pl.read_parquet(out / "results.parquet")
    r.summary_text = text
    return r


# Result attributes set above are stored as keys (Result is a dict), so that repr and
# iteration show them; they are not part of the command's JSON.
def _setattr(self: Result, name: str, value: Any) -> None:
    self[name] = value


Result.__setattr__ = _setattr  # type: ignore[assignment]

_TABLES = {
    "fit": "Tables: ``rank_table`` (rank, q, zeta: the fitted popularity Q and placement), "
    "``reuse_table`` (n, survival: the reuse profile S(n), the share of repeats whose "
    "previous arrival is more than n arrivals back), ``window_table`` (the fit of each "
    "window: the JSON's ``per_window``); ``workload`` is the workload file's content.",
    "compare": "Tables: ``table``, one row per bound (the JSON's ``models``): value, "
    "range, claim, standing, verdict, note.",
    "model_fn": "Tables: ``table``, one row per bound (the JSON's ``models``).",
    "size": "Tables: ``table``, one row per bound of the chosen filter.",
    "run": "Tables: ``results`` (results.parquet: every column of every grid point); "
    "``output`` is the output directory (``report_html`` its report page), "
    "``summary_text`` what the command printed.",
}

_PYTHON_TYPES = {"int": int, "float": float, "path": "str | os.PathLike", "str": str, "bool": bool}


def _default(flag: dict) -> Any:
    """The flag's default as a Python value (None: none, the flag is optional)."""
    if flag["kind"] == "switch":
        return False
    d = flag["default"]
    if d is None:
        return None
    try:
        return {"int": int, "float": float}.get(flag["value_type"], str)(d)
    except ValueError:
        return d


def _document(fn: Any, path: tuple[str, ...], positional: list[str]) -> None:
    """Docstring and signature from the command's flags (what ``help()`` and notebook
    completion show)."""
    schema = _SCHEMA[path]
    flags = [f for f in schema["flags"] + _SCHEMA[()]["flags"]
             if f["name"] not in _MANAGED and f["long"] is not None]
    params = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in positional]
    if positional and positional[0] == "trace":
        params.append(inspect.Parameter("prehashed", inspect.Parameter.KEYWORD_ONLY, default=False))
    lines = [schema["about"], "", f"The ``rbf {' '.join(path)}`` command; keyword arguments are its flags:", ""]
    for f in flags:
        default = f["default"] if f["kind"] != "switch" else False
        params.append(inspect.Parameter(f["name"], inspect.Parameter.KEYWORD_ONLY,
                                        default=_default(f)))
        shown = f" (default {default})" if default not in (None, False) else ""
        choices = f"; one of {', '.join(f['choices'])}" if f["choices"] and f["kind"] != "switch" else ""
        lines.append(f"{f['name']} ({f['long']}){shown}{choices}:")
        lines.extend("    " + line for line in f["help"].splitlines())
    if fn.__name__ in _TABLES:
        lines += ["", _TABLES[fn.__name__]]
    fn.__doc__ = "\n".join(lines)
    fn.__signature__ = inspect.Signature(params)


_document(replay, ("replay",), ["trace"])
_document(fit, ("fit",), ["trace"])
_document(compare, ("compare",), ["trace"])
_document(model_fp, ("model", "fp"), [])
_document(model_capacity, ("model", "capacity"), [])
_document(model_fn, ("model", "fn"), [])
_document(size, ("size",), [])
_document(run, ("run",), ["config"])
