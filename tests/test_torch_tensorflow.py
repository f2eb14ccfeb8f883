"""PyTorch and TensorFlow: their probes' pure parts (no framework needed), their recordings'
shape, and a few answers of the rulesets that the docs build on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import require_framework

from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer
from promote_cli.probes.recordings import compare_nary
from promote_cli.probes import tensorflow as tf_probe
from promote_cli.probes import torch as torch_probe
from promote_cli.vocab.dtypes import find

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def _recording(name: str) -> dict:
    return json.loads((RECORDINGS / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- torch probe

def test_torch_clean_error_drops_the_source_location_and_the_plea():
    exc = RuntimeError('ix_a != -1 INTERNAL ASSERT FAILED at "/__w/pytorch/c10/core/ScalarType.cpp":103, '
                       "please report a bug to PyTorch. \nmore lines")
    assert torch_probe.clean_error(exc) == "ix_a != -1 INTERNAL ASSERT FAILED"


@pytest.mark.parametrize("message, promoted, kind", [
    ("ix_b != -1 INTERNAL ASSERT FAILED", False, "internal assert"),
    ("\"add_stub\" not implemented for 'UInt16'", True, "kernel missing"),
    ("Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn and Float", False,
     "promotion refused"),
    ("Unknown Complex ScalarType for Float8_e5m2", False, "promotion refused"),
    ("something else went wrong", False, "error"),
])
def test_torch_refusal_kinds(message, promoted, kind):
    assert torch_probe.refusal_kind(message, promoted) == kind


def test_torch_pairs_per_op():
    n = len(torch_probe.TO_TORCH)
    pairs = {op: list(torch_probe.operand_pairs(op)) for op in torch_probe.OPS}
    assert len(pairs["promote_types"]) == n * n
    assert all(":" not in a + b for a, b in pairs["promote_types"])
    assert len(pairs["add"]) == 4 * n * n + 4 * 4 * n
    assert len(pairs["result_type"]) == len(pairs["add"]) + 16  # two Python scalars: result_type only
    assert not any(a.startswith("py:") and b.startswith("py:") for a, b in pairs["add"])


def test_torch_names_are_canonical_and_unnamed_ones_are_listed():
    assert set(torch_probe.TO_TORCH) <= set(torch_probe.ASKED)
    assert all(find(name) is not None and find(name).name == name for name in torch_probe.TO_TORCH)
    assert not set(torch_probe.TO_TORCH.values()) & set(torch_probe.UNNAMED)


def test_torch_recording_says_what_it_recorded():
    data = _recording("torch-2.13.json")
    assert data["ruleset"] == "torch" and data["version"] == "2.13.0"
    kinds = {"promotion refused", "internal assert", "kernel missing", "error"}
    for op, a, b, options, result, error in data["cases"]:
        assert (result is None) != (error is None), (op, a, b)
        if error is not None:
            assert error.split(":", 1)[0] in kinds, error
    counted = sum(sum(per_kind.values()) for per_kind in data["refusals"].values())
    assert counted == sum(1 for case in data["cases"] if case[5] is not None)


def _per_category(operands: list[str]) -> str:
    """PyTorch's N-operand result dtype from the ruleset's binary answers: promote within each
    category (0-d, dimensioned tensors), then combine the categories from the lowest up."""
    rs = registry.load("torch")
    state: dict[str, str] = {}
    for x in operands:
        form = x.split(":", 1)[0] if ":" in x else "nd"
        dtype = x.split(":", 1)[-1]
        state[form] = dtype if form not in state else answer(rs, state[form], dtype, "promote_types").result
    lower = None
    for form, prefix in (("0d", "0d:"), ("nd", "")):
        if form not in state:
            continue
        here = prefix + state[form]
        lower = state[form] if lower is None else answer(rs, here, f"0d:{lower}", "result_type").result
    return lower


def test_torch_three_operands_are_promoted_per_category():
    """The recorded triples (torch.addcmul) are the per-category promotion of the ruleset's
    binary answers, which the ruleset's N-ary answer ([nary] method = "grouped") gives."""
    data = _recording("torch-2.13.json")
    assert data["nary"]
    wrong = [(ops, result, error) for op, ops, _, options, result, error in data["nary"]
             if error is not None or _per_category(ops) != result]
    assert not wrong, wrong[:5]
    total, mismatches = compare_nary(data)
    assert registry.load("torch").nary.method == "grouped"
    assert total == len(data["nary"]) and not mismatches, [m.line() for m in mismatches[:5]]


# ---------------------------------------------------------------- tensorflow probe

