"""Probe: what dtype each Triton operator and tl function of two operands gives, per target, over the
operands `opsweep` asks.

What is asked
    Each name of `promote_cli.probes.triton.OPS` (the operators ``+ - * / // % < <= > >= == != & | ^ <<
    >>`` and ``tl.maximum``, ``tl.minimum``, ``tl.fdiv``, ``tl.div_rn``), built as the JIT builds it
    (`promote_cli.probes.triton.ask`), under each target of `TARGETS`.  The axis is every Triton dtype
    as a block tensor, then as a 0-d tensor (a scalar kernel argument), then the literals ``py:bool``,
    ``py:int``, ``py:float`` (``True``, ``1``, ``1.5``) and the values of `OP_VALUES` (``py:-1``,
    ``py:300``, ``py:2147483648``, ``py:1e+300``).  The leading operands of a row are the block
    tensors and the literals, not the 0-d tensors: a 0-d tensor promotes as a block does (the pair
    recording asks it on either side of ``+``), and it stands on the right of every row here.

How the answer is read
    The result operand (``0d:DTYPE`` where no operand is a block), or the refusal's
    ``ExceptionClass: first line``.  Where MLIR's verifier rejects what the frontend built, the cell is
    still the frontend's result; the header's ``ir_invalid`` lists those cells as ``[row, column]``
    (the pair recording keeps the verifier's message for ``+``).

    python -m promote_cli.probes.triton_ops OUT.json
"""

from __future__ import annotations

from promote_cli.probes import opsweep, triton
from promote_cli.probes.opcases import Recorder, write_op_recording
from promote_cli.probes.triton import OP_VALUES, TARGETS, TYPES, Target, ask, head, literals, version

FRAMEWORK = "triton"
PACKAGE = triton.PACKAGE

#: every op asked -> its number of operands; the operators among them
OPS = {op: 2 for op in triton.OPS}
OPERATORS = triton.OPERATORS
#: Triton has no two names for one function here, and no where() asked
ALIASES: dict = {}
WHERE_CONDITIONS = ()


def leading(arity, axis: list[str], where_conditions=()) -> list[list[str]]:
    """A row's leading operands: the block tensors and the literals (every op here has two operands)."""
    return [[x] for x in axis if not x.startswith("0d:")]


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` under every target; return an op recording (docs/recordings.md)."""
    ver = version()
    if ver is None:
        raise RuntimeError("triton is not importable; pip install triton")
    recorder = Recorder(opsweep.axis(TYPES, literals(OP_VALUES)))
    targets = {name: Target(name) for name in TARGETS}
    invalid = []
    for op in OPS:
        for name, target in targets.items():

            def answer(op: str, operands: list[str], target=target):
                if all(o.startswith("py:") for o in operands):
                    return None  # two literals: Python's arithmetic on constexprs
                result, error = ask(target, op, operands)
                if result is not None:
                    if error is not None:
                        invalid.append([len(recorder.rows), recorder.axis.index(operands[-1])])
                    return result, None
                return None, error

            for lead in leading(2, recorder.axis):
                recorder.row(op, {"target": name}, lead, answer)
    header = {**head(ver), "ruleset": ruleset, "probe": "promote_cli.probes.triton_ops", "aliases": ALIASES,
              "ir_invalid": invalid}
    return recorder.recording(header)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1 else
                       "tests/data/recordings/ops-triton.json")
