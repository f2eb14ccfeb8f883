"""Probe: what dtype each PyTorch op gives (CPU), over every operand `opsweep` asks.

What is asked
    Each name of `OPS`, called as a user calls it: the operators on tensors (``a + b``,
    ``-a``, ``a @ b``; a Python scalar on the left runs the reflected method), the
    ``torch`` functions with their default arguments (reductions over every element),
    except where a function needs one more argument: ``cumsum`` and ``cumprod`` take
    ``dim=0`` (all of a shape ``[2]`` tensor), ``tensordot`` takes ``dims=1`` (its default
    contracts two dimensions, which a vector does not have); ``cat``, ``concat``,
    ``concatenate`` and ``stack`` take the list ``[a, b]``.  Tensors have shape ``[2]``
    (``0d:``: shape ``[]``) and hold ones, so no answer depends on a value; the sub-byte and
    other types ``fill_`` cannot fill (`EMPTY`) are left as ``torch.empty`` made them.  Linear
    algebra (``matmul``, ``@``, ``dot``, ``vdot``, ``linalg.vecdot``, ``tensordot``) takes
    two vectors of shape ``[2]``: their answer is a 0-d tensor.  Python scalars are
    `promote_cli.probes.dtype_names.PY_VALUES`, except a Python scalar low bound of
    ``clamp`` and ``clip``: `promote_cli.probes.opsweep.CLIP_LOW`.

How the answer is read
    The result's dtype as an operand (``0d:i64`` for a 0-d tensor, ``py:bool`` for a
    Python bool), or the refusal: ``ExceptionClass: first line of the message`` without
    PyTorch's source location and bug-report plea (`promote_cli.probes.torch.clean_error`).
    A missing CPU kernel is a refusal like any other (``RuntimeError: "add_stub" not
    implemented for 'UInt16'``), as in the pair recording.

PyTorch has no modes that change promotion beyond its default dtype, which stays
float32 (the recording's ``default_dtype``), so there is one options dict, ``{}``.

    python -m promote_cli.probes.torch_ops OUT.json [RULESET]
"""

from __future__ import annotations

import warnings

from promote_cli.probes import opsweep
from promote_cli.probes.opsweep import OPERATORS
from promote_cli.probes.dtype_names import PY_VALUES
from promote_cli.probes.opcases import Recorder, write_op_recording
from promote_cli.probes import torch as pairs
from promote_cli.probes.torch import FROM_TORCH, TO_TORCH, UNNAMED, clean_error, version

FRAMEWORK = "torch"
PACKAGE = "torch"


_UNARY_OPERATORS = {"-x", "+x", "~x"}

_BINARY = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
           "remainder", "fmod", "pow", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
           "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater", "greater_equal"]
_REDUCTIONS = ["sum", "prod", "mean", "cumsum", "cumprod", "max", "min", "amax", "amin", "argmax", "argmin",
               "std", "var", "all", "any"]
_UNARY = ["abs", "absolute", "neg", "negative", "positive", "sign", "sqrt", "exp", "log", "sin", "floor",
          "ceil", "round", "trunc", "square", "reciprocal", "isnan", "isfinite", "real", "imag", "conj",
          "logical_not", "bitwise_not"]
_LINALG = ["matmul", "dot", "vdot", "linalg.vecdot", "tensordot"]
_ARRAY = {"cat": 2, "concat": 2, "concatenate": 2, "stack": 2, "where": opsweep.WHERE,
          "clamp": opsweep.CLIP, "clip": opsweep.CLIP}

#: every name asked, in the recording's order -> its arity (`opsweep.leading`).
OPS: dict[str, int | str] = {
    **{op: (1 if op in _UNARY_OPERATORS else 2) for op in OPERATORS},
    **dict.fromkeys(_BINARY, 2), **dict.fromkeys(_REDUCTIONS, 1), **dict.fromkeys(_UNARY, 1),
    **dict.fromkeys(_LINALG, 2), **_ARRAY,
}

#: name -> the name it is the same Python object as (recorded once, under the latter);
#: `record_ops` checks each against the installed PyTorch.  PyTorch's alias names
#: (``sub``/``subtract``, ``clamp``/``clip``, ``cat``/``concat``) are distinct builtins.
ALIASES: dict[str, str] = {}

#: the conditions ``where`` is asked with: bool tensors and one integer tensor.
WHERE_CONDITIONS = ["bool", "0d:bool", "i8"]

#: dtypes ``fill_`` has no kernel for: their tensors are left as ``torch.empty`` made them.
EMPTY = ["i2", "i4", "u1", "u2", "u4", "f4e2m1"]

_ONE_DIM = {"cumsum", "cumprod"}
_LISTED = {"cat", "concat", "concatenate", "stack"}


def make_operand(text: str):
    """The PyTorch value for an operand string: the pair probe's tensor
    (`promote_cli.probes.torch.make_operand`), filled with ones unless its type is in `EMPTY`."""
    if text.startswith("py:"):
        return PY_VALUES[text[3:]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex32's "ComplexHalf support is experimental"
        tensor = pairs.make_operand(text)
    return tensor if text.split(":")[-1] in EMPTY else tensor.fill_(1)


def function(op: str):
    """What calling `op` on operands does, as a function of the operands."""
    import torch  # noqa: PLC0415

    if op in OPERATORS:
        return OPERATORS[op]
    fn = torch
    for part in op.split("."):
        fn = getattr(fn, part)
    if op in _ONE_DIM:
        return lambda x: fn(x, 0)
    if op in _LISTED:
        return lambda a, b: fn([a, b])
    if op == "tensordot":
        return lambda a, b: fn(a, b, dims=1)
    return fn


def _dtype_name(dtype) -> str:
    return FROM_TORCH.get(str(dtype), str(dtype))


def asker(cache: dict):
    """``ask(op, operands) -> (result, error)`` over the operands of `cache` (built on demand)."""
    functions: dict = {}

    def ask(op: str, operands: list[str]):
        fn = functions.get(op) or functions.setdefault(op, function(op))
        values = opsweep.operand_values(operands, OPS[op], make_operand, cache)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = fn(*values)
            except Exception as exc:  # noqa: BLE001 - every PyTorch error is an answer
                return None, opsweep.refusal(exc, clean_error(exc))
        return opsweep.result_operand(out, _dtype_name)

    return ask


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` (aliases once, under their canonical name); an op recording."""
    import torch  # noqa: PLC0415

    torch.set_default_dtype(torch.float32)
    opsweep.check_aliases(torch, ALIASES)
    recorder = Recorder(opsweep.axis(TO_TORCH))
    ops = {op: arity for op, arity in OPS.items() if op not in ALIASES}
    opsweep.sweep(recorder, ops, {}, asker({}), WHERE_CONDITIONS, OPERATORS)
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": version(), "build": str(torch.__version__),
        "probe": "promote_cli.probes.torch_ops", "device": "cpu", "default_dtype": "f32",
        "aliases": ALIASES, "built_empty": EMPTY,
        "not_asked": [f"torch.{n}" for n in UNNAMED],
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                       else "tests/data/recordings/ops-torch.json")
