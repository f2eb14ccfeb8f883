"""`rescale_file`: TOSA RESCALE of a `.npy` file, through the streaming driver of
`promote cast` (`arrayio.castfile.convert_file`): the input is never modified, the output
is written atomically, memory stays bounded (a chunk at a time, any chunk boundary: the
kernel knows each element's channel from its position)."""

from __future__ import annotations

import os
import time

from promote_cli.arrayio.castfile import FileReport
from promote_cli.errors import UsageError
from promote_cli.numerics.rescale_rules import ROUNDING


class RescaleReport(FileReport):  # a Record, keyword-only as its base
    """What one file rescale did."""

    scale32: bool
    rounding: str
    per_channel: bool
    multiplier: list
    shift: list
    input_zp: int
    output_zp: int

    def settings(self) -> dict:
        return {"scale32": self.scale32, "rounding": ROUNDING[self.rounding], "per_channel": self.per_channel,
                "multiplier": list(self.multiplier), "shift": list(self.shift), "input_zp": self.input_zp,
                "output_zp": self.output_zp}

    @property
    def rounding_name(self) -> str:
        """The spec's name of the rounding mode (SINGLE_ROUND, ...)."""
        return ROUNDING[self.rounding]


def rescale_file(src_path, dst_path=None, to: str = "", multiplier=None, shift=None, *, scale=None, input_zp: int = 0,
                 output_zp: int = 0, scale32: bool = True, rounding: str = "single", per_channel: bool = False,
                 from_: str | None = None, input_unsigned: bool = False, output_unsigned: bool = False,
                 force: bool = False, chunk_bytes: int | None = None, threads: int | None = None,
                 progress=None, progress_bar: bool = False) -> RescaleReport:
    """RESCALE the `.npy` file `src_path` to `to` (i8 i16 i32 u8 u16), writing `dst_path`
    (default `IN.TO.npy`, as `promote cast` names outputs) atomically; the arguments are `rescale_array`'s. Everything the
    spec forbids is refused (`UsageError`) before anything is written, except a value
    outside a REQUIRE's range, which is found while streaming and leaves no output.
    `scale` (a number, or one per channel) instead of `multiplier` and `shift` takes the
    spec's normalized multiplier and shift (`rescale.normalize_scale`); the report says
    which."""
    from promote_cli.arrayio import castfile
    from promote_cli.numerics.rescale import (
        check_i48,
        input_name,
        make_plan,
        normalize_scale,
        unsigned_name,
    )

    if not to:
        raise UsageError("no output type given (--to)")
    if scale is not None:
        if multiplier is not None or shift is not None:
            raise UsageError("give --scale or --multiplier/--shift, not both")
        chosen = [normalize_scale(f, scale32) for f in (scale if isinstance(scale, (list, tuple)) else [scale])]
        multiplier, shift = [m for m, _ in chosen], [s for _, s in chosen]
    elif multiplier is None or shift is None:
        raise UsageError("give --multiplier and --shift, or --scale")
    to = unsigned_name(to, output_unsigned)
    src_path = os.fspath(src_path)
    start = time.perf_counter()
    state: dict = {}

    def prepare(header, source):
        name = input_name(source.native, from_, input_unsigned)
        shape = header.shape
        plan = make_plan(name, to, multiplier, shift, input_zp=input_zp, output_zp=output_zp, scale32=scale32,
                         rounding=rounding, per_channel=per_channel, rank=len(shape),
                         channels=shape[-1] if shape else 1)
        state.update(plan=plan, name=name, shape=shape, fortran=header.fortran_order)
        return plan.out_dtype

    def convert(chunk, out, first):
        plan = state["plan"]
        x = chunk.view(plan.in_dtype) if state["name"] != "i48" else chunk
        if state["name"] == "i48":
            check_i48(x, first)
        return plan.run(x, out, first, state["shape"], state["fortran"])

    if threads is None:
        # Two: RESCALE does several times a CAST's arithmetic per element; measured on 2 CPUs,
        # a second converting thread made a 1 GiB per-channel i32 -> i8 rescale ~10% faster.
        threads = 2
    # The spec's refusals come first, before the output is even looked at.
    from promote_cli.arrayio import npy as npyio

    try:
        with npyio.NpyInput(src_path) as f:
            prepare(f.header, npyio.resolve_source(f.header, None))
    except OSError as e:
        raise UsageError(f"{src_path}: cannot read: {e.strerror or e}") from None
    bar = _Bar(progress_bar, src_path) if progress_bar else None
    try:
        job, header, total, written = castfile.convert_file(
            src_path, dst_path, to, prepare, convert, force=force, chunk_bytes=chunk_bytes, threads=threads,
            progress=progress or (bar.update if bar else None))
    finally:
        if bar:
            bar.close()
    plan = state["plan"]
    stats = total.as_dict() if total is not None else {"elements": 0, "saturated": 0, "saturated_low": 0,
                                                       "saturated_high": 0}
    stats.pop("elements", None)
    return RescaleReport(input=src_path, output=job.output, src=state["name"], dst=to, scale32=scale32, rounding=rounding,
                         per_channel=per_channel, multiplier=plan.multipliers, shift=plan.shifts,
                         input_zp=input_zp, output_zp=output_zp, shape=header.shape,
                         fortran_order=header.fortran_order, elements=header.count, stats=stats,
                         seconds=time.perf_counter() - start, bytes_in=header.offset + header.nbytes,
                         bytes_out=int(written))


class _Bar:
    """A Rich progress bar on stderr for files over `castfile.PROGRESS_MIN_BYTES`."""

    def __init__(self, enabled: bool, path: str):
        from promote_cli.arrayio import castfile

        self.progress = None
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        if enabled and size >= castfile.PROGRESS_MIN_BYTES:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TransferSpeedColumn,
            )

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                     TransferSpeedColumn(), console=Console(stderr=True), transient=True)
            self.progress.__enter__()
            self.task = self.progress.add_task(f"rescale {os.path.basename(path)}", total=size)

    def update(self, done: int) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.__exit__(None, None, None)
