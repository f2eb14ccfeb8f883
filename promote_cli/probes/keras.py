"""Probe: ask Keras 3 what dtype ``keras.ops.add`` and ``keras.backend.result_type`` give,
per backend and ``floatx``.

What is asked
    Keras' dtypes (``keras.src.backend.common.dtypes.ALLOWED_DTYPES`` but ``string``: bool,
    int8..int64, uint8..uint64, bfloat16, float16/32/64, complex64/128, float8_e4m3fn,
    float8_e5m2), as dimensioned tensors (shape ``(2,)``), 0-d tensors and Python scalars
    (``py:bool|int|float|complex``, the values of ``dtype_names.PY_VALUES``; and under ``floatx=float32``
    the Python ints of `VALUES` with every tensor, on either side), for two ops:

    ``add``          ``keras.ops.add(x, y)`` on the backend's tensors, each made by
                     ``keras.ops.cast(keras.ops.convert_to_tensor(float32_array), NAME)``: what that gives is
                     the op's input (the JAX backend, without x64, makes int32 of int64; the torch
                     backend int32 of uint16, int64 of uint32, and refuses uint64: that refusal
                     is the case's answer).  Two Python scalars are asked too: ``keras.ops.add(1, 2.5)``
                     makes tensors of both.
    ``result_type``  ``keras.backend.result_type(x, y)`` of dtype names; a Python scalar is its
                     type (``int``, ``float``, ``bool``, ``complex``), as Keras' own code passes it.

    Each backend (``KERAS_BACKEND``, read once at import) with a ``KERAS_HOME`` of the probe's own, and each ``floatx``
    (``keras.config.set_floatx``: ``keras.json`` refuses ``bfloat16``) run in a subprocess of their own.  ``add`` is asked of
    every pair under ``floatx=float32`` and of the pairs without a 0-d tensor under the others
    (``floatx`` decides only what a weak or Python-float result becomes).

How the answer is read
    The result's dtype as the backend names it (torch's ``complex32``, which Keras cannot name,
    included), ``weak:`` on JAX when it is weakly typed; or the
    exception's class and first line (cut at 160 characters, addresses removed).

Keras and its backends are imported inside the functions only.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

from promote_cli.probes.dtype_names import PY_VALUES, canonical, first_line
from promote_cli.vocab import operands
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "keras"
PACKAGE = "keras"

BACKENDS = ("jax", "numpy", "tensorflow", "torch")
FLOATX = ("float16", "bfloat16", "float32", "float64")
#: Keras' dtypes (ALLOWED_DTYPES but string), canonical names, in the recordings' order
TYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f8e4m3", "f8e5m2",
         "bf16", "f16", "f32", "f64", "c64", "c128"]
ASKED = tuple(TYPES)
#: canonical name -> Keras' name (the vocabulary's ``keras`` spellings)
TO_KERAS = native_names("keras")
#: the dtypes a result may have: Keras' and torch's complex32 (a float16 tensor plus a Python complex)
READ = (*TYPES, "c32")
SCALARS = [f"py:{k}" for k in PY_VALUES]
OPERANDS = TYPES + [f"0d:{t}" for t in TYPES] + SCALARS
PY_TYPES = {"bool": bool, "int": int, "float": float, "complex": complex}
#: Python ints whose value may decide a dtype (the torch backend makes an int32 0-d tensor of a Python int
#: that fits int32, else int64), asked with every tensor and 0-d tensor under floatx float32
VALUES = ["py:300", "py:-1", "py:3000000000"]
#: the packages whose versions a recording names
COMPANIONS = ("jax", "jaxlib", "numpy", "tensorflow", "torch", "ml_dtypes")


def version() -> str | None:
    """The installed Keras version, None when Keras is absent."""
    try:
        from importlib.metadata import version as dist_version  # noqa: PLC0415

        import keras  # noqa: F401, PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return dist_version("keras")


def pair_cases(floatx: str):
    """Every (op, a, b) asked under one backend and `floatx`."""
    plain = TYPES + SCALARS
    for a, b in itertools.product(OPERANDS if floatx == "float32" else plain, repeat=2):
        yield "add", a, b
    for a, b in itertools.product(plain, repeat=2):
        yield "result_type", a, b
    if floatx == "float32":
        for value, t in itertools.product(VALUES, TYPES + [f"0d:{t}" for t in TYPES]):
            yield "add", t, value
            yield "add", value, t


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def clean_error(exc: BaseException) -> str:
    text = _ADDRESS.sub("", first_line(exc))
    return f"{type(exc).__name__}: {text[:160].rstrip()}"


def dtype_name(dtype) -> str:
    """A backend dtype's canonical name (torch.int8, tf.int8, numpy and JAX dtypes alike)."""
    text = str(dtype)
    text = text.removeprefix("torch.").removeprefix("<dtype: '").removesuffix("'>")
    return canonical(text)


