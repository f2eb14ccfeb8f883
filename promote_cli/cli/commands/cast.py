"""`promote cast`: convert .npy files with TOSA CAST semantics.

Parsing only: what a cast does once its options are parsed is `cli/casting.py`'s, shared with the
Click-free path (`cli/fast.py`) that runs the common invocations.
"""

from __future__ import annotations

import sys

import click

from promote_cli.cli import casting
from promote_cli.cli.options import complete_path, complete_plain_dtype


@click.command("cast")
@click.argument("inputs", nargs=-1, required=True, metavar="IN.npy [IN2.npy ... | DIR]", shell_complete=complete_path)
@click.option("--to", "to", required=True, metavar="DTYPE", shell_complete=complete_plain_dtype,
              help="Target dtype (any name or alias).")
@click.option("-o", "--output", "output", metavar="OUT.npy", default=None, shell_complete=complete_path,
              help="Output file (one input only). Default: IN.DTYPE.npy next to the input.")
@click.option("--from", "from_", metavar="DTYPE", default=None, shell_complete=complete_plain_dtype,
              help="Reinterpret the stored bits as DTYPE (a uint16 or |V2 file as bf16, uint8 or |V1 as fp8).")
@click.option("--mode", type=click.Choice(["tosa", "extended"]), default="tosa", show_default=True,
              help="tosa: only the pairs TOSA CAST defines; extended: any numeric pair.")
@click.option("--saturate", is_flag=True, help="Clamp float overflow to the largest finite value (--mode extended).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file (never the input).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Report format: one line (text) or one JSON object (json) per file.")
@click.option("--fail-on", "fail_on", multiple=True, type=click.Choice(["overflow", "inexact", "nan"]),
              help="Exit 1 when any element overflowed / was not exact / was or became NaN. Repeatable.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Files cast in parallel (default and most: the number of CPUs, and the number of files).")
def cast(inputs, to, output, from_, mode, saturate, force, fmt, fail_on, jobs):
    """Cast .npy files to DTYPE with TOSA CAST semantics.

    Streams in chunks (memory stays bounded), writes atomically (an interrupted
    cast leaves no partial output), never writes a file it reads, replaces only
    regular files (--force), and reports how many elements were exact, rounded,
    overflowed, NaN in, subnormal out and unpredictable by the TOSA spec.

    \b
    Exit codes: 0 success; 1 a --fail-on condition happened; 2 usage or input error;
    130 interrupted.
    """
    sys.exit(casting.cast(inputs, to, output, from_, mode, saturate, force, fmt, fail_on, jobs, write=_echo))


def _echo(text: str, err: bool) -> None:
    """Text on stdout or stderr as Click writes it (a stream whose encoding is ASCII is written in UTF-8)."""
    click.echo(text, nl=False, err=err, color=None if err else True)
