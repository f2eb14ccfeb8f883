"""Probe: ask NumPy (with ml_dtypes' types) what dtype each case gives.

What is asked
    Every ordered pair of NumPy's numeric dtypes and ml_dtypes' types (all that have a
    canonical name: bf16, every float8 incl. the fnuz ones, fp6, fp4, int2/uint2,
    int4/uint4, uint1, complex32), for three ops:

    ``add``            ``a + b`` on arrays: shape ``(2,)`` and 0-d (``0d:``) arrays on
                       either side (NEP 50 treats a 0-d array as any array), and a
                       Python scalar (``py:bool|int|float|complex``) on either side;
    ``promote_types``  ``np.promote_types(a, b)`` on the two dtypes (a Python scalar is
                       not a dtype: the TypeError is the answer);
    ``result_type``    ``np.result_type(a, b)`` on the same arrays and scalars, and on
                       triples (the recording's ``nary`` list:
                       ``[op, [a, b, c], null, options, result, error]``).

How the answer is read
    The result's dtype, or the first line of the exception's message.  ``add`` of two
    Python scalars is Python's arithmetic, not NumPy's: it is not asked.

NumPy is imported inside the functions only, so importing this module never fails
when the package is absent.
"""

from __future__ import annotations

import itertools
import operator
import platform

from promote_cli.probes import cases as operand_cases
from promote_cli.probes.cases import ask_every, pair_groups, without_0d
from promote_cli.probes.dtype_names import CANONICAL, PY_VALUES, canonical, first_line, np_dtype

FRAMEWORK = "numpy"
PACKAGE = "numpy"

#: every dtype asked about: NumPy's own numeric dtypes and ml_dtypes' types, canonical
#: names in the recording's order (longdouble/clongdouble have no canonical name).
TYPES = list(CANONICAL.values())

SCALARS = [f"py:{k}" for k in PY_VALUES]

OPS = ("add", "promote_types", "result_type")

#: the operands of the N-ary result_type cases: every ordered triple of these.
TRIPLE_OPERANDS = ["bool", "i8", "u8", "i16", "u64", "i64", "f16", "bf16", "f32", "f8e5m2", "c64",
                   "py:int", "py:float", "py:complex"]


def version() -> str | None:
    """The installed NumPy version, None when NumPy or ml_dtypes is absent."""
    try:
        import ml_dtypes  # noqa: F401, PLC0415
        import numpy  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(numpy.__version__)


def make_operand(text: str):
    """The NumPy value of an operand: an array of shape (2,), a 0-d array (holding its value, `0d:i64=300`), or a
    Python scalar (`py:int` a sample, `py:300` that value)."""
    import numpy as np  # noqa: PLC0415

    if text.startswith("py:"):
        return operand_cases.python_scalar(text, PY_VALUES)
    if text.startswith("0d:"):
        name, _, _ = text[3:].partition("=")
        value = operand_cases.rank0_value(text)
        return np.ones((), np_dtype(name)) if value is None else np.asarray(value, np_dtype(name))
    return np.ones(2, np_dtype(text))


def _dtype_of(text: str):
    return operand_cases.python_scalar(text, PY_VALUES) if text.startswith("py:") else np_dtype(text.split(":")[-1])


def ask(op: str, operands: list[str]) -> tuple[str | None, str | None]:
    """``(result, None)`` or ``(None, message)`` for one case."""
    import warnings  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if op == "add":
                out = operator.add(*(make_operand(t) for t in operands))
            elif op == "promote_types":
                out = np.promote_types(*(_dtype_of(t) for t in operands))
            elif op == "result_type":
                out = np.result_type(*(make_operand(t) for t in operands))
            else:
                raise ValueError(f"unknown op {op}")
    except Exception as exc:  # noqa: BLE001 - every NumPy error is an answer
        return None, first_line(exc)
    dtype = getattr(out, "dtype", out)
    return canonical(dtype), None


def pair_cases(types=TYPES):
    """Every (op, a, b) asked, over `types`."""
    for pairs in pair_groups(types, SCALARS):
        yield from (("promote_types", a, b) for a, b in without_0d(pairs))  # dtypes, not arrays
        for op in ("add", "result_type"):
            yield from ((op, a, b) for a, b in pairs)
    for s, r in itertools.product(SCALARS, SCALARS):
        yield "promote_types", s, r
        yield "result_type", s, r


def _head() -> dict:
    ver = version()
    if ver is None:
        raise RuntimeError("numpy and ml_dtypes are not importable; pip install numpy ml_dtypes")
    import ml_dtypes  # noqa: PLC0415

    return {"ruleset": FRAMEWORK, "package": PACKAGE, "version": ver, "ml_dtypes": str(ml_dtypes.__version__),
            "probe": "promote_cli.probes.numpy", "python": platform.python_version()}


def record() -> dict:
    """Ask every case; return a recording (see docs/recordings.md)."""
    head = _head()
    cases, nary = ask_every(ask, pair_cases(), TRIPLE_OPERANDS, {})
    return {**head, "nary": nary, "cases": cases}


#: the ops the value recording asks: the operator, and np.result_type (which checks no value)
VALUE_OPS = ("add", "result_type")


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's array with every value operand (`cases.VALUES`), both orders: a value recording."""
    return operand_cases.record_values(lambda options: ask, TYPES, _head(), ops=VALUE_OPS)


def extra_checks() -> list:
    """`promote verify -f numpy` beyond the ruleset: `promote cast --semantics ml_dtypes` against the live library."""
    from promote_cli.probes.cast_semantics import live_check

    return [live_check("ml_dtypes")]


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    from promote_cli.probes import write_recording

    if sys.argv[1:2] == ["--values"]:
        from promote_cli.probes.opcases import write_op_recording

        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values/numpy.json")
    else:
        write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/numpy-2.4.json")
