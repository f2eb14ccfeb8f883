"""Probe: what dtype each PaddlePaddle op gives (CPU, dygraph), over every operand `opsweep` asks.

What is asked
    Each name of `OPS`, called as a user calls it: the operators on tensors (``a + b``,
    ``-a``, ``a @ b``; a Python scalar on the left runs the reflected method), the
    ``paddle`` functions with their default arguments (reductions, ``cumsum`` and
    ``cumprod`` over every element), except ``tensordot``, which takes ``axes=1`` (its
    default contracts two dimensions, which a vector does not have); ``concat`` and
    ``stack`` take the list ``[a, b]``.  Tensors have shape ``[2]`` (``0d:``: shape
    ``[]``) and hold ones (`promote_cli.probes.paddle.make_operand`).  Linear algebra
    (``matmul``, ``@``, ``dot``, ``vecdot``, ``tensordot``) takes two vectors of shape
    ``[2]``.  Python scalars are `promote_cli.probes.dtype_names.PY_VALUES`, except a
    Python scalar low bound of ``clip``: `promote_cli.probes.opsweep.CLIP_LOW`.

How the answer is read
    The result's dtype as an operand (``0d:i64`` for a 0-d tensor), or the refusal:
    ``ExceptionClass: first sentence of the message`` (`promote_cli.probes.paddle.clean_error`),
    with one exception, as in the pair recording: Paddle decides a dtype before it looks
    up a kernel, and the CPU build lacks kernels for some dtypes (uint16/32/64, float8,
    some ops on bf16/f16/bool).  When the kernel missing is the op's own (`KERNELS`) and
    the op's result is the dtype its kernel is looked up for (`SAME_DTYPE`: elementwise
    ops, ``max``/``min``, ``concat``, ``where``, ``clip``) or bool whatever that dtype
    (`BOOL_RESULT`), the answer is that dtype (or bool).  Where the result is some other
    dtype (``sum`` of an integer is int64, ``real`` of a complex is a float, ``argmax`` is
    int64), the missing kernel tells nothing about it and is a refusal, as is a missing
    kernel anywhere else and one of the bitwise ops for two different dtypes (they do no
    promotion).  The recording's ``kernel_missing`` key counts, per op, the cases answered
    from a missing kernel.

Paddle has no modes that change promotion, so there is one options dict, ``{}``.

    python -m promote_cli.probes.paddle_ops OUT.json [RULESET]
"""

from __future__ import annotations

import operator

from promote_cli.probes import opsweep
from promote_cli.probes import paddle as pairs
from promote_cli.probes.dtype_names import PY_VALUES
from promote_cli.probes.opcases import Recorder, write_op_recording

FRAMEWORK = "paddle"
PACKAGE = "paddlepaddle"
version = pairs.version

#: the operators, as written -> the ``operator`` function that applies them
#: (the pair probe's, plus shifts, ``@`` and the unary operators).
OPERATORS = {
    **pairs.OPERATORS, "<<": operator.lshift, ">>": operator.rshift, "@": operator.matmul,
    "-x": operator.neg, "+x": operator.pos, "~x": operator.invert,
}
_UNARY_OPERATORS = {"-x", "+x", "~x"}

_BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
           "floor_mod", "pow", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
           "equal", "not_equal", "less_than", "less", "less_equal", "greater_than", "greater",
           "greater_equal"]
_REDUCTIONS = ["sum", "prod", "mean", "cumsum", "cumprod", "max", "min", "amax", "amin", "argmax", "argmin",
               "std", "var", "all", "any"]
_UNARY = ["abs", "neg", "negative", "positive", "sign", "sqrt", "exp", "log", "sin", "floor", "ceil", "round",
          "trunc", "square", "reciprocal", "isnan", "isfinite", "real", "imag", "conj", "logical_not",
          "bitwise_not", "bitwise_invert"]
_LINALG = ["matmul", "dot", "vecdot", "tensordot"]
_ARRAY = {"concat": 2, "concatenate": 2, "stack": 2, "where": opsweep.WHERE, "clip": opsweep.CLIP,
          "clamp": opsweep.CLIP}

#: every name asked, in the recording's order -> its arity (`opsweep.leading`).
OPS: dict[str, int | str] = {
    **{op: (1 if op in _UNARY_OPERATORS else 2) for op in OPERATORS},
    **dict.fromkeys(_BINARY, 2), **dict.fromkeys(_REDUCTIONS, 1), **dict.fromkeys(_UNARY, 1),
    **dict.fromkeys(_LINALG, 2), **_ARRAY,
}

#: name -> the name it is the same Python object as (recorded once, under the latter);
#: `record_ops` checks each against the installed Paddle.
ALIASES = {"mod": "remainder", "floor_mod": "remainder", "less": "less_than", "concatenate": "concat",
           "clamp": "clip"}

#: the conditions ``where`` is asked with: bool tensors and one integer tensor.
WHERE_CONDITIONS = ["bool", "0d:bool", "i8"]

#: ops whose result is bool whatever dtype their kernel is looked up for.
BOOL_RESULT = pairs.BOOL_RESULT | {"less", "greater", "isnan", "isfinite", "logical_not", "all", "any"}

#: ops whose result has the dtype their kernel is looked up for.
SAME_DTYPE = (set(pairs.KERNELS) - pairs.BOOL_RESULT) | {
    "true_divide", "bitwise_left_shift", "bitwise_right_shift", "<<", ">>", "-x", "+x", "~x",
    "max", "min", "amax", "amin", "abs", "neg", "negative", "positive", "sign", "sqrt", "exp", "log", "sin",
    "floor", "ceil", "round", "trunc", "square", "reciprocal", "conj", "bitwise_not", "bitwise_invert",
    "matmul", "@", "dot", "concat", "stack", "clip"}

