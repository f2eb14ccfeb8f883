"""Which operand combinations an op recording asks, and how an answer is written.

The axis of an op recording (`opcases`) is every named dtype as a dimensioned tensor,
then as a 0-d tensor (``0d:``), then the Python scalars (``py:``).  Each op is asked
according to its arity:

``1``       one row, over the axis
``2``       one row per leading operand of the axis (two Python scalars: not asked)
``where``   (condition, x) for each condition of `where_conditions` and x of the axis;
            cells over y
``clip``    (x, low) for x of the axis and low of the dimensioned tensors plus
            ``py:int`` and ``py:float``; cells over high.  A Python scalar low is 0 or
            0.5 (`CLIP_LOW`), below every high, so no clip refuses a low above its high

A case whose operands are all Python scalars is not asked (``None``: it is Python's
arithmetic), except a function of one operand (``torch.sqrt(1)``: the framework's answer).
The framework's probe supplies ``ask(op, operands) -> (result, error)``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable

from promote_cli.probes.cases import SCALARS
from promote_cli.probes.opcases import Recorder

#: the ternary shapes of asking, by the op's arity in a probe's OPS
WHERE, CLIP = "where", "clip"

#: the operators, as written (``-x``: the unary one) -> the ``operator`` function that applies them, in the
#: order the probes ask them
OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift, "@": operator.matmul,
    "-x": operator.neg, "+x": operator.pos, "~x": operator.invert,
}

#: the value of a Python scalar low bound of ``clip``
CLIP_LOW = {"py:int": 0, "py:float": 0.5}

_PY_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")


def axis(types: Iterable[str], scalars: Iterable[str] = SCALARS) -> list[str]:
    """The axis: the dtypes as tensors, then as 0-d tensors, then the Python scalars."""
    types = list(types)
    return types + [f"0d:{t}" for t in types] + list(scalars)


def leading(arity, axis: list[str], where_conditions: Iterable[str]) -> list[list[str]]:
    """The leading operands of each row of an op of `arity` (see the module's table)."""
    if arity == 1:
        return [[]]
    if arity == 2:
        return [[a] for a in axis]
    if arity == WHERE:
        return [[c, x] for c in where_conditions for x in axis]
    if arity == CLIP:
        tensors = [t for t in axis if ":" not in t]
        return [[x, low] for x in axis for low in [*tensors, "py:int", "py:float"]]
    raise ValueError(f"unknown arity {arity!r}")


def operand_values(operands: list[str], arity, make: Callable, cache: dict) -> list:
    """The values of `operands` (``make(operand)`` once each, kept in `cache`), with
    `CLIP_LOW` for a clip's Python scalar low."""
    values = [cache[o] if o in cache else cache.setdefault(o, make(o)) for o in operands]
    if arity == CLIP and operands[1] in CLIP_LOW:
        values[1] = CLIP_LOW[operands[1]]
    return values


def refusal(exc: BaseException, message: str) -> str:
    """A refusal as recorded: ``ClassName: message``, object addresses removed."""
    return f"{type(exc).__name__}: {_ADDRESS.sub('0x', message)}"


def result_operand(value, dtype_name: Callable) -> tuple[str | None, str | None]:
    """The operand form of what an op returned: a tensor's dtype (``0d:`` when it has no
    dimensions, read by `dtype_name` from its ``dtype``), a Python scalar's ``py:KIND``;
    anything else is recorded as an error naming its type."""
    if isinstance(value, (tuple, list)) and value:
        value = value[0]
    if type(value) in _PY_KINDS:
        return f"py:{_PY_KINDS[type(value)]}", None
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        return None, f"returned {type(value).__name__}, not a tensor"
    name = dtype_name(dtype)
    return (name if len(shape) else f"0d:{name}"), None


def check_aliases(module, aliases: dict) -> None:
    """Raise unless each name of `aliases` is the same object of `module` as its canonical name."""
    for name, canonical in aliases.items():
        if getattr(module, name) is not getattr(module, canonical):
            raise AssertionError(f"{module.__name__}.{name} is not {module.__name__}.{canonical}")


def sweep(recorder: Recorder, ops: dict, options: dict, ask: Callable,
          where_conditions: Iterable[str], operators: Iterable[str]) -> None:
    """Ask every op of `ops` (name -> arity) with `options`, adding its rows to `recorder`;
    `operators` are the names that are Python operators (``-x``, ``+``)."""
    python = set(operators) | {op for op, arity in ops.items() if arity != 1}

    def asked(op: str, operands: list[str]):
        if op in python and all(o.startswith("py:") for o in operands):
            return None
        return ask(op, operands)

    conditions = list(where_conditions)
    for op, arity in ops.items():
        for lead in leading(arity, recorder.axis, conditions):
            recorder.row(op, options, lead, asked)
