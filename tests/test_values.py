"""Values as operands: `py:300`, `py:1.5`, `py:nan`, `py:True`, `py:1+1j`, `0d:i64=300`.

The grammar and its canonical printing, malformed values (one line, exit 2, in the CLI and the API), the rule
functions that see a value (`has_value`, `value`, `fits`), a value ignored where a ruleset's rules do not look
at it, and NEP 50's out-of-range Python int refused alike by `query`, `table`, `--batch`, `expect`, `explain`
and `promote expr`."""

from __future__ import annotations

import math

import pytest

import promote_cli
from promote_cli import UsageError
from promote_cli.errors import RuleDefect
from promote_cli.oracle import registry
from promote_cli.vocab import operands, values
from promote_cli.vocab.operands import PYTHON, RANK0, Operand
from click.testing import CliRunner

from promote_cli.cli import main
from support import run_cli

CANONICAL = {  # spelling -> (canonical spelling, value)
    "py:300": ("py:300", 300), "py:-1": ("py:-1", -1), "py:+7": ("py:7", 7), "py:1_000": ("py:1000", 1000),
    "py:0x10": ("py:16", 16), "py:1.5": ("py:1.5", 1.5), "py:1e+300": ("py:1e+300", 1e300),
    "py:1E300": ("py:1e+300", 1e300), "py:2.": ("py:2.0", 2.0), "py:-0.0": ("py:-0.0", -0.0),
    "py:-inf": ("py:-inf", -math.inf), "py:inf": ("py:inf", math.inf), "py:True": ("py:True", True),
    "py:false": ("py:False", False), "py:1j": ("py:1j", 1j), "py:1+1j": ("py:1+1j", 1 + 1j),
    "py:(1+1j)": ("py:1+1j", 1 + 1j), "py:1-2.5e3j": ("py:1-2500j", 1 - 2500j),
    "0d:i64=300": ("0d:i64=300", 300), "0D:int8=-128": ("0d:i8=-128", -128), "0d:u8=255": ("0d:u8=255", 255),
    "0d:f32=1": ("0d:f32=1.0", 1.0), "0d:f16=65504": ("0d:f16=65504.0", 65504.0), "0d:bool=1": ("0d:bool=True", True),
    "0d:bool=False": ("0d:bool=False", False), "0d:c64=1+2j": ("0d:c64=1+2j", 1 + 2j),
    "0d:f64=nan": ("0d:f64=nan", None), "0d:f8e4m3fn=nan": ("0d:f8e4m3=nan", None),
}


@pytest.mark.parametrize("text", CANONICAL)
def test_a_value_operand_prints_canonically_and_reads_back_the_same(text):
    spelled, value = CANONICAL[text]
    x = operands.parse(text)
    assert str(x) == spelled
    assert x.has_value and x.form == (PYTHON if text.startswith("py:") else RANK0)
    if value is None:
        assert math.isnan(x.value)
    else:
        assert x.value == value and type(x.value) is type(value)
    again = operands.parse(str(x))
    assert again == x and str(again) == spelled


def test_a_python_value_has_the_kind_of_its_literal():
    kinds = {t: operands.parse(t).kind for t in ("py:True", "py:300", "py:nan", "py:1j")}
    assert kinds == {"py:True": "bool", "py:300": "signed", "py:nan": "float", "py:1j": "complex"}
    assert str(operands.parse("py:nan")) == "py:nan" and operands.parse("py:nan") == operands.parse("py:NaN")


def test_a_kind_is_still_any_value_and_differs_from_a_value():
    any_int = operands.parse("py:int")
    assert not any_int.has_value and str(any_int) == "py:int"
    assert operands.parse("py:300") != any_int and operands.parse("py:300").without_value() == any_int
    assert operands.parse("0d:i64=300").without_value() == operands.parse("0d:i64")
    assert operands.parse("0d:i64=300") == operands.parse("0d:int64=300") != operands.parse("0d:i64=301")


def test_only_a_python_scalar_or_a_rank0_operand_keeps_a_value():
    x = operands.parse("0d:i64=300")
    assert str(x.with_form("tensor")) == "i64" and str(x.with_form("weak")) == "weak:i64"
    assert str(Operand("tensor", x.dtype, None, 3)) == "i64"


