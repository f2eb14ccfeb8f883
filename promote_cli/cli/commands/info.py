"""`promote frameworks`, `promote dtypes` and `promote ops`: what the installation knows."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli import definition
from promote_cli.cli.options import LISTING_FORMATS, click_option, color_option, framework_alone, listing_format
from promote_cli.errors import EXIT_USAGE, UsageError


def listing_command(framework_help: str):
    """A listing command: `-f NAME` (`framework_help`), `--format` among the listing formats, `--color`."""
    def decorate(function):
        for option in reversed((click_option(definition.framework_filter(framework_help)),
                                click.option("--format", "fmt", type=click.Choice(LISTING_FORMATS),
                                             help="Default: rich on a terminal, text when piped or with NO_COLOR."),
                                color_option)):
            function = option(function)
        return click.command()(function)

    return decorate


@click.command()
@click_option(definition.framework_filter("Only the rulesets of this framework."))
@click.option("--format", "fmt", type=click.Choice(LISTING_FORMATS),
              help="Default: rich on a terminal, text when piped or with NO_COLOR.")
@click.option("--verbose", "-v", is_flag=True,
              help="Also list each ruleset's options, its `promote expr` operators and notes (known deviations).")
@color_option
def frameworks(framework, fmt, verbose, color):
    """The rulesets this installation knows (bare NAME means the one marked default).

    A rule file that does not load is reported on stderr (and the exit code is 2) while the others are
    listed; a file on PROMOTE_RULES_PATH that hides another of the same name is said on stderr (as by
    every command that loads it).
    """
    rows, errors = [], []
    hidden = promote_cli.shadowed()
    for rs in promote_cli.frameworks(framework_alone(framework, "frameworks"), errors):
        rows.append({"name": rs.name, "version": rs.version, "default": promote_cli.is_default(rs),
                     "ruleset": rs.key, "follows": rs.follows, "types": [d.name for d in rs.types],
                     "options": {k: getattr(o.default, "name", o.default) for k, o in rs.options.items()},
                     "ops": list(rs.op_index) if rs.ops is not None else None, "probe": rs.probe,
                     "description": rs.description, "source": rs.source, "notes": list(rs.notes),
                     "path": rs.path, "hides": hidden.get(Path(rs.path).stem, []),
                     "expressions": None if rs.expressions is None else {
                         "operators": list(rs.expressions.operators),
                         "literals": {k: str(v) for k, v in rs.expressions.literals.items()}}})
    header = ["ruleset", "default", "follows", "types", "description", "source"]
    records = [[r["ruleset"], "*" if r["default"] else "", r["follows"], str(len(r["types"])), r["description"],
                r["source"]] for r in rows]
    details = [_details(r) for r in rows if r["notes"] or r["options"] or r["expressions"]] if verbose else []
    out = listing_format(fmt, color)
    formats.emit(out.records(formats.Records("rulesets", header, records, rows, details)))
    for exc in errors:
        click.echo(f"promote: {formats.one_line(str(exc))}", err=True)
    if errors:
        sys.exit(EXIT_USAGE)


def _details(r: dict) -> formats.Section:
    """What `frameworks -v` adds for a ruleset: its options with their defaults, what `promote expr` evaluates,
    its notes (known deviations)."""
    lines = [f"-O {key}={formats.word(value)} (default)" for key, value in r["options"].items()]
    if r["expressions"]:
        ex = r["expressions"]
        literals = ", ".join(f"{k} {v}" for k, v in ex["literals"].items()) or "none"
        lines.append(f"promote expr: {' '.join(ex['operators'])}; literals: {literals}")
    return formats.Section(f"{r['ruleset']}:", lines, list(r["notes"]))


def _number(value) -> str:
    """An integer exactly (u64's 18446744073709551615, not 1.84467e+19); a float to 6 significant digits."""
    return str(value) if isinstance(value, int) else f"{value:.6g}"


@listing_command("Only the dtypes this framework's ruleset has.")
def dtypes(framework, fmt, color):
    """The canonical dtype names, what each is, and the spellings accepted for it."""
    rows = [{"name": d.name, "kind": d.kind, "bits": d.bits, "exp_bits": d.exp_bits, "man_bits": d.man_bits,
             "max": d.max, "min": d.min, "inf": d.has_inf, "nan": d.has_nan, "doc": d.doc,
             "aliases": promote_cli.aliases(d.name), "bias": d.bias, "specials": d.specials, "signed": d.signed,
             "numpy": d.numpy, "spellings": promote_cli.spellings(d.name)}
            for d in promote_cli.dtypes(framework_alone(framework, "dtypes"))]
    header = ["name", "kind", "bits", "exp", "man", "max", "inf", "nan", "description", "aliases"]
    records = [[r["name"], r["kind"], str(r["bits"]), str(r["exp_bits"]), str(r["man_bits"]), _number(r["max"]),
                "yes" if r["inf"] else "no", "yes" if r["nan"] else "no", r["doc"], " ".join(r["aliases"])]
               for r in rows]
    out = listing_format(fmt, color)
    formats.emit(out.records(formats.Records("dtypes", header, records, rows)))


@listing_command("The ruleset whose ops to list (required).")
def ops(framework, fmt, color):
    """Every op of a framework's op groups (`--op NAME` of query, table, explain), with its aliases, its
    arity (how many operands it takes), its group and the group's rule; json adds each group's doc and
    source (docs/ops.md).

    A ruleset without op groups lists none (its pair ops are `promote frameworks -v`'s).
    """
    name = framework_alone(framework, "ops")
    if name is None:
        raise UsageError("which framework? give -f NAME (see `promote frameworks`)")
    rows = promote_cli.ops(name)
    header = ["op", "aliases", "arity", "group", "rule"]
    records = [[r["op"], " ".join(r["aliases"]), str(r["arity"]), r["group"], r["rule"]] for r in rows]
    out = listing_format(fmt, color)
    formats.emit(out.records(formats.Records("ops", header, records, rows)))
    if not rows:
        click.echo(f"promote: note: {name} declares no op groups ([opgroups], docs/ops.md)", err=True)
