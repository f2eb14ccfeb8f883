"""MindSpore: its recording's coverage and value cases, the probe's error reading and crash handling, the
two execution modes, the docs' figures, and a live re-probe when mindspore is installed (tests/
test_recordings.py compares every recorded case with the ruleset; test_op_rules.py every op case)."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from support import require_framework, run_cli

from promote_cli import query
from promote_cli.oracle import registry
from promote_cli.probes import mindspore as probe
from promote_cli.probes.recordings import compare

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "tests" / "data" / "recordings" / "mindspore-2.10.json"
DOC = ROOT / "docs" / "frameworks" / "mindspore.md"


def _recording() -> dict:
    return json.loads(RECORDING.read_text(encoding="utf-8"))


def _answer(a: str, b: str, op: str = "+", **options) -> str:
    ans = query("mindspore", a, b, op=op, options=options)
    return ans.result if ans.result is not None else "refused"


def test_the_recording_holds_both_modes_both_ops_and_the_probes_pairs():
    data = _recording()
    assert data["package"] == "mindspore" and data["version"].startswith("2.10") and data["numpy"].startswith("1.")
    for mode in probe.MODES:
        asked = [(c[0], c[1], c[2]) for c in data["cases"] if c[3] == {"mode": mode}]
        assert asked == [(op, a, b) for op in probe.OPS for a, b in probe.operand_pairs(mode)], mode


def test_a_python_int_past_int64_is_refused_whatever_the_tensor_in_every_mode():
    """The value cases: MindSpore converts a Python int to Int64, so one it cannot hold is a RuntimeError."""
    values = _recording()["values"]
    assert len(values) == len(probe.MODES) * len(probe.OPS) * len(probe.value_pairs())
    for op, a, b, options, result, error in values:
        assert result is None and "Unable to cast Python instance of type <class 'int'>" in error, (op, a, b, options)
    total, mismatches = compare({"ruleset": "mindspore", "cases": values})
    assert total == len(values) and not mismatches, [m.line() for m in mismatches]


@pytest.mark.parametrize("op", ["+", "*", "/", "==", "ops.mul"])
def test_a_value_plays_no_part_but_past_int64(op):
    """i8 + 300 wraps in int8; a Python int past int64 is refused by every op, even where a wide unsigned
    tensor takes any Python number (u16 * 1, u16 / 1)."""
    assert _answer("i8", "py:300", op) == _answer("i8", "py:int", op) != "refused"
    assert _answer("i8", "py:9223372036854775808", op) == "refused"
    assert _answer("u16", "py:-9223372036854775809", op) == "refused"


@pytest.mark.parametrize(("message", "clean"), [
    ("Type implicit conversion between UInt8 and UInt16 is not supported.\n\n---------\n- C++ Call Stack:",
     "TypeError: Type implicit conversion between UInt8 and UInt16 is not supported."),
    ("----------------------------------------------------\n- Kernel select failed:\n---",
     "TypeError: - Kernel select failed:"),
    ("[ERROR] ANALYZER(26779,7fcf28a3fb80,python):2026-11-28-03:45:53.456.955 [mindspore/ccsrc/x.cc:764] Run] "
     "Primitive: Add infer failed at 0x7fcf28a3fb80", "TypeError: Primitive: Add infer failed at 0x"),
])
def test_clean_error_keeps_the_first_line_that_says_something(message, clean):
    assert probe.clean_error(TypeError(message)) == clean


def test_graph_mode_compiles_the_cases_that_mostly_fail_one_at_a_time():
    cases = [["+", ["i8", "u8"]], ["+", ["i8", "f32"]], ["+", ["u16", "i8"]], ["+", ["i8", "i16"]],
             ["ops.add", ["i8", "i8"]], ["+", ["i8", "py:complex"]]]
    assert probe._batch(cases, 0, 24) == cases[:2]
    assert probe._batch(cases, 2, 24) == cases[2:3]      # u16: alone
    assert probe._batch(cases, 3, 24) == cases[3:4]      # the next op starts a batch of its own
    assert probe._batch(cases, 5, 24) == cases[5:6]      # a Python complex: alone
    assert probe._batch(cases, 0, 1) == cases[:1]


def test_a_case_that_kills_the_worker_is_recorded_and_the_rest_still_asked(tmp_path, monkeypatch):
    """ask_cases starts a new worker after the case that killed one (MindSpore 2.10 dies on f16 * 0-d bf16)."""
    (tmp_path / "fake_ms_worker.py").write_text(textwrap.dedent('''
        import json, os, signal, sys
        _, mode, cases_path, start, alone, out_path, keep_rank = sys.argv[1:8]
        cases = json.load(open(cases_path))[int(start):]
        with open(out_path, "a") as out:
            for op, operands in cases:
                if operands == ["f16", "0d:bf16"]:
                    os.kill(os.getpid(), signal.SIGSEGV)
                out.write(json.dumps([op + "".join(operands), None]) + "\\n")
                out.flush()
    '''), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = [["*", ["i8", "f32"]], ["*", ["f16", "0d:bf16"]], ["*", ["bf16", "f32"]]]
    answers = probe.ask_cases("fake_ms_worker", "pynative", cases)
    assert answers[0] == ["*i8f32", None] and answers[2] == ["*bf16f32", None]
    assert answers[1] == [None, probe.CRASH.format(signal=11)]


def test_version_does_not_import_mindspore():
    probe.version()
    assert "mindspore" not in sys.modules


def test_a_0d_tensor_is_a_tensor_in_mindspore_and_a_lower_category_in_torch():
    assert _answer("i8", "0d:i64") == "i64" and _answer("f16", "0d:f64") == "f64"
    ans = query("torch", "i8", "0d:i64")
    assert ans.result == "i8"


def test_the_two_convert_maps_are_the_rule_files_tables():
    """tensor_tensor_convert_map is keyed by the unordered pair; scalar_tensor_convert_map's rows are the
    tensor's dtype and its columns the Python scalar's Bool, Int64, Float32."""
    rs = registry.load("mindspore")
    assert set(rs.tables) == {"tensors", "scalars"}
    assert _answer("u16", "bool") == "u16" and _answer("u16", "u8") == "refused"
    assert _answer("u16", "py:bool") == "u16" and _answer("u16", "py:int") == "refused"
    assert _answer("bool", "py:int") == "i64" and _answer("py:float", "u8") == "f32"


def test_the_doc_gives_the_recording_size():
    said = re.search(r"`tests/data/recordings/mindspore-2\.10\.json` holds ([\d,]+) cases", DOC.read_text("utf-8"))
    assert said and int(said.group(1).replace(",", "")) == len(_recording()["cases"])


@pytest.mark.live
def test_live_mindspore_agrees_with_the_recording_in_pynative_mode():
    """A sample of the recording, asked again of the installed MindSpore (a worker process, pynative)."""
    require_framework(probe)
    data = _recording()
    if probe.version() != data["version"]:
        return
    sample = [c for c in data["cases"] if c[3] == {"mode": "pynative"}][::37]
    answers = probe.ask_cases("promote_cli.probes.mindspore", "pynative", [[op, [a, b]] for op, a, b, *_ in sample])
    assert [[c[4], c[5]] for c in sample] == answers


def test_the_doc_gives_the_op_recordings_figures():
    from promote_cli.probes import mindspore_ops
    from promote_cli.probes.opcases import cases

    data = json.loads((ROOT / "tests" / "data" / "recordings" / "ops-mindspore.json").read_text("utf-8"))
    text = DOC.read_text("utf-8")
    ops = {row[0] for row in data["rows"]}
    said = re.search(r"MindSpore 2\.10 gave for (\d+) of them.*?: ([\d,]+) cases", text, re.S)
    assert said and int(said.group(1)) == len(ops) == len(mindspore_ops.OPS)
    assert int(said.group(2).replace(",", "")) == len(list(cases(data)))
    crashed = [(op, args) for op, args, _, result, error in cases(data) if error and error.startswith("Crash:")]
    assert crashed and all(args in (["f16", "0d:bf16"], ["0d:bf16", "f16"]) for _, args in crashed)


@pytest.mark.parametrize(("a", "b", "op", "want"), [
    ("bool", "u16", "<", "refused"), ("bool", "u16", "<=", "bool"), ("py:bool", "u16", "<", "bool"),
    ("i8", "bool", "ops.subtract", "i64"), ("bool", "i8", "ops.subtract", "i8"), ("i8", "bool", "ops.sub", "i8"),
    ("f32", "py:complex", "==", "py:bool"), ("f32", "py:complex", "ops.equal", "refused"),
    ("u16", "py:int", "==", "bool"), ("u16", "py:int", "!=", "refused"), ("py:int", "i8", "&", "refused"),
    ("bool", "bool", "+", "bool"), ("bool", "bool", "ops.add", "refused"),
    ("i8", "0d:i64", "*", "i8"), ("i8", "0d:i16", "*", "refused"), ("i8", "0d:i16", "/", "f32"),
    ("f16", "0d:bf16", "*", "refused"), ("u16", "py:int", "*", "u16"), ("u16", "py:int", "ops.mul", "refused"),
])
def test_op_groups_answer_the_recorded_surprises(a, b, op, want):
    assert _answer(a, b, op) == want


def test_the_diff_with_cann_runs_and_is_the_one_the_doc_gives():
    """MindSpore's tensor map is CANN's documentation table but for u16, u32, u64 with bool."""
    code, out, err = run_cli("table", "--diff", "cann", "mindspore")
    assert code == 0, err
    said = re.search(r"\(([\d,]+) of ([\d,]+) differ: (\d+) that one side refuses", DOC.read_text("utf-8"))
    summary = re.search(r"(\d+) of (\d+) cells differ: (\d+) refused by a side", out + err)
    assert said and summary and said.groups() == summary.groups()
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.splitlines()[1:] if line.split()[:1] != ["cann@8.0"]}
    assert rows[("u16", "bool")] == ["-", "u16"] and rows[("bool", "u64")] == ["-", "u64"]
