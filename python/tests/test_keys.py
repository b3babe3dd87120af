"""Keys in memory: read in place, and meaning what they mean on a line of a text trace."""

import os

import numpy as np
import polars as pl
import pytest

import rbf
from conftest import cli_json

FILTER = dict(memory=1 << 12, hashes=4, sigma=1 << 11)
FLAGS = ["--memory", "4096", "--hashes", "4", "--sigma", "2048"]


def replay_file(tmp_path, lines):
    path = tmp_path / "keys.txt"
    path.write_text("\n".join(lines) + "\n")
    r = cli_json("replay", str(path), "--format", "lines", *FLAGS)
    r.pop("ingest")
    return r


def observed(r):
    r = dict(r)
    r.pop("ingest")
    return r


@pytest.fixture
def keys():
    return np.random.default_rng(7).zipf(1.3, 30000).astype(np.int64) - 50


def test_integer_arrays_of_every_width_mean_their_decimal_text(tmp_path, keys):
    expected = replay_file(tmp_path, [str(k) for k in keys])
    assert observed(rbf.replay(keys, **FILTER)) == expected
    small = np.clip(keys, -128, 127)
    expected = replay_file(tmp_path, [str(k) for k in small])
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        assert observed(rbf.replay(small.astype(dtype), **FILTER)) == expected, dtype
    big = np.abs(keys).astype(np.uint64) + np.uint64(2**64 - 100000)
    assert observed(rbf.replay(big, **FILTER)) == replay_file(tmp_path, [str(k) for k in big])


def test_series_lists_str_and_bytes_mean_the_same(tmp_path, keys):
    expected = replay_file(tmp_path, [str(k) for k in keys])
    assert observed(rbf.replay(pl.Series(keys), **FILTER)) == expected
    assert observed(rbf.replay(pl.Series([str(k) for k in keys]), **FILTER)) == expected
    assert observed(rbf.replay([str(k).encode() for k in keys], **FILTER)) == expected
    assert observed(rbf.replay([int(k) for k in keys], **FILTER)) == expected
    assert observed(rbf.replay(np.array([str(k) for k in keys]), **FILTER)) == expected


def test_a_strided_view_is_read_as_its_elements(tmp_path, keys):
    view = keys[::2]
    assert observed(rbf.replay(view, **FILTER)) == replay_file(tmp_path, [str(k) for k in view])


def test_a_large_array_sizes_its_table_from_a_sketch_and_means_the_same(tmp_path, capfd):
    # Above 65 536 keys the replay sizes its key table from a sketch of the array
    # (crates/data/src/ingest/sketch.rs) instead of growing it: the same results as the file.
    many = np.random.default_rng(3).zipf(1.2, 150000).astype(np.int64)
    expected = replay_file(tmp_path, [str(k) for k in many])
    assert observed(rbf.replay(many, **FILTER)) == expected
    # A table of 64 MiB or more is announced with its size before the work.
    capfd.readouterr()
    rbf.replay(np.arange(4_000_000, dtype=np.uint64), prehashed=True, hash_seeds=1, **FILTER)
    err = capfd.readouterr().err
    assert "distinct objects estimated from a sketch of its keys" in err, err


def test_prehashed_keys_are_used_as_they_are(keys):
    hashed = keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    a = rbf.replay(hashed, prehashed=True, **FILTER)
    b = rbf.replay(hashed.view(np.int64), prehashed=True, **FILTER)
    assert a == b
    assert a.ingest.format == "memory" and a.ingest.messages == len(keys)
    with pytest.raises(ValueError, match="64-bit"):
        rbf.replay(keys.astype(np.int32), prehashed=True, **FILTER)


def test_fit_and_compare_take_keys(tmp_path, keys):
    path = tmp_path / "keys.txt"
    path.write_text("\n".join(str(k) for k in keys) + "\n")
    f = rbf.fit(keys, window=4096)
    c = cli_json("fit", str(path), "--format", "lines", "--window", "4096")
    assert f.p_repeat == c["p_repeat"] and f.distinct_keys == c["distinct_keys"]
    r = rbf.compare(keys, method="drop-pins", **FILTER)
    assert r.replay == rbf.replay(keys, **FILTER).__class__(
        {k: v for k, v in r.replay.items()})


def test_the_keys_are_released_when_the_call_returns():
    """The array is exported to the hashing thread during the call, and no longer after
    it (a bytearray cannot grow while exported), whether the call succeeds or fails."""
    data = bytearray(range(256)) * 200
    assert rbf.replay(data, **FILTER).ingest.messages == len(data)
    data.extend(b"x")
    empty = bytearray()
    with pytest.raises(rbf.TraceError, match="no usable record"):
        rbf.replay(empty, **FILTER)
    empty.extend(b"x")


def test_fit_does_not_name_its_own_temporary_files(capfd, keys):
    rbf.fit(keys, window=4096)
    assert "wrote" not in capfd.readouterr().err


def test_bad_keys_are_refused():
    with pytest.raises(rbf.TraceError, match="no usable record"):
        rbf.replay(np.array([], dtype=np.uint64), **FILTER)
    with pytest.raises(TypeError, match="expected str, bytes or int, found float"):
        rbf.replay(np.array([1.5, 2.5]), **FILTER)
    with pytest.raises(ValueError, match="one-dimensional"):
        rbf.replay(np.zeros((3, 3), dtype=np.uint64), **FILTER)
    with pytest.raises(TypeError, match="keys\\[1\\]"):
        rbf.replay(["a", 1.5], **FILTER)
    with pytest.raises(ValueError, match="64 bits"):
        rbf.replay([2**70], **FILTER)
    with pytest.raises(ValueError, match="nulls"):
        rbf.replay(pl.Series([1, None, 3]), **FILTER)
    with pytest.raises(ValueError, match="do not apply to keys in memory"):
        rbf.replay(np.arange(10, dtype=np.uint64), key="dst", **FILTER)


def test_a_bytes_path_is_a_path_and_float_or_boolean_series_are_refused(tmp_path, keys):
    # A bytes path names the file, as os.open takes it: not the path's bytes as keys.
    expected = replay_file(tmp_path, [str(k) for k in keys])
    path = str(tmp_path / "keys.txt")
    r = rbf.replay(os.fsencode(path), format="lines", **FILTER)
    assert r.ingest.messages == len(keys)
    assert observed(r) == observed(rbf.replay(path, format="lines", **FILTER)) == expected
    # Floats and Booleans are no keys, in a Series as in a numpy array.
    for series in (pl.Series([1.5, 2.5]), pl.Series([True, False])):
        with pytest.raises(TypeError, match="expected str, bytes or int, found a Series of"):
            rbf.replay(series, **FILTER)
