"""`promote frameworks` and `promote dtypes`: what the installation knows."""

from __future__ import annotations

import click

from promote_cli.cli import render
from promote_cli.cli.options import complete_framework
from promote_cli.oracle import registry
from promote_cli.vocab import dtypes as vocabulary


@click.command()
@click.option("--framework", "-f", metavar="NAME", shell_complete=complete_framework,
              help="Only the rulesets of this framework.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "markdown"]), default="text",
              show_default=True)
@click.option("--verbose", "-v", is_flag=True, help="Also list each ruleset's options and notes (known deviations).")
def frameworks(framework, fmt, verbose):
    """The rulesets this installation knows (bare NAME means the one marked default)."""
    rows = []
    if framework:
        registry.load(framework)  # an unknown name is a usage error with suggestions
    for rs in registry.all_rulesets():
        if framework and rs.name != framework.partition("@")[0]:
            continue
        rows.append({"name": rs.name, "version": rs.version, "default": registry.is_default(rs),
                     "ruleset": rs.key, "follows": rs.follows, "types": [d.name for d in rs.types],
                     "options": {k: getattr(o.default, "name", o.default) for k, o in rs.options.items()},
                     "ops": list(rs.op_index) if rs.ops is not None else None, "probe": rs.probe,
                     "description": rs.description, "source": rs.source, "notes": list(rs.notes),
                     "path": rs.path})
    if fmt == "json":
        click.echo(render.dumps(rows))
        return
    header = ["ruleset", "default", "follows", "types", "description", "source"]
    records = [[r["ruleset"], "*" if r["default"] else "", r["follows"], str(len(r["types"])), r["description"],
                r["source"]] for r in rows]
    click.echo(render.RECORD_FORMATS[fmt](header, records), nl=False)
    if verbose and fmt == "text":
        for r in rows:
            if r["notes"] or r["options"]:
                click.echo(f"\n{r['ruleset']}:")
                for key, value in r["options"].items():
                    click.echo(f"  -O {key}={render.dumps(value).strip(chr(34))} (default)")
                for note in r["notes"]:
                    click.echo(f"  - {note}")


@click.command()
@click.option("--framework", "-f", metavar="NAME[@VERSION]", shell_complete=complete_framework,
              help="Only the dtypes this framework's ruleset has.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "markdown"]), default="text",
              show_default=True)
def dtypes(framework, fmt):
    """The canonical dtype names, what each is, and the spellings accepted for it."""
    rows = []
    wanted = set(registry.load(framework).types) if framework else None
    for d in vocabulary.DTYPES.values():
        if wanted is not None and d not in wanted:
            continue
        rows.append({"name": d.name, "kind": d.kind, "bits": d.bits, "exp_bits": d.exp_bits, "man_bits": d.man_bits,
                     "max": d.max, "min": d.min, "inf": d.has_inf, "nan": d.has_nan, "doc": d.doc,
                     "aliases": vocabulary.aliases(d.name), "bias": d.bias, "specials": d.specials,
                     "signed": d.signed, "numpy": d.numpy, "spellings": vocabulary.SPELLINGS.get(d.name, {})})
    if fmt == "json":
        click.echo(render.dumps(rows))
        return
    header = ["name", "kind", "bits", "exp", "man", "max", "inf", "nan", "description", "aliases"]
    records = [[r["name"], r["kind"], str(r["bits"]), str(r["exp_bits"]), str(r["man_bits"]), f"{r['max']:.6g}",
                "yes" if r["inf"] else "no", "yes" if r["nan"] else "no", r["doc"], " ".join(r["aliases"])]
               for r in rows]
    click.echo(render.RECORD_FORMATS[fmt](header, records), nl=False)
