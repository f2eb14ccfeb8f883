"""Probe: ask NumPy 1.26 (legacy, value-based promotion) what dtype each case gives.

What is asked
    The pair cases of `promote_cli.probes.numpy` (``add``, ``promote_types`` and ``result_type``
    of every pair of dtypes as arrays, 0-d arrays and Python scalars; not its ``result_type``
    triples: NumPy 1 decides value-based casting over all operands at once, which the ruleset's
    pairwise N-ary answer does not model), over the types ml_dtypes 0.5.4 has (the newest ml_dtypes that supports
    NumPy 1.26: 0.6 requires NumPy 2; 0.5.4 has no ``uint1`` and no ``complex32``), then
    the value cases (`value_cases`, over `VALUES`): ``add`` and ``result_type`` of
    every dtype, as an array and as a 0-d array, with a Python scalar or a 0-d array whose
    value decides NumPy 1's answer (``py:300``, ``0d:i64=300``).  The binary operators and
    functions are the op recording's (`promote_cli.probes.numpy126_ops`).

How an operand is made
    As the NumPy 2 probe makes it (`promote_cli.probes.numpy.make_operand`): ``py:300`` the Python
    scalar, ``0d:i64=300`` a 0-d array holding the value (NumPy 1 treats a NumPy scalar as such a 0-d
    array), a form without a value an array of ones or the probe's sample scalar.

NumPy is imported inside the functions only, so importing this module never fails
when the package is absent.

    python -m promote_cli.probes.numpy126 OUT.json
    python -m promote_cli.probes.numpy126 --values OUT.json     # the shared value recording
"""

from __future__ import annotations

import platform

from promote_cli.probes import cases as operand_cases
from promote_cli.probes import numpy as current
from promote_cli.probes.cases import ask_every
from promote_cli.probes.numpy_ops import named_result

FRAMEWORK = "numpy@1.26"
PACKAGE = "numpy"
#: what pip installs for this probe (`promote verify` says it where NumPy 1 is not there)
INSTALL = "numpy==1.26.4 ml_dtypes==0.5.4"

#: the types ml_dtypes 0.5.4 lacks (it has uint1 and complex32 from 0.6 on)
ABSENT = ("u1", "c32")

#: every dtype asked about, in the recording's order
TYPES = [t for t in current.TYPES if t not in ABSENT]

#: the value operands: Python scalars at the edges of NumPy's types, then 0-d arrays
PY_VALUES = ["py:0", "py:1", "py:-1", "py:127", "py:128", "py:255", "py:256", "py:-129", "py:300", "py:65536",
             "py:2147483648", "py:9223372036854775808", "py:-9223372036854775809", "py:1.5", "py:65504.0",
             "py:100000.0", "py:3.4e+38", "py:3.5e+38", "py:1e+300", "py:nan", "py:-inf", "py:True",
             "py:1j", "py:1+1j", "py:1e+300j"]
ARRAY_VALUES = ["0d:bool=True", "0d:i8=-1", "0d:u8=200", "0d:i32=70000", "0d:i64=1", "0d:i64=-1", "0d:i64=300",
                "0d:i64=2147483648", "0d:u64=9223372036854775808", "0d:f32=1.5", "0d:f64=1.5",
                "0d:f64=100000.0", "0d:f64=1e+300", "0d:f64=nan", "0d:c128=1j", "0d:c128=1e+300j"]
VALUES = PY_VALUES + ARRAY_VALUES



def version() -> str | None:
    """The installed NumPy version when it is a 1.x with ml_dtypes beside it, else None."""
    found = current.version()
    return found if found is not None and found.startswith("1.") else None


def value_cases():
    """Every (op, a, b) of the value cases: for ``add`` each dtype as an array with each value on
    either side and as a 0-d array with each value on its right; for ``result_type`` each dtype as
    an array with each value on its right."""
    for t in TYPES:
        for v in VALUES:
            yield from (("add", t, v), ("add", v, t), ("add", f"0d:{t}", v), ("result_type", t, v))


def ask(op: str, operands: list[str]) -> tuple[str | None, str | None]:
    """The NumPy 2 probe's answer for one case, a result without a canonical name (``object``) recorded as a
    refusal saying so, a refusal by its first sentence (NumPy 1 explains a missing common DType at length)."""
    result, error = named_result(*current.ask(op, operands))
    return result, error and error.split(". This means")[0]


def _head() -> dict:
    ver = version()
    if ver is None:
        raise RuntimeError(f"numpy 1.x and ml_dtypes are not importable; pip install {INSTALL}")
    import ml_dtypes  # noqa: PLC0415

    return {"ruleset": FRAMEWORK, "package": PACKAGE, "version": ver, "ml_dtypes": str(ml_dtypes.__version__),
            "probe": "promote_cli.probes.numpy126", "python": platform.python_version()}


def record() -> dict:
    """Ask every case; return a recording (see docs/recordings.md)."""
    head = _head()
    cases, _ = ask_every(ask, [*current.pair_cases(TYPES), *value_cases()], [], {})
    return {**head, "cases": cases}


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's array with every value operand of the shared list (`cases.VALUES`), both orders, for
    ``add`` and ``result_type``: the value recording every framework has (values/numpy-1.26.json)."""
    return operand_cases.record_values(lambda options: ask, TYPES, _head(), ops=current.VALUE_OPS)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recordings
    import sys

    from promote_cli.probes import write_recording

    if sys.argv[1:2] == ["--values"]:
        from promote_cli.probes.opcases import write_op_recording

        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2
                           else "tests/data/recordings/values/numpy-1.26.json")
    else:
        write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/numpy-1.26.json")
