"""Probe: ask MLX (``mlx[cpu]``) what dtype each binary case gives.

What is asked
    ``add``          the ``+`` operator, ``a + b`` (a Python scalar on the left runs
                     ``array.__radd__``), for every ordered pair of MLX's fourteen dtypes
                     (``ASKED``) as arrays of shape ``(2,)`` and 0-d arrays (shape ``()``),
                     and each dtype with each Python scalar (``py:bool|int|float|complex``:
                     ``True``, ``1``, ``1.5``, ``1+2j``) on either side
                     (`promote_cli.probes.cases.pair_groups`);
    ``result_type``  ``mx.result_type(a, b)`` of two dtypes (it takes arrays and dtypes,
                     never a Python scalar), and of every ordered triple of `TRIPLE_OPERANDS`
                     (the recording's ``nary`` list).

    MLX decides what a Python scalar becomes from its *value* (``python/src/utils.cpp``:
    ``to_array``): an int must fit the array's integer type, and one beyond int64 fails to
    convert at all.  `value_cases` asks ``+`` with value operands (``py:300``, ``py:1e+300``,
    ``0d:i64=300``, in the contract's spelling) beside each dtype, and ``mx.add`` of two
    Python values (MLX, not Python, adds them: an int beyond int32 makes an int64 array).

How the answer is read
    Each result is evaluated (``mx.eval``), so a kernel that fails at run time is a
    refusal too; the answer is the result's dtype, or
    ``ExceptionClass: first line``; a pair recording holds the dtype alone (the op
    recording, `promote_cli.probes.mlx_ops`, keeps the form).

MLX is imported inside the functions only, so importing this module never fails when the
package is absent.  Refresh with ``python -m promote_cli.probes.mlx OUT.json``.
"""

from __future__ import annotations

import ast
import itertools
import operator
import platform
import sys

from promote_cli.probes.cases import ask_every, pair_groups
from promote_cli.probes.dtype_names import PY_VALUES, first_line
from promote_cli.probes.opsweep import refusal
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "mlx"
PACKAGE = "mlx"

