"""`promote verify -f FW`: ask the installed framework again and compare with the ruleset."""

from __future__ import annotations

import sys

import click

from .. import render
from ..cliopts import framework_option, require_framework
from ..errors import EXIT_NO, UsageError
from ..verify import compare, load_recording, probe_module


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
    if recording:
        data = load_recording(recording)
    else:
        probe = probe_module(framework)
        version = probe.version()
        if version is None:
            raise UsageError(f"{probe.PACKAGE} is not installed here: pip install {probe.PACKAGE} "
                             "(or compare with a saved file: --recording FILE)")
        data = probe.record()
        if save:
            from ..probes import write_recording

            write_recording(data, save)
    total, mismatches = compare(data, framework)
    source = f"{data.get('package')} {data.get('version')}"
    lines = [m.line() for m in mismatches]
    extra = [] if recording else list(getattr(probe, "extra_checks", lambda: [])())
    if fmt == "json":
        click.echo(render.dumps({"framework": framework, "against": source, "cases": total,
                                 "disagreements": [m.__dict__ for m in mismatches],
                                 "checks": [{"check": label, "cases": n, "disagreements": bad}
                                            for label, n, bad in extra]}))
    else:
        for line in lines[:max_lines]:
            click.echo(line)
        if len(lines) > max_lines:
            click.echo(f"... and {len(lines) - max_lines} more")
        click.echo(f"{framework} vs {source}: {total - len(mismatches)} of {total} cases agree", err=bool(mismatches))
        for label, n, bad in extra:
            for line in bad[:max_lines]:
                click.echo(line)
            click.echo(f"{label}: {n - len(bad)} of {n} cases agree", err=bool(bad))
    if mismatches or any(bad for _, _, bad in extra):
        sys.exit(EXIT_NO)
