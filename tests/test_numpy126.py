"""numpy@1.26: NumPy 1's value-based casting.  tests/test_recordings.py compares every case of
tests/data/recordings/numpy-1.26.json with `promote query`, value operands included; here the value
cases of an array and a Python literal are asked through `promote expr` too, where the literal
carries its value."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import promote_cli
from promote_cli.expressions import ops
from promote_cli.expressions.evaluate import evaluate
from promote_cli.oracle import registry
from promote_cli.vocab import operands

RECORDING = Path(__file__).parent / "data" / "recordings" / "numpy-1.26.json"
#: value operands that are no literal of `promote expr` (not finite floats)
NOT_LITERALS = ("py:nan", "py:-inf")


def _literal_cases() -> list[tuple[str, str | None, str | None]]:
    """(expression, result, error) of every ``add`` value case of an array and a Python literal."""
    out = []
    for op, a, b, _, result, error in json.loads(RECORDING.read_text(encoding="utf-8"))["cases"]:
        literal, array = (a, b) if a.startswith("py:") else (b, a)
        if op != "add" or not literal.startswith("py:") or not operands.parse(literal).has_value or ":" in array \
                or literal in NOT_LITERALS:
            continue
        text = f"({literal[3:]}) + x:{array}" if a == literal else f"x:{array} + ({literal[3:]})"
        out.append((text, result, error))
    return out


CASES = _literal_cases()


def test_the_recording_holds_value_cases_of_every_kind():
    assert len(CASES) > 1000
    values = {text.split("(")[-1] for text, _, _ in CASES}
    assert {"300)", "-1)", "1.5)", "1e+300)", "True)", "1j)", "1+1j)", "9223372036854775808)"} <= values


def test_every_python_literal_beside_an_array_promotes_as_numpy_1_26_recorded():
    rs = registry.load("numpy@1.26")
    bad = []
    for text, result, error in CASES:
        got = evaluate(rs, text, {}, ops.answer)
        if got.result != result:
            bad.append(f"{text}: NumPy 1.26 gives {result or error}, promote expr {got.result or got.refusal}")
    assert not bad, f"{len(bad)} of {len(CASES)} disagree:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize(("expression", "numpy1", "numpy2"), [
    ("x:i8 + 300", "i16", None),                 # NEP 50: OverflowError
    ("x:u8 + -1", "i16", None),
    ("x:i8 + 127", "i8", "i8"),
    ("x:f16 + 65504.0", "f32", "f16"),           # min_scalar_type's float16 bound is 65000
    ("x:f16 + 1e300", "f64", "f16"),
    ("x:i8 + 1.5", "f64", "f64"),                # a higher kind counts as its own type
    ("x:f16 + 1j", "c64", "c64"),                # float and complex are one kind to NumPy 1
])
def test_value_based_casting_against_nep_50(expression, numpy1, numpy2):
    old = evaluate(registry.load("numpy@1.26"), expression, {}, ops.answer)
    new = evaluate(registry.load("numpy"), expression, {}, ops.answer)
    assert (old.result, new.result) == (numpy1, numpy2)


@pytest.mark.parametrize(("a", "b", "numpy1"), [
    ("i8", "py:300", "i16"), ("i8", "0d:i64=300", "i16"), ("i8", "0d:i64=1", "i8"), ("u8", "py:-1", "i16"),
    ("f16", "py:1e+300", "f64"), ("f16", "py:nan", "f16"), ("u8", "py:9223372036854775808", "u64"),
    ("0d:i8", "py:300", "i64"),                  # two scalars: no values, Python's int is int64
])
def test_a_query_sees_the_value(a, b, numpy1):
    assert promote_cli.query("numpy@1.26", a, b).result == numpy1


# --------------------------------------------------------------------------- the migration view's counts

DOC = Path(__file__).resolve().parents[1] / "docs" / "frameworks" / "numpy.md"
_KINDS = ("another type", "NumPy 2 refuses", "NumPy 1.26 refuses")


def _form(operand: str) -> str:
    parsed = operands.parse(operand)
    name = {"py": "Python scalar", "0d": "0-d array"}.get(parsed.form, "array")
    return f"{name} with a value" if parsed.has_value else name


def _change_table(operand_list: list[str]) -> str:
    """The markdown table of `promote table --diff numpy@1.26 numpy --operands ...` over every dtype of
    numpy@1.26: per pair of operand forms, the cells and how many changed, by kind of change."""
    from promote_cli.probes import numpy126  # noqa: PLC0415

    d = promote_cli.diff("numpy@1.26", "numpy", types=numpy126.TYPES, operands=operand_list)
    forms = [_form(x) for x in d.types]
    cells = Counter(tuple(sorted((fa, fb))) for fa in forms for fb in forms)
    changed: Counter = Counter()
    for row in d.differences:
        old, new = row["numpy@1.26"], row["numpy"]
        kind = _KINDS[0] if old and new else _KINDS[1] if old else _KINDS[2]
        changed[tuple(sorted((_form(row["a"]), _form(row["b"])))), kind] += 1
    lines = ["| operands | cells | " + " | ".join(_KINDS) + " |", "| --- | ---: | ---: | ---: | ---: |"]
    for pair in sorted(cells):
        counts = " | ".join(str(changed[pair, k]) for k in _KINDS)
        lines.append(f"| {' and '.join(pair)} | {cells[pair]} | {counts} |")
    total = " | ".join(str(sum(v for (_, k), v in changed.items() if k == kind)) for kind in _KINDS)
    lines.append(f"| all | {sum(cells.values())} | {total} |")
    return "\n".join(lines)


def _migration_operands(with_values: bool) -> list[str]:
    from promote_cli.probes import numpy126  # noqa: PLC0415

    if with_values:
        return list(numpy126.VALUES)
    return [f"0d:{t}" for t in numpy126.TYPES] + ["py:bool", "py:int", "py:float", "py:complex"]


@pytest.mark.parametrize("with_values", [False, True], ids=["forms", "values"])
def test_the_migration_section_counts_what_the_rulesets_answer(with_values):
    """docs/frameworks/numpy.md's tables of change are recomputed here, so they cannot go stale."""
    table = _change_table(_migration_operands(with_values))
    assert table in DOC.read_text(encoding="utf-8"), f"docs/frameworks/numpy.md should hold:\n{table}"


