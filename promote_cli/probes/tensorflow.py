"""Probe: ask TensorFlow (CPU, eager) what dtype each binary case gives, in every mode.

What is asked
    Four ops: ``add`` (the ``+`` operator; a Python scalar on the left runs
    ``Tensor.__radd__``), ``tf.add``, ``tnp.add`` and ``tnp.result_type``
    (``tf.experimental.numpy``), in every dtype conversion mode: ``off`` (plain
    TensorFlow: NumPy behaviour not enabled) and ``legacy``, ``safe``, ``all`` (each
    through ``tnp.experimental_enable_numpy_behavior(prefer_float32=...,
    dtype_conversion_mode=...)``), each with ``prefer_float32`` false and true (``off``
    with true enables NumPy behaviour with conversion off, the one way to set it).  The
    mode is process-global and must be set before TensorFlow computes anything, so
    every (mode, prefer_float32) runs in a subprocess of its own.

    Operands: dimensioned tensors (shape ``[2]``) of every dtype in ``TO_TF``; Python
    scalars (``py:bool|int|float|complex``: ``True``, ``3``, ``1.5``, ``1+2j``) with
    each of them, both sides, and with each other (not for ``+``, which Python computes);
    WeakTensors (``weak:i32 i64 f32 f64 c128``, made with ``WeakTensor.from_tensor``:
    TensorFlow makes them itself only in ``safe`` and ``all`` mode) likewise; and 0-d
    tensors (``0d:``, shape ``[]``) of the standard dtypes (``STANDARD``) with
    dimensioned ones, to show that rank plays no part.  With ``prefer_float32`` true,
    only the pairs with a Python scalar (the option is about them).

How the answer is read
    The output's dtype, as ``weak:DTYPE`` when it is a WeakTensor
    (``tnp.result_type`` returns a dtype, never weak).  When the call raises, the
    refusal is the first line of TensorFlow's message without its ``[Op:...] name:``
    tail, cut after its first sentence, with TensorFlow's dtype reprs shortened
    (``(<dtype: 'int8'>, weak=True)`` is written ``weak int8``, ``<dtype: 'int8'>`` ``int8``).

Options in the recording: ``{"dtype_conversion_mode": MODE, "prefer_float32": BOOL}``
on every case.  The recording's ``not_asked`` lists TensorFlow's dtypes the probe does not
ask (``tf.NAME``, read from the installed TensorFlow: the quantized types, ``string``,
``resource`` and ``variant``, which have no canonical name), then any asked type this
installation's vocabulary has no TensorFlow name for.  TensorFlow is imported only inside
the worker subprocess, so importing this module never fails when the package is absent.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import re
import subprocess
import sys

from promote_cli.probes import cases as operand_cases
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "tensorflow"
PACKAGE = "tensorflow-cpu"

#: the dtypes asked, in the recording's order.  Their TensorFlow names (``tf.as_dtype``)
#: are the vocabulary's (``native_names("tensorflow")``); a test checks that this lists
#: every type TensorFlow names.
ASKED = ("bool", "i2", "i4", "i8", "i16", "i32", "i64", "u2", "u4", "u8", "u16", "u32", "u64",
         "f4e2m1", "f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "bf16", "f16", "f32",
         "f64", "c64", "c128")
_NAMES = native_names("tensorflow")
#: canonical dtype name -> TensorFlow dtype name, for the asked types the vocabulary of
#: this installation names (others are not asked).
TO_TF = {name: _NAMES[name] for name in ASKED if name in _NAMES}
FROM_TF = {tf: name for name, tf in TO_TF.items()}

#: the dtypes of TensorFlow's public API (tf.dtypes); the others (sub-byte integers,
#: float8) are internal dtypes that ``tf.as_dtype`` still makes.
STANDARD = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
            "bf16", "f16", "f32", "f64", "c64", "c128"]

#: WeakTensor dtypes (weak_tensor._ALLOWED_WEAK_DTYPES).
WEAK = ["i32", "i64", "f32", "f64", "c128"]

PY_VALUES = {"bool": True, "int": 3, "float": 1.5, "complex": 1 + 2j}

MODES = ["off", "legacy", "safe", "all"]
OPS = ["add", "tf.add", "tnp.add", "tnp.result_type"]

_OP_TAIL = re.compile(r"\s*\[Op:\w+\].*$")
_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*")
_ALLOWED = re.compile(r"(is not in the list of allowed values):.*$")
_WEAK_DTYPE = re.compile(r"\(<dtype: '(\w+)'>, weak=(True|False)\)")
_DTYPE = re.compile(r"<dtype: '(\w+)'>")
_SENTENCE = re.compile(r"(?<=[a-z0-9)'])\.\s+(?=[A-Z])")


def version() -> str | None:
    """The installed TensorFlow version (e.g. ``2.21.0``), None when absent.

    Asked in a subprocess: importing TensorFlow here would fix its process-global mode.
    """
    try:
        from importlib.metadata import PackageNotFoundError  # noqa: PLC0415
        from importlib.metadata import version as dist_version
    except ImportError:  # pragma: no cover
        return None
    for dist in ("tensorflow-cpu", "tensorflow"):
        try:
            return dist_version(dist)
        except PackageNotFoundError:
            continue
    return None


def clean_error(exc: BaseException) -> str:
    """TensorFlow's message: its first line, without ``[Op:...] name:``, cut after its first sentence.

    The list of allowed dtypes is dropped and dtype reprs are shortened (``weak int8``).
    """
    text = str(exc).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "") or type(exc).__name__
    line = _FUNCTION_NODE.sub("", _OP_TAIL.sub("", line))
    line = _ALLOWED.sub(r"\1", line)
    line = _WEAK_DTYPE.sub(lambda m: ("weak " if m.group(2) == "True" else "") + m.group(1), line)
    line = _DTYPE.sub(r"\1", line)
    m = _SENTENCE.search(line)
    if m:
        line = line[: m.start() + 1]
    return " ".join(line.split())


def operand_pairs(op: str, mode: str, prefer_float32: bool):
    """Every (a, b) pair asked for `op` in one run.

    With ``prefer_float32`` true only the pairs with a Python scalar are asked: the
    option says how Python scalars are read, and the runs with it false ask the rest.
    """
    types = list(TO_TF)
    scalars = [f"py:{k}" for k in PY_VALUES]
    weak = [f"weak:{t}" for t in WEAK]
    if not prefer_float32:
        yield from itertools.product(types, types)
        standard = [t for t in STANDARD if t in TO_TF]
        for a, b in itertools.product(standard, standard):
            yield f"0d:{a}", b
            yield a, f"0d:{b}"
    for t, s in itertools.product(types + weak, scalars):
        yield t, s
        yield s, t
    if not prefer_float32:
        for t, w in itertools.product(types + weak, weak):
            yield t, w
            if t not in weak:
                yield w, t
    for x, y in itertools.product(scalars, scalars):
        if op != "add":
            yield x, y


def value_pairs():
    """The (op, a, b) of a value recording (`cases.record_values`): each op of `VALUE_OPS`, each dtype asked as a
    tensor of shape [2], each value operand, both orders."""
    types = list(TO_TF)
    for op in VALUE_OPS:
        for t in types:
            for v in operand_cases.values_for(types):
                yield op, t, v
                yield op, v, t


def _worker(mode: str, prefer_float32: bool, values: bool = False) -> list:
    """Ask every case of one (mode, prefer_float32) in this process (with `values`, the value cases); TensorFlow
    is imported here."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import numpy as np  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415
    import tensorflow.experimental.numpy as tnp  # noqa: PLC0415
    from tensorflow.python.framework import weak_tensor  # noqa: PLC0415

    tf.get_logger().setLevel("ERROR")
    if mode != "off" or prefer_float32:
        tnp.experimental_enable_numpy_behavior(prefer_float32=prefer_float32, dtype_conversion_mode=mode)

    def make(text: str):
        if text.startswith("py:"):
            return operand_cases.python_scalar(text, PY_VALUES)
        if text.startswith("weak:"):
            dtype = tf.as_dtype(TO_TF[text[5:]])
            return weak_tensor.WeakTensor.from_tensor(tf.zeros([2], dtype))
        shape, value = [2], 0
        if text.startswith("0d:"):
            shape, value, text = [], operand_cases.rank0_value(text) or 0, text[3:].partition("=")[0]
        # from a NumPy array: TensorFlow has no fill or cast kernel for some of its dtypes
        return tf.constant(np.full(shape, value, tf.as_dtype(TO_TF[text]).as_numpy_dtype))

    fns = {
        "add": lambda x, y: x + y,
        "tf.add": tf.add,
        "tnp.add": tnp.add,
        "tnp.result_type": tnp.result_type,
    }
    cache: dict = {}
    options = {"dtype_conversion_mode": mode, "prefer_float32": prefer_float32}
    cases = []
    asked = value_pairs() if values else ((op, a, b) for op in OPS for a, b in operand_pairs(op, mode, prefer_float32))
    for op, a, b in asked:
        try:
            x = cache[a] if a in cache else cache.setdefault(a, make(a))
            y = cache[b] if b in cache else cache.setdefault(b, make(b))
            out = fns[op](x, y)
        except Exception as exc:  # noqa: BLE001 - every TensorFlow error is an answer
            cases.append([op, a, b, options, None, clean_error(exc)])
            continue
        dtype = tf.as_dtype(out if op == "tnp.result_type" else out.dtype)
        name = FROM_TF.get(dtype.name, dtype.name)
        if isinstance(out, weak_tensor.WeakTensor):
            name = f"weak:{name}"
        cases.append([op, a, b, options, name, None])
    return cases


