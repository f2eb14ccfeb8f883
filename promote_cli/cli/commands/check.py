"""`promote check -f FW`: properties of a ruleset's rules, with counterexamples; exit 1 when a claim fails."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.options import complete_op, framework_option, framework_options, option_option
from promote_cli.errors import EXIT_NO

FORMATS = ["text", "json"]


@click.command()
@framework_option
@click.option("--op", default=None, metavar="OP", shell_complete=complete_op,
              help="Check one op (default: every op group of the ruleset).")
@option_option
@click.option("--forms", default="tensor", show_default=True, metavar="FORMS",
              help="Operand forms beside tensors: a list of 0d, py, weak, or all (those the ruleset "
                   "distinguishes).")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="Counterexamples shown per property and kind (all are counted).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def check(framework, op, options, forms, limit, fmt):
    """Commutativity, associativity, lossy promotions and consistency between ops, each with its
    counterexamples; exit 1 when a property the rule file claims does not hold."""
    framework, opts = framework_options(framework, options)
    result = promote_cli.check(framework, op, opts, forms, limit)
    formats.emit(formats.get(fmt).check(result))
    if result.broken:
        click.echo(f"promote: {formats.broken_claims(result)}", err=True)
        sys.exit(EXIT_NO)
