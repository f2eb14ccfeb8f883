"""The operand pairs the probes ask: tensors, 0-d tensors and Python scalars on either side.

Operands are the contract's strings (``i8`` a dimensioned tensor, ``0d:i8`` a 0-d one,
``py:int`` a Python scalar).  The probes of PyTorch, Paddle, NumPy and the array API ask
the same groups, in the same order; each chooses which ops ask which of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

from promote_cli.vocab import operands

#: the Python scalar operands, in the order the recordings ask them
SCALARS = tuple(f"py:{kind}" for kind in ("bool", "int", "float", "complex"))

#: the value operands every value recording asks (`record_values`): Python ints at the edges of the 8-, 16-, 32-
#: and 64-bit ranges, floats, NaN, an infinity, a bool, complex numbers; and a few 0-d arrays with a value
#: (asked where the framework has their dtype)
VALUES = ("py:0", "py:1", "py:-1", "py:127", "py:128", "py:255", "py:256", "py:-129", "py:300", "py:32768",
          "py:65536", "py:2147483647", "py:2147483648", "py:-2147483649", "py:4294967296",
          "py:9223372036854775807", "py:9223372036854775808", "py:-9223372036854775809",
          "py:18446744073709551615", "py:18446744073709551616", "py:1.5", "py:1e+300", "py:nan", "py:-inf",
          "py:True", "py:1j", "py:1+1j", "0d:i64=300", "0d:i32=-1", "0d:u8=255", "0d:f64=1e+300", "0d:f32=1.5")


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


def python_scalar(text: str, samples: dict):
    """The Python value of a `py:` operand: its value (`py:300`), or for a kind (`py:int`) the probe's sample."""
    x = operands.parse(text)
    return x.value if x.has_value else samples[x.pykind]


def rank0_value(text: str):
    """The value a `0d:` operand holds (`0d:i64=300`: 300), None for one without (`0d:i64`)."""
    return operands.parse(text).value


def values_for(types: Iterable[str]) -> list[str]:
    """The value operands of `VALUES` a framework with these dtypes can be asked (a 0-d one of a dtype it has)."""
    have = set(types)
    return [v for v in VALUES if not v.startswith("0d:") or operands.parse(v).dtype.name in have]


def record_values(asking: Callable, types: Iterable[str], head: dict, options: Iterable[dict] = ({},),
                  ops: Iterable[str] = ("add",)) -> dict:
    """A value recording (`probes/opcases.py`, kind "values"): for each options dict, op and dtype `t` (a tensor),
    ``t op v`` and ``v op t`` for every value operand v (`values_for`), asked as ``asking(options)(op, [a, b])``
    (`asking` sets the framework up for those options, or looks up what a subprocess so set up answered)."""
    from promote_cli.probes.opcases import PLACE, Recorder  # noqa: PLC0415

    types, ops = list(types), list(ops)
    recorder = Recorder(values_for(types), kind="values")
    for opts in options:
        ask = asking(opts)
        for op in ops:
            for t in types:
                recorder.row(op, opts, [t, PLACE], ask)
                recorder.row(op, opts, [PLACE, t], ask)
    return recorder.recording(head)
