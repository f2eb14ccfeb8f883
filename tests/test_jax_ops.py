"""The JAX op probe (promote_cli/probes/jax_ops.py) and its recording, tests/data/recordings/ops-jax.json:
asked under every option value of rules/jax.toml, each answer the one its mode gives, in agreement with the
pair probe's recording of add, and (where JAX is installed) what JAX answers again.  Its shape and coverage:
tests/test_op_recordings.py."""

from __future__ import annotations

import ast
import importlib
import json
import random
import re
from pathlib import Path

import pytest
from support import require_framework

import promote_cli
from promote_cli.probes import jax_ops, opsweep
from promote_cli.probes.cases import SCALARS
from promote_cli.probes.jax import TYPES
from promote_cli.probes.opcases import Recorder, cases

RECORDINGS = Path(__file__).parent / "data" / "recordings"
_loaded: dict = {}


def _load(name: str = "ops-jax.json") -> dict:
    if name not in _loaded:
        _loaded[name] = json.loads((RECORDINGS / name).read_text(encoding="utf-8"))
    return _loaded[name]


def _answers() -> dict:
    """(op, operands, x64, promotion mode) -> the recorded result of ops-jax.json, or ``"refused"``."""
    if "answers" not in _loaded:
        _loaded["answers"] = {(op, tuple(args), opt["x64"], opt["numpy_dtype_promotion"]): result or "refused"
                              for op, args, opt, result, _ in cases(_load())}
    return _loaded["answers"]


def test_the_recording_is_asked_under_every_option_value_of_the_rule_file():
    options = promote_cli.load("jax").options
    assert set(options) == {"x64", "numpy_dtype_promotion"}
    modes = options["numpy_dtype_promotion"].values
    assert modes == jax_ops.MODES
    assert _load()["options"] == [{"x64": x64, "numpy_dtype_promotion": m} for x64 in (False, True) for m in modes]


@pytest.mark.parametrize(("op", "args", "x32", "x64", "strict"), [
    ("+", ("i8", "i64"), "i32", "i64", "refused"),       # a 64-bit array is 32-bit without x64
    ("add", ("i8", "i16"), "i16", "i16", "refused"),
    ("+", ("py:int", "i8"), "i8", "i8", "i8"),           # a Python scalar is weak, even when strict
    ("/", ("i8", "i8"), "f32", "f32", "f32"),           # true division: f64 only from a 64-bit integer
    ("/", ("i64", "i64"), "f32", "f64", "f64"),
    ("+", ("i64", "u64"), "i32", "weak:f64", "refused"),  # two strong arrays, a weak result
    ("clip", ("i8", "py:int", "py:float"), "weak:f32", "weak:f64", "refused"),
    ("sum", ("i8",), "0d:i32", "0d:i64", "0d:i64"),
    ("sum", ("0d:u8",), "0d:u32", "0d:u64", "0d:u64"),
    ("where", ("bool", "py:int", "py:float"), "weak:f32", "weak:f64", "weak:f64"),
    ("+", ("f8e5m2", "f16"), "refused", "refused", "refused"),
    ("isnan", ("f6e2m3",), "bool", "bool", "bool"),      # an fp6 type, answered on abstract values
])
def test_each_answer_is_the_one_its_mode_gives(op, args, x32, x64, strict):
    got = _answers()
    assert [got[op, args, False, "standard"], got[op, args, True, "standard"], got[op, args, True, "strict"]] == [
        x32, x64, strict]


def test_add_agrees_with_the_pair_probe_on_every_pair_both_ask():
    """The pair probe asks ``x + y`` one case at a time (promote_cli/probes/jax.py); the op probe a row of
    ``+`` and ``add`` under one trace: their answers agree, refusals included."""
    ops = _answers()
    pairs = {(tuple(case[1:3]), case[3]["x64"], case[3]["numpy_dtype_promotion"]): case[4] or "refused"
             for case in _load("jax-0.10.json")["cases"] if case[0] == "add"}
    compared = 0
    for (args, x64, mode), want in pairs.items():
        for op in ("+", "add"):
            got = ops.get((op, args, x64, mode))
            if got is not None:
                assert got == want, (op, args, x64, mode)
                compared += 1
    n, scalars = len(TYPES) + len(SCALARS), len(SCALARS)
    assert compared == 4 * 2 * (n * n - scalars * scalars)  # options, + and add, every pair but two scalars


