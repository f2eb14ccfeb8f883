"""`promote verify -f FW`: ask the installed framework again and compare with the ruleset."""

from __future__ import annotations

import sys

import click

from promote_cli.cli import render
from promote_cli.cli.options import framework_option, require_framework
from promote_cli.errors import EXIT_NO
from promote_cli.probes.recordings import run


@click.command()
@framework_option
@click.option("--recording", type=click.Path(dir_okay=False), help="Compare with a saved recording instead.")
@click.option("--save", type=click.Path(dir_okay=False), help="Also write what the framework answered to this file.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--max-lines", default=50, show_default=True, help="Disagreements to print (text).")
def verify(framework, recording, save, fmt, max_lines):
    """Re-check a ruleset against the real framework (exit 1 on any disagreement, 2 if it is not installed).

    A probe may add checks of its own (`extra_checks()`: TOSA's CAST kernels against the reference model).
    """
    framework = require_framework(framework)
    report = run(framework, recording)
    if save:
        from promote_cli.probes import write_recording

        write_recording(report.recording, save)
    if fmt == "json":
        click.echo(render.dumps({"framework": framework, "against": report.source, "cases": report.cases,
                                 "disagreements": [m.__dict__ for m in report.mismatches],
                                 "checks": [{"check": label, "cases": n, "disagreements": bad}
                                            for label, n, bad in report.checks]}))
    else:
        lines = [m.line() for m in report.mismatches]
        for line in lines[:max_lines]:
            click.echo(line)
        if len(lines) > max_lines:
            click.echo(f"... and {len(lines) - max_lines} more")
        agreeing = report.cases - len(report.mismatches)
        click.echo(f"{framework} vs {report.source}: {agreeing} of {report.cases} cases agree",
                   err=bool(report.mismatches))
        for label, n, bad in report.checks:
            for line in bad[:max_lines]:
                click.echo(line)
            click.echo(f"{label}: {n - len(bad)} of {n} cases agree", err=bool(bad))
    if not report.agrees:
        sys.exit(EXIT_NO)
