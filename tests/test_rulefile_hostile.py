"""Hostile rule files: every one is refused with one line naming the file (and the key), exit 2,
in bounded time and memory; none is half-loaded, none hangs, none leaks data into a message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

BASE = 'schema = 1\nname = "h"\nversion = "1"\ntypes = ["i8", "u8"]\n'
RULE = '[[rules]]\nname = "r"\nresult = "a"\n'


def promote(rules_dir, *args, stdin: bytes | None = None, timeout: float = 20):
    """Run the installed CLI in a child process (a hang or a memory blow-up must not take the suite with it)."""
    env = dict(os.environ, PROMOTE_RULES_PATH=str(rules_dir))
    env.pop("PROMOTE_DEBUG", None)
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "promote_cli", *args], input=stdin, capture_output=True,
                         env=env, timeout=timeout)
    return res, time.monotonic() - start


def one_line_error(res) -> str:
    err = res.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert res.returncode == 2, (res.returncode, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def write(tmp_path, body: bytes | str, name: str = "h.toml"):
    data = body.encode() if isinstance(body, str) else body
    (tmp_path / name).write_bytes(data)
    return tmp_path


HOSTILE = {
    "not UTF-8": (BASE + RULE).encode() + b'notes = ["\xff\xfe"]\n',
    "deeply nested TOML": BASE + "x = " + "[" * 5000 + "]" * 5000 + "\n" + RULE,
    "1,000 chained additions": BASE + '[[rules]]\nname = "r"\nresult = "' + "a+" * 1000 + 'a"\n',
    "a format spec in unsupported_type": BASE + 'unsupported_type = "{dtype:d}"\n' + RULE,
    "a width spec in a message": BASE + '[[rules]]\nname = "r"\nrefuse = "{a:>1000000000}"\n',
    "a nested replacement field": BASE + '[[rules]]\nname = "r"\nrefuse = "{a:{b}}"\n',
    "an attribute in a placeholder": BASE + '[[rules]]\nname = "r"\nrefuse = "{a.__class__}"\n',
    "an index in a placeholder": BASE + '[[rules]]\nname = "r"\nrefuse = "{a[0]}"\n',
    "string multiplication": BASE + '[[rules]]\nname = "r"\nif = "(\'ab\' * 100000000 * 20) != \'\'"\nresult = "a"\n',
    "a huge integer product": BASE + '[[rules]]\nname = "r"\nif = "' + "*".join(["1000000007"] * 400)
    + ' > 0"\nresult = "a"\n',
    "an expression of 100 kB": BASE + '[[rules]]\nname = "r"\nif = "' + " or ".join(["true"] * 20000)
    + '"\nresult = "a"\n',
    "an unknown probe module": BASE + 'probe = "nope"\n' + RULE,
    "a probe that is not a module name": BASE + 'probe = "os.system"\n' + RULE,
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_hostile_rule_file_is_refused_in_one_line(tmp_path, what):
    rules = write(tmp_path, HOSTILE[what])
    res, took = promote(rules, "query", "i8", "i8", "-f", "h")
    line = one_line_error(res)
    assert str(tmp_path / "h.toml") in line or "h.toml" in line, line
    assert took < 10, f"{what}: {took:.1f} s"


def test_a_bad_extends_names_file_and_key(tmp_path):
    rules = write(tmp_path, BASE + 'extends = "nosuch@3"\n' + RULE)
    line = one_line_error(promote(rules, "query", "i8", "i8", "-f", "h")[0])
    assert "h.toml" in line and "extends" in line, line


@pytest.mark.parametrize("special", ["fifo", "dev-zero"])
def test_only_regular_files_of_bounded_size_are_read(tmp_path, special):
    if special == "fifo":
        os.mkfifo(tmp_path / "h.toml")
    else:
        os.symlink("/dev/zero", tmp_path / "h.toml")
    res, took = promote(tmp_path, "query", "i8", "i8", "-f", "h", timeout=30)
    line = one_line_error(res)
    assert "h.toml" in line, line
    assert took < 10
    # a broken file on the path breaks neither the listing nor another framework
    res, _ = promote(tmp_path, "query", "s8", "u8", "-f", "cann")
    assert res.returncode == 0 and res.stdout.decode().strip() == "i16", res


def test_an_oversized_rule_file_is_refused(tmp_path):
    rules = write(tmp_path, BASE + RULE + "# " + "x" * (9 << 20) + "\n")
    line = one_line_error(promote(rules, "query", "i8", "i8", "-f", "h")[0])
    assert "h.toml" in line and "large" in line, line


def test_a_result_outside_the_declared_types_is_a_defect(tmp_path):
    rules = write(tmp_path, BASE + '[[rules]]\nname = "widen"\nresult = "f64"\n')
    line = one_line_error(promote(rules, "query", "i8", "u8", "-f", "h")[0])
    assert "h.toml" in line and "widen" in line and "f64" in line, line


def test_a_broken_rule_file_does_not_break_other_frameworks(tmp_path):
    rules = write(tmp_path, HOSTILE["not UTF-8"])
    res, _ = promote(rules, "query", "i8", "u8", "-f", "openvino", "-O", "promote_unsafe=true")
    assert res.returncode == 0 and res.stdout.decode().strip() == "i16", res
    res, _ = promote(rules, "frameworks", "--format", "json")
    listed = {row["ruleset"] for row in json.loads(res.stdout)}
    assert {"openvino@2026.4.1", "cann@8.0", "numpy@2.4"} <= listed, listed
    assert res.returncode == 2, res
    err = res.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "h.toml" in err[0] and "not UTF-8" in err[0], err


def test_a_rule_file_that_hides_a_shipped_one_is_shown(tmp_path):
    shipped = [row for row in json.loads(promote(tmp_path, "frameworks", "--format", "json")[0].stdout)
               if row["ruleset"] == "cann@8.0"][0]["path"]
    (tmp_path / "cann.toml").write_text(Path(shipped).read_text(encoding="utf-8").replace(
        'description = "', 'description = "local copy: '), encoding="utf-8")
    res, _ = promote(tmp_path, "frameworks", "--format", "json")
    assert res.returncode == 0, res
    row = [r for r in json.loads(res.stdout) if r["ruleset"] == "cann@8.0"][0]
    assert row["path"] == str(tmp_path / "cann.toml") and row["description"].startswith("local copy")
    assert row["hides"] == [shipped]
    assert res.stderr.decode().strip() == f"promote: note: {tmp_path / 'cann.toml'} hides {shipped}"
