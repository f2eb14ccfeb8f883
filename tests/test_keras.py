"""Keras 3: its options (backend, floatx), what differs per backend, and the recording's coverage.

Expected values come from the recording made by running Keras on each backend
(tests/data/recordings/keras-3.15.json); tests/test_recordings.py compares every case with the
ruleset, and these tests check what the docs state of it.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from support import run_cli

from promote_cli import query
from promote_cli.probes import keras as probe

RECORDING = Path(__file__).parent / "data" / "recordings" / "keras-3.15.json"


def _cases() -> list:
    return json.loads(RECORDING.read_text(encoding="utf-8"))["cases"]


def _answers(op: str) -> dict:
    """(backend, floatx, a, b) -> the recorded result (None: refused)."""
    return {(o["backend"], o["floatx"], a, b): r for name, a, b, o, r, _ in _cases() if name == op}


def test_the_recording_asks_every_backend_and_floatx_and_names_the_versions():
    data = json.loads(RECORDING.read_text(encoding="utf-8"))
    combos = {(o["backend"], o["floatx"]) for _, _, _, o, _, _ in data["cases"]}
    assert combos == set(itertools.product(probe.BACKENDS, probe.FLOATX))
    for package in ("keras", "jax", "jaxlib", "numpy", "tensorflow", "torch"):
        assert data.get(package) or data["package"] == package
    assert RECORDING.stat().st_size < 3_000_000


def test_keras_defaults_are_its_own():
    """Keras' default backend is tensorflow (keras/src/backend/config.py), floatx float32."""
    assert query("keras", "i64", "i64").result == "i64"
    assert query("keras", "i64", "i64", options={"backend": "tensorflow", "floatx": "float32"}).result == "i64"
    assert query("keras", "i64", "i64", options={"backend": "numpy"}).result == "i32"


@pytest.mark.parametrize("floatx, int_result, float_result", [
    ("float16", "i16", "f16"), ("bfloat16", "i16", "f16"), ("float32", "i32", "f32"), ("float64", "i32", "f32"),
])
def test_floatx_sets_the_width_of_weak_results(floatx, int_result, float_result):
    """_resolve_weak_type takes floatx's last two digits: bfloat16 gives float16; 64 bits are then made 32."""
    opts = {"backend": "jax", "floatx": floatx}
    assert query("keras", "bool", "py:int", op="result_type", options=opts).result == int_result
    assert query("keras", "i8", "u64", op="result_type", options=opts).result == float_result
    recorded = _answers("result_type")
    assert recorded[("jax", floatx, "bool", "py:int")] == int_result
    assert recorded[("jax", floatx, "i8", "u64")] == float_result


def test_tensorflow_keeps_int64_and_float64_where_the_others_narrow():
    recorded = _answers("result_type")
    for backend in probe.BACKENDS:
        want = ("i64", "f64") if backend == "tensorflow" else ("i32", "f32")
        got = (recorded[(backend, "float32", "i64", "i8")], recorded[(backend, "float32", "f64", "f16")])
        assert got == want, backend
        opts = {"backend": backend}
        assert (query("keras", "i64", "i8", op="result_type", options=opts).result,
                query("keras", "f64", "f16", op="result_type", options=opts).result) == want


def test_which_backends_give_different_add_results():
    """The docs' table of backends that differ: every backend differs from every other somewhere."""
    recorded = _answers("add")
    pairs = {(a, b) for (_, fx, a, b) in recorded if fx == "float32"}
    for one, other in itertools.combinations(probe.BACKENDS, 2):
        differ = [p for p in pairs if recorded[(one, "float32", *p)] != recorded[(other, "float32", *p)]]
        assert differ, f"{one} and {other} agree on every recorded add"


@pytest.mark.parametrize("args, exit_code", [
    (["query", "i8", "u8", "-f", "keras", "-O", "backend=mxnet"], 2),
    (["query", "i8", "u8", "-f", "keras", "-O", "floatx=float8"], 2),
    (["query", "i8", "c32", "-f", "keras", "-O", "backend=torch"], 1),   # complex32 is only torch's result
])
def test_bad_options_and_types_are_one_line(args, exit_code):
    code, _, err = run_cli(*args)
    assert code == exit_code and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_the_diff_with_jax_runs():
    """On the JAX backend keras.ops.add of two tensors is jnp.add: only the types Keras lacks differ."""
    code, out, err = run_cli("table", "--diff", "jax", "keras", "--format", "text")
    assert code == 0 and "54 with different results" in err, err
    code, out, err = run_cli("table", "--diff", "jax", "keras", "-O", "backend=jax", "--format", "text")
    assert code == 0 and "differ: 186 with a type a side lacks" in err, err


@pytest.mark.parametrize("backend, a, b, want", [
    ("torch", "bool", "py:3000000000", "i64"),     # int64 0-d tensor beyond int32
    ("torch", "bool", "py:300", "i32"),
    ("numpy", "i8", "py:300", None),               # np.array(300, int8) overflows
    ("numpy", "f16", "py:3000000000", "f16"),      # a float dtype takes any int
    ("jax", "i8", "py:3000000000", None),          # jnp.asarray without x64
    ("tensorflow", "i8", "py:300", "i8"),          # converted and wrapped
])
def test_a_python_ints_value_matters_per_backend(backend, a, b, want):
    recorded = _answers("add")
    assert recorded[(backend, "float32", a, b)] == want
    assert query("keras", a, b, options={"backend": backend}).result == want
    assert query("keras", a, b.replace(b[3:], "int"), options={"backend": backend}).result is not None


def _op_answers() -> dict:
    """(op, backend, a, b) -> the op recording's result (None: refused)."""
    from promote_cli.probes.opcases import cases

    data = json.loads((RECORDING.parent / "ops-keras.json").read_text(encoding="utf-8"))
    return {(op, o["backend"], *args): result for op, args, o, result, _ in cases(data)}


@pytest.mark.parametrize("op, backend, a, b, want", [
    ("maximum", "torch", "i64", "i8", "i32"),       # cast to result_type's dtype, 64 bits made 32
    ("maximum", "tensorflow", "i64", "i8", "i64"),
    ("maximum", "tensorflow", "c64", "f32", None),  # no complex kernel
    ("equal", "numpy", "f8e4m3", "i8", "bool"),     # np.equal of the operands as they are
    ("equal", "tensorflow", "f8e4m3", "i8", None),  # result_type refuses float8
    ("multiply", "torch", "py:float", "f8e4m3", "f8e4m3"),
    ("multiply", "torch", "f8e4m3", "py:float", None),
    ("subtract", "jax", "bool", "py:bool", None),
])
def test_the_other_ops_differ_per_backend_as_the_docs_say(op, backend, a, b, want):
    assert _op_answers()[(op, backend, a, b)] == want
    assert query("keras", a, b, op=op, options={"backend": backend}).result == want