def test_verify_under_numpy_2_says_which_numpy_to_install():
    """The probe asks NumPy 1 only: under NumPy 2 (this environment's) verify names the versions to install."""
    from support import run_cli  # noqa: PLC0415

    code, out, err = run_cli("verify", "-f", "numpy@1.26")
    assert code == 2 and not out
    assert err.strip() == ("promote: numpy@1.26 asks numpy==1.26.4 ml_dtypes==0.5.4, which is not installed here: "
                           "pip install numpy==1.26.4 ml_dtypes==0.5.4 (or compare with a saved file: --recording FILE)")


@pytest.mark.parametrize(("a", "b", "op", "numpy1"), [
    ("u8", "py:300", "+", "u16"),                # np.result_type: uint16 holds 300
    ("u8", "py:300", "//", "i16"),               # the linear search reaches int16's loop before uint16's
    ("u8", "0d:i64=300", "%", "i16"),
    ("u8", "py:300", "&", "i16"),
    ("u8", "py:300", "fmod", "i16"),
    ("u16", "0d:i32=70000", "**", "i32"),
    ("u8", "py:200", "//", "u8"),                # uint8 holds it: its own loop
    ("i8", "0d:i8=-1", "**", None),              # integers to a negative integer power
    ("i8", "py:-9223372036854775809", "==", "bool"),   # an object comparison
    ("i8", "py:-9223372036854775809", "+", None),      # an object array
])
def test_ops_with_values_as_numpy_1_26_4_gives_them(a, b, op, numpy1):
    """Each answer was asked of NumPy 1.26.4 (`a OP b` on an array of shape (2,) and the value)."""
    assert promote_cli.query("numpy@1.26", a, b, op=op).result == numpy1
