"""Shared fixtures: the repository, the rbf binary of the same build, and a helper that
runs the command line and returns its JSON, for round trips."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "cdn" / "tragen-100k.csv.zst"


def rbf_binary() -> str:
    return os.environ.get("RBF_BIN", str(ROOT / "target" / "release" / "rbf"))


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the command line with `args`."""
    out = subprocess.run([rbf_binary(), *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError(f"rbf {' '.join(args)}: status {out.returncode}\n{out.stderr}")
    return out


def cli_json(*args: str) -> dict:
    return json.loads(cli(*args, "--json").stdout)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
