"""What `promote query A B [C ...]` prints, made once for both ways a query runs (the Click command in
`commands/query.py` and the Click-free path in `fast.py`), so that the two cannot differ."""

from __future__ import annotations

import promote_cli
from promote_cli import formats
from promote_cli.cli.arguments import framework_options
from promote_cli.errors import EXIT_NO, EXIT_OK, UsageError, one_line


def printed(framework: str | None, operands, op: str, options, fmt: str) -> tuple[str, str | None, int]:
    """(stdout text, the stderr line or None, exit code) of one query (`options`: the `-O KEY=VALUE` words);
    PromoteError when it cannot be asked."""
    framework, opts = framework_options(framework, options)
    out = formats.get(fmt)
    if not operands:
        raise UsageError("query takes two operands (or more): promote query A B [C ...] -f FRAMEWORK")
    if len(operands) == 1:  # an op of one operand (`--op sum`); a pair op says it takes two
        ans = promote_cli.query(framework, operands[0], None, op, opts)
    elif len(operands) == 2:
        ans = promote_cli.query(framework, operands[0], operands[1], op, opts)
    else:
        ans = promote_cli.query_n(framework, operands, op, opts)
    text = out.answer(ans)
    if ans.result is None:
        return text, f"promote: {one_line(refusal_line(ans))}", EXIT_NO
    return text, None, EXIT_OK


def refusal_line(ans) -> str:
    """One line for stderr explaining a refusal, with the option that would allow the pair."""
    if ans.operands is not None and len(ans.operands) != 2:
        text = f"{ans.framework}@{ans.version} refuses {ans.op} of {', '.join(ans.operands)}: {ans.refusal}"
    else:
        text = f"{ans.framework}@{ans.version} refuses {ans.a} {ans.op} {ans.b}: {ans.refusal}"
    if ans.hint:
        text += f" (with -O {ans.hint['option']}={ans.hint['value']} the result is {ans.hint['result']})"
    return text
