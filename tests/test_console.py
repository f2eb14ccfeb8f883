"""The console script (`promote`, `python -m promote_cli`) ends a command of the fast path with `os._exit`,
skipping the interpreter's teardown: what it printed must still all arrive, with its exit code, through a pipe
or into a file; a command of the Click path ends as Python ends (teardown included)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from promote_cli.arrayio import npy as npyio

#: runs `console()` with an exit handler that says whether the interpreter's teardown ran
SCRIPT = textwrap.dedent("""
    import atexit, sys
    atexit.register(lambda: sys.stderr.write("TEARDOWN\\n"))
    sys.argv[1:] = {argv!r}
    from promote_cli.cli import {entry}
    {entry}()
""")


def _run(argv, entry="console", **kw):
    code = SCRIPT.format(argv=list(argv), entry=entry)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, **kw)


def test_a_fast_query_leaves_at_once_with_its_answer_and_code():
    ok = _run(["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"])
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "i16\n", "")
    refused = _run(["query", "i8", "u8", "-f", "openvino"])
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("promote: openvino@") and "TEARDOWN" not in refused.stderr


def test_run_ends_as_python_does():
    """`run` (what tests and embedders call) raises SystemExit: the teardown runs."""
    r = _run(["query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true"], entry="run")
    assert (r.returncode, r.stdout, r.stderr) == (0, "i16\n", "TEARDOWN\n")


def test_the_click_path_ends_as_python_does():
    r = _run(["dtypes", "--format", "json"])
    assert r.returncode == 0 and r.stdout.startswith("[") and r.stderr == "TEARDOWN\n"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_fast_cast_of_many_files_prints_every_report(tmp_path, fmt):
    """Forty reports (several pipe buffers of JSON) and the totals, then the exit: all of them arrive, each output
    file whole."""
    for i in range(40):
        np.save(tmp_path / f"w{i:02}.npy", np.arange(1000 + i, dtype=np.float32) / 7)
    r = _run(["cast", str(tmp_path), "--to", "bf16", "--format", fmt, "-j", "2"])
    lines = r.stdout.splitlines()  # JSON: one report a line on stdout, the totals on stderr
    assert r.returncode == 0 and "TEARDOWN" not in r.stderr and r.stderr.count("\n") == (fmt == "json")
    per_file, totals = (lines[:-2:2], lines[-2:]) if fmt == "text" else (lines, r.stderr.splitlines())
    assert len(per_file) == 40 and all(f"w{i:02}.npy" in line for i, line in enumerate(per_file))
    assert len(lines) == len(per_file) * (2 if fmt == "text" else 1) + len(totals) * (fmt == "text")
    assert "40" in totals[0]
    for i in range(40):
        y = npyio.read_npy(tmp_path / f"w{i:02}.bf16.npy")
        assert y.shape == (1000 + i,) and y.dtype.itemsize == 2


def test_a_fast_cast_into_a_file_and_a_failing_one(tmp_path):
    np.save(tmp_path / "w.npy", np.arange(10, dtype=np.float32))
    log = tmp_path / "log.txt"
    with open(log, "w") as out:
        r = subprocess.run([sys.executable, "-m", "promote_cli", "cast", str(tmp_path / "w.npy"), "--to", "f16"],
                           stdout=out, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0 and log.read_text().count("\n") == 2 and "w.f16.npy" in log.read_text()
    again = _run(["cast", str(tmp_path / "w.npy"), "--to", "f16"])   # the output exists: exit 2, one line
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "TEARDOWN" not in again.stderr


def test_the_console_script_is_console():
    """pyproject's console script and `python -m promote_cli` both enter through `console`."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"promote": "promote_cli.cli:console"}
    assert "console()" in (root / "promote_cli" / "__main__.py").read_text()
