"""`promote cast`: convert .npy files with TOSA CAST semantics.

Parsing and rendering only; the work is done by `promote_cli.arrayio.castfile`.
"""

from __future__ import annotations

import json
import os
import sys

import click

from promote_cli.errors import EXIT_NO, EXIT_OK, EXIT_USAGE, PromoteError

_STAT_ORDER = (
    "exact",
    "rounded",
    "overflow_inf",
    "overflow_nan",
    "saturated",
    "wrapped",
    "nan_in",
    "subnormal_out",
    "unpredictable",
)


def _fail(message: str) -> None:
    click.echo(f"promote cast: {_printable(message)}", err=True)


def _printable(text: str) -> str:
    from promote_cli.arrayio.files import printable

    return printable(text)


def _text_line(report) -> str:
    s = report.stats
    shape = "x".join(str(d) for d in report.shape) if report.shape else "scalar"
    overflow = sum(s.get(k, 0) for k in ("overflow_inf", "overflow_nan", "saturated", "wrapped"))
    parts = [
        f"{_printable(report.input)} -> {_printable(report.output)}: {report.src} -> {report.dst} ({report.mode}),",
        f"{report.elements} elements ({shape}):",
        f"{s.get('exact', 0)} exact, {s.get('rounded', 0)} rounded,",
        f"{overflow} overflowed ({s.get('overflow_inf', 0)} to inf, {s.get('overflow_nan', 0)} to NaN,"
        f" {s.get('saturated', 0)} saturated, {s.get('wrapped', 0)} wrapped),",
        f"{s.get('nan_in', 0)} NaN in, {s.get('subnormal_out', 0)} subnormal out,",
        f"{s.get('unpredictable', 0)} unpredictable",
    ]
    extra = [f"{k} {v}" for k, v in s.items() if k not in _STAT_ORDER]
    line = " ".join(parts)
    if extra:
        line += " (" + ", ".join(extra) + ")"
    return line


class _Progress:
    """A Rich progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.progress = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)
        return False

    def task(self, description: str, total: int):
        if self.progress is None:
            return None
        tid = self.progress.add_task(description, total=total)
        return lambda done: self.progress.update(tid, completed=done)


@click.command("cast")
@click.argument("inputs", nargs=-1, required=True, metavar="IN.npy [IN2.npy ... | DIR]")
@click.option("--to", "to", required=True, metavar="DTYPE", help="Target dtype (any name or alias).")
@click.option("-o", "--output", "output", metavar="OUT.npy", default=None,
              help="Output file (one input only). Default: IN.DTYPE.npy next to the input.")
@click.option("--from", "from_", metavar="DTYPE", default=None,
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
    try:
        from promote_cli.arrayio import castfile
        from promote_cli.arrayio import npy as npyio
    except ImportError as e:  # pragma: no cover - broken installation
        _fail(f"cannot load the cast machinery: {e}")
        sys.exit(EXIT_USAGE)

    # SIGINT and SIGTERM raise at safe points from here on, until the process exits (put
    # back, a late signal would hit the interpreter's exit with a traceback or a kill).
    npyio.install_sigterm_handler()
    sys.exit(_run(castfile, npyio, inputs, to, output, from_, mode, saturate, force, fmt, fail_on, jobs))


def _run(castfile, npyio, inputs, to, output, from_, mode, saturate, force, fmt, fail_on, jobs) -> int:
    """Plan, cast, report; the exit code."""
    try:
        to_c = castfile.canonical_name(to)
        if from_ is not None:
            castfile.canonical_name(from_)
        files = castfile.expand_inputs(inputs, to_c)
        if output is not None and len(files) != 1:
            raise castfile.UsageError("-o/--output needs exactly one input file")
        plan = castfile.plan_casts(files, to_c, outputs=[output] if output is not None else None, force=force)
        npyio.check_interrupted()
    except PromoteError as e:
        _fail(str(e))
        return e.exit_code
    except (KeyboardInterrupt, npyio.Terminated):
        _fail("interrupted; nothing written")
        return 130

    kwargs = dict(to=to_c, from_=from_, mode=mode, saturate=saturate)
    exit_code = EXIT_OK
    show_progress = sys.stderr.isatty()
    try:
        with _Progress(show_progress) as bar:
            jobs_ = plan.jobs
            cb = None
            if len(plan.items) == 1 and jobs_ and jobs_[0].source.size >= castfile.PROGRESS_MIN_BYTES:
                cb = bar.task(f"cast {_printable(os.path.basename(jobs_[0].input))}", jobs_[0].source.size)
            tick = bar.task(f"cast {len(plan.items)} files", len(plan.items)) if len(plan.items) > 1 else None
            outcomes = castfile.run_plan(plan, jobs=jobs, progress=cb, **kwargs)
            for i, oc in enumerate(outcomes):
                if tick is not None:
                    tick(i + 1)
                exit_code = _emit(oc, fmt, fail_on, exit_code)
        npyio.check_interrupted()
    except (KeyboardInterrupt, npyio.Terminated):
        _fail(_interrupted(plan.kept()))
        return 130
    return exit_code


def _interrupted(kept: list[str]) -> str:
    """The one line saying what an interrupted run left: the outputs it finished, if any."""
    if not kept:
        return "interrupted; no output written, no partial output left behind"
    shown = ", ".join(kept[:5]) + (f" and {len(kept) - 5} more" if len(kept) > 5 else "")
    n = len(kept)
    return f"interrupted; kept {n} finished output{'s' if n > 1 else ''} ({shown}); no partial output left behind"


def _emit(oc, fmt, fail_on, exit_code) -> int:
    if oc.error is not None:
        _fail(oc.error)
        if fmt == "json":
            click.echo(json.dumps({"input": oc.input, "output": None, "error": oc.error}))
        return max(exit_code, oc.exit_code)
    report = oc.report
    hit = report.triggered(fail_on)
    if fmt == "json":
        d = report.as_dict()
        d["failed_on"] = hit
        click.echo(json.dumps(d))
    else:
        click.echo(_text_line(report))
    if hit:
        click.echo(f"promote cast: {report.input}: --fail-on {', '.join(hit)}", err=True)
        return max(exit_code, EXIT_NO)
    return exit_code
