"""Probe: what dtype each NumPy op gives (ml_dtypes' types included), over every operand
`opsweep` asks.

What is asked
    Each name of `OPS`, called as a user calls it: the operators on arrays (``a + b``,
    ``-a``, ``a @ b``; a Python scalar on the left runs the reflected method), the ``numpy``
    functions with their default arguments (reductions over every element, ``cumsum``
    over the flattened array), except where a function needs one more argument:
    ``tensordot`` takes ``axes=1`` (its default contracts two dimensions, which a vector
    does not have); ``concatenate`` and ``stack`` take the list ``[a, b]``.  Arrays have
    shape ``(2,)`` (``0d:``: shape ``()``) and hold ones, as the pair probe makes them
    (`promote_cli.probes.numpy.make_operand`), so no answer depends on a value.  Linear
    algebra (``matmul``, ``@``, ``dot``, ``vdot``, ``vecdot``, ``tensordot``) takes two
    vectors of shape ``(2,)``: their answer is 0-d.  Python scalars are
    `promote_cli.probes.dtype_names.PY_VALUES`, a clip's low bound too (NumPy takes a low
    above the high; its answer for ``clip(u8, 0, f8e5m2)`` is not its answer for a low of 1,
    f32, so the value is stated here).  Names that are one function
    (``np.pow is np.power``) are asked once, under NumPy's own name (`ALIASES`).

How the answer is read
    The result's dtype as an operand (``0d:i64`` for a 0-d array or a NumPy scalar,
    ``py:float`` for a plain Python value), or the refusal: ``ExceptionClass: first line
    of the message``.  A ufunc with no loop for an ml_dtypes type is a refusal like any
    other (``UFuncTypeError: ufunc 'sqrt' not supported for the input types, ...``).  A
    result of a dtype with no canonical name (``object``, which ``dot`` and ``tensordot``
    of two sub-byte integer types give) is recorded in a refusal's place, as a message
    saying so (`named_result`).

NumPy has no modes that change promotion (NEP 50 is its only behaviour from 2.0 on), so
there is one options dict, ``{}``.

    python -m promote_cli.probes.numpy_ops OUT.json [RULESET]
"""

from __future__ import annotations


from promote_cli.errors import UsageError
from promote_cli.probes import opsweep
from promote_cli.probes.opsweep import OPERATORS
from promote_cli.probes.dtype_names import canonical, first_line
from promote_cli.probes.numpy import PACKAGE, TYPES, make_operand, version
from promote_cli.probes.opcases import Recorder, write_op_recording
from promote_cli.vocab import operands

FRAMEWORK = "numpy"


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod",
           "power", "pow", "maximum", "minimum",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
           "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
           "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
_REDUCTIONS = ["sum", "prod", "mean", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
               "max", "min", "amax", "amin", "argmax", "argmin", "std", "var", "all", "any"]
_UNARY = ["absolute", "abs", "negative", "positive", "sign", "sqrt", "exp", "log", "sin", "floor", "ceil",
          "round", "trunc", "square", "reciprocal", "isnan", "isfinite", "real", "imag",
          "conjugate", "conj", "logical_not", "invert", "bitwise_not", "bitwise_invert"]
_LINALG = ["matmul", "dot", "vdot", "vecdot", "tensordot"]
_ARRAY = {"concatenate": 2, "concat": 2, "stack": 2, "where": opsweep.WHERE, "clip": opsweep.CLIP}

#: every name asked, in the recording's order -> its arity (`opsweep.leading`).
OPS: dict[str, int | str] = {
    **{op: (1 if op.endswith("x") else 2) for op in OPERATORS},
    **dict.fromkeys(BINARY, 2), **dict.fromkeys(_REDUCTIONS, 1), **dict.fromkeys(_UNARY, 1),
    **dict.fromkeys(_LINALG, 2), **_ARRAY,
}

#: name -> NumPy's own name for the same function object (recorded once, under the latter);
#: `record_ops` checks each against the installed NumPy, and that no other two names are one.
ALIASES = {"true_divide": "divide", "mod": "remainder", "pow": "power", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "abs": "absolute", "conj": "conjugate",
           "bitwise_not": "invert", "bitwise_invert": "invert", "concat": "concatenate"}

