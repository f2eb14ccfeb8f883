"""The array API op groups (rules/array-api@2025.12.toml, docs/frameworks/array-api.md "Ops") where
the op recordings cannot check them: ops a version lacks, and the operators' expressions agreeing
with their op groups."""

from __future__ import annotations

import pytest

import promote_cli

VERSIONS = ["2021.12", "2022.12", "2023.12", "2024.12", "2025.12"]


def answer(version: str, op: str, *operands: str) -> str | None:
    return promote_cli.query_n(f"array-api@{version}", list(operands), op).result


@pytest.mark.parametrize("op, operands, since", [
    ("maximum", ["f32", "f32"], "2023.12"),
    ("clip", ["f32", "f32", "f32"], "2023.12"),
    ("cumulative_sum", ["f32"], "2023.12"),
    ("cumulative_prod", ["f32"], "2024.12"),
    ("reciprocal", ["f32"], "2024.12"),
])
def test_a_function_is_refused_before_the_version_that_added_it(op, operands, since):
    got = {v: answer(v, op, *operands) for v in VERSIONS}
    assert got == {v: (None if v < since else "f32") for v in VERSIONS}


@pytest.mark.parametrize("version", VERSIONS)
def test_an_ordering_operator_checks_the_arrays_then_promotes_the_python_scalar(version):
    """array-api-strict checks x's dtype (float32: real), then compares in complex64."""
    fw = f"array-api@{version}"
    assert promote_cli.expr("x:f32 < 1j", fw).result == "bool"
    assert promote_cli.expr("1j >= x:f64", fw).result == "bool"
    assert promote_cli.expr("x:c64 < 1", fw).result is None
    assert answer(version, "<", "f32", "py:complex") == "bool"


def test_maximum_of_bools_is_numpys_before_2024_12_in_expressions_as_in_the_op():
    for version, want in [("2023.12", "bool"), ("2024.12", None)]:
        assert promote_cli.expr("maximum(x:bool, y:bool)", f"array-api@{version}").result == want
        assert answer(version, "maximum", "bool", "bool") == want


def test_the_add_function_differs_from_the_operator_before_2024_12():
    """Before 2024.12 array-api-strict's functions check no dtype category and take no Python scalar."""
    assert [answer(v, "add", "bool", "bool") for v in ("2023.12", "2024.12")] == ["bool", None]
    assert [answer(v, "+", "bool", "bool") for v in ("2023.12", "2024.12")] == [None, None]
    assert [answer(v, "add", "i8", "py:int") for v in ("2023.12", "2024.12")] == [None, "i8"]
    assert [answer(v, "+", "i8", "py:int") for v in ("2023.12", "2024.12")] == ["i8", "i8"]
