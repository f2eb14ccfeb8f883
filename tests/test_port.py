"""`promote port` (docs/port.md): the casts that make a target ruleset reproduce a source. Every plan printed is
re-checked here through the public `query` (not the porting code): the casts give the compute operands, the
target answers them with the compute dtype, and the output cast gives the source's dtype."""

from __future__ import annotations

import csv
import io
import json

import pytest
from support import run_cli

import promote_cli
from promote_cli.oracle import registry
from promote_cli.vocab import operands


def _dtype(text: str) -> str:
    return operands.parse(text).dtype.name


def _cast(operand: str, to: str) -> str:
    """What a cast of an operand gives: a tensor stays one; a 0-d tensor, Python scalar or weak value is a 0-d
    tensor of that type."""
    return to if operands.parse(operand).form == "tensor" else f"0d:{to}"


def ask(framework: str, given: list[str], op: str, options: dict):
    """The public API's answer: `query` for one or two operands, `query_n` for three."""
    if len(given) < 3:
        return promote_cli.query(framework, *given, op=op, options=options)
    return promote_cli.query_n(framework, given, op=op, options=options)


def check_plans(source: str, target: str, result) -> int:
    """Every case of a Port is planned or impossible with a reason, and every plan reproduces the source as the
    public API answers: the number of plans checked."""
    _, s_name, s_opts = registry.parse_side(source)
    _, t_name, t_opts = registry.parse_side(target)
    checked = 0
    for one in result.ops:
        for case in one.cases:
            assert (case.impossible is None) == bool(case.lossless) or case.compute is None, case
            got = ask(s_name, case.operands, one.source_op, s_opts)
            assert got.result == case.source, case
            if case.compute is None:
                assert case.impossible, case
                continue
            cast = {c["operand"]: c["to"] for c in case.casts}
            assert case.compute_operands == [_cast(x, cast[i]) if i in cast else x
                                             for i, x in enumerate(case.operands)], case
            computed = ask(t_name, case.compute_operands, one.target_op, t_opts)
            assert computed.result == case.compute, case
            final = case.output_cast or _dtype(case.compute)
            assert final == _dtype(case.source), case
            assert case.output_cast is None or case.output_cast != _dtype(case.compute), case
            checked += 1
    return checked


def test_torch_to_onnx_add_casts_the_narrower_input_and_widens_a_mixed_sign_pair():
    code, out, err = run_cli("port", "--from", "torch", "--to", "onnx", "--op", "Add", "--format", "json")
    assert code == 0
    cases = {tuple(c["operands"]): c for c in map(json.loads, out.splitlines())}
    assert cases["i8", "f32"]["casts"] == [{"operand": 0, "to": "f32"}] and cases["i8", "f32"]["output_cast"] is None
    assert cases["u8", "i8"]["casts"] == [{"operand": 0, "to": "i16"}, {"operand": 1, "to": "i16"}]
    assert cases["u8", "i8"]["compute"] == "i16" and cases["u8", "i8"]["lossless"] is True
    for c in cases.values():
        assert set(c) >= {"op", "operands", "source", "target", "casts", "compute_operands", "compute",
                          "output_cast", "lossless", "impossible"}
    assert err.startswith("promote: torch -> onnx: ") and "need casts" in err


def test_onnxruntime_kernels_are_avoided():
    """bf16 + bf16 is ONNX Add's, but ONNX Runtime's CPU provider has no bf16 Add kernel: the plan computes in
    another type and casts the output back."""
    plain = promote_cli.port("torch", "onnx@21", "+", types="bf16", kinds="tensor")
    assert plain.cases == []
    run = promote_cli.port("torch", "onnx@21:runtime=onnxruntime", "+", types="bf16", kinds="tensor")
    (case,) = run.cases
    assert case.target is None and case.compute == "f32" and case.output_cast == "bf16" and case.lossless
    assert check_plans("torch", "onnx@21:runtime=onnxruntime", run) == 1


def test_two_rulesets_that_agree_need_no_casts_and_exit_0():
    code, out, err = run_cli("port", "--from", "numpy", "--to", "numpy", "--op", "+", "--exit-code")
    assert (code, out) == (0, "")
    assert " 0 need casts, 0 cannot be reproduced" in err


