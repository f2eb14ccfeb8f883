"""The scripts in examples/ run as a user would run them, and say what the engine says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from promote_cli import diff, query

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BIN = Path(sys.executable).parent


def run_example(name: str, *args: str, cwd=None):
    """Run examples/NAME with the `promote` program installed beside this Python first on PATH."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PROMOTE_FRAMEWORK", None)
    return subprocess.run(["bash", str(EXAMPLES / name), *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def test_guard_port_fails_exactly_on_the_differences():
    types = "bf16,f16,f32,i32,i64"
    expected = diff("paddle", "cann", types=types.split(",")).differences
    r = run_example("guard-port.sh", types)
    assert r.returncode == (1 if expected else 0)
    assert len(r.stdout.splitlines()) == len(expected) + 1  # a header line, then one line per difference
    same = run_example("guard-port.sh", "f32")
    assert same.returncode == 0 and "agree" in same.stdout


def test_check_graph_pairs_reports_each_pair_in_order(tmp_path):
    pairs = [("f16", "f32"), ("i32", "i64"), ("0d:f32", "f16"), ("i8", "u8")]
    (tmp_path / "pairs.txt").write_text("\n".join(f"{a} {b}" for a, b in pairs) + "\n")
    r = run_example("check-graph-pairs.sh", str(tmp_path / "pairs.txt"))
    answers = [query("openvino", a, b) for a, b in pairs]
    lines = r.stdout.splitlines()
    assert len(lines) == len(pairs)
    for line, (a, b), ans in zip(lines, pairs, answers):
        if ans.result is None:
            assert line.startswith(f"REFUSED {a} {b}")
        else:
            assert line == f"ok      {a} {b} -> {ans.result}"
    assert r.returncode == (1 if any(x.result is None for x in answers) else 0)


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.sh")))
def test_every_example_runs_without_usage_errors(script, tmp_path):
    r = run_example(script, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