@pytest.mark.parametrize("message, clean", [
    ("cannot compute AddV2 as input #1(zero-based) was expected to be a int8 tensor but is a uint8 tensor "
     "[Op:AddV2] name: ", "cannot compute AddV2 as input #1(zero-based) was expected to be a int8 tensor "
     "but is a uint8 tensor"),
    ("{{function_node __wrapped__Cast_device_/job:localhost/replica:0/task:0/device:CPU:0}} Cast int4 to half "
     "is not supported [Op:Cast] name: ", "Cast int4 to half is not supported"),
    ("Value for attr 'T' of bool is not in the list of allowed values: bfloat16, half, float\n\t; NodeDef: x",
     "Value for attr 'T' of bool is not in the list of allowed values"),
    ("In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int8'>, weak=False) and "
     "(<dtype: 'uint8'>, weak=False) is disallowed. You need to explicitly specify the dtype.",
     "In promotion mode PromoMode.SAFE, implicit dtype promotion between int8 and uint8 is disallowed."),
    ("Implicit Conversion between (<dtype: 'int32'>, weak=True) and <dtype: 'uint8'> is not allowed.",
     "Implicit Conversion between weak int32 and uint8 is not allowed."),
])
def test_tensorflow_clean_error(message, clean):
    assert tf_probe.clean_error(ValueError(message)) == clean


def test_tensorflow_pairs_per_mode():
    n = len(tf_probe.TO_TF)
    standard = len([t for t in tf_probe.STANDARD if t in tf_probe.TO_TF])
    for op, mode in (("tnp.add", "off"), ("add", "all")):
        pairs = list(tf_probe.operand_pairs(op, mode, False))
        assert len(pairs) == len(set(pairs))
        assert sum(1 for a, b in pairs if a.startswith("0d:") or b.startswith("0d:")) == 2 * standard * standard
        assert sum(1 for a, b in pairs if ":" not in a + b) == n * n
    lattice = list(tf_probe.operand_pairs("add", "all", False))
    assert {x for pair in lattice for x in pair if x.startswith("weak:")} == {f"weak:{t}" for t in tf_probe.WEAK}
    assert not any(a.startswith("py:") and b.startswith("py:") for a, b in lattice)
    # prefer_float32 is about Python scalars: with it, only pairs holding one are asked
    preferring = list(tf_probe.operand_pairs("tnp.add", "all", True))
    assert all(a.startswith("py:") or b.startswith("py:") for a, b in preferring)
    assert len(preferring) == 2 * 4 * (n + len(tf_probe.WEAK)) + 16


def test_tensorflow_version_does_not_import_tensorflow():
    import sys

    tf_probe.version()
    assert "tensorflow" not in sys.modules


def test_tensorflow_recording_covers_every_mode_and_op():
    data = _recording("tensorflow-2.21.json")
    assert data["ruleset"] == "tensorflow" and data["version"] == "2.21.0"
    seen = {(c[0], c[3]["dtype_conversion_mode"], c[3]["prefer_float32"]) for c in data["cases"]}
    assert seen == {(op, mode, pf) for op in tf_probe.OPS for mode in tf_probe.MODES for pf in (False, True)}
    weak_results = [c for c in data["cases"] if (c[4] or "").startswith("weak:")]
    assert weak_results and all(c[3]["dtype_conversion_mode"] in ("safe", "all") for c in weak_results)
    assert any(c[1].startswith("weak:") for c in data["cases"] if c[3]["dtype_conversion_mode"] == "off")


def test_tensorflow_recording_lists_what_it_did_not_ask():
    """The header's not_asked names TensorFlow's dtypes without a canonical name; every other
    dtype (float4_e2m1fn included) is asked, in every op and mode."""
    data = _recording("tensorflow-2.21.json")
    assert set(data["not_asked"]) == {"tf.qint8", "tf.quint8", "tf.qint16", "tf.quint16", "tf.qint32",
                                      "tf.string", "tf.resource", "tf.variant"}
    assert not {name.removeprefix("tf.") for name in data["not_asked"]} & set(tf_probe.FROM_TF)
    operands = {x.split(":", 1)[-1] for c in data["cases"] for x in c[1:3] if not x.startswith("py:")}
    assert operands == set(tf_probe.TO_TF) == set(tf_probe.ASKED)
    seen = {(c[0], c[3]["dtype_conversion_mode"]) for c in data["cases"] if "f4e2m1" in c[1:3]}
    assert seen == {(op, mode) for op in tf_probe.OPS for mode in tf_probe.MODES}


# ---------------------------------------------------------------- the rulesets

@pytest.mark.parametrize("a, b, op, want", [
    ("u8", "0d:i8", "add", "u8"),          # a 0-d tensor of the same kind does not widen
    ("0d:u8", "0d:i8", "add", "i16"),
    ("f16", "0d:c64", "add", "c32"),       # a lower-category complex keeps the float's width
    ("py:int", "py:float", "result_type", "f32"),
    ("u16", "u16", "result_type", "u16"),
    ("u16", "u16", "add", None),           # no add kernel
    ("f32", "0d:f8e5m2", "add", "f32"),
    ("0d:i8", "u8", "promote_types", "i16"),  # promote_types sees dtypes only
    ("weak:f32", "i8", "add", "f32"),      # no weak types: a weak operand is a tensor
    ("u8", "weak:i64", "add", "i64"),
    ("u8", "py:int", "add", "u8"),         # while a Python scalar is a wrapped number
])
def test_torch_answers(a, b, op, want):
    assert answer(registry.load("torch"), a, b, op).result == want


