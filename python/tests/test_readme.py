"""README.md's Python examples as a user runs them: every ```python block, in order, in
one namespace, in a scratch directory holding the shipped traces/ and configs/ (as
tests/it/readme.rs runs the shell examples)."""

import os
import re
import shutil

import matplotlib

from conftest import ROOT


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def test_readme_python_examples_run(tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    blocks = python_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 3
    for d in ("traces", "configs"):
        os.symlink(ROOT / d, tmp_path / d)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md python block {i + 1}", "exec"), namespace)
    assert (tmp_path / "bound-vs-observed.png").stat().st_size > 10_000
    out = capsys.readouterr().out
    assert "FN per arrival" in out and "p_r = " in out
