"""`promote query A B -f FW` and `promote query --batch -f FW`."""

from __future__ import annotations

import sys

import click

from promote_cli.cli import render
from promote_cli.cli.options import (
    dtype_argument_completion,
    framework_option,
    op_option,
    option_option,
    parse_options,
    require_framework,
)
from promote_cli.errors import EXIT_NO, EXIT_OK, EXIT_USAGE, PromoteError, UsageError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer, resolve_op


@click.command()
@click.argument("a", required=False, shell_complete=dtype_argument_completion)
@click.argument("b", required=False, shell_complete=dtype_argument_completion)
@framework_option
@op_option
@option_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: the result alone; json: one object with the rule and reason.")
@click.option("--batch", is_flag=True, help="Read `A B` pairs from stdin, one per line; answer each in order.")
def query(a, b, framework, op, options, fmt, batch):
    """The common dtype of A and B under a framework's rules.

    \b
    Operands: DTYPE, 0d:DTYPE (rank-0 tensor), py:bool|int|float|complex (Python scalar),
    weak:DTYPE or DTYPE? (weakly typed / ambiguous).
    Exit codes: 0 answered, 1 the framework refuses the pair, 2 usage or input error.
    """
    rs = registry.load(require_framework(framework))
    opts = parse_options(options)
    if batch:
        if a is not None:
            raise UsageError("--batch reads pairs from stdin; give no operands")
        resolve_op(rs, op)
        sys.exit(_batch(rs, op, opts, fmt))
    if a is None or b is None:
        raise UsageError("query takes two operands: promote query A B -f FRAMEWORK")
    ans = answer(rs, a, b, op, opts)
    if fmt == "json":
        click.echo(render.answer_json(ans))
    elif ans.result is not None:
        click.echo(ans.result)
    if ans.result is None:
        click.echo(f"promote: {render.refusal_line(ans)}", err=True)
        sys.exit(EXIT_NO)


def _batch(rs, op, opts, fmt) -> int:
    out = sys.stdout
    status = EXIT_OK
    pending = []
    seen: dict[tuple[str, ...], tuple[str, int]] = {}  # the same pair answers the same: render it once
    for line in sys.stdin:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = tuple(text.split())
        hit = seen.get(parts)
        if hit is not None:
            pending.append(hit[0])
            status = max(status, hit[1])
            if len(pending) >= 4096:
                out.write("\n".join(pending) + "\n")
                pending.clear()
            continue
        line_status = EXIT_OK
        try:
            if len(parts) != 2:
                raise UsageError(f"expected `A B`, got {text!r}")
            ans = answer(rs, parts[0], parts[1], op, opts)
        except PromoteError as exc:
            line_status = EXIT_USAGE
            if fmt == "json":
                rendered = render.dumps({"framework": rs.name, "op": op, "a": parts[0] if parts else None,
                                         "b": parts[1] if len(parts) > 1 else None, "result": None,
                                         "error": str(exc)})
            else:
                rendered = f"error: {exc}"
        else:
            if ans.result is None:
                line_status = EXIT_NO
            if fmt == "json":
                rendered = render.answer_json(ans)
            else:
                rendered = ans.result if ans.result is not None else f"error: {ans.refusal}"
        seen[parts] = (rendered, line_status)
        pending.append(rendered)
        status = max(status, line_status)
        if len(pending) >= 4096:
            out.write("\n".join(pending) + "\n")
            pending.clear()
    if pending:
        out.write("\n".join(pending) + "\n")
    out.flush()
    return status