def test_exit_code_1_when_a_case_needs_a_cast():
    code, out, _ = run_cli("port", "--from", "torch", "--to", "tosa", "--op", "+", "--types", "i8,i16", "--kinds", "tensor", "--exit-code")
    assert code == 1 and "i8 i8     i8      -       #0 -> i32, #1 -> i32  i32      i8" in out


@pytest.mark.parametrize("source, target, op, kinds", [
    ("torch", "onnx", None, "tensor"), ("jax", "onnx@13", "+", "all"), ("numpy", "torch", "+", "all"),
    ("tensorflow", "jax", "*", "tensor"), ("torch", "onnx@17:runtime=onnxruntime", "sum", "all"),
    ("numpy", "onnx@21", "where", "tensor"), ("paddle", "cann", "+", "tensor"),
])
def test_every_plan_reproduces_the_source_as_the_target_answers(source, target, op, kinds):
    result = promote_cli.port(source, target, op, kinds=kinds)
    assert result.ops
    n = check_plans(source, target, result)
    assert n > 0 or all(c.impossible for c in result.cases)


def test_an_impossible_case_says_why():
    result = promote_cli.port("torch", "onnx", "+", types="c64,c32,i8", kinds="tensor")
    why = {tuple(c.operands): c.impossible for c in result.cases}
    assert why["i8", "c32"] == "onnx@28 has no c32"
    assert "Add" in why["c64", "c64"] and "c64" in why["c64", "c64"]
    assert all(why.values())


def test_a_lossy_plan_is_shown_but_counted_as_impossible():
    result = promote_cli.port("torch", "onnx", "+", types="i8,c64", kinds="tensor")
    lossy = [c for c in result.cases if c.lossless is False]
    assert lossy and all(c.impossible.startswith("only a cast that may lose values") for c in lossy)
    assert result.counts()["impossible"] == len([c for c in result.cases if c.impossible])


def test_an_op_is_named_as_either_side_names_it():
    by_onnx = promote_cli.port("torch", "onnx", "Add", types="i8,u8", kinds="tensor")
    by_symbol = promote_cli.port("torch", "onnx", "+", types="i8,u8", kinds="tensor")
    assert [c.to_dict() for c in by_onnx.cases] == [dict(c.to_dict(), op="Add") for c in by_symbol.cases]
    assert (by_onnx.ops[0].source_op, by_onnx.ops[0].target_op) == ("+", "Add")
    reduce = promote_cli.port("torch", "onnx", "sum", types="i32", kinds="tensor")
    assert reduce.ops[0].target_op == "ReduceSum" and reduce.cases[0].source == "0d:i64"


def test_an_op_a_side_lacks_is_one_line_and_exit_2():
    code, out, err = run_cli("port", "--from", "torch", "--to", "onnx@13", "--op", "BitwiseAnd")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "BitwiseAnd" in err
    code, _, err = run_cli("port", "--from", "nope", "--to", "onnx")
    assert code == 2 and len(err.splitlines()) == 1


def test_csv_has_the_op_and_markdown_a_table_per_op():
    _, out, _ = run_cli("port", "--from", "torch", "--to", "onnx", "--op", "+", "--op", "*", "--types", "i8,u8",
                        "--kinds", "tensor", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:3] == ["op", "operands", "source"] and {r[0] for r in rows[1:]} == {"+", "*"}
    _, out, _ = run_cli("port", "--from", "torch", "--to", "onnx", "--op", "+", "--op", "*", "--types", "i8,u8",
                        "--kinds", "tensor", "--format", "markdown")
    assert out.count("### ") == 2 and "### * (torch: *, onnx: Mul)" in out


SHIPPED = [rs.key for rs in registry.all_rulesets()]


@pytest.mark.slow
@pytest.mark.parametrize("source", SHIPPED)
def test_every_plan_from_a_shipped_ruleset_to_every_other_reproduces_the_source(source):
    """`+` over tensors from one shipped ruleset to every other (their default options): each printed plan
    re-checked, every differing case planned or impossible with a reason."""
    checked = 0
    for target in SHIPPED:
        if target == source:
            continue
        result = promote_cli.port(source, target, "+", kinds="tensor")
        assert result.ops, (source, target)
        checked += check_plans(source, target, result)
    assert checked > 0 or source.startswith(("tosa", "onnx"))