@pytest.mark.parametrize("a, b, op, mode, want", [
    ("i8", "u8", "add", "off", None),
    ("i8", "u8", "add", "legacy", "i16"),
    ("i8", "u8", "add", "safe", None),
    ("i8", "u8", "add", "all", "i16"),
    ("i64", "u64", "add", "all", "weak:f64"),
    ("i64", "u64", "tnp.result_type", "all", "f64"),
    ("i32", "f32", "tnp.add", "all", "f64"),
    ("0d:i32", "f32", "+", "all", "f32"),
    ("weak:i32", "i8", "add", "legacy", None),
    ("bool", "f4e2m1", "tnp.result_type", "legacy", "f4e2m1"),  # TensorFlow 2.21 has float4_e2m1fn
    ("f32", "f4e2m1", "tnp.result_type", "legacy", "f32"),
    ("f4e2m1", "bool", "tnp.result_type", "off", "f4e2m1"),
    ("f4e2m1", "i16", "tnp.result_type", "legacy", None),     # NumPy cannot promote them
    ("bool", "f4e2m1", "tnp.result_type", "safe", None),      # Implicit Conversion ... is not allowed
    ("f32", "f4e2m1", "tnp.result_type", "all", None),
    ("f4e2m1", "f4e2m1", "add", "off", None),                 # no AddV2 kernel
])
def test_tensorflow_answers(a, b, op, mode, want):
    got = answer(registry.load("tensorflow"), a, b, op, {"dtype_conversion_mode": mode})
    assert got.result == want, got.refusal


# ---------------------------------------------------------------- live probes

def _live_disagreements(framework: str, live: dict) -> list:
    rs = registry.load(framework)
    return [(op, a, b, options, result, answer(rs, a, b, op, options).result)
            for op, a, b, options, result, _error in live["cases"]
            if answer(rs, a, b, op, options).result != result]


@pytest.mark.live
def test_live_torch_agrees_with_ruleset_and_recording():
    """Re-run the probe against the installed torch; every case must agree."""
    require_framework(torch_probe)
    live = torch_probe.record()
    disagree = _live_disagreements("torch", live)
    assert not disagree, f"{len(disagree)} of {len(live['cases'])} disagree, e.g. {disagree[:3]}"
    recorded = _recording("torch-2.13.json")
    if live["version"] == recorded["version"]:
        assert live["cases"] == recorded["cases"]


@pytest.mark.live
def test_live_tensorflow_all_mode_agrees_with_ruleset_and_recording():
    """Re-run the probe's `all` mode (two subprocesses) against the installed TensorFlow."""
    require_framework(tf_probe)
    live = tf_probe.record(["all"])
    disagree = _live_disagreements("tensorflow", live)
    assert not disagree, f"{len(disagree)} of {len(live['cases'])} disagree, e.g. {disagree[:3]}"
    recorded = _recording("tensorflow-2.21.json")
    if live["version"] == recorded["version"]:
        same_mode = [c for c in recorded["cases"] if c[3]["dtype_conversion_mode"] == "all"]
        assert live["cases"] == same_mode


@pytest.mark.parametrize("name, recording", [("torch", "torch-2.13.json"), ("tensorflow", "tensorflow-2.21.json")])
def test_the_framework_doc_gives_the_recording_size(name, recording):
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "frameworks" / f"{name}.md").read_text(encoding="utf-8")
    said = re.search(rf"`tests/data/recordings/{re.escape(recording)}` holds ([\d,]+) cases", doc)
    assert said, f"docs/frameworks/{name}.md does not say how many cases the recording holds"
    assert int(said.group(1).replace(",", "")) == len(_recording(recording)["cases"])


def test_torch_refusals_say_where_pytorch_stopped():
    """Each recorded refusal's kind (promotion refused, internal assert, kernel missing) is the ruleset's too."""
    rs = registry.load("torch")
    wrong = []
    for op, a, b, options, result, error in _recording("torch-2.13.json")["cases"]:
        if error is not None:
            kind = error.split(":", 1)[0]
            got = answer(rs, a, b, op, options).refusal or ""
            if not got.startswith(f"{kind}:"):
                wrong.append((op, a, b, error, got))
    assert not wrong, f"{len(wrong)} refusals of another kind, e.g. {wrong[:3]}"


def test_the_torch_doc_gives_the_three_operand_figures():
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "frameworks" / "torch.md").read_text(encoding="utf-8")
    text = " ".join(doc.split())
    said = re.search(r"list holds ([\d,]+) three-operand cases", text)
    assert said and "agrees with every case, pairs and triples" in text
    total, mismatches = compare_nary(_recording("torch-2.13.json"))
    assert int(said.group(1).replace(",", "")) == total and not mismatches
