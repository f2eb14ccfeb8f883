"""`promote port --from S --to T`: the casts that make a target ruleset reproduce a source ruleset."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.commands.info import LISTING_FORMATS, listing_format
from promote_cli.cli.options import color_option
from promote_cli.errors import EXIT_NO


@click.command()
@click.option("--from", "source", required=True, metavar="SIDE",
              help="The ruleset to reproduce: NAME[@VERSION][:KEY=VALUE,...] (e.g. torch, jax:x64=true).")
@click.option("--to", "target", required=True, metavar="SIDE",
              help="The ruleset that must reproduce it (e.g. onnx@21:runtime=onnxruntime).")
@click.option("--op", "ops", multiple=True, metavar="OP",
              help="An op, as either side names it (Add, +, sum); repeatable. Default: every op both have.")
@click.option("--types", default=None, metavar="LIST", help="Only these dtypes of the source (e.g. i8,u8,f16).")
@click.option("--kinds", default="all", show_default=True, metavar="FORMS",
              help="Operand forms beside tensors: a list of 0d, py, weak, or all (those the source distinguishes).")
@click.option("--format", "fmt", type=click.Choice(LISTING_FORMATS),
              help="Default: rich on a terminal, text when piped or with NO_COLOR.")
@color_option
@click.option("--exit-code", is_flag=True, help="Exit 1 when any case needs a cast or cannot be reproduced (for CI).")
def port(source, target, ops, types, kinds, fmt, color, exit_code):
    """For every case where the target's dtype differs from the source's (or the target refuses), the input
    casts, the target's op and the output cast that reproduce the source, each checked by the target's rules,
    or why no plan does. The summary line is on stderr."""
    result = promote_cli.port(source, target, list(ops) or None, types, kinds)
    formats.emit(listing_format(fmt, color).port(result))
    click.echo(f"promote: {result.summary()}", err=True)
    if exit_code and result.needs_casts:
        sys.exit(EXIT_NO)
