"""The type stub is generated from the command line's flags and committed: it must be
what the generator writes now (regenerate, with the package installed, from the
repository root: `python -m rbf._stubgen > python/rbf/__init__.pyi`)."""

import inspect

import rbf
from rbf import _stubgen
from conftest import ROOT


def test_the_committed_stub_is_up_to_date():
    committed = (ROOT / "python" / "rbf" / "__init__.pyi").read_text()
    assert committed == _stubgen.stub(), "regenerate python/rbf/__init__.pyi"


def test_signatures_and_docstrings_come_from_the_flags():
    params = inspect.signature(rbf.replay).parameters
    assert params["warmup"].default == 0 and params["confidence"].default == 0.99
    assert params["max_inserts"].default is None and params["non_retaining"].default is False
    assert "--max-inserts" in rbf.replay.__doc__ and "rank_table" in rbf.fit.__doc__
    for name in rbf.__all__:
        assert getattr(rbf, name).__doc__, name
