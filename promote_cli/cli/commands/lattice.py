"""`promote lattice -f FW`: the Hasse diagram of a ruleset's order, or the cells that keep it from being a lattice."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.options import framework_option, framework_options, op_option, option_option, parse_types
from promote_cli.errors import EXIT_NO

FORMATS = ["text", "json", "dot", "mermaid"]
SHOWN_CELLS = 20  # at most this many offending cells on stderr (all of them in --format text or json)


@click.command()
@framework_option
@op_option
@option_option
@click.option("--lattice", "name", metavar="NAME", help="Which of the rule file's lattices (default: its first).")
@click.option("--answers", is_flag=True,
              help="The order of the op's answers (a <= b when a op b = b) even for a ruleset with lattices "
                   "(implied by --op and --types).")
@click.option("--types", metavar="A,B,...", help="The order of the answers for only these operands.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def lattice(framework, op, options, name, answers, types, fmt):
    """The order behind a ruleset, as its Hasse diagram (each type and the types just above it).

    A rule file with lattices gives its lattice (weak nodes such as py:int shown apart); a table-shaped
    one gives the smallest order consistent with the op's answers, where a <= b when a op b = b, if every
    answer is the least upper bound of its operands there; otherwise the cells that are not.

    Exit codes: 0 a lattice, 1 not a lattice (the cells that make it so are listed), 2 usage or input error.
    """
    framework, opts = framework_options(framework, options)
    given = click.get_current_context().get_parameter_source("op") != click.core.ParameterSource.DEFAULT
    if given or types is not None:
        answers = True  # an op or a type list asks about answers, never a declared lattice
    o = promote_cli.lattice(framework, op, opts, name=name, answers=answers or None,
                            types=parse_types(types))
    if o.is_lattice or fmt in ("text", "json"):
        formats.emit(formats.get(fmt).order(o))
    if o.is_lattice:
        return
    if fmt not in ("text", "json"):
        lines = formats.cell_lines(o)
        for line in lines[:SHOWN_CELLS]:
            click.echo(formats.one_line(line), err=True)
        if len(lines) > SHOWN_CELLS:
            click.echo(f"... and {len(lines) - SHOWN_CELLS} more (--format text lists them all)", err=True)
    click.echo(formats.one_line(f"{o.key} {o.op}: not a lattice: {len(o.cells)} of {len(o.nodes) ** 2} cells "
                                f"are not the least upper bound of their operands in the order a <= b when "
                                f"a {o.op} b = b"), err=True)
    sys.exit(EXIT_NO)
