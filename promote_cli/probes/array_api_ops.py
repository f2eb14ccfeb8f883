"""Probe: what dtype each op of the array API standard gives in array-api-strict, one
recording per standard version, over every operand `opsweep` asks.

What is asked
    Under each standard version array-api-strict supports (``api_version``, set as the
    pair probe `promote_cli.probes.array_api` sets it), each name of `OPS` the version
    has (`ops_for`: a function is asked from the version `SINCE` names on), called as a user
    calls it: the operators on arrays (``a + b``, ``-a``, ``a @ b``; a Python scalar on
    the left runs the reflected method), the namespace's functions with their default
    arguments (reductions over every element), except where a function needs one more
    argument: ``tensordot`` takes ``axes=1`` (its default contracts two dimensions, which
    a vector does not have); ``concat`` and ``stack`` take the list ``[a, b]``.  Arrays
    have shape ``(2,)`` (``0d:``: shape ``()``) and hold ones, as the pair probe makes
    them; linear algebra (``matmul``, ``@``, ``vecdot``, ``tensordot``) takes two vectors
    of shape ``(2,)``.  Python scalars are `promote_cli.probes.dtype_names.PY_VALUES`.

How the answer is read
    The result's dtype as an operand (``0d:i64`` for a 0-d array), or the refusal:
    ``ExceptionClass: first line of the message``, without the sentence that repeats the
    operands' dtypes (`clean_error`).

Each version is its own ruleset (``array-api@2024.12``) whose defaults are that
version's, so each recording has one options dict, ``{}``, as the pair recordings do.

    python -m promote_cli.probes.array_api_ops OUT.json [RULESET]
    python -m promote_cli.probes.array_api_ops              (every version, into tests/data/recordings)
"""

from __future__ import annotations

from promote_cli.probes import opsweep
from promote_cli.probes.array_api import FRAMEWORK, PACKAGE, TYPES, api_versions, make_operand, version
from promote_cli.probes.dtype_names import canonical, first_line
from promote_cli.probes.numpy_ops import OPERATORS, WHERE_CONDITIONS, asker, calling
from promote_cli.probes.opcases import Recorder, write_op_recording

_BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum", "minimum",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_left_shift", "bitwise_right_shift",
           "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
_REDUCTIONS = ["sum", "prod", "mean", "cumulative_sum", "cumulative_prod", "max", "min", "argmax", "argmin",
               "std", "var", "all", "any"]
_UNARY = ["abs", "negative", "positive", "sign", "sqrt", "exp", "log", "sin", "floor", "ceil", "round",
          "trunc", "square", "reciprocal", "isnan", "isfinite", "real", "imag", "conj", "logical_not",
          "bitwise_invert"]
_LINALG = ["matmul", "vecdot", "tensordot"]
_ARRAY = {"concat": 2, "stack": 2, "where": opsweep.WHERE, "clip": opsweep.CLIP}

#: every name asked by some version, in the recordings' order -> its arity (`opsweep.leading`).
OPS: dict[str, int | str] = {
    **{op: (1 if op.endswith("x") else 2) for op in OPERATORS},
    **dict.fromkeys(_BINARY, 2), **dict.fromkeys(_REDUCTIONS, 1), **dict.fromkeys(_UNARY, 1),
    **dict.fromkeys(_LINALG, 2), **_ARRAY,
}

#: the functions added after the first version, -> the version that added them (every other
#: name of `OPS` is in every version array-api-strict supports; its 2021.12 is its 2022.12,
#: complex types, ``real``, ``imag`` and ``conj`` included).  `record_ops` checks each
#: against array-api-strict: asked earlier, it refuses with "requires API version".
SINCE = {"maximum": "2023.12", "minimum": "2023.12", "clip": "2023.12", "cumulative_sum": "2023.12",
         "cumulative_prod": "2024.12", "reciprocal": "2024.12"}

#: no two names of the standard are one function.
ALIASES: dict[str, str] = {}

_VERSION_GATE = "requires API version"


def ops_for(ruleset: str) -> dict:
    """The names of `OPS` the standard version of `ruleset` (``array-api@2023.12``) has, in
    order, -> arity."""
    api_version = ruleset.partition("@")[2]
    return {op: arity for op, arity in OPS.items() if SINCE.get(op, "") <= api_version}


def function(op: str):
    """What calling `op` on operands does, as a function of the operands."""
    import array_api_strict as xp  # noqa: PLC0415

    return calling(op, OPERATORS[op] if op in OPERATORS else getattr(xp, op))


def clean_error(exc: BaseException) -> str:
    """array-api-strict's first line, without the sentence that repeats the operands' dtypes
    (``Only numeric dtypes are allowed in multiply(...). Got array_api_strict.bool and ...``)."""
    line = first_line(exc)
    head, got, _ = line.partition(". Got ")
    return head + "." if got else line


def _dtype_name(dtype) -> str:
    return canonical(str(dtype).rpartition(".")[2])


def _operands(arity) -> list[str]:
    """Operands every op of `arity` takes (a float vector each; a bool condition for ``where``)."""
    if arity == opsweep.WHERE:
        return ["bool", "f32", "f32"]
    return ["f32"] * (3 if arity == opsweep.CLIP else arity)


def check_versions(ruleset: str, ask) -> None:
    """Raise unless each name of `OPS` the ruleset's version lacks refuses as array-api-strict
    refuses a function of a later version."""
    for op, arity in OPS.items():
        if op not in ops_for(ruleset):
            _, error = ask(op, _operands(arity))
            if error is None or _VERSION_GATE not in error:
                raise AssertionError(f"array-api-strict has {op} under {ruleset}; SINCE says "
                                     f"{SINCE[op]}: {error}")


def record_ops(ruleset: str | None = None) -> dict:
    """Ask every op of the version's `ops` under that version (``array-api@VERSION``;
    default: the newest supported); an op recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("array-api-strict is not importable; pip install array-api-strict")
    import warnings  # noqa: PLC0415

    import array_api_strict as xp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    api_version = (ruleset or "").partition("@")[2] or api_versions()[-1]
    ruleset = f"{FRAMEWORK}@{api_version}"
    if api_version not in api_versions():
        raise RuntimeError(f"array-api-strict {ver} does not support api_version={api_version}")
    recorder = Recorder(opsweep.axis(TYPES))
    before = xp.get_array_api_strict_flags()["api_version"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xp.set_array_api_strict_flags(api_version=api_version)
        try:
            ask = asker(function, make_operand, _dtype_name, clean_error)
            check_versions(ruleset, ask)
            opsweep.sweep(recorder, ops_for(ruleset), {}, ask, WHERE_CONDITIONS, OPERATORS)
        finally:
            xp.set_array_api_strict_flags(api_version=before)
    gated = [m for m in recorder.messages if _VERSION_GATE in m]
    if gated:
        raise AssertionError(f"a function SINCE lists too late for {ruleset}: {gated[0]}")
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": ver, "api_version": api_version,
        "numpy": str(np.__version__), "probe": "promote_cli.probes.array_api_ops", "aliases": ALIASES,
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recordings
    import sys

    if len(sys.argv) > 1:
        write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1])
    else:
        for api in api_versions():
            write_op_recording(record_ops(f"{FRAMEWORK}@{api}"), f"tests/data/recordings/ops-array-api-{api}.json")
