"""tinygrad's ruleset (rules/tinygrad.toml): its options, the fp8 pairs its lattice cannot say, the ops that
leave least_upper_dtype, and the probes' agreement with the rule file's options (no tinygrad needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import promote_cli
from promote_cli.oracle import registry
from promote_cli.probes import tinygrad as probe
from promote_cli.probes import tinygrad_ops

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def ask(a: str, b: str, op: str = "add", **options) -> str | None:
    return promote_cli.query("tinygrad", a, b, op=op, options=options).result


@pytest.mark.parametrize("a, b, options, want", [
    ("bool", "py:int", {}, "weak:i32"),
    ("bool", "py:int", {"default_int": "i64"}, "weak:i64"),
    ("i8", "py:float", {"default_float": "f16"}, "weak:f16"),
    ("u64", "i8", {}, "weak:f32"),                       # no integer above both: weakfloat
    ("u64", "i8", {"default_float": "f16", "default_int": "i64"}, "weak:f16"),
    ("weak:i64", "u8", {"default_int": "i64"}, "u8"),     # a weak Tensor stands at weakint whatever its default
])
def test_a_weak_result_realises_as_the_default_int_or_float(a, b, options, want):
    assert ask(a, b, **options) == want


@pytest.mark.parametrize("a, b, want", [
    ("f8e4m3", "f8e5m2", "f16"),            # two minimal bounds, f16 and bf16: min() by priority
    ("f8e5m2fnuz", "f8e4m3", "f16"),
    ("f8e4m3", "bf16", "bf16"),             # the one pair the lattice's patch changes, said by a rule
    ("bf16", "f8e5m2fnuz", "bf16"),
    ("0d:bf16", "f8e4m3", "bf16"),
    ("weak:bf16", "f8e4m3", "f8e4m3"),      # a weak float is weakfloat, below every fp8 type
    ("py:float", "bf16", "bf16"),
    ("i64", "f8e4m3", "f8e4m3"),
    ("f16", "bf16", "f32"),
])
def test_the_fp8_types_meet_at_half_and_bfloat16_wins_over_them(a, b, want):
    assert ask(a, b) == want
    assert ask(b, a) == want
    if not (a.startswith(("py:", "weak:", "0d:")) or b.startswith(("py:", "weak:", "0d:"))):
        assert ask(a, b, "least_upper_dtype") == want


@pytest.mark.parametrize("a, b, op, options, want", [
    ("i8", "i8", "/", {}, "f32"),
    ("i8", "i8", "/", {"default_float": "f16"}, "f16"),
    ("bool", "py:int", "/", {}, "f32"),                  # a weak int promotion is cast to the default float: strong
    ("u64", "i8", "/", {}, "weak:f32"),                  # already a weak float
    ("bool", "bool", "//", {}, "f32"),
    ("i8", "u8", "//", {}, "i16"),
    ("bool", "py:bool", "%", {"default_float": "f16"}, "f16"),
    ("py:int", "i8", "<<", {}, "weak:i32"),              # the left operand's dtype: the weak Python int
    ("py:int", "i8", ">>", {"default_int": "i64"}, "weak:i64"),
    ("py:bool", "i8", "<<", {}, "i8"),
    ("i8", "py:int", "Tensor.lshift", {}, "i8"),
    ("f32", "py:int", "<<", {}, None),
    ("u64", "i8", "<<", {}, None),                       # weakfloat is no int
    ("bool", "bool", ">>", {}, None),
    ("bool", "py:int", "Tensor.logaddexp", {}, "weak:f32"),
    ("i8", "py:int", "Tensor.logaddexp", {"default_float": "f16"}, "f16"),
    ("i8", "f16", "<", {}, "bool"),
    ("bool", "bool", "-", {}, "bool"),
    ("f32", "f64", "^", {}, "f64"),
])
def test_ops_that_leave_least_upper_dtype(a, b, op, options, want):
    assert ask(a, b, op, **options) == want


def test_a_negative_python_int_power_refuses_unless_the_promotion_is_a_float():
    assert promote_cli.expr("x:i8 ** -1", "tinygrad").refusal.endswith("RuntimeError: base needs to be float")
    assert promote_cli.expr("(-2) ** x:u8", "tinygrad").refusal is not None
    assert promote_cli.expr("x:i8 ** 2", "tinygrad").result == "i8"
    assert promote_cli.expr("x:f16 ** -1", "tinygrad").result == "f16"
    assert promote_cli.expr("x:i8 ** -1.5", "tinygrad").result == "weak:f32"


def test_python_complex_and_python_scalars_as_dtypes_refuse():
    assert "Could not infer dtype" in promote_cli.query("tinygrad", "f32", "py:complex").refusal
    assert promote_cli.query("tinygrad", "i8", "py:int", op="least_upper_dtype").refusal is not None


def test_the_probes_ask_every_value_of_the_rulesets_options():
    options = registry.load("tinygrad").options
    assert set(probe.DEFAULT_INTS) == {str(v) for v in options["default_int"].values}
    assert set(probe.DEFAULT_FLOATS) == {str(v) for v in options["default_float"].values}
    assert len(probe.OPTIONS) == len(probe.DEFAULT_INTS) * len(probe.DEFAULT_FLOATS)


def test_the_recordings_hold_every_option_combination_and_weak_operands_named_by_their_default():
    pairs = json.loads((RECORDINGS / "tinygrad-0.14.json").read_text(encoding="utf-8"))
    ops = json.loads((RECORDINGS / "ops-tinygrad.json").read_text(encoding="utf-8"))
    assert ops["options"] == probe.OPTIONS
    seen = set()
    for op, a, b, options, result, error in pairs["cases"]:
        seen.add(json.dumps(options, sort_keys=True))
        weak = {f"weak:{options['default_int']}", f"weak:{options['default_float']}"}
        assert all(x in weak for x in (a, b, result) if x and x.startswith("weak:")), (a, b, options, result)
    assert seen == {json.dumps(o, sort_keys=True) for o in probe.OPTIONS}


def test_every_binary_op_starts_from_least_upper_dtype_in_the_recording():
    """`a + b` on two Tensors is least_upper_dtype of their dtypes, case by case (tinygrad/mixin/elementwise.py)."""
    cases = json.loads((RECORDINGS / "tinygrad-0.14.json").read_text(encoding="utf-8"))["cases"]
    lub = {(a, b, json.dumps(o)): r for op, a, b, o, r, _ in cases if op == "least_upper_dtype"}
    adds = [(a, b, json.dumps(o), r) for op, a, b, o, r, _ in cases if op == "add" and (a, b, json.dumps(o)) in lub]
    assert len(adds) > 1000 and all(lub[(a, b, o)] == r for a, b, o, r in adds)


def test_a_method_is_asked_only_with_a_tensor_first():
    assert tinygrad_ops.asked("+", ["py:int", "i8"], {})
    assert not tinygrad_ops.asked("Tensor.add", ["py:int", "i8"], {})
    assert not tinygrad_ops.asked("+", ["py:int", "py:float"], {})
    assert tinygrad_ops.asked("Tensor.add", ["i8", "py:int"], {})


@pytest.mark.parametrize("a, b, op, want", [
    ("i8", "py:-1", "**", None),                         # a negative Python int with an integer promotion
    ("py:-1", "u8", "**", None),                         # ... as the base of __rpow__ too
    ("bool", "py:-1", "Tensor.pow", None),
    ("i8", "py:2", "**", "i8"),
    ("f16", "py:-1", "**", "f16"),                       # a float promotion takes it
    ("i8", "0d:i32=-1", "**", "i32"),                    # a Tensor holding -1 is no Python int
    ("i8", "py:-1", "*", "i8"),                          # no other op looks at the value
    ("i8", "py:300", "add", "i8"),
    ("u8", "py:18446744073709551616", "add", "u8"),
    ("f16", "0d:f64=1e+300", "add", "f64"),
    ("i8", "py:nan", "add", "weak:f32"),
])
def test_only_pow_looks_at_a_value(a, b, op, want):
    assert ask(a, b, op) == want
