"""`promote explain A B -f FW` and `promote expect FILE`: why an answer is what it is, and checking answers."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.options import (
    dtype_argument_completion,
    framework_option,
    op_option,
    framework_options,
    option_option,
)
from promote_cli.errors import EXIT_NO, UsageError


@click.command()
@click.argument("operands", nargs=-1, shell_complete=dtype_argument_completion)
@framework_option
@op_option
@option_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(operands, framework, op, options, fmt):
    """Which rule of a framework decides A op B (an op group's op: its one to three operands, its group and rule): the rule, the table cell or lattice path it used, the
    [[after]] clauses that applied, its reason, and what every other value of each option gives.

    Exit codes: 0 explained (refused pairs too), 2 usage or input error.
    """
    framework, opts = framework_options(framework, options)
    if not 1 <= len(operands) <= 3:
        raise UsageError("explain takes two operands (an op of an op group its own number): "
                         "promote explain A B -f FRAMEWORK")
    x = promote_cli.explain(framework, *operands[:2], *[None] * (2 - len(operands)), op, opts,
                            operands[2] if len(operands) > 2 else None)
    formats.emit(formats.get(fmt).explanation(x))


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def expect(file, fmt):
    """Check FILE's expected answers, one a line: FRAMEWORK[:KEY=VALUE,...] A B [C ...] [OP] ->
    RESULT (or -> refused); # comments and blank lines are skipped. `-` reads standard input.

    Exit codes: 0 every expectation holds, 1 some do not (each printed with its line number),
    2 a malformed line or an unreadable file.
    """
    if file == "-":
        report = promote_cli.expect(sys.stdin.buffer.read(), source="<stdin>")
    else:
        report = promote_cli.expect(file)
    formats.emit(formats.get(fmt).expectations(report))
    if report.mismatches:
        sys.exit(EXIT_NO)