def make_operand(text: str):
    """The backend tensor of an operand (a Python scalar stays itself)."""
    if text.startswith("py:"):
        return PY_VALUES[text[3:]] if text[3:] in PY_VALUES else operands.parse(text).value
    import numpy as np  # noqa: PLC0415
    from keras import ops  # noqa: PLC0415

    form, _, name = text.rpartition(":")
    shape = () if form == "0d" else (2,)
    return ops.cast(ops.convert_to_tensor(np.ones(shape, "float32")), TO_KERAS[name])


def read_result(out) -> str:
    """A pair answer's operand for a backend tensor: its dtype, ``weak:`` when JAX's is weakly typed
    (a pair answer names no rank: ``0d:`` results are their dtype)."""
    name = dtype_name(out.dtype)
    return f"weak:{name}" if getattr(getattr(out, "aval", None), "weak_type", False) else name


def ask(op: str, a: str, b: str) -> tuple[str | None, str | None]:
    """``(result, None)`` or ``(None, message)`` for one case in this process's backend."""
    import keras  # noqa: PLC0415

    try:
        if op == "result_type":
            args = [PY_TYPES[t[3:]] if t.startswith("py:") else TO_KERAS[t] for t in (a, b)]
            return canonical(keras.backend.result_type(*args)), None
        x, y = make_operand(a), make_operand(b)
        return read_result(keras.ops.add(x, y)), None
    except Exception as exc:  # noqa: BLE001 - every refusal is an answer
        return None, clean_error(exc)


def record_mode() -> list:
    """Every case of this process's backend and floatx."""
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import keras  # noqa: PLC0415

    keras.config.set_floatx(os.environ["PROMOTE_KERAS_FLOATX"])
    options = {"backend": keras.config.backend(), "floatx": keras.config.floatx()}
    return [[op, a, b, options, *ask(op, a, b)] for op, a, b in pair_cases(options["floatx"])]


def run_mode(backend: str, floatx: str, module: str = "promote_cli.probes.keras"):
    """What ``python -m MODULE --mode`` prints (JSON) in a subprocess on `backend` with `floatx`."""
    with tempfile.TemporaryDirectory(prefix="promote-keras-") as home:
        with open(os.path.join(home, "keras.json"), "w", encoding="utf-8") as handle:
            json.dump({"backend": backend}, handle)
        env = dict(os.environ, KERAS_BACKEND=backend, KERAS_HOME=home, PROMOTE_KERAS_FLOATX=floatx, JAX_PLATFORMS="cpu",
                   CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
        env.pop("JAX_ENABLE_X64", None)
        proc = subprocess.run([sys.executable, "-m", module, "--mode"], env=env, cwd=home,
                              capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the Keras probe ({backend}, {floatx}) failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def companions() -> dict:
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415
    from importlib.metadata import version as dist_version  # noqa: PLC0415

    found = {}
    for name in COMPANIONS:
        for dist in (name, f"{name}-cpu"):
            try:
                found[name] = dist_version(dist)
                break
            except PackageNotFoundError:
                continue
    return found


def record() -> dict:
    """Ask every case under each backend and floatx (a subprocess each); return a recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("keras is not importable; pip install keras and its backends")
    cases = []
    for backend, floatx in itertools.product(BACKENDS, FLOATX):
        cases += run_mode(backend, floatx)
    return {"ruleset": FRAMEWORK, "package": PACKAGE, "version": ver, "probe": "promote_cli.probes.keras",
            "python": platform.python_version(), "device": "cpu", **companions(), "cases": cases}


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    if sys.argv[1:] == ["--mode"]:
        print(json.dumps(record_mode()))
    else:
        from promote_cli.probes import write_recording

        write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/keras-3.15.json")
