"""`promote table -f FW`, `promote table --diff FW1 FW2 [FW3 ...]` and `promote table --cast`."""

from __future__ import annotations

import shutil
import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.options import (
    color_option,
    color_wanted,
    complete_side,
    framework_option,
    framework_options,
    op_option,
    option_option,
    parse_options,
    parse_types,
)
from promote_cli.errors import EXIT_NO, UsageError

FORMATS = ["rich", "text", "json", "csv", "markdown"]


@click.command()
@framework_option
@click.option("--diff", "diff_sides", is_flag=True,
              help="Show only the cells where rulesets differ: `--diff FW1 FW2 [FW3 ...]`; a side may carry its "
                   "own options, e.g. openvino:promote_unsafe=true. A one-line summary follows (on stderr for "
                   "text, csv and markdown).")
@click.option("--cast", "cast_pairs", is_flag=True, help="The TOSA CAST pairs and the profile or extension of each.")
@op_option
@option_option
@click.option("--types", metavar="A,B,...", help="Restrict both axes to these operands (each once).")
@click.option("--operands", metavar="A,B,...", help="Add these operands to both axes, after the types: 0-d arrays, "
              "Python scalars, values (0d:i64,py:int,py:float).")
@click.option("--common", is_flag=True, help="Only the operands every ruleset has: with --diff, the types all sides "
              "share instead of their union; with -f, those of --types the framework has.")
@click.option("--drop-refused", is_flag=True, help="Leave out each operand whose row and column hold no answer "
              "(refused, or a type the framework lacks, on every side).")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="Default: rich on a terminal, text when piped or with NO_COLOR.")
@click.option("--width", type=click.IntRange(min=20), metavar="N",
              help="Fit the matrix into N columns, in vertical slices that each repeat the row labels "
                   "(rich: default the terminal's width; text: default one grid).")
@click.option("--exit-code", is_flag=True, help="With --diff: exit 1 when any difference exists.")
@click.option("--svg", "svg_file", metavar="FILE", help="Also draw the matrix or diff as an SVG picture in FILE "
              "(replaced atomically if it is a regular file; - for stdout); nothing else is printed.")
@click.option("--html", "html_file", metavar="FILE", help="The same as a standalone HTML page.")
@color_option
@click.argument("sides", nargs=-1, metavar="[FW1 FW2 ...]", shell_complete=complete_side)
@click.pass_context
def table(ctx, framework, diff_sides, cast_pairs, op, options, types, operands, common, drop_refused, fmt, width,
          exit_code, svg_file, html_file, color, sides):
    """The promotion matrix of a framework (rows: left operand, columns: right operand), or with --diff the
    cells where two or more rulesets differ. An op of one operand (`--op sum`, see `promote ops`) gives one
    column, operand -> result; with --diff a column per side, differences marked `*`."""
    _check_combination(_given(ctx), diff_sides, cast_pairs, sides)
    pictures = {k: v for k, v in (("svg", svg_file), ("html", html_file)) if v is not None}
    axes = {"common_types": common, "drop_refused": drop_refused, "operands": operands}
    if pictures:
        return _pictures(pictures, framework, sides if diff_sides else None, cast_pairs, op, options, types, axes, fmt,
                         exit_code)
    colored = color_wanted(color)
    fmt = fmt or ("rich" if colored else "text")
    if width is None and fmt == "rich":
        width = shutil.get_terminal_size().columns
    out = formats.get(fmt, color=colored, width=width)
    type_list = parse_types(types)
    if cast_pairs:
        return _cast_table(out)
    if diff_sides:
        d = promote_cli.diff(*sides, types=type_list, op=op, options=parse_options(options), **axes)
        formats.emit(formats.render(out, d))
        if isinstance(d, promote_cli.Column):  # an op of one operand: each side's column, differences marked
            if out.name != "json":
                click.echo(formats.column_summary(d), err=True)
        elif not out.summarises:
            click.echo(formats.diff_summary(d), err=True)
        if exit_code and d.differences:
            sys.exit(EXIT_NO)
        return
    framework, opts = _framework(framework, options)
    formats.emit(formats.render(out, promote_cli.table(framework, type_list, op, opts, **axes)))