#: the conditions ``where`` is asked with: bool arrays and one integer array.
WHERE_CONDITIONS = ["bool", "0d:bool", "i8"]

_LISTED = {"concatenate", "concat", "stack"}


def named(op: str):
    """The operator's function or NumPy's object of that name (what `ALIASES` compares)."""
    import numpy as np  # noqa: PLC0415

    return OPERATORS[op] if op in OPERATORS else getattr(np, op)


def calling(op: str, fn):
    """How `op`'s function `fn` is called on the operands: ``concatenate``, ``concat`` and
    ``stack`` on the list of them, ``tensordot`` with ``axes=1``, the rest on the operands."""
    if op in _LISTED:
        return lambda a, b: fn([a, b])
    if op == "tensordot":
        return lambda a, b: fn(a, b, axes=1)
    return fn


def function(op: str):
    """What calling `op` on operands does, as a function of the operands."""
    return calling(op, named(op))


def asker(function, make_operand, dtype_name, clean_error=first_line, ops=None):
    """``ask(op, operands) -> (result, error)``: `function(op)` applied to the operands that
    `make_operand` builds (each once; with `ops`, name -> arity, a clip's Python scalar low as
    `opsweep.operand_values` makes it: array-api-strict refuses a low above the high, NumPy
    does not, so NumPy's own recording keeps `PY_VALUES`), the result read by
    `opsweep.result_operand`."""
    import warnings  # noqa: PLC0415

    functions: dict = {}
    values: dict = {}

    def ask(op: str, operands: list[str]):
        fn = functions[op] if op in functions else functions.setdefault(op, function(op))
        args = opsweep.operand_values(operands, ops[op] if ops else None, make_operand, values)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = fn(*args)
            except Exception as exc:  # noqa: BLE001 - every error is an answer
                return None, opsweep.refusal(exc, clean_error(exc))
        return named_result(*opsweep.result_operand(out, dtype_name))

    return ask


def named_result(result: str | None, error: str | None) -> tuple[str | None, str | None]:
    """A result whose dtype has no canonical name (NumPy's ``dot`` of two sub-byte integer
    types gives ``object``) is recorded as what came back, in the place of a refusal."""
    if result is not None:
        try:
            operands.parse(result)
        except UsageError:
            return None, f"returned dtype {result.rpartition(':')[2]}, which has no canonical name"
    return result, error


def check_distinct(named, aliases: dict, ops: dict, where: str) -> None:
    """Raise unless the names of `ops` that are not in `aliases` are distinct objects
    (`named(op)`): two that are one function belong in `aliases`."""
    seen: dict = {}
    for name in ops:
        if name in aliases or name in OPERATORS:
            continue
        try:
            fn = named(name)
        except AttributeError:  # an older NumPy lacks it: asking it records the refusal
            continue
        same = next((other for other, f in seen.items() if f is fn), None)
        if same is not None:
            raise AssertionError(f"{where}.{name} is {where}.{same}: list it in ALIASES")
        seen[name] = fn


def record_ops(ruleset: str = FRAMEWORK, types=TYPES, names=OPS, probe: str = "promote_cli.probes.numpy_ops") -> dict:
    """Ask every op of `names` (default `OPS`; aliases once, under their canonical name) over `types`;
    an op recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("numpy and ml_dtypes are not importable; pip install numpy ml_dtypes")
    import ml_dtypes  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    aliases = {k: v for k, v in ALIASES.items() if k in names}
    opsweep.check_aliases(np, aliases)
    check_distinct(named, aliases, names, "np")
    recorder = Recorder(opsweep.axis(types))
    ops = {op: arity for op, arity in names.items() if op not in aliases}
    opsweep.sweep(recorder, ops, {}, asker(function, make_operand, canonical), WHERE_CONDITIONS, OPERATORS)
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": ver, "ml_dtypes": str(ml_dtypes.__version__),
        "probe": probe, "aliases": aliases,
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                       else "tests/data/recordings/ops-numpy.json")
