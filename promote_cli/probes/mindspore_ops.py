"""Probe: what dtype each binary MindSpore op gives (CPU, pynative), over every operand `opsweep` asks.

What is asked
    The Tensor operators (``a + b``, ``a < b``, ``a & b``, ...; a Python scalar on the left runs
    the reflected method) and the ``mindspore.ops`` functions of two operands, spelled as a user
    writes them (``ops.add``, ``ops.floor_div``, ``ops.bitwise_and``): every name of `OPS`.  The
    axis is every dtype of the pair probe (`promote_cli.probes.mindspore.ASKED`) as a tensor of
    shape ``[2]``, then as a 0-d tensor, then the Python scalars (`opsweep.axis`); tensors hold
    ones (made from NumPy arrays, as the pair probe makes them).  Launches are blocking, and the
    worker runs in a subprocess in an empty temporary directory (see the pair probe).

How the answer is read
    The result as an operand (``0d:i8`` for a result of rank 0), or the refusal:
    ``ExceptionClass: first line`` (`promote_cli.probes.mindspore.clean_error`).

One options dict, ``{"mode": "pynative"}``: graph mode compiles every case (about a tenth of a
second each), so the op recording asks pynative mode only; the pair recording asks ``+`` and
``ops.add`` in both modes.

    python -m promote_cli.probes.mindspore_ops OUT.json [RULESET]
"""

from __future__ import annotations

import platform
import sys

from promote_cli.probes import opsweep
from promote_cli.probes.mindspore import TO_MS, ask_cases, main, version
from promote_cli.probes.opcases import Recorder, write_op_recording
from promote_cli.probes.opsweep import OPERATORS

FRAMEWORK = "mindspore"
PACKAGE = "mindspore"

_BINARY_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^",
                     "<<", ">>"]
_FUNCTIONS = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_div",
              "floor_divide", "floor_mod", "remainder", "fmod", "pow", "maximum", "minimum",
              "equal", "eq", "not_equal", "ne", "less", "lt", "less_equal", "le", "greater", "gt",
              "greater_equal", "ge", "logical_and", "logical_or", "logical_xor",
              "bitwise_and", "bitwise_or", "bitwise_xor"]

#: every name asked, in the recording's order -> its arity (`opsweep.leading`)
OPS: dict[str, int | str] = {**dict.fromkeys(_BINARY_OPERATORS, 2), **{f"ops.{f}": 2 for f in _FUNCTIONS}}

#: name -> the name it is the same Python object as: none (``ops.sub`` and ``ops.subtract`` are
#: distinct functions in MindSpore 2.10)
ALIASES: dict[str, str] = {}

#: ``where`` is not asked
WHERE_CONDITIONS: list[str] = []

OPTIONS = {"mode": "pynative"}


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` (aliases once, under their canonical name) in worker subprocesses; an op recording."""
    recorder = Recorder(opsweep.axis(TO_MS))
    asked: list = []

    def collect(op: str, operands: list[str]):
        asked.append([op, operands])
        return "?", None

    opsweep.sweep(recorder, OPS, OPTIONS, collect, WHERE_CONDITIONS, OPERATORS)
    answers = iter(ask_cases("promote_cli.probes.mindspore_ops", "pynative", asked, keep_rank=True))
    recorder = Recorder(opsweep.axis(TO_MS))
    opsweep.sweep(recorder, OPS, OPTIONS, lambda op, operands: tuple(next(answers)), WHERE_CONDITIONS, OPERATORS)
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.mindspore_ops",
        "python": platform.python_version(), "device": "cpu", "aliases": ALIASES,
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    main(sys.argv[1:], "tests/data/recordings/ops-mindspore.json",
         lambda path: write_op_recording(record_ops(), path))
