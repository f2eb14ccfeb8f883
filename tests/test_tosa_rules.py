"""The tosa ruleset against the TOSA reference model, and docs/frameworks/tosa.md.

Expected values come from tests/data/recordings/tosa-ops.json, which
`python -m promote_cli.probes.tosa --spec tosa.xml` wrote by running one-operator
graphs on the reference model (tosa-tools) and by parsing tosa.xml's type-support
tables.  (tests/test_recordings.py compares every case with the ruleset.)  The live
test re-runs `promote verify -f tosa` when tosa-tools is importable.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from promote_cli import load, query
from promote_cli.probes import tosa as probe

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "tests" / "data" / "recordings" / "tosa-ops.json"
DOC = ROOT / "docs" / "frameworks" / "tosa.md"
REC = json.loads(RECORDING.read_text(encoding="utf-8"))
CASES = REC["cases"]
SPEC = REC["spec"]


def _ruleset():
    from promote_cli.oracle import registry

    return registry.load("tosa")


from support import require_framework  # noqa: E402
from support import run_cli as _cli  # noqa: E402


def _accepted(op: str) -> list[tuple[str, str]]:
    """(input type, output type) of every case of `op` the reference model accepted."""
    return [(a, result) for o, a, b, _, result, _ in CASES if o == op and result is not None]


# --------------------------------------------------------------------------- the recording


def test_recording_covers_every_operator_and_ordered_pair():
    keys = [(op, a, b) for op, a, b, *_ in CASES]
    assert keys == [(op, a, b) for op in probe.BINARY_OPS for a in probe.TYPES for b in probe.TYPES]
    assert all(options == {} for _, _, _, options, _, _ in CASES)
    assert all((result is None) != (error is None) for *_, result, error in CASES)
    assert REC["ruleset"] == "tosa" and REC["package"] == "tosa-tools"


def test_recorded_op_names_are_the_rulesets_operators():
    from promote_cli.oracle.engine import resolve_op

    rs = _ruleset()
    assert rs.probe == "tosa"
    for op, operator in probe.BINARY_OPS.items():
        assert resolve_op(rs, op) == operator
    assert set(rs.ops) == set(probe.BINARY_OPS.values())


def test_reference_model_accepts_identical_types_only():
    """The model accepted no pair of two different types, and the ruleset accepts none either."""
    assert [(op, a, b) for op, a, b, _, result, _ in CASES if a != b and result is not None] == []
    mixed = [(op, a, b) for op in probe.BINARY_OPS for a in probe.TYPES for b in probe.TYPES if a != b]
    assert [(op, a, b) for op, a, b in mixed if query("tosa", a, b, op=op).result is not None] == []


def test_refusals_carry_the_models_message():
    for op, a, b, _, result, error in CASES:
        if result is None:
            assert "Operator validation error" in error or "OpFactory could not allocate op" in error, error


def test_spec_differences_are_recomputed():
    cases = [[op, a, b, probe.spec_answer(SPEC, op, a, b), result] for op, a, b, _, result, _ in CASES]
    assert [c for c in cases if c[3] != c[4]] == SPEC["differences"]


def test_ruleset_version_names_spec_and_reference_model():
    rs = _ruleset()
    spec_version = ".".join(SPEC["version"].split()[0].split(".")[:2])
    assert rs.version == f"{spec_version}-ref{REC['version']}"
    assert rs.follows == "implementation"
    assert f"tosa-tools {REC['version']}" in rs.source


# --------------------------------------------------------------------------- promote verify


def test_verify_recording_agrees():
    code, out, err = _cli("verify", "-f", "tosa", "--recording", str(RECORDING))
    assert code == 0, out + err
    assert out.strip() == f"tosa@{load('tosa').version} vs tosa-tools {REC['version']}: {len(CASES)} of {len(CASES)} cases agree"


def test_verify_without_tosa_tools_is_a_usage_error(monkeypatch):
    monkeypatch.setattr(probe, "version", lambda: None)
    code, out, err = _cli("verify", "-f", "tosa")
    assert code == 2
    assert "tosa-tools is not installed" in err and "Traceback" not in err


@pytest.mark.live
def test_verify_live():  # pragma: no cover - needs the reference model
    """`promote verify -f tosa` against the installed reference model: the operators, CAST
    type support and CAST values all agree (about a minute)."""
    require_framework(probe)
    code, out, err = _cli("verify", "-f", "tosa")
    assert code == 0, out + err
    lines = out.strip().splitlines()
    if probe.version() == REC["version"]:
        assert lines == _doc_blocks("text")[0]
    else:
        assert len(lines) == 3 and all(line.endswith("cases agree") for line in lines)


# --------------------------------------------------------------------------- docs/frameworks/tosa.md


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _doc_blocks(lang: str) -> list[list[str]]:
    """The lines of every fenced block of language `lang`, dedented."""
    blocks = re.findall(rf"^( *)```{lang}\n(.*?)^\1```", _doc(), flags=re.S | re.M)
    return [textwrap.dedent(body).splitlines() for _, body in blocks]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _doc_table(first_header: str) -> list[list[str]]:
    lines = _doc().splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.lstrip().startswith("|") and _cells(line)[0] == first_header)
    rows = []
    for line in lines[start + 2:]:
        if not line.lstrip().startswith("|"):
            break
        rows.append(_cells(line))
    return rows


def _output_text(pairs: list[tuple[str, str]]) -> str:
    if all(out == t for t, out in pairs):
        return "input type"
    if all(out == "bool" for _, out in pairs):
        return "bool"
    widened = [t for t, out in pairs if out != t]
    (target,) = {out for t, out in pairs if out != t}
    return f"{target} for {' and '.join(widened)}, else input type"


def test_doc_operator_table_is_the_recording():
    rows = _doc_table("TOSA operator")
    by_operator = {operator: op for op, operator in probe.BINARY_OPS.items()}
    assert [r[0] for r in rows] == list(probe.BINARY_OPS.values())
    rs = _ruleset()
    for operator, names, types, output in rows:
        pairs = _accepted(by_operator[operator])
        assert types == " ".join(t for t, _ in pairs), operator
        assert output == _output_text(pairs), operator
        listed = {n.replace("\\|", "|") for n in re.findall(r"`([^`]+)`", names)}
        assert listed | {operator} == set(rs.ops[operator]), operator


def test_doc_figures():
    text = " ".join(_doc().split())
    assert f"Over the {len(probe.BINARY_OPS)} operators and {len(probe.TYPES) ** 2} ordered type pairs" in text
    assert f"**{len(SPEC['differences'])}** of **{len(CASES)}** cases differ" in text
    assert f"tosa.xml {SPEC['version'].replace(' draft', ' (draft)')}" in text
    assert f"tosa-tools {REC['version']}" in text
    shift = SPEC["mul_shift"]
    assert (f"an {shift['type']} tensor of shape `{shift['shape']}`, a compile-time constant in "
            f"{' and '.join(shift['constant_in'])} (unless {' and '.join(shift['unless'])})") in text


def test_doc_quotes_the_models_messages():
    """Every message the doc attributes to the reference model is one it gave."""
    said = {error for *_, error in CASES if error} | {msg for _, _, msg in REC["forms"] if msg}
    text = _doc()
    quoted = [" ".join(q.split()) for q in re.findall(r"`([^`]+)`", text, flags=re.S)]
    for q in quoted:
        if q.startswith(("Operator validation error", "OpFactory")):
            assert q in said, q


def test_doc_mul_shift_table_is_the_recording():
    rows = _doc_table("MUL i32 graph")
    forms = {label: (ok, msg) for label, ok, msg in REC["forms"]}
    assert len(rows) == 3
    for form, answer in rows:
        ok, msg = forms[f"mul i32, {form}"]
        assert answer == ("accepted" if ok else f"`{msg}`"), form
    assert forms["add i32, rank-0 tensors"][0]


def test_doc_verify_output_matches_the_checks():
    from promote_cli.numerics.legality import LEGAL, TOSA_TYPES

    (block,) = _doc_blocks("text")
    v = REC["version"]
    assert block == [
        f"tosa vs tosa-tools {v}: {len(CASES)} of {len(CASES)} cases agree",
        f"CAST type support vs tosa-tools {v} ({len(TOSA_TYPES) ** 2} ordered pairs): "
        f"{len(TOSA_TYPES) ** 2} of {len(TOSA_TYPES) ** 2} cases agree",
        f"CAST values vs tosa-tools {v} ({len(LEGAL)} legal pairs): {len(LEGAL)} of {len(LEGAL)} cases agree",
    ]
