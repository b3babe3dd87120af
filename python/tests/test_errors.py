"""Errors: the command line's messages as Python exceptions, never a panic; Ctrl-C."""

import math
import os
import signal
import subprocess
import sys
import time

import pytest

import rbf
from conftest import ROOT, TRACE, cli

FILTER = dict(memory=4000, hashes=3, sigma=1200)


@pytest.mark.parametrize("kwargs, args", [
    (dict(memory=-1, hashes=3, sigma=100), ["--memory", "-1", "--hashes", "3", "--sigma", "100"]),
    (dict(memory=100, hashes=3, sigma=1000), ["--memory", "100", "--hashes", "3", "--sigma", "1000"]),
    (dict(hashes=3, sigma=100), ["--hashes", "3", "--sigma", "100"]),
    (dict(memory=1000, hashes=3, sigma=100, retaining=True, non_retaining=True),
     ["--memory", "1000", "--hashes", "3", "--sigma", "100", "--retaining", "--non-retaining"]),
    (dict(memory=1000, hashes=3, sigma=100, confidence=float("nan")),
     ["--memory", "1000", "--hashes", "3", "--sigma", "100", "--confidence", "nan"]),
    (dict(memory=1000, hashes=3, sigma=100, format="jedi", csv_header=True),
     ["--memory", "1000", "--hashes", "3", "--sigma", "100", "--format", "jedi", "--csv-header"]),
])
def test_usage_errors_are_value_errors_with_the_cli_message(kwargs, args):
    out = cli("replay", str(TRACE), *args, check=False)
    assert out.returncode == 2
    first = out.stderr.strip().splitlines()[0].removeprefix("error: ")
    with pytest.raises(ValueError) as e:
        rbf.replay(TRACE, **kwargs)
    assert str(e.value).splitlines()[0] == first


def test_a_bad_setting_names_its_key():
    # The key is the one the command line names in "invalid setting `KEY`".
    out = cli("replay", str(TRACE), "--memory", "1000", "--hashes", "3", "--sigma", "100",
              "--confidence", "1.5", check=False)
    assert out.returncode == 2
    assert "invalid setting `confidence`" in out.stderr
    with pytest.raises(rbf.SettingError) as e:
        rbf.replay(TRACE, memory=1000, hashes=3, sigma=100, confidence=1.5)
    assert e.value.key == "confidence"
    assert isinstance(e.value, ValueError)
    assert str(e.value) == out.stderr.strip().removeprefix("error: ")


