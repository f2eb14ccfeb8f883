"""Probe: what dtype each tinygrad binary operator and Tensor method gives, per default int and float.

What is asked
    The binary operators (`OPERATORS`: ``a + b`` ... ``a >> b``; a Python scalar on the left
    runs the reflected method) and the Tensor methods of two operands (`METHODS`, recorded as
    ``Tensor.add`` ...: ``Tensor.add(a, b)``, so only a Tensor stands on the left), over an
    axis of every tinygrad dtype as a Tensor of shape ``(2,)`` and the Python scalars
    (``True``, ``1``, ``1.5``, ``1+2j``), under every options dict of the pair probe
    (`promote_cli.probes.tinygrad.OPTIONS`: ``default_int`` x ``default_float``).  0-d and weak
    Tensors are the pair recording's (``tinygrad-0.14.json``, ``add``: a 0-d Tensor changes no dtype
    there), values the value recording's (``values/tinygrad.json``, ``+`` and ``**``).

How the answer is read
    As in the pair probe: the result's dtype, ``weak:DEFAULT`` for tinygrad's ``weakint`` and
    ``weakfloat``, or the refusal ``ExceptionClass: first line``.  Nothing is realised.

    python -m promote_cli.probes.tinygrad_ops OUT.json [RULESET]
"""

from __future__ import annotations

import os

from promote_cli.probes import opsweep
from promote_cli.probes import tinygrad as pairs
from promote_cli.probes.opcases import Recorder, write_op_recording

FRAMEWORK = "tinygrad"
PACKAGE = "tinygrad"

#: the binary operators asked (``@`` is matmul, not an elementwise promotion)
OPERATORS = {op: fn for op, fn in opsweep.OPERATORS.items() if op != "@" and not op.endswith("x")}

#: the Tensor methods of two operands asked, as ``Tensor.NAME``
METHODS = ["add", "sub", "mul", "div", "mod", "fmod", "pow", "maximum", "minimum", "eq", "ne",
           "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift", "copysign", "logaddexp"]

#: every name asked, in the recording's order -> its arity (all binary)
OPS: dict[str, int] = {**dict.fromkeys(OPERATORS, 2), **dict.fromkeys((f"Tensor.{m}" for m in METHODS), 2)}

#: no name asked is another's function object (``Tensor.__add__`` calls ``Tensor.add``, it is not it)
ALIASES: dict[str, str] = {}

#: no ternary op is asked
WHERE_CONDITIONS: list[str] = []


def asked(op: str, operands: list[str], options: dict) -> bool:
    """Whether a case is asked: not two Python scalars (Python's arithmetic), and a method only
    with a Tensor on the left (``Tensor.add(1, x)`` is no call a user makes)."""
    python = [o.startswith("py:") for o in operands]
    return not all(python) and (op in OPERATORS or not python[0])


def function(op: str):
    """What asking `op` does, as a function of two operands."""
    from tinygrad import Tensor  # noqa: PLC0415

    return OPERATORS[op] if op in OPERATORS else getattr(Tensor, op.split(".", 1)[1])


def asker(options: dict):
    """``ask(op, operands) -> (result, error)`` under `options`; None (not asked) for a method
    whose first operand is a Python scalar (a method needs a Tensor on the left)."""
    functions: dict = {}

    def ask(op: str, operands: list[str]):
        if not asked(op, operands, options):
            return None
        fn = functions.get(op) or functions.setdefault(op, function(op))
        with pairs.settings(options):
            values = [pairs.make_operand(o) for o in operands]
            return pairs.answer(lambda: fn(*values), options, rank=True)

    return ask


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` under every options dict; an op recording."""
    version = pairs.version()  # first: it names the device
    recorder = Recorder([*pairs.ASKED, *pairs.PY_SCALARS])
    askers = [(options, asker(options)) for options in pairs.OPTIONS]
    for op, arity in OPS.items():  # each op's rows together, under each options dict in turn
        for options, ask in askers:
            opsweep.sweep(recorder, {op: arity}, options, ask, WHERE_CONDITIONS, OPERATORS)
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": version,
        "probe": "promote_cli.probes.tinygrad_ops", "device": os.environ["DEV"], "aliases": {},
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                       else "tests/data/recordings/ops-tinygrad.json")