MALFORMED = {
    "py:1e": "'py:1e': 1e is not a Python literal",
    "py:j": "unknown Python scalar 'py:j' (use py:bool, py:int, py:float or py:complex, or a value such as py:300)",
    "py:2j+": "'py:2j+': 2j+ is not a Python literal",
    "py:--1": "'py:--1': --1 is not a Python literal",
    "py:1.5.5": "'py:1.5.5': 1.5.5 is not a Python literal",
    "py:nanx": "unknown Python scalar 'py:nanx'",
    "py:nan1": "'py:nan1': nan1 is not a Python literal",
    "py:(1)": "'py:(1)': (1) is not a Python literal",
    "0d:i8=x": "'0d:i8=x': x is not a Python literal",
    "0d:i8=300": "'0d:i8=300': 300 is not a value of i8 (i8 holds -128 to 127)",
    "0d:u8=-1": "'0d:u8=-1': -1 is not a value of u8 (u8 holds 0 to 255)",
    "0d:bool=2": "'0d:bool=2': 2 is not a value of bool (bool holds True or False)",
    "0d:i8=1.5": "'0d:i8=1.5': 1.5 is not a value of i8 (i8 holds integers)",
    "0d:f32=1j": "'0d:f32=1j': 1j is not a value of f32 (f32 holds real numbers)",
    "0d:f16=1e5": "'0d:f16=1e5': 1e5 is not a value of f16 (f16 holds -65504.0 to 65504.0)",
    "0d:f8e4m3fn=inf": "'0d:f8e4m3fn=inf': inf is not a value of f8e4m3 (f8e4m3 has no infinity)",
    "0d:i8=": "'0d:i8=' needs a value",
    "0d:=3": "'0d:=3' needs a dtype after 0d:",
    "i8=3": "'i8=3': only a Python scalar or a 0d: operand has a value",
    "weak:i8=3": "'weak:i8=3': only a Python scalar or a 0d: operand has a value",
    "py:1e999": "'py:1e999': 1e999 is beyond a Python float's range (py:inf is infinity)",
    "py:" + "9" * 65: "a value is at most 64 characters long, not 65",
    "py:" + "1" * 5000: "a value is at most 64 characters long, not 5000",
}


@pytest.mark.parametrize("text", MALFORMED)
def test_a_malformed_value_is_a_usage_error_in_the_api(text):
    with pytest.raises(UsageError) as caught:
        promote_cli.query("numpy", "i8", text)
    assert MALFORMED[text] in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("text", ["py:1e", "0d:i8=x", "0d:i8=300", "0d:bool=2", "py:" + "9" * 500])
@pytest.mark.parametrize("args", [["query", "i8", "{}", "-f", "numpy"], ["query", "{}", "u8", "-f", "torch"],
                                  ["query", "i8", "u8", "{}", "-f", "jax"], ["table", "-f", "numpy", "--types", "i8,{}"],
                                  ["explain", "i8", "{}", "-f", "numpy"]])
def test_a_malformed_value_is_one_line_and_exit_2_in_the_cli(text, args):
    code, out, err = run_cli(*(a.format(text) for a in args))
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith("promote: ") and "Traceback" not in err
    assert str(_error_of(text)) in err


def _error_of(text: str) -> UsageError:
    try:
        operands.parse(text)
    except UsageError as exc:
        return exc
    raise AssertionError(f"{text} parsed")


def test_a_malformed_value_in_a_batch_is_its_lines_error():
    got = CliRunner().invoke(main, ["query", "--batch", "-f", "numpy"], input="i8 py:1e\ni8 py:3\n")
    assert got.exit_code == 2 and got.stdout.splitlines() == [f"error: {_error_of('py:1e')}", "i8"]


def test_values_round_trip_through_show():
    for v in (0, -1, 2 ** 63, 1.5, 1e300, -0.0, math.inf, True, False, 1j, 1 + 1j, complex(-1.5, 2e-300)):
        assert values.show(values.parse(values.show(v), "v")) == values.show(v)


