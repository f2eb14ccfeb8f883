"""`promote query A B -f FW` and `promote query --batch -f FW`."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli import answer, definition
from promote_cli.cli.options import declared, framework_options
from promote_cli.errors import UsageError


@click.command()
@declared(definition.QUERY)
def query(operands, framework, op, options, fmt, batch):
    """The common dtype of A and B (or of A B C ...) under a framework's rules.

    \b
    Operands:
      DTYPE                       a tensor
      0d:DTYPE                    a rank-0 tensor
      py:bool|int|float|complex   a Python scalar
      weak:DTYPE or DTYPE?        weakly typed / ambiguous

    More than two operands: the result type of them all, as the framework's
    rules combine them.

    Exit codes: 0 answered, 1 the framework refuses the pair, 2 usage or input
    error.
    """
    if batch:
        framework, opts = framework_options(framework, options)
        out = formats.get(fmt)
        if operands:
            raise UsageError("--batch reads pairs from stdin; give no operands")
        sys.exit(_batch(framework, op, opts, out))
    # the fast path (fast.py) prints the same through the same function, without Click
    text, diagnostic, code = answer.printed(framework, operands, op, options, fmt)
    formats.emit(text)
    if diagnostic is not None:
        click.echo(diagnostic, err=True)
        sys.exit(code)


def _batch(framework, op, opts, out) -> int:
    """Answer stdin line by line; the exit code is the worst line's (2 outranks 1)."""
    stdout = sys.stdout
    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # bytes: each line is decoded on its own
    try:
        status, unanswered = promote_cli.batch_write(framework, stdin, out.batch_line, stdout.write, op, opts)
    finally:
        stdout.flush()
    if unanswered:
        click.echo(f"promote: {unanswered} line{'s' if unanswered != 1 else ''} could not be answered "
                   f"(see {out.unanswered})", err=True)
    return status
