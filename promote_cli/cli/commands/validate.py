"""`promote validate FILE...`: check rule files as the loader does, reporting every problem."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.errors import EXIT_USAGE
from promote_cli.formats import one_line


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def validate(files, fmt):
    """Check rule files: every problem (file, key, what is wrong, and the column inside an expression).

    Exit codes: 0 every file is valid, 2 a file has problems.
    """
    checks = promote_cli.validate(list(files))
    formats.emit(formats.get(fmt).validation(checks))
    bad = [c for c in checks if not c.valid]
    if bad:
        count = sum(len(c.problems) for c in bad)
        click.echo(one_line(f"promote: {count} problem{'s' if count != 1 else ''} in {len(bad)} of {len(checks)} "
                            f"file{'s' if len(checks) != 1 else ''}"), err=True)
        sys.exit(EXIT_USAGE)
