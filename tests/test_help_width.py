"""Every command's `--help` reads cleanly in an 80-column terminal: no line longer than 80 columns (a terminal
would break it mid-word), and the same words as on a terminal wide enough for every line, none split."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promote_cli.cli import COMMANDS, main

NARROW, WIDE = 80, 400


def help_text(args: list[str], width: int) -> str:
    """`promote ARGS --help` as Click lays it out for a terminal `width` columns wide."""
    r = CliRunner().invoke(main, [*args, "--help"], terminal_width=width, max_content_width=width)
    assert (r.exit_code, r.stderr) == (0, ""), r.stderr
    return r.stdout


@pytest.mark.parametrize("args", [[], *([name] for name in COMMANDS)], ids=["promote", *COMMANDS])
def test_help_fits_80_columns_with_every_word_whole(args):
    narrow, wide = help_text(args, NARROW), help_text(args, WIDE)
    long = [line for line in narrow.splitlines() if len(line) > NARROW]
    assert not long, "\n".join(long)
    assert narrow.split() == wide.split()  # wrapped only between words, never inside one


def test_the_check_sees_a_line_too_long_and_a_split_word():
    """The checks above are not vacuous: a hand-wrapped line over 80 columns is seen, and so is a word that
    Click breaks because it is wider than the column it is put in."""
    import click

    @click.command()
    @click.option("--x", help="see " + "A" * 100)  # wider than the help column at 80: Click breaks it
    def too_long(x):
        """\b
        a line that the author wrapped by hand beyond eighty columns, which a terminal would break mid-word
        """

    r80 = CliRunner().invoke(too_long, ["--help"], terminal_width=NARROW, max_content_width=NARROW).stdout
    r400 = CliRunner().invoke(too_long, ["--help"], terminal_width=WIDE, max_content_width=WIDE).stdout
    assert any(len(line) > NARROW for line in r80.splitlines())
    assert r80.split() != r400.split()
