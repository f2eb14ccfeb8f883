"""Probe: ask tinygrad what dtype each pair gives, under each default int and default float.

What is asked
    Every tinygrad dtype with a canonical name (`ASKED`: ``dtypes.all``, bool, the 8- to
    64-bit integers, the four fp8 types, bf16, half, float, double) in the operand forms
    tinygrad has:

    ``i8``          a Tensor of shape ``(2,)`` (``Tensor.empty``)
    ``0d:i8``       a Tensor of shape ``()``
    ``weak:i32``    a weak Tensor: ``Tensor(1)`` is ``dtypes.weakint`` and ``Tensor(1.5)``
                    ``dtypes.weakfloat``; written with the dtype it realises as (the default
                    int or float of the options asked)
    ``py:int``      a Python scalar (``True``, ``1``, ``1.5``, ``1+2j``)

    for two ops:

    ``add``                 ``a + b`` (a Python scalar on the left runs ``Tensor.__radd__``);
                            two Python scalars are Python's arithmetic, not asked
    ``least_upper_dtype``   ``tinygrad.dtype.least_upper_dtype(a, b)`` of two dtypes, the
                            weak nodes ``dtypes.weakint`` and ``dtypes.weakfloat`` among them
                            (spelled ``weak:DEFAULT``)

    under every combination of the options ``default_int`` (``i32``, tinygrad's default, and
    ``i64``) and ``default_float`` (``f32``, the default, and ``f16``): tinygrad's
    ``DEFAULT_INT`` and ``DEFAULT_FLOAT`` (environment variables read at start-up, or
    ``tinygrad.helpers.Context(DEFAULT_INT="int64")``; ``dtypes.default_int`` is a property
    without a setter).  The probe sets them with ``Context``.

    The value recording (``values/tinygrad.json``, `record_values`) asks ``+`` and ``**`` of every dtype's
    Tensor with each value operand of `promote_cli.probes.cases.VALUES` (``py:300``, ``py:-1``,
    ``0d:i64=300``, ...), both orders, under every options dict.

How the answer is read
    tinygrad decides dtypes while it builds its lazy graph, so nothing is realised and no
    backend compiles anything; ``DEV=PYTHON`` (its emulator) is set when no device is named.
    The result Tensor's dtype is the answer, ``weak:DEFAULT`` for ``weakint``/``weakfloat``
    (they realise as the default int or float).  A refusal is ``ExceptionClass: first line``.

tinygrad is imported inside the functions only, so importing this module never fails when
the package is absent.

    python -m promote_cli.probes.tinygrad OUT.json
"""

from __future__ import annotations

import itertools
import operator
import os
import platform

from promote_cli.probes import cases
from promote_cli.probes.cases import pair_groups
from promote_cli.probes.dtype_names import PY_VALUES, first_line
from promote_cli.probes.opsweep import refusal
from promote_cli.vocab import operands
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "tinygrad"
PACKAGE = "tinygrad"

