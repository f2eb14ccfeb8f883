"""`promote cast`: convert .npy files with TOSA CAST semantics.

Parsing only: the options are declared in `cli/definition.py` (which the Click-free path in `cli/fast.py`
reads too), and what a cast does once they are parsed is `cli/casting.py`'s, shared with that path.
"""

from __future__ import annotations

import sys

import click

from promote_cli.cli import casting, definition
from promote_cli.cli.options import declared


@click.command("cast")
@declared(definition.CAST)
def cast(inputs, to, output, from_, mode, saturate, semantics, no_saturate, compare, force, fmt, fail_on, jobs,
         exclude, only, skip):
    """Cast .npy files or a checkpoint to DTYPE with TOSA CAST semantics (or a library's: --semantics).

    Streams in chunks (memory stays bounded), writes atomically (an interrupted
    cast leaves no partial output), never writes a file it reads, replaces only
    regular files (--force), and reports how many elements were exact, rounded,
    overflowed, NaN in, subnormal out and unpredictable by the TOSA spec (and, for
    several files, their totals). A run of several files in which one has no cast to
    DTYPE is refused before anything is written (leave it out with --exclude).

    A checkpoint (a .safetensors file, or a directory of shards with its index) is
    cast tensor by tensor (--only, --skip, --from choose them), reported per tensor
    with its largest errors, and written whole or not at all.

    Exit codes: 0 success; 1 a --fail-on condition happened; 2 usage or input
    error; 130 interrupted.
    """
    sys.exit(casting.cast(inputs, to, output, from_, mode, saturate, force, fmt, fail_on, jobs, exclude,
                          only, skip, write=_echo, semantics=semantics, no_saturate=no_saturate, compare=compare))


def _echo(text: str, err: bool) -> None:
    """Text on stdout or stderr as Click writes it (a stream whose encoding is ASCII is written in UTF-8)."""
    click.echo(text, nl=False, err=err, color=None if err else True)