def _framework(framework, options) -> tuple[str, dict]:
    """The ruleset of a matrix and its options (-f NAME[:KEY=VALUE,...] and -O)."""
    if not framework:
        raise UsageError("which framework? give -f NAME, or --diff FW1 FW2 (see `promote frameworks`)")
    return framework_options(framework, options)


def _given(ctx) -> set[str]:
    """The options the command line names (not defaults, not $PROMOTE_FRAMEWORK)."""
    from click.core import ParameterSource

    return {name for name in ctx.params if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}


def _check_combination(given: set[str], diff_sides: bool, cast_pairs: bool, sides: tuple) -> None:
    """Options that do not go together are a usage error, never silently ignored."""
    if cast_pairs:
        clash = [flag for name, flag in _NOT_WITH_CAST if name in given]
        if clash:
            raise UsageError(f"--cast lists TOSA CAST's pairs, and takes no {', '.join(clash)}")
        if sides:
            raise UsageError(f"--cast takes no rulesets (got {' '.join(sides)})")
        return
    if diff_sides:
        if "framework" in given:
            raise UsageError("--diff takes its rulesets as arguments, not -f: promote table --diff FW1 FW2 [FW3 ...]")
        if len(sides) < 2:
            got = f" (got only {sides[0]})" if sides else ""
            raise UsageError(f"--diff compares two or more rulesets: promote table --diff FW1 FW2 [FW3 ...]{got}")
        return
    if sides:
        raise UsageError(f"rulesets as arguments go with --diff: promote table --diff {' '.join(sides)} "
                         "(one ruleset: -f NAME)")
    if "exit_code" in given:
        raise UsageError("--exit-code goes with --diff")


#: options of a matrix or a diff that `--cast` has no use for: (parameter, how the user spells it)
_NOT_WITH_CAST = (("diff_sides", "--diff"), ("framework", "-f"), ("op", "--op"), ("options", "-O"),
                  ("types", "--types"), ("operands", "--operands"), ("common", "--common"),
                  ("drop_refused", "--drop-refused"), ("exit_code", "--exit-code"), ("width", "--width"))


def _pictures(pictures, framework, diff_pair, cast_pairs, op, options, types, axes, fmt, exit_code):
    """`--svg FILE` / `--html FILE`: every picture made, then each written whole (or to stdout for -)."""
    if cast_pairs or fmt:
        raise UsageError("--svg and --html draw a matrix or a diff; they go without --cast and --format")
    if len(set(pictures.values()) - {"-"}) < len([v for v in pictures.values() if v != "-"]) or \
            list(pictures.values()).count("-") > 1:
        raise UsageError("--svg and --html need two different files")
    if diff_pair:
        payload = promote_cli.diff(*diff_pair, types=parse_types(types), op=op, options=parse_options(options), **axes)
        read = [promote_cli.load(promote_cli.parse_side(side)[1]).path for side in diff_pair]
    elif exit_code:
        raise UsageError("--exit-code goes with --diff")
    else:
        framework, opts = _framework(framework, options)
        payload = promote_cli.table(framework, parse_types(types), op, opts, **axes)
        read = [promote_cli.load(framework).path]
    rendered = {kind: promote_cli.render(payload, kind) for kind in pictures}
    promote_cli.write_outputs({path: rendered[kind] for kind, path in pictures.items() if path != "-"},
                              protect=tuple(read))
    for kind, path in pictures.items():
        if path == "-":
            formats.emit(rendered[kind])
    if exit_code and payload.differences:
        sys.exit(EXIT_NO)


def _cast_table(out):
    pairs = sorted(promote_cli.cast_pairs().items())
    formats.emit(out.records(formats.Records(
        "TOSA CAST", ["from", "to", "profile/extension"], [[s, d, p] for (s, d), p in pairs],
        {"operator": "CAST", "pairs": [{"from": s, "to": d, "profile": p} for (s, d), p in pairs]})))