def tensorflow_dtypes() -> list[str]:
    """The names of every dtype the running TensorFlow has (reference dtypes left out), in
    TensorFlow's enum order; called in the worker subprocess, where TensorFlow is imported."""
    from tensorflow.python.framework import dtypes  # noqa: PLC0415

    found = {d.name: d.as_datatype_enum for d in dtypes._INTERN_TABLE.values() if not d._is_ref_dtype}  # noqa: SLF001
    return sorted(found, key=found.get)


def _workers(modes, flag: str) -> tuple[list, list]:
    """(every case, TensorFlow's dtype names) of a worker subprocess per (mode, prefer_float32)."""
    cases, named = [], []
    for mode in modes:
        for prefer in (False, True):
            proc = subprocess.run(
                [sys.executable, "-m", "promote_cli.probes.tensorflow", flag, mode, str(prefer).lower()],
                capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise RuntimeError(f"the TensorFlow worker for mode {mode} failed: {tail}")
            answered = json.loads(proc.stdout)
            cases += answered["cases"]
            named = answered["dtypes"]
    return cases, named


#: the ops the value recording asks, and its dtypes
VALUE_OPS = ("add", "tf.add", "tnp.add")
VALUE_TYPES = list(TO_TF)


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's tensor with every value operand (`cases.VALUES`), both orders, in every (mode,
    prefer_float32), a subprocess each: a value recording."""
    answers = {}
    for op, a, b, options, result, error in _workers(MODES, "--values")[0]:
        answers[json.dumps(options, sort_keys=True), op, a, b] = (result, error)
    head = {"ruleset": FRAMEWORK, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.tensorflow",
            "python": platform.python_version(), "device": "cpu"}
    options = [{"dtype_conversion_mode": mode, "prefer_float32": prefer} for mode in MODES for prefer in (False, True)]
    return operand_cases.record_values(
        lambda opts: lambda op, pair: answers[json.dumps(opts, sort_keys=True), op, *pair], VALUE_TYPES, head,
        options, VALUE_OPS)


def record(modes: list[str] | None = None) -> dict:
    """Ask every case, one subprocess per (mode, prefer_float32); return a recording."""
    cases, named = _workers(modes or MODES, "--worker")
    return {
        "ruleset": FRAMEWORK,
        "package": PACKAGE,
        "version": version(),
        "probe": "promote_cli.probes.tensorflow",
        "python": platform.python_version(),
        "device": "cpu",
        "not_asked": [f"tf.{n}" for n in named if n not in FROM_TF] + [n for n in ASKED if n not in TO_TF],
        "cases": cases,
    }


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    from promote_cli.probes import write_recording

    if len(sys.argv) == 4 and sys.argv[1] in ("--worker", "--values"):
        json.dump({"cases": _worker(sys.argv[2], sys.argv[3] == "true", sys.argv[1] == "--values"),
                   "dtypes": tensorflow_dtypes()}, sys.stdout)
    elif sys.argv[1:2] == ["--record-values"]:
        from promote_cli.probes.opcases import write_op_recording

        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values/tensorflow.json")
    else:
        write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/tensorflow-2.21.json")