#: MLX's dtypes in the recording's order; their MLX names are the vocabulary's
#: (``native_names("mlx")``); a test checks that this lists every type MLX names.
ASKED = ("bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "c64")

_NAMES = native_names("mlx")
#: canonical name -> attribute of ``mlx.core`` (``bool_``: MLX prints it ``mlx.core.bool``)
TO_MLX = {name: ("bool_" if name == "bool" else _NAMES[name]) for name in ASKED}
#: ``str(dtype)`` -> canonical name
FROM_MLX = {f"mlx.core.{_NAMES[name]}": name for name in ASKED}

#: the operands of the N-operand result_type cases: every ordered triple of them.
TRIPLE_OPERANDS = ["bool", "u8", "u64", "i8", "i64", "f16", "bf16", "f32", "c64"]

#: Python scalars whose value MLX looks at: ranges of each integer type, beyond int32 and int64
#: (2**63 fails to convert), floats beyond float16's range, nan and infinities.
PY_INTS = ["py:-1", "py:127", "py:128", "py:255", "py:256", "py:300", "py:-129", "py:32768", "py:65536",
           "py:2147483648", "py:4294967296", "py:-2147483649", "py:9223372036854775807",
           "py:9223372036854775808", "py:-9223372036854775809", "py:18446744073709551616"]
PY_OTHERS = ["py:True", "py:False", "py:1.5", "py:1e+300", "py:nan", "py:-inf", "py:1j", "py:1+1j"]
#: 0-d arrays holding a value: MLX treats a 0-d array as any array, whatever it holds.
ZERO_D = ["0d:i64=300", "0d:f64=1e+300", "0d:i32=-1"]


def version() -> str | None:
    """The installed MLX version, None when MLX is absent."""
    try:
        import mlx.core as mx  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(mx.__version__)


def _python_value(text: str):
    """The Python scalar of ``py:VALUE`` (``py:KIND``: `PY_VALUES`' stand-in of that kind)."""
    body = text[3:]
    if body in PY_VALUES:
        return PY_VALUES[body]
    return float(body) if body in ("nan", "inf", "-inf") else ast.literal_eval(body)


def make_operand(text: str):
    """The MLX value of an operand: ``py:`` a Python scalar, ``0d:T[=V]`` a 0-d array
    (holding V, else 1), ``T`` an array of shape ``(2,)`` holding ones."""
    import mlx.core as mx  # noqa: PLC0415

    if text.startswith("py:"):
        return _python_value(text)
    form, _, name = text.rpartition(":")
    name, _, value = name.partition("=")
    dtype = getattr(mx, TO_MLX[name])
    if form == "0d":
        return mx.array(_python_value("py:" + value) if value else 1, dtype=dtype)
    return mx.ones((2,), dtype=dtype)


def dtype_name(dtype) -> str:
    """The canonical name of an MLX dtype (its printed name when it has none)."""
    return FROM_MLX.get(str(dtype), str(dtype))


def result_of(out) -> tuple[str | None, str | None]:
    """An MLX array (or dtype, from ``mx.result_type``) as the recording's result operand."""
    import mlx.core as mx  # noqa: PLC0415

    if isinstance(out, mx.Dtype):
        return dtype_name(out), None
    mx.eval(out)
    name = dtype_name(out.dtype)
    return (name if out.ndim else f"0d:{name}"), None


def call(fn, values: list) -> tuple[str | None, str | None]:
    """``fn(*values)`` evaluated, as ``(result, None)`` or ``(None, refusal)``."""
    try:
        return result_of(fn(*values))
    except Exception as exc:  # noqa: BLE001 - every MLX error is an answer
        return None, refusal(exc, first_line(exc))


def ask(op: str, operands: list[str]) -> tuple[str | None, str | None]:
    """One case: ``add`` is ``a + b``, ``mx.add`` the function, ``result_type`` MLX's of the dtypes."""
    import mlx.core as mx  # noqa: PLC0415

    if op == "result_type":
        return call(mx.result_type, [getattr(mx, TO_MLX[t]) for t in operands])
    values = [make_operand(t) for t in operands]
    result, error = call(operator.add if op == "add" else mx.add, values)
    return (result and result.removeprefix("0d:")), error


def pair_cases():
    """Every (op, a, b) of the recording's ``cases``: the operand pairs, result_type of the
    dtypes, then the value cases."""
    for group in pair_groups(ASKED):
        for a, b in group:
            yield "add", a, b
    for a, b in itertools.product(ASKED, ASKED):
        yield "result_type", a, b
    yield from value_cases()


def value_cases():
    """The cases with a value operand: each dtype (an array, a 0-d array) with each Python
    value on either side and with each 0-d array of `ZERO_D`, and ``mx.add`` of two Python values."""
    for t in ASKED:
        for form in (t, f"0d:{t}"):
            for v in PY_INTS + PY_OTHERS:
                yield "add", form, v
                yield "add", v, form
        for z in ZERO_D:
            yield "add", t, z
    for a, b in itertools.product(["py:1", "py:2147483648", "py:True", "py:1.5", "py:1j"], repeat=2):
        yield "mx.add", a, b


def record() -> dict:
    """Ask every case; return a recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("mlx is not importable; pip install 'mlx[cpu]'")
    import mlx.core as mx  # noqa: PLC0415

    mx.set_default_device(mx.cpu)
    cases, nary = ask_every(ask, pair_cases(), TRIPLE_OPERANDS, {})
    return {
        "ruleset": FRAMEWORK, "package": PACKAGE, "version": ver, "probe": "promote_cli.probes.mlx",
        "python": platform.python_version(), "device": "cpu",
        "nary": nary, "cases": cases,
    }


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    from promote_cli.probes import write_recording

    write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/mlx-0.32.json")
