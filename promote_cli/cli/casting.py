"""What `promote cast` does once its words are parsed, made once for both ways a cast runs (the Click
command in `commands/cast.py` and the Click-free path in `fast.py`), so that the two cannot differ: signals
deferred, `-o -` refused, the run planned, each file cast and reported through the format interface (and a
run of several files summed up last), every diagnostic one line `promote cast: ...` on stderr, the exit code
as the contract says.

Parsing and rendering only: the public API plans and runs the casts (`plan_cast`, `run_cast`). Nothing here
imports Click; the caller says how text reaches the streams (`write`).
"""

from __future__ import annotations

import contextlib
import os
import sys

import promote_cli as api
from promote_cli import formats
from promote_cli.cli import streams
from promote_cli.errors import EXIT_NO, EXIT_OK, EXIT_USAGE, PromoteError, UsageError, one_line

#: a single file at least this large gets a progress bar (on a terminal)
PROGRESS_MIN_BYTES = 64 << 20


def cast(inputs, to, output, from_, mode, saturate, force, fmt, fail_on, jobs, exclude=(), only=(), skip=(),
         write=streams.write, semantics="tosa", no_saturate=False, compare=False) -> int:
    """Cast `inputs` as `promote cast` does with these option values; the exit code. `write(text, err)`
    puts text on stdout, or on stderr when `err`."""
    # SIGINT and SIGTERM raise at safe points from here on, until the process exits (put
    # back, a late signal would hit the interpreter's exit with a traceback or a kill).
    api.defer_signals()
    try:
        if saturate and no_saturate:
            raise UsageError("--saturate and --no-saturate contradict each other")
        sat = True if saturate else False if no_saturate else None
        if compare:
            write(_compare(inputs, to, from_, sat, output, formats.get(fmt)), False)
            return EXIT_OK
        if to is None:
            raise UsageError("Missing option '--to'.")
    except PromoteError as e:
        _fail(write, str(e))
        return e.exit_code
    if len(inputs) == 1 and api.is_checkpoint(inputs[0]):
        options = dict(from_=from_, mode=mode, saturate=sat, semantics=semantics, force=force, only=only, skip=skip)
        return _checkpoint(inputs[0], to, output, options, exclude, formats.get(fmt), fail_on, write)
    if any(api.is_checkpoint(i) for i in inputs):
        _fail(write, "a checkpoint (a .safetensors or .npz file, or a directory of shards) is cast alone: "
                     "one input per run")
        return EXIT_USAGE
    if only or skip:
        _fail(write, "--only and --skip choose the tensors of a checkpoint (a .safetensors file or a directory "
                     "of them); for .npy files use --exclude")
        return EXIT_USAGE
    return _run(inputs, to, output, dict(from_=from_, mode=mode, saturate=sat, semantics=semantics, force=force,
                                         exclude=exclude), formats.get(fmt), fail_on, jobs, write)


def _compare(inputs, to, from_, saturate, output, out) -> str:
    """`cast --compare FROM TO` (a conversion's recorded edge cases) or `cast --compare IN.npy --to DTYPE`:
    where the semantics disagree, by value class, rendered as a listing."""
    columns = api.compare_columns
    if output is not None:
        raise UsageError("--compare writes no file: leave out -o")
    sat = True if saturate is None else saturate
    if to is None:
        if len(inputs) != 2:
            raise UsageError("--compare takes a conversion (FROM TO, e.g. f32 f8e4m3) or files with --to DTYPE")
        src, dst = (api.lookup(t).name for t in inputs)
        title, rows = f"{src} -> {dst}: the recorded edge cases", api.compare_cast(src, dst, sat)
        return out.records(_comparison(title, columns(src, dst), rows))
    found = []
    for path in inputs:
        if api.is_checkpoint(path):
            for src, dst, n, rows in api.compare_checkpoint(path, to, from_, sat):
                found.append((f"{path}: {n} {src} tensor{'s' if n > 1 else ''} -> {dst}", columns(src, dst), rows))
        else:
            src, dst, rows = api.compare_npy(path, to, from_, sat)
            found.append((f"{path}: {src} -> {dst}", columns(src, dst), rows))
    json = out.name == "json"  # one object a line, the title in it
    return ("" if json else "\n").join(("" if json else out.heading).format(title=t)
                                       + out.records(_comparison(t, names, rows))
                                       for t, names, rows in found)


