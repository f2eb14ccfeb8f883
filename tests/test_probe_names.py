"""The probes' dtype names come from the vocabulary (each framework's first spelling in
dtypes.toml), and every dtype a committed recording holds is one the probe can name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promote_cli.probes import (array_api, dtype_names, jax, keras, mlx, numpy, numpy126, openvino, paddle,
                                tensorflow, tinygrad, torch, tosa, triton)
from promote_cli.vocab import dtypes
from promote_cli.vocab.dtypes import DTYPES, lookup, native_names

RECORDINGS = Path(__file__).parent / "data" / "recordings"

#: probe module -> (the framework whose spellings it uses, the dtypes it asks in its order)
ASKING = {
    torch: ("torch", torch.ASKED),
    tensorflow: ("tensorflow", tensorflow.ASKED),
    paddle: ("paddle", paddle.ASKED),
    openvino: ("openvino", openvino.ASKED),
    mlx: ("mlx", mlx.ASKED),
    tinygrad: ("tinygrad", tinygrad.ASKED),
    triton: ("triton", triton.TYPES),
    keras: ("keras", keras.ASKED),
}


@pytest.mark.parametrize("probe", ASKING, ids=lambda m: m.FRAMEWORK)
def test_a_probe_asks_every_type_its_framework_names(probe):
    """Adding a framework's spelling for a type makes its probe ask it (or this fails)."""
    framework, asked = ASKING[probe]
    assert len(set(asked)) == len(asked)
    assert set(asked) == set(native_names(framework))


def test_the_numpy_style_names_are_the_numpy_and_ml_dtypes_spellings():
    names = {**native_names("numpy"), **native_names("ml_dtypes")}
    assert set(dtype_names.ORDER) == set(names)
    assert dtype_names.NATIVE == {c: names[c] for c in dtype_names.ORDER}
    assert dtype_names.ML_DTYPES == set(native_names("ml_dtypes").values())


@pytest.mark.parametrize("framework, canonical, own", [
    ("torch", "bool", "bool"), ("torch", "f4e2m1", "float4_e2m1fn_x2"), ("torch", "c32", "complex32"),
    ("tensorflow", "f8e4m3", "float8_e4m3fn"), ("tensorflow", "u4", "uint4"), ("paddle", "u16", "uint16"),
    ("openvino", "bool", "boolean"), ("openvino", "u1", "u1"), ("numpy", "bool", "bool"),
    ("ml_dtypes", "f8e4m3ieee", "float8_e4m3"), ("ml_dtypes", "u1", "uint1"), ("tosa", "f16", "fp16_t"),
    ("tosa_serializer", "f8e4m3", "FP8E4M3"), ("tinygrad", "i8", "char"), ("tinygrad", "f16", "half"),
    ("tinygrad", "f8e4m3", "fp8e4m3"),
])
def test_the_first_spelling_is_the_frameworks_own_name(framework, canonical, own):
    assert native_names(framework)[canonical] == own
    assert lookup(f"{own}").name == canonical


def test_native_names_follow_the_contracts_order():
    for framework in ("torch", "tensorflow", "paddle", "openvino", "numpy", "ml_dtypes", "tinygrad"):
        names = list(native_names(framework))
        assert names == [n for n in DTYPES if n in names], framework
    assert native_names("no such framework") == {}


def test_own_names_equal_to_other_spellings_still_look_up():
    for text, name in [("torch.bool", "bool"), ("TF.BFLOAT16", "bf16"), ("paddle.uint16", "u16"),
                       ("ov.type.boolean", "bool"), ("U1", "u1"), ("INT8", "i8"), ("Fp8E4m3", "f8e4m3")]:
        assert lookup(text).name == name