#: the dtypes asked, in the recording's order (every one of ``dtypes.all``); their tinygrad
#: names are the vocabulary's (a test checks that this lists every type tinygrad names).
ASKED = ("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
         "f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "bf16", "f16", "f32", "f64")
TO_TINYGRAD = native_names("tinygrad")

#: the option values asked, and tinygrad's own names for them (DEFAULT_INT, DEFAULT_FLOAT)
DEFAULT_INTS = {"i32": "int32", "i64": "int64"}
DEFAULT_FLOATS = {"f32": "float32", "f16": "float16"}
OPTIONS = [{"default_int": i, "default_float": f} for i in DEFAULT_INTS for f in DEFAULT_FLOATS]

OPS = ("add", "least_upper_dtype")

#: the ops the value recording (`record_values`: every dtype with each value of `cases.VALUES`, both orders)
#: asks: ``+``, which looks at no value, and ``**``, which refuses a negative Python int unless it is a float's
VALUE_OPS = ("add", "**")
VALUE_TYPES = ASKED

#: the device asked when ``DEV`` names none: tinygrad's Python emulator (no compiler needed)
DEVICE = "PYTHON"
PY_SCALARS = tuple(f"py:{k}" for k in PY_VALUES)


def version() -> str | None:
    """The installed tinygrad version, None when it is not importable.  The first import of tinygrad
    is here: it reads ``DEV`` then, so the emulator (`DEVICE`) is named first unless ``DEV`` is set."""
    os.environ.setdefault("DEV", DEVICE)
    try:
        import tinygrad  # noqa: F401, PLC0415
        from importlib.metadata import version as dist_version  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return dist_version("tinygrad")


def weak_operands(options: dict) -> list[str]:
    """The weak Tensors, spelled with the dtype they realise as under `options`."""
    return [f"weak:{options['default_int']}", f"weak:{options['default_float']}"]


def dtype_of(name: str):
    """tinygrad's DType of a canonical name (``weak:i32`` and ``weak:f32``: weakint, weakfloat)."""
    from tinygrad import dtypes  # noqa: PLC0415

    if name.startswith("weak:"):
        return dtypes.weakfloat if name[5:].startswith("f") else dtypes.weakint
    return getattr(dtypes, TO_TINYGRAD[name])


def name_of(dtype, options: dict) -> str:
    """The operand a result DType stands for: its canonical name, ``weak:DEFAULT`` for a weak one."""
    from tinygrad import dtypes  # noqa: PLC0415

    if dtype is dtypes.weakint:
        return f"weak:{options['default_int']}"
    if dtype is dtypes.weakfloat:
        return f"weak:{options['default_float']}"
    names = {getattr(dtypes, native): canon for canon, native in TO_TINYGRAD.items()}
    return names.get(dtype, repr(dtype))


def make_operand(text: str):
    """The tinygrad value of an operand: a Tensor of shape (2,) or (), a weak Tensor, a Python scalar (of
    any value: ``py:300``), a 0-d Tensor holding a value (``0d:i64=300``)."""
    from tinygrad import Tensor  # noqa: PLC0415

    given = operands.parse(text)
    if given.value is not None:
        return given.value if given.form == operands.PYTHON else Tensor(given.value, dtype=dtype_of(given.dtype.name))
    if text.startswith("py:"):
        return PY_VALUES[text[3:]]
    if text.startswith("weak:"):
        return Tensor(1.5 if text[5:].startswith("f") else 1)
    shape: tuple = (2,)
    if text.startswith("0d:"):
        shape, text = (), text[3:]
    return Tensor.empty(*shape, dtype=dtype_of(text))


def settings(options: dict):
    """tinygrad's Context for `options` (its DEFAULT_INT and DEFAULT_FLOAT)."""
    from tinygrad.helpers import Context  # noqa: PLC0415

    return Context(DEFAULT_INT=DEFAULT_INTS[options["default_int"]],
                   DEFAULT_FLOAT=DEFAULT_FLOATS[options["default_float"]])


def answer(call, options: dict, rank: bool = False) -> tuple[str | None, str | None]:
    """``(result, None)`` or ``(None, "ExceptionClass: message")`` of ``call()``, a DType or a Tensor;
    with `rank`, a 0-d Tensor's strong dtype is ``0d:DTYPE`` (an op recording's form; a weak one has no rank)."""
    try:
        out = call()
    except Exception as exc:  # noqa: BLE001 - every tinygrad error is an answer
        return None, refusal(exc, first_line(exc))
    name = name_of(getattr(out, "dtype", out), options)
    zero_d = rank and getattr(out, "shape", None) == () and not name.startswith("weak:")
    return (f"0d:{name}" if zero_d else name), None


def operand_pairs(op: str, options: dict):
    """Every (a, b) asked of `op` under `options`."""
    weak = weak_operands(options)
    if op == "least_upper_dtype":
        yield from itertools.product([*ASKED, *weak], repeat=2)
        return
    scalars = [*weak, *PY_SCALARS]
    for pairs in pair_groups(ASKED, scalars):
        yield from pairs
    for a, b in itertools.product(scalars, repeat=2):
        if not (a.startswith("py:") and b.startswith("py:")):
            yield a, b


def pair_cases():
    """Every (op, a, b, options) asked, in the recording's order."""
    for options in OPTIONS:
        for op in OPS:
            for a, b in operand_pairs(op, options):
                yield op, a, b, options


def ask(op: str, a: str, b: str, options: dict) -> tuple[str | None, str | None]:
    """Ask one case (in `options`' context)."""
    from tinygrad.dtype import least_upper_dtype  # noqa: PLC0415

    with settings(options):
        if op == "least_upper_dtype":
            return answer(lambda: least_upper_dtype(dtype_of(a), dtype_of(b)), options)
        x, y = make_operand(a), make_operand(b)
        return answer(lambda: x + y, options)


def ask_values(options: dict):
    """``ask(op, [a, b])`` of the value recording under `options`: ``a + b`` or ``a ** b``, the result's rank read."""
    def ask(op: str, pair: list[str]):
        with settings(options):
            x, y = (make_operand(o) for o in pair)
            return answer(lambda: operator.add(x, y) if op == "add" else operator.pow(x, y), options, rank=True)

    return ask


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's Tensor with every value operand (`cases.VALUES`), both orders, under every options dict."""
    version()  # names the device first
    return cases.record_values(ask_values, ASKED, _head(), options=OPTIONS, ops=VALUE_OPS)


def _head() -> dict:
    return {"ruleset": FRAMEWORK, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.tinygrad",
            "python": platform.python_version(), "device": os.environ["DEV"]}


def record() -> dict:
    """Ask every case; return a recording (docs/recordings.md)."""
    ver = version()
    if ver is None:
        raise RuntimeError("tinygrad is not importable; pip install tinygrad")
    return {**_head(), "cases": [[op, a, b, options, *ask(op, a, b, options)] for op, a, b, options in pair_cases()]}


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    from promote_cli.probes import write_recording
    from promote_cli.probes.opcases import write_op_recording

    if sys.argv[1:2] == ["--values"]:
        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values/tinygrad.json")
    else:
        write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/tinygrad-0.14.json")