def _comparison(title: str, names: list[str], rows) -> formats.Records:
    """A comparison as a listing: per value class its count, how many the semantics convert differently, each
    semantics' count of values differing from TOSA's, and an example with every output."""
    header = ["value class", "values", "differ", *[f"{n} != tosa" for n in names[1:]], "example", *names]
    cells = [[r.value_class, str(r.inputs), str(r.differ), *[str(k) for k in r.vs_tosa[1:]], r.example or "",
              *(r.outputs or [""] * len(names))] for r in rows]
    return formats.Records(title, header, cells, {"title": title, "semantics": names,
                                                  "classes": [r.as_dict() for r in rows]})


def refuse_stdout(output) -> None:
    """`-o -`: a command that writes a `.npy` file does not write it to standard output (`./-` names a file `-`)."""
    if output == "-":
        raise UsageError("-o -: the output is a .npy file, not standard output (for a file named -, write ./-)")


def _run(inputs, to, output, options, out, fail_on, jobs, write) -> int:
    """Plan (the cast asked for, decided once: `plan_cast`'s `options`), cast, report; the exit code."""
    interrupted = api.interrupted_by()
    plan, code = _planned(write, output, lambda: api.plan_cast(inputs, to, output=output, **options))
    if plan is None:
        return code

    exit_code = EXIT_OK
    try:
        with _Progress(sys.stderr.isatty()) as bar:
            jobs_ = plan.jobs
            cb = tick = None
            if len(plan.items) == 1 and jobs_ and jobs_[0].source.size >= PROGRESS_MIN_BYTES:
                cb = bar.file_task(one_line(os.path.basename(jobs_[0].input)), jobs_[0].source.size)
            elif len(plan.items) > 1:
                sizes = [item.source.size if hasattr(item, "source") else 0 for item in plan.items]  # 0: refused
                tick = bar.files_task(sizes)
            done = []
            for i, oc in enumerate(api.run_cast(plan, jobs=jobs, progress=cb)):
                with bar.aside():
                    exit_code = _emit(oc, out, fail_on, exit_code, write)
                done.append(oc)
                if tick is not None:
                    tick(i + 1)
    except interrupted:
        _fail(write, _interrupted(plan.kept()))
        return 130
    if len(done) > 1:  # JSON: standard output holds one report a file, as scripts read it; the totals go aside
        write(out.cast_summary(api.cast_totals(done)), out.name == "json")
    return exit_code


def _checkpoint(path, to, output, options, exclude, out, fail_on, write) -> int:
    """Cast a checkpoint (`plan_checkpoint`'s `options`): a report per tensor, then the totals (JSON: on
    stderr, as a run of several files gives them); the exit code."""
    interrupted = api.interrupted_by()

    def make():
        if exclude:
            raise UsageError("--exclude leaves out files of a directory of .npy files; a checkpoint's tensors "
                             "are left out with --skip")
        return api.plan_checkpoint(path, to, output=output, **options)

    plan, code = _planned(write, output, make)
    if plan is None:
        return code
    totals = plan.totals()
    try:
        with _Progress(sys.stderr.isatty()) as bar:
            size, count = plan.total_bytes, sum(len(s.header.tensors) for s in plan.shards)
            cb, tick = bar.tensors_task(one_line(os.path.basename(plan.input.rstrip("/"))), size, count) \
                if size >= PROGRESS_MIN_BYTES else (None, None)
            import time

            start = time.perf_counter()
            for r in api.run_checkpoint(plan, progress=cb):
                with bar.aside():
                    write(out.tensor_report(r), False)
                totals.add(r)
                if tick is not None:
                    tick(totals.tensors)
            totals.seconds = time.perf_counter() - start
    except PromoteError as e:
        _fail(write, f"{e}; nothing written")
        return e.exit_code
    except interrupted:
        _fail(write, "interrupted; no output written, no partial output left behind")
        return 130
    write(out.checkpoint_summary(totals), out.name == "json")
    hit = totals.triggered(fail_on)
    if hit:
        _fail(write, f"{plan.input}: --fail-on {', '.join(hit)}")
        return EXIT_NO
    return EXIT_OK