def test_a_bad_config_value_names_its_key(tmp_path):
    # A config's refused value names the file, then the setting; the key is the setting's.
    text = (ROOT / "configs" / "quickstart.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("memory = [2048, 4096, 16384]", "memory = []"))
    with pytest.raises(rbf.SettingError) as e:
        rbf.run(bad, output=tmp_path / "out", quiet=True)
    assert e.value.key == "grid.memory"
    assert str(e.value).startswith(f"{bad}: invalid setting `grid.memory`")


def test_data_and_file_errors(tmp_path):
    with pytest.raises(OSError, match="No such file"):
        rbf.replay(tmp_path / "missing.csv", **FILTER)
    bad = tmp_path / "bad.rbfs"
    bad.write_bytes(b"RBFS" + b"\xff" * 40)
    with pytest.raises(rbf.TraceError):
        rbf.replay(bad, **FILTER)
    out = cli("replay", str(bad), "--memory", "4000", "--hashes", "3", "--sigma", "1200",
              check=False)
    assert out.returncode == 1


def test_unknown_and_managed_keywords_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'memroy'"):
        rbf.replay(TRACE, memroy=1)
    with pytest.raises(TypeError, match="'json'"):
        rbf.model_fp(json=True, **FILTER)
    with pytest.raises(TypeError, match="switch"):
        rbf.model_fp(non_retaining=1, **FILTER)


# The values tests/it/safety_sweep.rs gives every numeric flag of the command line.
HOSTILE = [0, 1, -1, 2**32, 2**63, 2**64 - 1, 1e308, float("nan"), float("inf"), 10**299]


def hostile_cases():
    keys = list(range(50)) * 40
    workload = dict(zipf=1.0, distinct=100, p_repeat=0.9)
    return [
        ("replay", lambda **o: rbf.replay(TRACE, **{**FILTER, "warmup": 1000, **o}),
         rbf._SCHEMA[("replay",)]),
        ("replay keys", lambda **o: rbf.replay(keys if "prefix_v4" not in o else TRACE,
                                               **{**FILTER, **o}), rbf._SCHEMA[("replay",)]),
        ("fit", lambda **o: rbf.fit(keys, **o), rbf._SCHEMA[("fit",)]),
        ("compare", lambda **o: rbf.compare(keys, **{**FILTER, "method": "drop-pins", **o}),
         rbf._SCHEMA[("compare",)]),
        ("model fp", lambda **o: rbf.model_fp(**{**FILTER, **o}), rbf._SCHEMA[("model", "fp")]),
        ("model capacity", lambda **o: rbf.model_capacity(**{"memory": 10000, "target_fp": 0.01,
                                                            **o}),
         rbf._SCHEMA[("model", "capacity")]),
        ("model fn", lambda **o: rbf.model_fn(**{**FILTER, **workload, **o}),
         rbf._SCHEMA[("model", "fn")]),
        ("size", lambda **o: rbf.size(**{**workload, "target_fp": 0.01, "target_fn": 0.05,
                                         "confirm_arrivals": 10000, "max_hashes": 3,
                                         "phases": "1", **o}),
         rbf._SCHEMA[("size",)]),
    ]


class Deadline(Exception):
    pass


def test_hostile_numbers_give_results_or_value_errors_never_a_panic():
    """Each numeric keyword of each function gets each hostile value in turn: the call
    returns, or raises ValueError (or TraceError, or for a value asking for long work is
    stopped by an alarm as by Ctrl-C), within the deadline. A panic would be a
    RuntimeError."""
    def alarm(*_):
        raise Deadline()

    previous = signal.signal(signal.SIGALRM, alarm)
    outcomes = {"ok": 0, "ValueError": 0, "stopped": 0}
    try:
        for name, call, schema in hostile_cases():
            numeric = [f["name"] for f in schema["flags"]
                       if f["value_type"] in ("int", "float") and f["long"]]
            assert numeric, name
            for flag in numeric:
                for value in HOSTILE:
                    started = time.monotonic()
                    signal.setitimer(signal.ITIMER_REAL, 1.5)
                    try:
                        call(**{flag: value})
                        outcomes["ok"] += 1
                    except ValueError:
                        outcomes["ValueError"] += 1
                    except Deadline:
                        outcomes["stopped"] += 1
                    finally:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                    took = time.monotonic() - started
                    assert took < 8, f"{name} {flag}={value!r}: {took:.1f} s"
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert outcomes["ValueError"] > 0 and outcomes["ok"] > 0, outcomes
    print(outcomes)


LONG_RENEWAL = (
    "import rbf\n"
    "print('started', flush=True)\n"
    "try:\n"
    "    rbf.model_fn(memory=2**24, hashes=4, sigma=2**23, zipf=1.0, distinct=100000,\n"
    "                 p_repeat=0.9, method='renewal', quiet=True)\n"
    "except KeyboardInterrupt:\n"
    "    print('KeyboardInterrupt', flush=True)\n"
    "    print(rbf.model_fp(memory=1000, hashes=3, sigma=300).fp_sigma > 0, flush=True)\n"
)


def interrupted(script: str, after: float) -> tuple[list[str], float]:
    """Runs `script` in a Python process, sends it SIGINT `after` seconds after it prints
    "started", and returns the words it printed next and how long it took to end."""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdout.readline().strip() == "started"
    time.sleep(after)
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    return out.split(), time.monotonic() - sent


def test_ctrl_c_stops_long_work_with_keyboard_interrupt_and_the_session_goes_on():
    words, took = interrupted(LONG_RENEWAL, 1.5)
    assert words == ["KeyboardInterrupt", "True"]
    assert took < 5, "slow to stop"

LONG_REPLAY = (
    "import numpy as np, rbf, time\n"
    "keys = np.tile(np.arange(65536, dtype=np.uint16), 2300)  # 150 M keys, 300 MB\n"
    "keys = keys.copy()  # an array owning its memory can be resized (below)\n"
    "print('started', flush=True)\n"
    "t = time.monotonic()\n"
    "try:\n"
    "    rbf.replay(keys, memory=2**20, hashes=4, sigma=2**19, quiet=True)\n"
    "    print('finished', flush=True)\n"
    "except KeyboardInterrupt:\n"
    "    print('KeyboardInterrupt', flush=True)\n"
    "keys.resize(10)  # refused while the hashing thread still held the array\n"
    "print('released', flush=True)\n"
)


def test_ctrl_c_stops_a_replay_of_keys_in_memory():
    """Replay does not poll the interrupt flag itself: the key source ends the stream."""
    words, took = interrupted(LONG_REPLAY, 0.3)
    assert words == ["KeyboardInterrupt", "released"]
    assert took < 3, "slow to stop"


LONG_FIT = (
    "import numpy as np, os, rbf, sys, tempfile\n"
    "keys = np.tile(np.arange(65536, dtype=np.uint16), 2300)  # 150 M keys\n"
    "out = os.path.join(tempfile.mkdtemp(), 'workload.json')\n"
    "print('started', flush=True)\n"
    "try:\n"
    "    rbf.fit(keys, output=out, quiet=True)\n"
    "    print('finished', flush=True)\n"
    "except KeyboardInterrupt:\n"
    "    print('KeyboardInterrupt', flush=True)\n"
    "print('written' if os.path.exists(out) else 'not-written', flush=True)\n"
)


def test_ctrl_c_during_a_fit_writes_no_named_output():
    """The key source ends the stream at Ctrl-C and the fit of what was read completes,
    but it is not the fit of the trace: the named output is not put in place."""
    words, took = interrupted(LONG_FIT, 0.3)
    assert words == ["KeyboardInterrupt", "not-written"]
    assert took < 10, "slow to stop"