def test_held_is_the_dtype_range():
    lookup = promote_cli.dtypes()
    by_name = {d.name: d for d in lookup}
    assert values.fits(127, by_name["i8"]) and not values.fits(128, by_name["i8"])
    assert values.fits(2 ** 64 - 1, by_name["u64"]) and not values.fits(2 ** 64, by_name["u64"])
    assert values.fits(300, by_name["f16"]) and not values.fits(1e300, by_name["f32"])
    assert values.fits(math.inf, by_name["f32"]) and not values.fits(math.inf, by_name["f8e4m3"])
    assert values.fits(1 + 1j, by_name["c64"]) and not values.fits(1j, by_name["f64"])
    assert values.fits(True, by_name["bool"]) and not values.fits(2, by_name["bool"])


# ---- answers: a value ignored, or NEP 50's range check -----------------------------------------------------------

NEP50 = "OverflowError: Python integer 300 out of bounds for int8"


def test_numpy_refuses_a_python_int_its_array_type_cannot_hold_with_numpys_words():
    ans = promote_cli.query("numpy", "i8", "py:300")
    assert ans.refused and ans.refusal == NEP50 and (ans.a, ans.b) == ("i8", "py:300")
    assert promote_cli.query("numpy", "py:-129", "i8").refusal == NEP50.replace("300", "-129")
    assert promote_cli.query("numpy", "u8", "py:-1").refusal == "OverflowError: Python integer -1 out of bounds for uint8"
    assert promote_cli.query("numpy", "i8", "py:127").result == "i8"
    assert promote_cli.query("numpy", "i8", "py:-128").result == "i8"


def test_a_value_is_ignored_where_the_rules_do_not_look_at_it():
    """NEP 50: a NumPy scalar's value never matters, nor a Python float's or complex's; torch has no range check
    for `add`."""
    same = [("numpy", "i8", "0d:i64=300", "0d:i64"), ("numpy", "f16", "py:1e+300", "py:float"),
            ("numpy", "f32", "py:nan", "py:float"), ("numpy", "i8", "py:1+1j", "py:complex"),
            ("numpy", "i8", "py:True", "py:bool"), ("torch", "i8", "py:300", "py:int"),
            ("torch", "i8", "0d:i64=300", "0d:i64"), ("jax", "i8", "py:300", "py:int"),
            ("paddle", "f16", "0d:f32=1.5", "0d:f32"), ("cann", "f16", "0d:f32=1.5", "0d:f32")]
    for framework, a, valued, plain in same:
        got, want = promote_cli.query(framework, a, valued), promote_cli.query(framework, a, plain)
        assert (got.result, got.refusal) == (want.result, want.refusal), (framework, a, valued)


def test_jax_checks_a_python_int_against_its_default_integer():
    assert promote_cli.query("jax", "i32", "py:2147483647").result == "i32"
    refused = promote_cli.query("jax", "i32", "py:2147483648")
    assert refused.refusal == "OverflowError: Python int 2147483648 does not fit i32"
    assert refused.hint == {"option": "x64", "value": "true", "result": "i32"}
    assert promote_cli.query("jax", "i32", "py:2147483648", options={"x64": True}).result == "i32"


CASES = [("numpy", "i8", "300"), ("numpy", "u8", "-1"), ("numpy", "i8", "127"), ("numpy", "i16", "300"),
         ("jax", "i32", "2147483648"), ("jax", "u8", "256"), ("array-api", "i8", "300"), ("array-api", "u8", "255"),
         ("tensorflow", "i8", "300"), ("tensorflow", "i32", "2147483648"), ("torch", "u8", "-1")]


@pytest.mark.parametrize("framework, dtype, literal", CASES)
def test_query_and_expr_agree_on_a_python_int(framework, dtype, literal):
    """`x:DTYPE + LITERAL` and `query DTYPE py:LITERAL` give one answer; so do both orders, table, batch, expect
    and explain."""
    expr = promote_cli.expr(f"x:{dtype} + {literal}", framework)
    ans = promote_cli.query(framework, dtype, f"py:{literal}", op="+")
    flipped = promote_cli.query(framework, f"py:{literal}", dtype, op="+")
    want = expr.result if not expr.refused else None
    assert ans.result == want == flipped.result, (expr.refusal, ans.refusal)
    if want is None:
        assert expr.refusal.endswith(ans.refusal) and ans.refusal == flipped.refusal
    table = promote_cli.table(framework, [dtype, f"py:{literal}"], op="+")
    assert table.cells[0][1].result == want == table.cells[1][0].result
    (line,) = promote_cli.batch(framework, [f"{dtype} py:{literal}"], op="+")
    assert (line.answer.result if line.answer is not None else None) == want
    report = promote_cli.expect([f"{framework} {dtype} py:{literal} + -> {want or 'refused'}"])
    assert not report.mismatches and len(report.checked) == 1
    explained = promote_cli.explain(framework, dtype, f"py:{literal}", op="+")
    assert explained.result == want and explained.refusal == ans.refusal


