"""Op recordings (tests/data/recordings/ops-*.json): each one's shape, header and coverage of
its probe's ops, checked against the probe module that wrote it (`promote_cli/probes/opcases.py`,
`opsweep.py`)."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from promote_cli.probes import opsweep
from promote_cli.probes.opcases import cases, check_op_recording
from promote_cli.vocab import operands

RECORDINGS = Path(__file__).parent / "data" / "recordings"

#: (probe module, the recordings it writes): one entry per framework.
PROBES = [
    ("promote_cli.probes.numpy_ops", ["ops-numpy.json"]),
    ("promote_cli.probes.numpy126_ops", ["ops-numpy-1.26.json"]),
    ("promote_cli.probes.array_api_ops", [f"ops-array-api-{v}.json"
                                          for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")]),
    ("promote_cli.probes.torch_ops", ["ops-torch.json"]),
    ("promote_cli.probes.paddle_ops", ["ops-paddle.json"]),
    ("promote_cli.probes.jax_ops", ["ops-jax.json"]),
    ("promote_cli.probes.tensorflow_ops", ["ops-tensorflow.json"]),
    ("promote_cli.probes.mlx_ops", ["ops-mlx.json"]),
    ("promote_cli.probes.onnx", [f"ops-onnx-{opset}.json" for opset in (13, 17, 19, 21, 28)]),
    ("promote_cli.probes.tinygrad_ops", ["ops-tinygrad.json"]),
    ("promote_cli.probes.triton_ops", ["ops-triton.json"]),
    ("promote_cli.probes.keras_ops", ["ops-keras.json"]),
]

RECORDED = [(module, name) for module, names in PROBES for name in names]
IDS = [name for _, name in RECORDED]

_loaded: dict = {}


def _load(name: str) -> dict:
    if name not in _loaded:
        _loaded[name] = json.loads((RECORDINGS / name).read_text(encoding="utf-8"))
    return _loaded[name]


def _expected_ops(probe, data: dict) -> dict:
    """The names a recording asks (the probe's `OPS`; a probe that asks per version: its
    `ops_for` the recording's ruleset), its aliases left out, -> arity."""
    ops = probe.ops_for(data["ruleset"]) if hasattr(probe, "ops_for") else probe.OPS
    return {op: arity for op, arity in ops.items() if op not in probe.ALIASES}


def test_every_op_recording_belongs_to_a_probe():
    assert {p.name for p in RECORDINGS.glob("ops-*.json")} == set(IDS)


@pytest.mark.parametrize(("module", "name"), RECORDED, ids=IDS)
def test_an_op_recording_has_its_shape_and_names_its_versions(module, name):
    probe = importlib.import_module(module)
    data = _load(name)
    check_op_recording(data, name)
    assert data["package"] == probe.PACKAGE and data["probe"] == module
    assert data["ruleset"] == probe.FRAMEWORK or data["ruleset"].startswith(probe.FRAMEWORK + "@")
    assert data["aliases"] == probe.ALIASES
    for key in ("version", "python"):
        assert isinstance(data[key], str) and data[key][0].isdigit(), (key, data[key])
    # one row a line, as write_op_recording writes it
    assert len((RECORDINGS / name).read_text(encoding="utf-8").splitlines()) == len(data["rows"]) + 2


@pytest.mark.parametrize(("module", "name"), RECORDED, ids=IDS)
def test_the_rows_are_every_op_under_every_options_dict_with_the_leading_operands_of_its_arity(module, name):
    """Each op of the probe (aliases once, under their canonical name) has exactly the rows
    `opsweep.leading` (or the probe's own `leading`) gives its arity, under each options dict, in the probe's order."""
    probe = importlib.import_module(module)
    data = _load(name)
    ops = _expected_ops(probe, data)
    want = [[op, index, lead] for index in range(len(data["options"])) for op, arity in ops.items()
            for lead in getattr(probe, "leading", opsweep.leading)(arity, data["axis"], probe.WHERE_CONDITIONS)]
    assert sorted(([r[0], r[1], r[2]] for r in data["rows"]), key=repr) == sorted(want, key=repr)
    assert [r[0] for r in data["rows"]] == sorted((r[0] for r in data["rows"]), key=list(ops).index)
    assert not set(probe.ALIASES) & {r[0] for r in data["rows"]}


@pytest.mark.parametrize(("module", "name"), RECORDED, ids=IDS)
def test_every_case_but_python_arithmetic_is_asked_and_answered_by_an_operand_or_a_refusal(module, name):
    """Not asked: Python scalars only, in an operator or a function of several operands (a
    function of one, ``np.sqrt(1)``, is the framework's answer); and what a probe's own
    `asked` leaves out under some options."""
    probe = importlib.import_module(module)
    data = _load(name)
    python = set(probe.OPERATORS) | {op for op, arity in probe.OPS.items() if arity != 1}
    for op, index, lead, cells in data["rows"]:
        for x, cell in zip(data["axis"], cells):
            if hasattr(probe, "asked"):
                assert (cell is None) != probe.asked(op, [*lead, x], data["options"][index]), (op, index, lead, x)
            else:
                assert (cell is None) == (op in python and all(a.startswith("py:") for a in [*lead, x])), (op, lead, x)
    for op, args, _, result, error in cases(data):
        if result is not None:
            assert str(operands.parse(result)) == result, (op, args, result)
        else:
            assert error.strip() == error and "\n" not in error, (op, args, error)
            # ExceptionClass: message, or what came back that is not a dtype's value
            assert error.partition(": ")[0].isidentifier() or error.startswith("returned "), (op, args, error)
            assert not re.search(r"0x[0-9a-fA-F]{4,}", error), (op, args, error)
    assert data["messages"] and any(isinstance(c, str) for r in data["rows"] for c in r[3]), name


def test_numpy_aliases_are_one_function_and_the_other_names_are_not():
    import numpy as np

    from promote_cli.probes import numpy_ops

    opsweep.check_aliases(np, numpy_ops.ALIASES)
    numpy_ops.check_distinct(numpy_ops.named, numpy_ops.ALIASES, numpy_ops.OPS, "np")
    with pytest.raises(AssertionError, match="np.abs is np.absolute"):
        numpy_ops.check_distinct(numpy_ops.named, {}, {"absolute": 1, "abs": 1}, "np")
    assert np.concat is np.concatenate  # recorded once, as concatenate


@pytest.mark.live
def test_the_numpy_recording_is_what_the_installed_numpy_answers():
    """A sample of the recording's cases (every op), asked again of the recorded NumPy and ml_dtypes."""
    from support import require_framework

    from promote_cli.probes import numpy_ops

    require_framework(numpy_ops)
    data = _load("ops-numpy.json")
    if (numpy_ops.version(), importlib.import_module("ml_dtypes").__version__) != (data["version"], data["ml_dtypes"]):
        return
    ask = numpy_ops.asker(numpy_ops.function, numpy_ops.make_operand, numpy_ops.canonical)
    sample = list(cases(data))[::41]
    assert len({case[0] for case in sample}) == len(_expected_ops(numpy_ops, data))
    for op, args, _, result, error in sample:
        assert ask(op, args) == (result, error), (op, args)


@pytest.mark.live
@pytest.mark.parametrize("version", ["2022.12", "2024.12"])
def test_the_array_api_recording_is_what_array_api_strict_answers_now(version):
    """Re-recording under the recorded array-api-strict gives the file, row for row."""
    from support import require_framework

    from promote_cli.probes import array_api_ops

    require_framework(array_api_ops)
    data = _load(f"ops-array-api-{version}.json")
    if array_api_ops.version() != data["version"]:
        return
    again = array_api_ops.record_ops(f"array-api@{version}")
    assert (again["rows"], again["messages"]) == (data["rows"], data["messages"])


def test_each_array_api_recording_was_made_under_its_version():
    """sum and prod of float32 gave float64 before 2023.12 (array-api-strict upcasts as those
    standards said), float32 from it; clip arrived in 2023.12, reciprocal in 2024.12."""
    def answer(version, op, operand):
        data = _load(f"ops-array-api-{version}.json")
        row = next((r for r in data["rows"] if r[0] == op), None)
        return None if row is None else row[3][data["axis"].index(operand)]

    for op in ("sum", "prod"):
        assert [answer(v, op, "f32") for v in ("2022.12", "2023.12")] == ["0d:f64", "0d:f32"]
        assert [answer(v, op, "i8") for v in ("2022.12", "2023.12")] == ["0d:i64", "0d:i64"]
    assert [answer(v, "clip", "f32") is None for v in ("2022.12", "2023.12")] == [True, False]
    assert [answer(v, "reciprocal", "f32") for v in ("2023.12", "2024.12")] == [None, "f32"]


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


@pytest.mark.parametrize("module, name", RECORDED, ids=IDS)
def test_no_clip_refuses_for_its_bounds_values(module, name):
    """A Python scalar low bound is `opsweep.CLIP_LOW`, below every high: no recorded clip
    refuses because its low is above its high (array-api-strict's "min must be less than or
    equal to max" for a low of 1.5 and a high of 1)."""
    data = _load(name)
    refused = [(op, args) for op, args, _, _, error in cases(data)
               if op in ("clip", "clamp") and error and "less than or equal to" in error]
    assert refused == []


def _tensorflow_answers() -> dict:
    """The TensorFlow op recording's asked cases: (op, operands, options as JSON) -> (result, error)."""
    return {(op, tuple(args), json.dumps(options, sort_keys=True)): (result, error)
            for op, args, options, result, error in cases(_load("ops-tensorflow.json"))}


def test_the_tensorflow_op_recording_is_made_under_every_mode_of_the_rule_file():
    """Every dtype conversion mode with prefer_float32 false and true, by the rule file's option names."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    from promote_cli.probes import tensorflow_ops

    rules = tomllib.loads((Path(__file__).parent.parent / "rules" / "tensorflow.toml").read_text(encoding="utf-8"))
    modes = rules["options"]["dtype_conversion_mode"]["values"]
    want = [{"dtype_conversion_mode": m, "prefer_float32": p} for m in modes for p in (False, True)]
    assert _load("ops-tensorflow.json")["options"] == tensorflow_ops.options_dicts() == want
    assert set(rules["options"]) == set(want[0])


def test_tensorflow_asks_python_scalars_only_where_prefer_float32_can_matter():
    from promote_cli.probes.tensorflow_ops import AXIS, asked

    plain, prefer = {"prefer_float32": False}, {"prefer_float32": True}
    assert not any(o.startswith("0d:") for o in AXIS)
    assert asked("+", ["i8", "f32"], plain) and not asked("+", ["i8", "f32"], prefer)
    assert asked("+", ["i8", "py:float"], prefer) and asked("tnp.where", ["bool", "py:int", "f32"], prefer)
    assert not asked("+", ["py:int", "py:float"], plain) and not asked("-x", ["py:int"], plain)
    assert asked("tf.math.sqrt", ["py:float"], prefer) and not asked("tf.math.sqrt", ["f32"], prefer)


def test_the_tensorflow_additions_agree_with_the_pair_recording():
    """+, tf.add and tnp.add of tensors and Python scalars, in every mode: the same dtype, or
    both refused, as tests/data/recordings/tensorflow-2.21.json recorded them (its Python int
    is 3, its tensors hold zeros: no dtype depends on either)."""
    answers = _tensorflow_answers()
    same = {"add": "+", "tf.add": "tf.math.add", "tnp.add": "tnp.add"}
    pairs = json.loads((RECORDINGS / "tensorflow-2.21.json").read_text(encoding="utf-8"))["cases"]
    compared = 0
    for op, a, b, options, result, error in pairs:
        key = (same.get(op), (a, b), json.dumps(options, sort_keys=True))
        if key in answers:
            compared += 1
            got, refusal = answers[key]
            assert (got, refusal is None) == (result, error is None), (op, a, b, options, got, refusal, error)
    assert compared > 3 * 4 * (24 * 24 + 2 * 24 * 4)


@pytest.mark.live
def test_the_tensorflow_recording_is_what_the_installed_tensorflow_answers():
    """A sample of the recording's cases (every op) under two modes, asked again of the
    recorded TensorFlow, one subprocess a mode; the aliases are checked there too."""
    from support import require_framework

    from promote_cli.probes import tensorflow_ops

    require_framework(tensorflow_ops)
    data = _load("ops-tensorflow.json")
    if tensorflow_ops.version() != data["version"]:
        return
    for options in ({"dtype_conversion_mode": "off", "prefer_float32": False},
                    {"dtype_conversion_mode": "all", "prefer_float32": True}):
        by_op: dict = {}
        for case in cases(data):
            if case[2] == options:
                by_op.setdefault(case[0], []).append(case)
        # under prefer_float32 a unary operator has no case: its Python scalar's is Python's
        unary = {op for op in tensorflow_ops.OPERATORS if tensorflow_ops.OPS[op] == 1}
        unasked = unary if options["prefer_float32"] else set()
        assert set(by_op) == set(_expected_ops(tensorflow_ops, data)) - unasked
        sample = [case for asked in by_op.values() for case in asked[::31]]
        again = tensorflow_ops.ask_again(options, [(op, args) for op, args, *_ in sample])
        assert again == [(result, error) for *_, result, error in sample]
