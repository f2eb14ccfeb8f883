"""Probe: ask array-api-strict, the array API standard's reference implementation, per
standard version.

What is asked
    For each standard version array-api-strict supports (``2021.12`` ... ``2025.12``,
    set with ``array_api_strict.set_array_api_strict_flags(api_version=...)``), every
    ordered pair of its dtypes (bool, int8..64, uint8..64, float32/64, complex64/128),
    for two ops:

    ``add``          ``x + y`` on arrays of shape ``(2,)`` and 0-d arrays (``0d:``) on
                     either side, and a Python scalar (``py:bool|int|float|complex``) on
                     either side;
    ``result_type``  ``xp.result_type(x, y)`` on the same arrays and scalars, and on
                     triples (the recording's ``nary`` list:
                       ``[op, [a, b, c], null, options, result, error]``).

How the answer is read
    The result's dtype, or the first line of the exception's message.  ``add`` of two
    Python scalars is Python's arithmetic: it is not asked.

array-api-strict is imported inside the functions only, so importing this module never
fails when the package is absent.
"""

from __future__ import annotations

import itertools
import operator
import platform

from promote_cli.probes import cases as operand_cases
from promote_cli.probes.cases import ask_every, pair_groups
from promote_cli.probes.dtype_names import NATIVE, PY_VALUES, canonical, first_line

FRAMEWORK = "array-api"
PACKAGE = "array-api-strict"

#: the standard's dtypes (array_api_strict attribute names are the numpy names).
TYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "c64", "c128"]
NAMES = {name: NATIVE[name] for name in TYPES}
SCALARS = [f"py:{k}" for k in PY_VALUES]
OPS = ("add", "result_type")

#: the operands of the N-ary result_type cases: every ordered triple of these.
TRIPLE_OPERANDS = ["bool", "i8", "u8", "i64", "u64", "f32", "f64", "c64", "py:bool", "py:int", "py:float",
                   "py:complex"]


def version() -> str | None:
    """The installed array-api-strict version, None when absent."""
    try:
        import array_api_strict  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(array_api_strict.__version__)


def api_versions() -> tuple[str, ...]:
    """The standard versions the installed array-api-strict supports."""
    from array_api_strict import _flags  # noqa: PLC0415

    return tuple(_flags.supported_versions)


def make_operand(text: str):
    import array_api_strict as xp  # noqa: PLC0415

    if text.startswith("py:"):
        return operand_cases.python_scalar(text, PY_VALUES)
    if text.startswith("0d:"):
        value = operand_cases.rank0_value(text)
        dtype = getattr(xp, NAMES[text[3:].partition("=")[0]])
        return xp.ones((), dtype=dtype) if value is None else xp.asarray(value, dtype=dtype)
    return xp.ones(2, dtype=getattr(xp, NAMES[text]))


def ask(op: str, operands: list[str]) -> tuple[str | None, str | None]:
    """``(result, None)`` or ``(None, message)`` for one case under the current flags."""
    import array_api_strict as xp  # noqa: PLC0415

    try:
        values = [make_operand(t) for t in operands]
        if op == "add":
            out = operator.add(*values).dtype
        elif op == "result_type":
            out = xp.result_type(*values)
        else:
            raise ValueError(f"unknown op {op}")
    except Exception as exc:  # noqa: BLE001 - every error is an answer
        return None, first_line(exc)
    return canonical(str(out).rpartition(".")[2]), None


def pair_cases():
    for pairs in pair_groups(TYPES, SCALARS):
        for op in OPS:
            yield from ((op, a, b) for a, b in pairs)
    for s, r in itertools.product(SCALARS, SCALARS):
        yield "result_type", s, r


def _under(api_version: str | None, asking):
    """(the head of a recording, what `asking()` gives) under one standard version (default: the newest)."""
    ver = version()
    if ver is None:
        raise RuntimeError("array-api-strict is not importable; pip install array-api-strict")
    import warnings  # noqa: PLC0415

    import array_api_strict as xp  # noqa: PLC0415

    api_version = api_version or api_versions()[-1]
    before = xp.get_array_api_strict_flags()["api_version"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xp.set_array_api_strict_flags(api_version=api_version)
        try:
            got = asking()
        finally:
            xp.set_array_api_strict_flags(api_version=before)
    head = {"ruleset": f"{FRAMEWORK}@{api_version}", "package": PACKAGE, "version": ver, "api_version": api_version,
            "probe": "promote_cli.probes.array_api", "python": platform.python_version()}
    return head, got


def record(api_version: str | None = None) -> dict:
    """Ask every case under one standard version (default: the newest supported)."""
    head, (cases, nary) = _under(api_version, lambda: ask_every(ask, pair_cases(), TRIPLE_OPERANDS, {}))
    return {**head, "nary": nary, "cases": cases}


#: the ops the value recording asks, as the rulesets name them -> as `ask` does (its `add` is the operator; the
#: function xp.add takes no Python scalar before 2024.12)
VALUE_OPS = {"+": "add", "result_type": "result_type"}


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's array with every value operand (`cases.VALUES`), both orders, under the ruleset's standard
    version: a value recording."""
    _, _, api_version = (ruleset or "").partition("@")
    head, got = _under(api_version or None, lambda: operand_cases.record_values(
        lambda options: lambda op, pair: ask(VALUE_OPS[op], pair), TYPES, {}, ops=VALUE_OPS))
    return {**head, **got}


def record_for(ruleset: str) -> dict:
    """The recording for a ruleset name: ``array-api@2023.12`` asks that standard version."""
    _, _, api_version = ruleset.partition("@")
    return record(api_version or None)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recordings
    import sys

    from promote_cli.probes import write_recording

    if sys.argv[1:2] == ["--values"]:
        from promote_cli.probes.opcases import write_op_recording

        directory = sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values"
        for api in api_versions():
            write_op_recording(record_values(f"{FRAMEWORK}@{api}"), f"{directory}/array-api-{api}.json")
        sys.exit(0)
    directory = sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings"
    for api in api_versions():
        write_recording(record(api), f"{directory}/array-api-{api}.json")
