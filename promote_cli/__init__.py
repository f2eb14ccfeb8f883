"""promote: a type-promotion oracle for machine-learning frameworks.

    from promote_cli import query, table, diff, load
    query("cann", "s8", "u8").result                      # 'i16'
    query("openvino", "i8", "u8", options={"promote_unsafe": True}).result
    table("cann").results()                               # the full matrix
    diff("cann", "cann@opbase").differences               # where two rulesets disagree
    cast_array(x, "f16")                                  # TOSA CAST of a numpy array (numpy loaded on use)
    cast_file("w.npy", to="bf16")                         # the same on a .npy file, streamed

Everything the CLI does is here; the CLI only parses, calls and renders.
"""

from __future__ import annotations

from promote_cli.errors import PromoteError, Refusal, RuleFileError, UsageError
from promote_cli.oracle.engine import Answer
from promote_cli.vocab.dtypes import DTYPES, DType, lookup
from promote_cli.vocab.operands import Operand
from promote_cli.vocab.operands import parse as parse_operand

__all__ = ["query", "table", "diff", "load", "frameworks", "Answer", "DType", "DTYPES", "lookup", "Operand",
           "parse_operand", "PromoteError", "Refusal", "RuleFileError", "UsageError", "cast_array", "cast_file",
           "verify", "rescale_array"]


def load(framework: str):
    """The compiled Ruleset for `NAME` or `NAME@VERSION`."""
    from promote_cli.oracle.registry import load as _load

    return _load(framework)


def query(framework: str, a, b, op: str = "add", options: dict | None = None) -> Answer:
    """The answer of `framework` for `a op b`; `.result` is None when the framework refuses."""
    from promote_cli.oracle.engine import answer

    return answer(load(framework), a, b, op, options)


def table(framework: str, types: list[str] | None = None, op: str = "add", options: dict | None = None):
    """The promotion matrix (a `Matrix`: `.types`, `.results()`)."""
    from promote_cli.oracle.matrix import matrix

    return matrix(load(framework), types, op, options)


def diff(fw1: str, fw2: str, types: list[str] | None = None, op: str = "add", options: dict | None = None):
    """The cells where two rulesets answer differently (a `Diff`: `.differences`)."""
    from promote_cli.oracle.matrix import diff as _diff

    rs1, rs2 = load(fw1), load(fw2)
    o1 = {k: v for k, v in (options or {}).items() if k in rs1.options}
    o2 = {k: v for k, v in (options or {}).items() if k in rs2.options}
    return _diff(rs1, rs2, fw1, fw2, types, op, o1, o2)


def frameworks():
    """Every ruleset this installation knows."""
    from promote_cli.oracle.registry import all_rulesets

    return all_rulesets()


def verify(framework: str, recording: str | None = None):
    """A `Report` of a ruleset against a saved recording or, without one, the live framework (and the probe's own
    checks, such as TOSA's CAST kernels against the reference model); `.agrees` is the verdict."""
    from promote_cli.probes.recordings import run

    return run(framework, recording)


def __getattr__(name: str):
    # The numeric parts load numpy and ml_dtypes: only on first use.
    if name == "cast_array":
        from promote_cli.numerics.cast import cast_array

        return cast_array
    if name == "rescale_array":
        from promote_cli.numerics.rescale import rescale_array

        return rescale_array
    if name == "cast_file":
        from promote_cli.arrayio.castfile import cast_file

        return cast_file
    raise AttributeError(f"module 'promote_cli' has no attribute {name!r}")