def test_expr_literals_are_value_operands():
    steps = {s.source: s.operand for s in promote_cli.expr("x:i8 + 300", "torch").steps()}
    assert steps["300"] == "py:300"
    result = promote_cli.expr("x:i8 + y:py:300", "numpy")
    assert result.refused and result.refusal.endswith(NEP50)
    assert promote_cli.expr("x:i8 + (200 + 100)", "numpy").refusal.endswith(NEP50)  # Python computes 300 first
    assert promote_cli.expr("1 + 2.5", "numpy").result == "py:float"  # a result carries no value


# ---- rule expressions see values ------------------------------------------------------------------------------------

VALUED = """schema = 1
name = "valued"
version = "1"
types = ["i8", "i16", "i64", "f32", "f64"]
[operands]
rank0 = "distinct"
python = "distinct"
[[rules]]
name = "a Python int that fits the array's type keeps it"
symmetric = true
if = "is_python(b) and has_value(b) and fits(b, a)"
result = "a"
[[rules]]
name = "a negative Python value is refused"
symmetric = true
if = "is_python(b) and has_value(b) and not is_complex(b) and value(b) < 0"
refuse = "negative {b}"
[[rules]]
name = "a 0-d value that fits i16"
symmetric = true
if = "is_rank0(b) and has_value(b) and fits(b, i16)"
result = "i16"
[[rules]]
name = "otherwise the wider"
symmetric = true
if = "true"
result = "i64 if is_int(a) or is_python(a) else f64"
"""


def _on_rules_path(tmp_path, monkeypatch, name: str, text: str) -> str:
    """A rule file NAME.toml on PROMOTE_RULES_PATH (the registry's cache cleared); its name."""
    (tmp_path / f"{name}.toml").write_text(text.replace('name = "valued"', f'name = "{name}"'))
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    return name


@pytest.fixture(autouse=True)
def _fresh_registry():
    yield
    registry.clear_cache()


def test_rule_expressions_see_an_operands_value(tmp_path, monkeypatch):
    valued = _on_rules_path(tmp_path, monkeypatch, "valued", VALUED)
    answers = {(a, b): promote_cli.query(valued, a, b) for a, b in [
        ("i8", "py:100"), ("py:100", "i8"), ("i8", "py:300"), ("i8", "py:int"), ("i8", "py:-300"),
        ("i8", "0d:i64=300"), ("i8", "0d:i64=300000"), ("i8", "0d:i64"), ("f32", "py:1e+300"), ("f32", "py:1.5")]}
    got = {pair: ans.result or ans.refusal for pair, ans in answers.items()}
    assert got == {("i8", "py:100"): "i8", ("py:100", "i8"): "i8", ("i8", "py:300"): "i64", ("i8", "py:int"): "i64",
                   ("i8", "py:-300"): "negative py:-300", ("i8", "0d:i64=300"): "i16", ("i8", "0d:i64=300000"): "i64",
                   ("i8", "0d:i64"): "i64", ("f32", "py:1e+300"): "f64", ("f32", "py:1.5"): "f32"}


def test_value_of_an_operand_without_one_is_a_defect_of_the_rule(tmp_path, monkeypatch):
    name = _on_rules_path(tmp_path, monkeypatch, "valueless", VALUED.replace(
        "is_python(b) and has_value(b) and not is_complex(b) and value(b) < 0", "is_python(b) and value(b) < 0"))
    with pytest.raises(RuleDefect, match="py:int has no value"):
        promote_cli.query(name, "i8", "py:int")