#: op -> the kernels whose missing entry names the dtype the op decided on: the pair
#: probe's, else the op's own name.
KERNELS = {
    **pairs.KERNELS, "true_divide": {"divide"}, "less": {"less_than"}, "greater": {"greater_than"},
    "<<": {"bitwise_left_shift"}, ">>": {"bitwise_right_shift"}, "-x": {"scale"}, "neg": {"scale"},
    "negative": {"scale"}, "~x": {"bitwise_not"}, "bitwise_invert": {"bitwise_not"}, "@": {"matmul"},
    "where": {"where"},
}

#: ops that do no type promotion: their kernel is looked up for one operand's dtype, so a
#: missing kernel decides nothing unless every tensor operand has that dtype (the pair
#: probe's bitwise ops, the shifts, and ``stack``, ``matmul``, ``@``, ``dot``, which refuse
#: two dtypes once their kernel runs).
ONE_DTYPE = pairs.NO_PROMOTION | {"<<", ">>", "bitwise_left_shift", "bitwise_right_shift",
                                   "stack", "matmul", "@", "dot"}

#: vector products: they check their operands' shapes after the kernel lookup, so a
#: missing kernel decides nothing when an operand is 0-d (which they refuse).
_PRODUCTS = {"matmul", "@", "dot"}

_LISTED = {"concat", "stack"}

#: ops whose result has no dimensions when asked with vectors (`stack`'s always has one).
_TO_0D = {"max", "min", "amax", "amin", "all", "any", "matmul", "@", "dot"}


def make_operand(text: str):
    """The Paddle value for an operand string: ones of shape ``[2]`` (``0d:``: ``[]``)."""
    if text.startswith("py:"):
        return PY_VALUES[text[3:]]
    return pairs.make_operand(text)


def function(op: str):
    """What calling `op` on operands does, as a function of the operands."""
    import paddle  # noqa: PLC0415

    if op in OPERATORS:
        return OPERATORS[op]
    fn = getattr(paddle, op)
    if op in _LISTED:
        return lambda a, b: fn([a, b])
    if op == "tensordot":
        return lambda a, b: fn(a, b, axes=1)
    return fn


def decided(op: str, operands: list[str], message: str) -> str | None:
    """The dtype a missing kernel of `op` shows Paddle decided on (bool for `BOOL_RESULT`), else None."""
    m = pairs._KERNEL.search(message)
    if m is None or m.group("kernel") not in KERNELS.get(op, {op}) | {"full"}:
        return None
    tensors = [o for o in operands if not o.startswith("py:")]
    if op in ONE_DTYPE and len({o.split(":")[-1] for o in tensors}) > 1:
        return None
    if op in _PRODUCTS and any(o.startswith("0d:") for o in tensors):
        return None
    dtype = pairs.FROM_PADDLE.get(m.group("dtype"))
    if dtype is None:
        return None
    if op in BOOL_RESULT:
        dtype = "bool"
    elif op not in SAME_DTYPE:
        return None
    return f"0d:{dtype}" if _is_0d(op, operands) else dtype


def _is_0d(op: str, operands: list[str]) -> bool:
    """Whether `op`'s result has no dimensions: a reduction's or a vector product's, clip's
    of a 0-d x, or an elementwise op's of 0-d tensors and Python scalars only."""
    if op in _TO_0D:
        return True
    if op == "clip":
        return operands[0].startswith("0d:")
    return op != "stack" and all(o.startswith(("0d:", "py:")) for o in operands)


def _broadcast_first(op: str, operands: list[str], answer: tuple) -> tuple:
    """An op whose Python wrapper broadcasts its operands (``where``) and stopped at the
    missing ``expand`` kernel of a 0-d one: answered as asked with the broadcast operands,
    which is what the op itself receives; the result's form is the original operands'."""
    result, error = answer
    if result is None:
        return answer
    dtype = result.split(":")[-1]
    return (f"0d:{dtype}" if _is_0d(op, operands) else dtype), error


def asker(cache: dict, missing: dict):
    """``ask(op, operands) -> (result, error)``; counts the answers read off a missing kernel in `missing`."""
    functions: dict = {}

    def ask(op: str, operands: list[str]):
        fn = functions.get(op) or functions.setdefault(op, function(op))
        values = opsweep.operand_values(operands, OPS[op], make_operand, cache)
        try:
            out = fn(*values)
        except Exception as exc:  # noqa: BLE001 - every Paddle error is an answer
            message = pairs.clean_error(exc)
            dtype = decided(op, operands, message)
            if dtype is not None:
                missing[op] = missing.get(op, 0) + 1
                return dtype, None
            wide = [o[3:] if o.startswith("0d:") else o for o in operands]
            if op in pairs.BROADCAST_FIRST and wide != operands and "`expand`" in message:
                return _broadcast_first(op, operands, ask(op, wide))
            return None, opsweep.refusal(exc, message)
        return opsweep.result_operand(out, pairs._dtype_name)

    return ask


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` (aliases once, under their canonical name); an op recording."""
    opsweep.check_aliases(pairs._setup(), ALIASES)
    recorder = Recorder(opsweep.axis(pairs.TO_PADDLE))
    missing: dict[str, int] = {}
    ops = {op: arity for op, arity in OPS.items() if op not in ALIASES}
    opsweep.sweep(recorder, ops, {}, asker({}, missing), WHERE_CONDITIONS, OPERATORS)
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": version(),
        "probe": "promote_cli.probes.paddle_ops", "device": "cpu", "aliases": ALIASES,
        "kernel_missing": missing,
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                       else "tests/data/recordings/ops-paddle.json")
