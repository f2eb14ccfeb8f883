"""`promote verify -f FW`: ask the installed framework again and compare with the ruleset."""

from __future__ import annotations

import sys

import click

import promote_cli
from promote_cli import formats
from promote_cli.cli.options import framework_alone, framework_option, require_framework
from promote_cli.errors import EXIT_NO
from promote_cli.formats import one_line


@click.command()
@framework_option
@click.option("--recording", type=click.Path(dir_okay=False), help="Compare with a saved recording instead.")
@click.option("--save", type=click.Path(dir_okay=False), help="Also write what the framework answered to this file.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--limit", "--max-lines", "max_lines", default=50, show_default=True, type=click.IntRange(min=0),
              metavar="N", help="Disagreements to print (text), as check's --limit counts counterexamples.")
def verify(framework, recording, save, fmt, max_lines):
    """Re-check a ruleset against the real framework (exit 1 on any disagreement, 2 if it is not installed).

    A probe may add checks of its own (`extra_checks()`: TOSA's CAST kernels against the reference model).
    A recording must be one of this framework's (its `ruleset` names the same framework).
    """
    framework = framework_alone(require_framework(framework), "verify")
    out = formats.get(fmt)
    report = promote_cli.verify(framework, recording, save)
    formats.emit(out.report(report, max_lines))
    if not report.agrees:
        bad_checks = sum(1 for _, _, bad in report.checks if bad)
        extra = f" and {bad_checks} of its own checks fail" if bad_checks else ""
        if report.cases:
            verdict = f"on {formats.of_count(len(report.mismatches), report.cases, 'case')}{extra}"
        else:  # an expression recording: its checks are all there is
            verdict = "on " + ", ".join(f"{len(bad)} of {n} {label}" for label, n, bad in report.checks if bad)
        click.echo(one_line(f"promote: {report.ruleset or framework} disagrees with {report.source} {verdict}"), err=True)
        sys.exit(EXIT_NO)