def test_a_numpy_trait_that_disagrees_with_the_first_spelling_is_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[x]\nkind = "signed"\nbits = 8\nnumpy = "int8"\ndoc = "d"\n'
                    '[x.spellings]\nnumpy = ["int_", "int8"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="first numpy spelling is 'int_'"):
        dtypes.load(path)
    path.write_text('[x]\nkind = "signed"\nbits = 4\nnumpy = "ml_dtypes.int4"\ndoc = "d"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="first ml_dtypes spelling is None"):
        dtypes.load(path)


# --------------------------------------------------------------------------- recordings

def _named(text) -> str | None:
    """The dtype an operand or result names (None for a Python scalar or a refusal; `0d:i64=300`: i64)."""
    if text is None or text.startswith("py:"):
        return None
    return text.rpartition(":")[2].partition("=")[0]


def _dtypes_of(recording: dict) -> set[str]:
    seen = set()
    for op, a, b, options, result, error in recording["cases"]:
        seen.update(n for n in (_named(a), _named(b), _named(result)) if n)
    for op, operands, _, options, result, error in recording.get("nary", []):
        seen.update(n for n in (*map(_named, operands), _named(result)) if n)
    return seen


#: recording file pattern -> the names its probe has (canonical names it can ask and read)
COVERS = {
    "torch-*.json": lambda: torch.TO_TORCH,
    "tensorflow-*.json": lambda: tensorflow.TO_TF,
    "paddle-*.json": lambda: paddle.TO_PADDLE,
    "openvino.json": lambda: openvino.TO_OPENVINO,
    "numpy-*.json": lambda: numpy.TYPES,
    "jax-*.json": lambda: jax.TYPES,
    "array-api-*.json": lambda: array_api.NAMES,
    "tosa-ops.json": lambda: tosa.TO_TOSA,
    "mlx-*.json": lambda: mlx.TO_MLX,
    "tinygrad-*.json": lambda: tinygrad.TO_TINYGRAD,
    "triton-*.json": lambda: triton.TO_TRITON,
    "keras-*.json": lambda: keras.READ,
}


@pytest.mark.parametrize("path", sorted(p for pattern in COVERS for p in RECORDINGS.glob(pattern)), ids=lambda p: p.name)
def test_every_dtype_of_a_recording_has_its_probes_name(path):
    """A spelling missing from the vocabulary would leave a recorded dtype unnamed."""
    recording = json.loads(path.read_text(encoding="utf-8"))
    names = next(get() for pattern, get in COVERS.items() if path.match(pattern))
    seen = _dtypes_of(recording)
    assert seen and seen <= set(names), sorted(seen - set(names))


def test_every_recording_is_covered():
    covered = {p for pattern in COVERS for p in RECORDINGS.glob(pattern)}
    assert covered == {p for p in RECORDINGS.glob("*.json") if not p.name.startswith(("expr-", "ops-"))}


# --------------------------------------------------------------------------- case order

def _asked(name: str) -> list:
    """The (op, a, b) of every case a probe would ask, in its order (without the framework)."""
    if name.startswith("torch"):
        return [(op, a, b) for op in torch.OPS for a, b in torch.operand_pairs(op)]
    if name.startswith("paddle"):
        return [(op, a, b) for op in paddle.OPS for a, b in paddle.operand_pairs()]
    if name.startswith("tensorflow"):
        return [(op, a, b) for mode in tensorflow.MODES for prefer in (False, True) for op in tensorflow.OPS
                for a, b in tensorflow.operand_pairs(op, mode, prefer)]
    if name.startswith("numpy-1."):
        return [*numpy.pair_cases(numpy126.TYPES), *numpy126.value_cases()]
    if name.startswith("numpy"):
        return list(numpy.pair_cases())
    if name.startswith("jax"):
        return list(jax.pair_cases()) * 2 * len(jax.MODES)  # per x64 value, per promotion mode
    if name.startswith("array-api"):
        return list(array_api.pair_cases())
    if name.startswith("mlx"):
        return list(mlx.pair_cases())
    if name.startswith("tinygrad"):
        return [(op, a, b) for op, a, b, _ in tinygrad.pair_cases()]
    if name.startswith("triton"):
        return [("+", a, b) for _ in triton.TARGETS for a, b in triton.operand_pairs()]  # per target
    if name.startswith("keras"):
        return [case for _ in keras.BACKENDS for floatx in keras.FLOATX for case in keras.pair_cases(floatx)]
    return [(openvino.OP, openvino.operand(a, ra), openvino.operand(b, rb)) for a, b, ra, rb, _ in openvino.cases()]


@pytest.mark.parametrize("path", sorted(p for p in RECORDINGS.glob("*.json")
                                 if p.name != "tosa-ops.json" and not p.name.startswith(("expr-", "ops-"))),
                         ids=lambda p: p.name)
def test_the_probes_ask_the_recorded_cases_in_the_recorded_order(path):
    """Re-recording gives the committed file's cases, in its order (names and operand
    pairs are derived: a change there would show here)."""
    recording = json.loads(path.read_text(encoding="utf-8"))
    assert [tuple(case[:3]) for case in recording["cases"]] == _asked(path.name)
