"""The operand pairs the probes ask: tensors, 0-d tensors and Python scalars on either side.

Operands are the contract's strings (``i8`` a dimensioned tensor, ``0d:i8`` a 0-d one,
``py:int`` a Python scalar).  The probes of PyTorch, Paddle, NumPy and the array API ask
the same groups, in the same order; each chooses which ops ask which of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

#: the Python scalar operands, in the order the recordings ask them
SCALARS = tuple(f"py:{kind}" for kind in ("bool", "int", "float", "complex"))


def pair_groups(types: Iterable[str], scalars: Iterable[str] = SCALARS) -> Iterator[list[tuple[str, str]]]:
    """The operand pairs, grouped by what they combine.

    First, for each ordered dtype pair (a, b): ``a b``, ``0d:a b``, ``a 0d:b``, ``0d:a 0d:b``.
    Then, for each dtype t and Python scalar s: ``t s``, ``s t``, ``0d:t s``, ``s 0d:t``.
    The pairs without a 0-d tensor (the first of a dtype group, the first two of a scalar
    group) are the ones that name dtypes only.
    """
    types, scalars = list(types), list(scalars)
    for a, b in itertools.product(types, types):
        yield [(a, b), (f"0d:{a}", b), (a, f"0d:{b}"), (f"0d:{a}", f"0d:{b}")]
    for t, s in itertools.product(types, scalars):
        yield [(t, s), (s, t), (f"0d:{t}", s), (s, f"0d:{t}")]


def without_0d(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs in which no operand is a 0-d tensor."""
    return [(a, b) for a, b in pairs if not (a.startswith("0d:") or b.startswith("0d:"))]


def ask_every(ask: Callable, pairs: Iterable[tuple[str, str, str]], triple_operands: Iterable[str],
              options: dict) -> tuple[list, list]:
    """Ask ``ask(op, operands) -> (result, error)`` every ``(op, a, b)`` pair and the
    ``result_type`` of every ordered triple of `triple_operands`; return the recording's
    pair cases ``[op, a, b, options, result, error]`` and N-operand cases
    ``["result_type", [a, b, c], None, options, result, error]``."""
    cases, nary = [], []
    for op, a, b in pairs:
        result, error = ask(op, [a, b])
        cases.append([op, a, b, options, result, error])
    for triple in itertools.product(list(triple_operands), repeat=3):
        result, error = ask("result_type", list(triple))
        nary.append(["result_type", list(triple), None, options, result, error])
    return cases, nary
