"""Probe: what dtype each of MLX's operators and functions gives (CPU), over every operand
`opsweep` asks.

What is asked
    The Python operators on ``mx.array`` (``a + b``, ``-a``, ``a @ b``; a Python scalar on
    the left runs the reflected method) and MLX's functions by their namespaced names
    (``mx.add(a, b)``, `FUNCTIONS`; reductions over every element, `REDUCTIONS`; unary
    math, `UNARY`; ``mx.matmul`` and ``mx.inner`` of two vectors; ``mx.where`` and
    ``mx.clip``), over the axis of `promote_cli.probes.opsweep`: MLX's fourteen dtypes as
    arrays of shape ``(2,)`` holding ones, as 0-d arrays, and the Python scalars
    `promote_cli.probes.dtype_names.PY_VALUES`.  Python scalars alone are asked of the
    functions (``mx.add(1, 2.5)``: MLX converts both, an int to int32, a float to float32;
    ``mx.sum(1)`` is MLX's TypeError), not of the operators (that is Python's arithmetic).

How the answer is read
    Each result is evaluated (``mx.eval``), so a kernel that fails at run time is a refusal
    too; the answer is its dtype as an operand (``0d:i32`` for a 0-d result), or
    ``ExceptionClass: first line``.  MLX has no modes that change promotion, so there is one
    options dict, ``{}``.

    python -m promote_cli.probes.mlx_ops OUT.json
"""

from __future__ import annotations

from promote_cli.probes import opsweep
from promote_cli.probes.mlx import ASKED, FRAMEWORK, PACKAGE, call, make_operand, version
from promote_cli.probes.opcases import Recorder, write_op_recording
from promote_cli.probes.opsweep import OPERATORS

#: the binary operators asked (``@`` contracts, the unary ones take one operand: not asked)
BINARY_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=",
                    "&", "|", "^", "<<", ">>"]

#: MLX's functions of two operands, by their namespaced names
FUNCTIONS = ["mx.add", "mx.subtract", "mx.multiply", "mx.divide", "mx.floor_divide", "mx.remainder",
             "mx.power", "mx.maximum", "mx.minimum", "mx.arctan2", "mx.logaddexp",
             "mx.equal", "mx.not_equal", "mx.less", "mx.less_equal", "mx.greater", "mx.greater_equal",
             "mx.logical_and", "mx.logical_or", "mx.bitwise_and", "mx.bitwise_or", "mx.bitwise_xor",
             "mx.left_shift", "mx.right_shift"]

#: the unary operators and the operator and functions that contract two vectors
UNARY_OPERATORS = ["-x", "+x", "~x"]
PRODUCTS = ["@", "mx.matmul", "mx.inner"]

#: reductions over every element (``cumsum``, ``cumprod``, ``cummax``: of the flattened array)
REDUCTIONS = ["mx.sum", "mx.prod", "mx.mean", "mx.max", "mx.min", "mx.argmax", "mx.argmin", "mx.var", "mx.std",
              "mx.all", "mx.any", "mx.logsumexp", "mx.cumsum", "mx.cumprod", "mx.cummax"]

#: elementwise functions of one operand
UNARY = ["mx.abs", "mx.negative", "mx.sign", "mx.sqrt", "mx.rsqrt", "mx.exp", "mx.log", "mx.log1p", "mx.sin",
         "mx.tanh", "mx.sigmoid", "mx.erf", "mx.floor", "mx.ceil", "mx.round", "mx.square", "mx.reciprocal",
         "mx.isnan", "mx.isinf", "mx.isfinite", "mx.real", "mx.imag", "mx.conjugate", "mx.conj",
         "mx.logical_not", "mx.bitwise_invert"]

#: every name asked, in the recording's order -> its arity (`opsweep.leading`)
OPS: dict[str, int | str] = {
    **{op: 2 for op in BINARY_OPERATORS + FUNCTIONS + PRODUCTS},
    **{op: 1 for op in UNARY_OPERATORS + REDUCTIONS + UNARY},
    "mx.where": opsweep.WHERE, "mx.clip": opsweep.CLIP,
}

#: name -> the name it is the same Python object as: none among these
ALIASES: dict[str, str] = {}

#: the conditions ``mx.where`` is asked with: bool arrays and one integer array
WHERE_CONDITIONS = ["bool", "0d:bool", "i8"]


def asked(op: str, operands: list[str], options: dict | None = None) -> bool:
    """Whether a case is asked: all but two Python scalars of an operator (Python's arithmetic)."""
    return not (op in OPERATORS and all(o.startswith("py:") for o in operands))


def function(op: str):
    """What calling `op` on its operands does."""
    import mlx.core as mx  # noqa: PLC0415

    return OPERATORS[op] if op in OPERATORS else getattr(mx, op.removeprefix("mx."))


def asker(cache: dict):
    """``ask(op, operands) -> (result, error) | None`` (None: two Python scalars of an operator)."""
    def ask(op: str, operands: list[str]):
        if not asked(op, operands):
            return None
        values = opsweep.operand_values(operands, OPS[op], make_operand, cache)
        return call(function(op), values)

    return ask


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` over the axis; an op recording."""
    import mlx.core as mx  # noqa: PLC0415

    mx.set_default_device(mx.cpu)
    recorder = Recorder(opsweep.axis(ASKED))
    ask = asker({})
    for op, arity in OPS.items():
        for lead in opsweep.leading(arity, recorder.axis, WHERE_CONDITIONS):
            recorder.row(op, {}, lead, ask)
    return recorder.recording({"ruleset": ruleset, "package": PACKAGE, "version": version(),
                               "probe": "promote_cli.probes.mlx_ops", "device": "cpu", "aliases": ALIASES})


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                       else "tests/data/recordings/ops-mlx.json")
