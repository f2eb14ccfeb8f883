"""The committed op recordings (tests/data/recordings/ops-*.json): their shape, that they
cover every op their probe asks with every options dict, and that every operand and
result in them is one the contract can parse."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from promote_cli.probes import opsweep, paddle_ops, torch_ops
from promote_cli.probes.opcases import cases, check_op_recording
from promote_cli.vocab import operands

RECORDINGS = Path(__file__).parent / "data" / "recordings"

#: an op recording -> the probe module that wrote it.
OP_RECORDINGS = [
    ("ops-torch.json", torch_ops),
    ("ops-paddle.json", paddle_ops),
]


#: the recordings whose rows `opsweep` laid out (their probes name `WHERE_CONDITIONS`).
SWEPT = [(name, probe) for name, probe in OP_RECORDINGS if hasattr(probe, "WHERE_CONDITIONS")]


@cache
def _load(name: str) -> dict:
    return json.loads((RECORDINGS / name).read_text(encoding="utf-8"))


@pytest.fixture(params=OP_RECORDINGS, ids=[name for name, _ in OP_RECORDINGS])
def recorded(request):
    name, probe = request.param
    return _load(name), probe


@pytest.fixture(params=SWEPT, ids=[name for name, _ in SWEPT])
def swept(request):
    name, probe = request.param
    return _load(name), probe


def test_every_op_recording_is_listed():
    assert {p.name for p in RECORDINGS.glob("ops-*.json")} == {name for name, _ in OP_RECORDINGS}


def test_an_op_recording_has_the_shape_and_names_its_versions(recorded):
    data, probe = recorded
    check_op_recording(data, probe.FRAMEWORK)
    assert data["package"] == probe.PACKAGE
    assert data["probe"] == probe.__name__
    assert data["version"] and data["python"]
    assert data["aliases"] == probe.ALIASES


def test_an_op_recording_covers_every_op_with_every_options_dict(recorded):
    data, probe = recorded
    asked = [op for op in probe.OPS if op not in probe.ALIASES]
    assert set(probe.ALIASES.values()) <= set(asked)
    rows = {(op, index) for op, index, _, _ in data["rows"]}
    assert rows == {(op, index) for op in asked for index in range(len(data["options"]))}


def test_an_op_is_asked_every_leading_operand_of_its_arity(swept):
    data, probe = swept
    leading: dict = {}
    for op, index, lead, _ in data["rows"]:
        leading.setdefault((op, index), []).append(lead)
    for (op, _), got in leading.items():
        assert got == opsweep.leading(probe.OPS[op], data["axis"], probe.WHERE_CONDITIONS), op


def test_every_operand_and_result_parses(recorded):
    data, _ = recorded
    for text in data["axis"]:
        operands.parse(text)
    results = {result for _, _, _, result, _ in cases(data) if result is not None}
    results |= {x for _, _, lead, _ in data["rows"] for x in lead}
    for text in results:
        operands.parse(text)


def test_only_python_scalars_to_python_go_unasked(swept):
    data, probe = swept
    for op, _, lead, cells in data["rows"]:
        for x, cell in zip(data["axis"], cells):
            python_only = all(o.startswith("py:") for o in [*lead, x])
            unasked = python_only and (op in probe.OPERATORS or probe.OPS[op] != 1)
            assert (cell is None) == unasked, (op, lead, x)


@pytest.mark.parametrize("name, pair, ops", [
    ("ops-torch.json", "torch-2.13.json", {"add": ["+", "add"]}),
    ("ops-paddle.json", "paddle-3.3.json", None),
])
def test_the_op_recording_agrees_with_the_pair_recording(name, pair, ops):
    """Where both ask the same binary op of the same operands, the dtypes (and refusals) agree."""
    mine = {(op, tuple(o)): (result, error) for op, o, _, result, error in cases(_load(name))}
    compared = 0
    for op, a, b, _, result, error in _load(pair)["cases"]:
        for asked in (ops or {}).get(op, [op]):
            if (asked, (a, b)) not in mine:
                continue
            got, refused = mine[asked, (a, b)]
            assert (got and got.split(":")[-1], refused is None) == (result, error is None), (asked, a, b)
            compared += 1
    assert compared > 1000


def test_a_refusal_keeps_its_class_and_drops_addresses():
    exc = TypeError("bad")
    assert opsweep.refusal(exc, "object at 0x7f3a2b10 is not a Tensor") == "TypeError: object at 0x is not a Tensor"


class _Tensor:
    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape


@pytest.mark.parametrize("value, expected", [
    (_Tensor("i64", (2,)), ("i64", None)),
    (_Tensor("i64", ()), ("0d:i64", None)),
    ((_Tensor("f32", ()), _Tensor("i64", ())), ("0d:f32", None)),
    (True, ("py:bool", None)),
    (3, ("py:int", None)),
    (object(), (None, "returned object, not a tensor")),
])
def test_a_result_is_read_as_an_operand(value, expected):
    assert opsweep.result_operand(value, str) == expected


def test_the_leading_operands_of_each_arity():
    axis = opsweep.axis(["bool", "i8"])
    assert axis == ["bool", "i8", "0d:bool", "0d:i8", "py:bool", "py:int", "py:float", "py:complex"]
    assert opsweep.leading(1, axis, []) == [[]]
    assert opsweep.leading(2, axis, []) == [[x] for x in axis]
    assert opsweep.leading(opsweep.WHERE, axis, ["bool"]) == [["bool", x] for x in axis]
    clip = opsweep.leading(opsweep.CLIP, axis, [])
    assert clip[:4] == [["bool", "bool"], ["bool", "i8"], ["bool", "py:int"], ["bool", "py:float"]]
    assert len(clip) == len(axis) * 4
    with pytest.raises(ValueError, match="unknown arity"):
        opsweep.leading(4, axis, [])


def test_a_clip_low_python_scalar_is_below_every_high():
    made: list = []
    cache: dict = {}

    def make(text):
        made.append(text)
        return {"py:int": 1, "py:float": 1.5, "i8": "tensor"}[text]

    assert opsweep.operand_values(["i8", "py:float", "py:int"], opsweep.CLIP, make, cache) == ["tensor", 0.5, 1]
    assert opsweep.operand_values(["i8", "py:int", "py:float"], opsweep.CLIP, make, cache) == ["tensor", 0, 1.5]
    assert opsweep.operand_values(["py:float", "py:int"], 2, make, cache) == [1.5, 1]
    assert sorted(made) == ["i8", "py:float", "py:int"]  # each made once
