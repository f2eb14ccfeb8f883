"""`promote expr "EXPR" -f FW`: the result type of a whole expression."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.options import framework_option, framework_options, option_option
from promote_cli.errors import EXIT_NO
from promote_cli.formats import one_line


@click.command()
@click.argument("expression")
@framework_option
@option_option
@click.option("--explain", is_flag=True, help="Print every node: its result, weak/ambiguous mark and deciding rule.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: the result alone (every node with --explain); json: the result and the tree.")
def expr(expression, framework, options, explain, fmt):
    """The result of EXPRESSION under a framework's rules, e.g. "x:i16 * (y:i8 + 1) / 2.0".

    \b
    Variables:  NAME:OPERAND at the first use (x:i16, s:0d:f32, w:weak:f32),
                then NAME
    Literals:   1 2.5 1e3 True False 1j (and anvil's 1L)
    Operators:  + - * / // ** % == != < <= > >= & | ^, unary - +,
                parentheses; maximum(a, b), minimum(a, b), where(c, a, b)

    Exit codes: 0 answered, 1 the framework refuses a step (named with its
    columns), 2 a malformed expression (with a caret under the position) or
    another usage error.
    """
    framework, opts = framework_options(framework, options)
    result = promote_cli.expr(expression, framework, opts)
    formats.emit(formats.get(fmt).expression(result, explain))
    if result.result is None:
        click.echo(f"promote: {one_line(result.refusal)}", err=True)
        sys.exit(EXIT_NO)
