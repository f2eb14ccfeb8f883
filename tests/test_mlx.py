"""MLX: the probe's pure parts (no MLX needed), the recording's value cases against the rules'
treatment of Python literals, the op names, and the table against MLX's source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import promote_cli
from promote_cli.oracle import registry
from promote_cli.probes import mlx as mlx_probe
from promote_cli.probes import mlx_ops

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def _recording() -> dict:
    return json.loads((RECORDINGS / "mlx-0.32.json").read_text(encoding="utf-8"))


def _value(text: str) -> str:
    """The Python literal of a ``py:VALUE`` operand, as `promote expr` writes it."""
    return text[3:]


def _has_value(operand: str) -> bool:
    return "=" in operand or (operand.startswith("py:") and operand[3:] not in ("bool", "int", "float", "complex"))


def _value_cases():
    """The recorded ``a + b`` cases with one Python value beside an array (``nan``, ``inf``,
    ``1e+300`` are not literals of the expression syntax: left out), as expressions."""
    for op, a, b, _, result, error in _recording()["cases"]:
        if op != "add" or "=" in a + b or not (_has_value(a) or _has_value(b)):
            continue
        value = a if a.startswith("py:") else b
        if any(word in value for word in ("nan", "inf", "e+")):
            continue
        array = b if value is a else a
        var = f"s:{array}" if array.startswith("0d:") else f"x:{array}"
        text = f"{_value(a)} + {var}" if value is a else f"{var} + {_value(b)}"
        yield text, (f"0d:{result}" if result and array.startswith("0d:") else result), error


VALUE_CASES = list(_value_cases())


def test_the_recording_holds_value_cases_of_every_dtype():
    assert len(VALUE_CASES) > 500
    refused = [text for text, result, _ in VALUE_CASES if result is None]
    assert any("300" in t for t in refused) and any("9223372036854775808" in t for t in refused)


@pytest.mark.parametrize("text, result, error", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_a_python_int_value_is_checked_as_to_array_checks_it(text, result, error):
    """Each recorded value beside an array: `promote expr` gives MLX's dtype, or refuses where MLX
    raised (an int outside the range of an 8- to 32-bit integer array, or outside int64)."""
    got = promote_cli.expr(text, "mlx")
    assert got.result == result, (text, got.refusal, error)
    if result is None:
        assert got.refusal.split(": ", 1)[1].split(":")[0] in ("ValueError", "RuntimeError")


def test_functions_convert_two_python_values_alone():
    """mx.add(2147483648, 1) is int64 (to_array's default beyond int32), mx.add(1, 1) int32."""
    cases = {(a, b): result for op, a, b, _, result, _ in _recording()["cases"] if op == "mx.add"}
    assert cases["py:2147483648", "py:1"] == "i64" and cases["py:1", "py:1"] == "i32"
    assert cases["py:True", "py:1.5"] == "f32" and cases["py:1j", "py:True"] == "c64"
    assert promote_cli.expr("maximum(2147483648, 1)", "mlx").result == "0d:i64"
    assert promote_cli.expr("maximum(1, 1)", "mlx").result == "0d:i32"
    assert promote_cli.query("mlx", "py:int", "py:int", op="mx.add").result == "i32"
    assert promote_cli.query("mlx", "py:2147483648", "py:1", op="mx.add").result == "i64"


@pytest.mark.parametrize("a, b, refusal", [
    ("i8", "py:300", "ValueError: Converting 300 to int8 would result in overflow."),
    ("py:-1", "u32", "ValueError: Converting -1 to uint32 would result in overflow."),
    ("f16", "py:9223372036854775808", "RuntimeError: std::bad_cast"),
    ("py:-9223372036854775809", "u64", "RuntimeError: std::bad_cast"),
])
def test_a_python_int_that_does_not_convert_is_refused_in_mlx_words(a, b, refusal):
    got = promote_cli.query("mlx", a, b)
    assert got.result is None and got.refusal == refusal


@pytest.mark.parametrize("a, b, result", [
    ("u64", "py:-1", "u64"), ("bool", "py:2147483648", "i32"), ("f16", "py:1e+300", "f16"),
    ("i8", "py:9223372036854775807", None), ("i64", "py:9223372036854775807", "i64"), ("i8", "0d:i64=300", "i64"),
])
def test_values_that_convert(a, b, result):
    assert promote_cli.query("mlx", a, b).result == result


def test_every_binary_function_and_operator_is_an_op_of_the_ruleset():
    names = registry.load("mlx").op_names
    assert set(mlx_ops.OPS) <= set(names)
    for op in ("mx.add", "mx.floor_divide", "mx.power", "mx.logical_and", "mx.left_shift", "<<", "//", "**"):
        assert op in names, op


@pytest.mark.parametrize("a, b, op, result", [
    ("u64", "i8", "add", "f32"),
    ("bool", "py:int", "add", "i32"),
    ("i8", "py:float", "add", "f32"),
    ("f16", "py:float", "add", "f16"),
    ("i8", "0d:i64", "add", "i64"),
    ("i32", "i32", "mx.divide", "f32"),
    ("bool", "bool", "mx.right_shift", "u8"),
    ("i8", "py:int", "&", "i8"),
    ("py:int", "i8", "&", None),
    ("i8", "py:int", "mx.bitwise_and", "i8"),
    ("py:int", "i8", "mx.bitwise_and", "i8"),
    ("u64", "i8", "mx.bitwise_and", None),
    ("c64", "c64", "mx.remainder", None),
    ("c64", "c64", "<", "bool"),
    ("f32", "py:int", "result_type", None),
])
def test_answers_the_docs_build_on(a, b, op, result):
    assert promote_cli.query("mlx", a, b, op=op).result == result


def test_a_weak_operand_is_a_usage_error():
    with pytest.raises(promote_cli.UsageError, match="MLX has no weak types"):
        promote_cli.query("mlx", "weak:f32", "i8")


def test_the_table_is_mlx_source_order_and_symmetric():
    """The columns are type_rules' order in mlx/dtype.cpp (bool, unsigned, signed, f16, f32, f64, bf16, c64)."""
    rs = registry.load("mlx")
    columns = rs.tables["promote"].columns
    assert [str(c) for c in columns] == ["bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
                                        "f16", "f32", "f64", "bf16", "c64"]
    assert set(map(str, columns)) == set(mlx_probe.ASKED)


@pytest.mark.parametrize("text, value", [
    ("py:300", 300), ("py:-1", -1), ("py:1.5", 1.5), ("py:1e+300", 1e300), ("py:-inf", float("-inf")),
    ("py:True", True), ("py:1j", 1j), ("py:1+1j", 1 + 1j), ("py:int", 1), ("py:float", 1.5),
])
def test_the_probe_reads_value_operands(text, value):
    assert mlx_probe._python_value(text) == value


def test_the_probe_names_mlx_dtypes_by_the_vocabulary():
    assert mlx_probe.TO_MLX["bool"] == "bool_" and mlx_probe.FROM_MLX["mlx.core.bool"] == "bool"
    assert mlx_probe.dtype_name("mlx.core.bfloat16") == "bf16"
    assert mlx_probe.dtype_name("mlx.core.float128") == "mlx.core.float128"


def test_only_two_python_scalars_of_an_operator_are_not_asked():
    assert not mlx_ops.asked("+", ["py:int", "py:float"])
    assert mlx_ops.asked("mx.add", ["py:int", "py:float"])
    assert mlx_ops.asked("+", ["i8", "py:float"])