def _planned(write, output, make) -> tuple:
    """(the plan `make()` returns, None), or (None, the exit code) once its error is said: `-o -` refused
    first, an interruption while planning writes nothing."""
    try:
        refuse_stdout(output)
        return make(), None
    except PromoteError as e:
        _fail(write, str(e))
        return None, e.exit_code
    except api.interrupted_by():
        _fail(write, "interrupted; nothing written")
        return None, 130


def _fail(write, message: str) -> None:
    write(f"promote cast: {one_line(message)}\n", True)


def _emit(oc, out, fail_on, exit_code, write) -> int:
    hit = [] if oc.error is not None else oc.report.triggered(fail_on)
    write(out.cast_outcome(oc, hit), False)
    if oc.error is not None:
        _fail(write, oc.error)
        return max(exit_code, oc.exit_code)
    if hit:
        _fail(write, f"{oc.report.input}: --fail-on {', '.join(hit)}")
        return max(exit_code, EXIT_NO)
    return exit_code


def _interrupted(kept: list[str]) -> str:
    """The one line saying what an interrupted run left: the outputs it finished, if any."""
    if not kept:
        return "interrupted; no output written, no partial output left behind"
    shown = ", ".join(kept[:5]) + (f" and {len(kept) - 5} more" if len(kept) > 5 else "")
    n = len(kept)
    return f"interrupted; kept {n} finished output{'s' if n > 1 else ''} ({shown}); no partial output left behind"


def files_done(k: int, n: int) -> str:
    """The count a multi-file progress bar shows."""
    return f"{k}/{n} files"


class _Progress:
    """A Rich progress bar on stderr, only when stderr is a terminal.

    One large file shows its name and bytes; several files show how many are done ("cast 3/10 files")
    and their bytes. Every column shows something (an empty one would leave two spaces in the bar). Whatever the command prints while the bar is up goes through `aside()`, which
    takes the bar off the screen first and draws it again after, so no report or message is
    glued onto it.
    """

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
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)
        return False

    def file_task(self, name: str, size: int):
        """A bar for one file of `size` bytes: a callback taking the bytes done."""
        if self.progress is None:
            return None
        tid = self.progress.add_task(f"cast {name}", total=size)
        return lambda done: self.progress.update(tid, completed=done)

    def files_task(self, sizes: list[int]):
        """A bar for several files of these sizes: a callback taking how many are done (in order)."""
        if self.progress is None:
            return None
        n = len(sizes)
        tid = self.progress.add_task(f"cast {files_done(0, n)}", total=sum(sizes))
        return lambda k: self.progress.update(tid, completed=sum(sizes[:k]), description=f"cast {files_done(k, n)}")

    def tensors_task(self, name: str, size: int, count: int):
        """A bar for a checkpoint of `count` tensors, `size` bytes: callbacks taking the bytes done and how many
        tensors are done (`cast NAME 3/120 tensors`)."""
        if self.progress is None:
            return None, None
        tid = self.progress.add_task(f"cast {name} 0/{count} tensors", total=size)
        return (lambda done: self.progress.update(tid, completed=done),
                lambda k: self.progress.update(tid, description=f"cast {name} {k}/{count} tensors"))

    @contextlib.contextmanager
    def aside(self):
        """Print something while the bar is up: the bar leaves the screen, then comes back below."""
        live = self.progress is not None and self.progress.live.is_started
        if live:
            self.progress.stop()
        try:
            yield
        finally:
            sys.stdout.flush()
            if live:
                self.progress.start()
