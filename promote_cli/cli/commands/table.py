"""`promote table -f FW`, `promote table --diff FW1 FW2` and `promote table --cast`."""

from __future__ import annotations

import sys

import click

from promote_cli.cli import render
from promote_cli.cli.options import (
    color_option,
    color_wanted,
    framework_option,
    op_option,
    option_option,
    parse_options,
)
from promote_cli.errors import EXIT_NO, UsageError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import resolve_op
from promote_cli.oracle.matrix import diff, matrix

FORMATS = ["rich", "text", "json", "csv", "markdown"]


@click.command()
@framework_option
@click.option("--diff", "diff_pair", nargs=2, metavar="FW1 FW2", help="Show only the cells where two rulesets differ.")
@click.option("--cast", "cast_pairs", is_flag=True, help="The TOSA CAST pairs and the profile or extension of each.")
@op_option
@option_option
@click.option("--types", metavar="A,B,...", help="Restrict both axes to these operands.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="Default: rich on a terminal, text when piped or with NO_COLOR.")
@click.option("--exit-code", is_flag=True, help="With --diff: exit 1 when any difference exists.")
@color_option
def table(framework, diff_pair, cast_pairs, op, options, types, fmt, exit_code, color):
    """The promotion matrix of a framework (rows: left operand, columns: right operand)."""
    colored = color_wanted(color)
    fmt = fmt or ("rich" if colored else "text")
    type_list = [t.strip() for t in types.split(",") if t.strip()] if types else None
    opts = parse_options(options)
    if cast_pairs:
        return _cast_table(fmt, colored)
    if diff_pair:
        return _diff(diff_pair, op, opts, type_list, fmt, exit_code, colored)
    if exit_code:
        raise UsageError("--exit-code goes with --diff")
    if not framework:
        raise UsageError("which framework? give -f NAME, or --diff FW1 FW2 (see `promote frameworks`)")
    rs = registry.load(framework)
    resolve_op(rs, op)
    m = matrix(rs, type_list, op, opts)
    if fmt == "json":
        click.echo(render.matrix_json(m))
    elif fmt == "rich":
        from promote_cli.cli.render_rich import print_matrix

        print_matrix(m, colored)
    else:
        click.echo(render.MATRIX_FORMATS[fmt](m), nl=False)


def _diff(pair, op, opts, type_list, fmt, exit_code, colored):
    rs1, rs2 = registry.load(pair[0]), registry.load(pair[1])
    for rs in (rs1, rs2):
        resolve_op(rs, op)
    opts1 = {k: v for k, v in opts.items() if k in rs1.options}
    opts2 = {k: v for k, v in opts.items() if k in rs2.options}
    unknown = [k for k in opts if k not in rs1.options and k not in rs2.options]
    if unknown:
        raise UsageError(f"neither {pair[0]} nor {pair[1]} has option {unknown[0]!r}")
    d = diff(rs1, rs2, pair[0], pair[1], type_list, op, opts1, opts2)
    if fmt == "json":
        click.echo(render.diff_json(d))
    elif fmt == "rich":
        from promote_cli.cli.render_rich import print_diff

        print_diff(d, colored)
    else:
        click.echo(render.DIFF_FORMATS[fmt](d), nl=False)
    if exit_code and d.differences:
        sys.exit(EXIT_NO)


def _cast_table(fmt, colored):
    from promote_cli.numerics.legality import LEGAL

    pairs = sorted(LEGAL.items())
    if fmt == "json":
        click.echo(render.dumps({"operator": "CAST", "pairs": [{"from": s, "to": d, "profile": p}
                                                               for (s, d), p in pairs]}))
        return
    header = ["from", "to", "profile/extension"]
    records = [[s, d, p] for (s, d), p in pairs]
    if fmt == "rich":
        from promote_cli.cli.render_rich import print_records

        print_records("TOSA CAST", header, records, colored)
    else:
        click.echo(render.RECORD_FORMATS[fmt](header, records), nl=False)
