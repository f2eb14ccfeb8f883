"""Triton 3.9's frontend: what the targets change, where the IR is invalid, literals, and the option's bad input.

Expected values come from the recordings the probe made on a CPU (tests/data/recordings/triton-3.9.json,
ops-triton.json); tests/test_recordings.py and test_op_rules.py compare every case with the rules, these
check what the docs say about them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from support import require_framework, run_cli

from promote_cli import query
from promote_cli.probes import triton as probe
from promote_cli.vocab import operands

RECORDINGS = Path(__file__).parent / "data" / "recordings"
FP8 = {"f8e4m3b15", "f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz"}


def _cases() -> list:
    return json.loads((RECORDINGS / "triton-3.9.json").read_text(encoding="utf-8"))["cases"]


def _dtype(operand: str) -> str:
    return operand.rpartition(":")[2]


def test_the_targets_differ_only_where_an_fp8_type_is_asked():
    """The CUDA and HIP backends differ in their supported fp8 types and in nothing else Triton promotes."""
    answers = defaultdict(dict)
    for op, a, b, options, result, error in _cases():
        answers[op, a, b][options["target"]] = result
    differing = {(a, b) for (_, a, b), by_target in answers.items() if len(set(by_target.values())) > 1}
    assert differing and all(FP8 & {_dtype(a), _dtype(b)} for a, b in differing)
    assert {len(by_target) for by_target in answers.values()} == {len(probe.TARGETS)}


@pytest.mark.parametrize("dtype, available", [
    ("f8e4m3", {"cuda:90", "hip:gfx942"}),       # fp8e4nv: capability 89 and up, and CDNA3
    ("f8e5m2", {"cuda:90", "cuda:80", "hip:gfx942"}),
    ("f8e4m3b15", {"cuda:90", "cuda:80"}),       # the software format for NVIDIA GPUs without fp8
    ("f8e4m3fnuz", {"hip:gfx942"}),              # fp8e4b8 and fp8e5b16: AMD's fnuz formats
    ("f8e5m2fnuz", {"hip:gfx942"}),
])
def test_each_fp8_type_exists_on_the_targets_whose_backend_lists_it(dtype, available):
    for target in probe.TARGETS:
        answer = query("triton", dtype, "f16", options={"target": target})
        assert (answer.result == "f16") == (target in available), (dtype, target, answer.refusal)
        if target not in available:
            assert "not supported in this architecture" in answer.refusal


def _says_invalid(answer) -> bool:
    return answer.result is not None and "the IR is invalid" in answer.rule


def test_the_answers_where_the_ir_is_invalid_say_so_and_no_others_do():
    """Where MLIR's verifier rejected what the frontend built, the recording keeps the frontend's dtype with
    an 'IR invalid' note; the rule that answers says the IR is invalid, and no other rule says it."""
    invalid = 0
    for op, a, b, options, result, error in _cases():
        answer = query("triton", a, b, op, options)
        assert answer.result == result, (a, b, options)
        assert _says_invalid(answer) == (error or "").startswith("IR invalid: "), (a, b, options, answer.rule)
        invalid += _says_invalid(answer)
    assert invalid >= 48  # fp8e4b15 with itself, with f64 and with each literal, on the two CUDA targets


def test_every_op_answer_where_the_ir_is_invalid_says_so():
    """The op recording lists the cells whose IR the verifier rejected (``ir_invalid``: [row, column]); the
    answer of each op says the IR is invalid exactly there."""
    data = json.loads((RECORDINGS / "ops-triton.json").read_text(encoding="utf-8"))
    flagged = {tuple(cell) for cell in data["ir_invalid"]}
    ops = {"+", "-", "*", "%", "<", "==", "tl.maximum", "tl.fdiv", "/"}
    seen = 0
    for n, (op, index, lead, cells) in enumerate(data["rows"]):
        for column, (x, cell) in enumerate(zip(data["axis"], cells)):
            if op in ops and isinstance(cell, str):
                answer = query("triton", lead[0], x, op, data["options"][index])
                assert _says_invalid(answer) == ((n, column) in flagged), (op, lead, x, answer.rule)
                seen += (n, column) in flagged
    assert seen > 100 and all(data["rows"][n][0] in ops | {"<=", ">", ">=", "!=", "tl.minimum"} for n, _ in flagged)


def test_fp8e4b15_with_f64_takes_the_left_operands_type_after_the_backends_cast():
    assert [query("triton", a, b).result for a, b in [("f8e4m3b15", "f64"), ("f64", "f8e4m3b15")]] == ["f16", "f64"]
    assert query("triton", "f8e4m3b15", "f64", "/").result == "f64"   # truediv casts to the wider mantissa
    assert query("triton", "f8e4m3b15", "f64", "%").result == "f16"


@pytest.mark.parametrize("a, b, op, result", [
    ("u8", "py:int", "+", "u8"),          # a literal of the tensor's kind does not take part
    ("bf16", "py:int", "+", "bf16"),
    ("i32", "py:float", "+", "f32"),      # a literal of a higher kind does: a float literal is fp32
    ("bool", "py:int", "+", "i32"),
    ("u8", "py:int", "//", "u8"),         # ... so the signedness check of // never sees it
    ("py:float", "f8e5m2", "+", "f8e5m2"),
    ("0d:i64", "i8", "+", "i64"),         # a scalar kernel argument is a tensor: its width counts
    ("0d:i8", "0d:u8", "<", "bool"),
])
def test_literals_drop_out_below_the_tensors_kind_and_scalar_arguments_do_not(a, b, op, result):
    assert query("triton", a, b, op).result == result


@pytest.mark.parametrize("a, b, op, result", [
    ("bool", "py:-1", "+", "i32"),            # an int literal is above bool: it takes part, as int32
    ("bool", "py:2147483648", "+", "u32"),    # ... as uint32 when int32 cannot hold it
    ("u32", "py:2147483648", "+", "u32"),
    ("i32", "py:1e+300", "+", "f64"),         # a float literal beyond fp32's range is fp64
    ("i32", "py:1e-300", "+", "f64"),         # ... and so is one below fp32's normal range
    ("i32", "py:inf", "+", "f32"),
    ("f16", "py:1e+300", "+", "f16"),         # a float literal with a float tensor does not take part
    ("i8", "py:300", "+", None),              # ... and an int one with an integer tensor must fit it
    ("i32", "py:2147483648", "+", None),
    ("u8", "py:-1", "+", None),               # a negative literal never meets an unsigned type
    ("u8", "py:300", "//", None),
    ("f32", "py:18446744073709551616", "+", None),   # beyond uint64: no type at all
])
def test_a_literals_value_decides_its_type_and_whether_it_fits(a, b, op, result):
    assert query("triton", a, b, op).result == result
    assert query("triton", b, a, op).result == result


@pytest.mark.parametrize("a, b, op", [("bool", "i8", "/"), ("i8", "u8", "%"), ("f32", "f32", "//"),
                                      ("i8", "f8e4m3", "+"), ("i32", "f32", "tl.div_rn"), ("i8", "py:complex", "+")])
def test_refusals(a, b, op):
    assert query("triton", a, b, op).result is None


def test_a_scalar_argument_is_a_0d_tensor_of_its_values_type_but_1_is_a_literal():
    """A launch specialises scalar arguments by value (the recording's ``arguments``): 1 becomes a constexpr,
    so `x_u8 + n` is i32 for n == 2 and u8 for n == 1."""
    arguments = json.loads((RECORDINGS / "triton-3.9.json").read_text(encoding="utf-8"))["arguments"]
    assert arguments["1"] == "py:1" and arguments["2"] == arguments["-1"] == "0d:i32"
    assert (arguments["2147483648"], arguments["9223372036854775808"]) == ("0d:i64", "0d:u64")
    assert (arguments["1.5"], arguments["True"]) == ("0d:f32", "0d:bool")
    assert [query("triton", "u8", arguments[n]).result for n in ("1", "2")] == ["u8", "i32"]


def test_a_target_triton_has_not_is_one_line_and_exit_2():
    code, out, err = run_cli("query", "f16", "f16", "-f", "triton", "-O", "target=sm90")
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == ["promote: option target takes one of cuda:90, cuda:80, hip:gfx942, not 'sm90'"]


def test_the_probe_asks_every_value_literal_the_grammar_reads_back_as_written():
    assert probe.literals() == list(probe.LITERALS)
    assert probe.literals(probe.OP_VALUES) == [*probe.KINDS, *probe.OP_VALUES]
    assert all(str(operands.parse(literal)) == literal for literal in probe.LITERALS)


@pytest.mark.live
def test_the_probes_builder_is_what_tritons_code_generator_builds():
    """A sample of every op compiled as @triton.jit kernels gives what the probe's builder gives."""
    require_framework(probe)
    (label, n, bad), = probe.extra_checks()
    assert n > 1000 and not bad, bad[:5]
