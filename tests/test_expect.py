"""`promote expect FILE` and `promote_cli.expect`: expected answers for CI, mismatches by line number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import promote_cli
from promote_cli import UsageError
from support import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "ci.expect"
RECORDINGS = ROOT / "tests" / "data" / "recordings"


def _shown(value) -> str:
    return "true" if value is True else "false" if value is False else str(getattr(value, "name", value))


def test_the_example_passes():
    report = promote_cli.expect(EXAMPLE)
    assert report.checked and not report.mismatches
    code, out, err = run_cli("expect", str(EXAMPLE))
    assert code == 0 and err == "" and out == f"{EXAMPLE}: {len(report.checked)} of {len(report.checked)} expectations hold\n"


def test_every_example_line_is_what_the_framework_answered():
    """Each line of the example is a recorded answer of the real framework (not the oracle's own)."""
    recordings = {}
    for path in RECORDINGS.glob("*.json"):
        if path.name.startswith(("expr-", "ops-")):  # expression and op recordings have no pair cases
            continue
        data = json.loads(path.read_text())
        recordings[data["ruleset"]] = data
    for e in promote_cli.expect(EXAMPLE).checked:
        rs = promote_cli.load(e.framework)
        data = recordings[rs.name]
        assert data["version"].startswith(rs.version)
        wanted = {k: _shown(o.default) for k, o in rs.options.items()} | e.options
        hits = [c for c in data["cases"] if (c[0], c[1], c[2]) == (e.op, e.a, e.b)
                and {k: _shown(v) for k, v in c[3].items()} == wanted]
        assert hits, e.text
        assert hits[0][4] == e.expected, e.text


def test_mismatches_carry_their_line_numbers(tmp_path):
    f = tmp_path / "ci.expect"
    f.write_text("# comment\n\ncann i8 u8 -> i16\ncann i8 u8 -> i32   # wrong on purpose\n"
                 "openvino i8 u8 -> i16\nopenvino:promote_unsafe=true i8 u8 -> i16\ncann i8 u16 -> refused\n")
    report = promote_cli.expect(f)
    assert [(e.line, e.got) for e in report.mismatches] == [(4, "i16"), (5, None)]
    assert len(report.checked) == 5
    code, out, _ = run_cli("expect", str(f))
    assert code == 1
    lines = out.splitlines()
    cann, openvino = (f"{rs.name}@{rs.version}" for rs in map(promote_cli.load, ("cann", "openvino")))
    assert lines[0] == f"{f}:4: cann i8 u8 -> i32: got i16 from {cann}"
    assert lines[1].startswith(f"{f}:5: openvino i8 u8 -> i16: got refused from {openvino} (Unsigned integer input")
    assert lines[2] == f"{f}: 3 of 5 expectations hold"
    code, out, _ = run_cli("expect", str(f), "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["checked"] == 5 and [m["line"] for m in data["mismatches"]] == [4, 5]
    assert [m["ruleset"] for m in data["mismatches"]] == [cann, openvino]
    assert [e.ruleset for e in report.mismatches] == [cann, openvino]


def test_lines_in_python_and_aliases():
    report = promote_cli.expect(["numpy int8 uint8 -> int16", "paddle@3.3 int32 int32 divide -> float32"])
    assert not report.mismatches and [e.expected for e in report.checked] == ["i16", "f32"]


def test_a_line_with_three_operands_is_asked_as_query_n():
    """`torch 0d:i64 0d:i8 u8 -> u8` is three operands (as `promote query 0d:i64 0d:i8 u8` asks them), not an op
    named u8; an op may still follow them."""
    report = promote_cli.expect(["torch 0d:i64 0d:i8 u8 -> u8", "torch 0d:i64 0d:i8 u8 result_type -> u8",
                                 "torch i8 u8 i16 -> i32", "cann i8 u8 mul -> i16"])
    assert [(e.a, e.b, e.operands[2:], e.op) for e in report.checked] == [
        ("0d:i64", "0d:i8", ("u8",), "add"), ("0d:i64", "0d:i8", ("u8",), "result_type"),
        ("i8", "u8", ("i16",), "add"), ("i8", "u8", (), "mul")]
    want = promote_cli.query_n("torch", ["0d:i64", "0d:i8", "u8"]).result
    assert want == "u8" != promote_cli.query("torch", promote_cli.query("torch", "0d:i64", "0d:i8").result, "u8").result
    assert [e.line for e in report.mismatches] == [3] and report.mismatches[0].got == "i16"


@pytest.mark.parametrize("line,message", [
    ("cann i8 u8 i16", "expected 'FRAMEWORK"),
    ("cann i8 -> i16", "expected 'FRAMEWORK"),
    ("cann i8 u8 -> i16 i32", "expected 'FRAMEWORK"),
    ("cann i8 u8 -> i16 -> i32", "expected 'FRAMEWORK"),
    ("cann i8 bogus -> i16", "unknown dtype 'bogus'"),
    ("nosuch i8 u8 -> i16", "nosuch"),
    ("cann i8 u8 -> bogus", "unknown dtype 'bogus'"),
    ("openvino:nope=1 i8 u8 -> i16", "no option 'nope'"),
    ("cann i8 u8 nosuchop -> i16", "no op 'nosuchop'"),
    ("cann i8 u8 i16 nosuchop -> i16", "no op 'nosuchop'"),
    ("cann i8 u8 i16 bogus nosuchop -> i16", "unknown dtype 'bogus'"),
])
def test_a_malformed_line_is_a_usage_error_with_its_line_number(tmp_path, line, message):
    with pytest.raises(UsageError, match=f"<lines>:2: .*{message}"):
        promote_cli.expect(["cann i8 u8 -> i16", line])
    f = tmp_path / "bad.expect"
    f.write_text(f"# first\n{line}\n")
    code, out, err = run_cli("expect", str(f))
    assert code == 2 and out == "" and err.startswith(f"promote: {f}:2: ") and len(err.splitlines()) == 1


def test_unreadable_input_and_stdin(tmp_path):
    code, _, err = run_cli("expect", str(tmp_path / "missing.expect"))
    assert code == 2 and err == f"promote: {tmp_path / 'missing.expect'}: cannot read: No such file or directory\n"
    data = b"cann i8 u8 -> i16\ncann i8 u8 -> i16 # caf\xe9\n"
    (tmp_path / "latin1.expect").write_bytes(data)
    assert run_cli("expect", str(tmp_path / "latin1.expect")) == (
        2, "", f"promote: {tmp_path / 'latin1.expect'}:2: not UTF-8 (byte 0xe9 at offset {data.index(0xe9)})\n")
    from click.testing import CliRunner

    from promote_cli.cli import main

    r = CliRunner().invoke(main, ["expect", "-"], input="cann i8 u8 -> i16\n")
    assert r.exit_code == 0 and r.stdout == "<stdin>: the 1 expectation holds\n"  # not "1 of 1 expectations"
    r = CliRunner().invoke(main, ["expect", "-"], input=b"\xffcann i8 u8 -> i16\n")
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "promote: <stdin>:1: not UTF-8 (byte 0xff at offset 0)\n")