def test_leading_leaves_the_0d_arrays_out_of_binary_rows_and_clips_x_only():
    axis = opsweep.axis(["i8", "f32"])
    assert jax_ops.leading(2, axis, []) == [["i8"], ["f32"], *([s] for s in SCALARS)]
    assert jax_ops.leading(1, axis, []) == [[]]
    where = jax_ops.leading(opsweep.WHERE, axis, ["bool", "0d:bool"])
    assert where == opsweep.leading(opsweep.WHERE, axis, ["bool", "0d:bool"]) and ["0d:bool", "0d:i8"] in where
    clip = jax_ops.leading(opsweep.CLIP, axis, [])
    assert clip == [lead for lead in opsweep.leading(opsweep.CLIP, axis, []) if not lead[0].startswith("0d:")]
    assert {x for x, _ in clip} == {"i8", "f32", *SCALARS} and {low for _, low in clip} == {"i8", "f32", "py:int",
                                                                                            "py:float"}


def test_the_x64_parts_are_replayed_op_by_op_with_their_messages_interned_again():
    def part(x64: bool, refusal: str) -> dict:
        rec = Recorder(["i8", "py:int"])
        for mode in jax_ops.MODES:
            options = {"x64": x64, "numpy_dtype_promotion": mode}
            for op in ("+", "sum"):
                rec.row(op, options, [], lambda _op, args: (None, f"{refusal} {mode}") if args == ["i8"] else
                        (f"{_op} {mode}", None))
        return {**rec.recording({}), "abstract_only": []}

    recorder = Recorder(["i8", "py:int"])
    jax_ops._replay(recorder, [part(False, "A"), part(True, "B")])
    data = recorder.recording({})
    assert [(r[0], r[1]) for r in data["rows"]] == [(op, n) for op in ("+", "sum") for n in range(4)]
    assert data["options"] == [{"x64": x64, "numpy_dtype_promotion": m} for x64 in (False, True)
                               for m in jax_ops.MODES]
    assert data["messages"] == ["A standard", "A strict", "B standard", "B strict"]
    assert [r[3] for r in data["rows"][:4]] == [[0, "+ standard"], [1, "+ strict"], [2, "+ standard"], [3, "+ strict"]]


@pytest.mark.live
def test_the_names_are_distinct_jax_numpy_functions():
    require_framework(jax_ops)
    jax_ops.check_distinct(jax_ops.named, jax_ops.ALIASES, jax_ops.OPS, "jnp")


@pytest.mark.live
def test_the_recording_is_what_the_installed_jax_answers():
    """A case of each op under this process's x64 value, asked again, each in a fresh trace of its row,
    with jax.numpy's own jit wrappers traced as a call outside the probe traces them (the recording was made
    with them inlined); the recorded JAX and ml_dtypes, or the recording is to be made again."""
    require_framework(jax_ops)
    import jax  # noqa: PLC0415

    data = _load()
    assert (jax_ops.version(), importlib.import_module("ml_dtypes").__version__) == (data["version"],
                                                                                      data["ml_dtypes"])
    x64 = bool(jax.config.jax_enable_x64)
    by_op: dict = {}
    for case in cases(data):
        if case[2]["x64"] == x64:
            by_op.setdefault(case[0], []).append(case)
    pick = random.Random(20)
    sample = [pick.choice(mine) for mine in by_op.values()]  # one case of each op
    assert len(sample) == len(jax_ops.OPS)
    for op, args, options, result, error in sample:
        with jax.numpy_dtype_promotion(options["numpy_dtype_promotion"]):
            assert jax_ops.row_asker(inline=False)(op, args, data["axis"]) == (result, error), (op, args, options)


def test_a_refusal_lists_its_dtypes_sorted_whatever_order_the_process_gave():
    """JAX names the dtypes of a failed promotion from a set of dtypes, whose order follows their hashes,
    which change from one process to the next: the probe sorts them, so a recording is the same each time."""
    said = ("Input dtypes ('uint32', 'uint2') have no available implicit dtype promotion path. To avoid unintended "
            "promotion, 1-bit, 2-bit and 4-bit integers do not support implicit promotion. If you'd like your inputs "
            "to be promoted to another type, you can do so explicitly using e.g. x.astype('int32')")
    assert jax_ops.clean_error(TypeError(said)) == (
        "Input dtypes ('uint2', 'uint32') have no available implicit dtype promotion path. To avoid unintended "
        "promotion, 1-bit, 2-bit and 4-bit integers do not support implicit promotion.")
    strict = "Input dtypes ('int8', \"<class 'float'>\") have no available implicit dtype promotion path when x."
    assert jax_ops.clean_error(TypeError(strict)).startswith("Input dtypes (\"<class 'float'>\", 'int8') have")
    assert jax_ops.clean_error(ValueError("Cannot stack arrays: got (2,), ().")) == "Cannot stack arrays: got (2,), ()."
    for message in _load()["messages"]:
        for listed in re.findall(r"(?<=Input dtypes )\([^()]*\)", message):
            names = ast.literal_eval(listed)
            assert list(names) == sorted(names), message
