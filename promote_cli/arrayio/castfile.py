"""Casting `.npy` files: the streaming driver behind `promote cast`.

A run is planned before anything is written (`plan`, `plan_casts`), for the one cast it
asks for (a `legality.CastRequest`, decided where the cast enters): every input is stat'ed
(regular files only) and every output checked (`npyio.check_output`), and a run in which
a file read is also a file written, or two casts write one file, or (several files) a
file's type has no cast to the target, is refused whole.
Files are compared by device and inode, so symlinks, hard links, `./` spellings and
case variants that reach one file are caught.

`run_job` then does one planned cast: it reads the input through one descriptor
(`npyio.NpyInput`) a chunk at a time (`npyio.ChunkReader`), casts each chunk with the
pair's `numerics.cast.Converter`, adds up the statistics and writes the output atomically
(`npyio.atomic_output`), so memory stays bounded whatever the file size and an
interrupted cast leaves no partial output. A large file on two CPUs is cast in halves,
the second by a forked process (`_HalfCaster`). `cast_file` plans and does one file;
`run_plan` and `cast_files` do several in worker processes and hand the results back
in input order.
"""

from __future__ import annotations

import os
import time
from collections import deque
from contextlib import nullcontext as _nullcontext
from typing import Callable, Iterable, Iterator

import numpy as np

from promote_cli.arrayio import atomic
from promote_cli.arrayio import npy as npyio
from promote_cli.arrayio.files import FileId, os_message, stat_regular
from promote_cli.errors import PromoteError, UsageError
from promote_cli.numerics.legality import CastRequest, request
from promote_cli.records import Record, factory

#: --fail-on conditions and the statistics that trigger them.
FAIL_ON = {
    "overflow": ("overflow_inf", "overflow_nan", "saturated", "wrapped"),
    "inexact": ("rounded", "wrapped", "overflow_inf", "overflow_nan", "saturated", "unpredictable"),
    "nan": ("nan_in", "overflow_nan"),
}

#: The most worker processes a run starts, whatever `jobs` asks for.
MAX_JOBS = 64

#: The most casting threads in one file cast.
MAX_THREADS = 64

#: Written output is handed to the kernel's writeback in steps of this many bytes.
WRITEBACK_BYTES = 16 << 20

# POSIX_FADV_DONTNEED on dirty pages starts their writeback (Linux) without waiting for it.
_FADV = getattr(os, "POSIX_FADV_DONTNEED", None)

#: Casts smaller than this never show a progress bar.
PROGRESS_MIN_BYTES = 64 << 20


def _default_threads() -> int:
    # Chunks converted at a time: one; `cast_array` casts each chunk in threads of its own.
    return 1


def default_output(src: str | os.PathLike, to: str) -> str:
    """`DIR/w.npy` cast to f16 is written to `DIR/w.f16.npy` (suffix `.npy` replaced), spelled as pathlib
    spells the path (`./DIR//w.npy` as `DIR/w.f16.npy`) without importing it."""
    path = os.fspath(src)
    body = path.lstrip("/")
    slashes = len(path) - len(body)
    root = "//" if slashes == 2 else "/" if slashes else ""  # POSIX keeps exactly two leading slashes
    parts = [part for part in body.split("/") if part and part != "."]
    if not parts:
        raise ValueError(f"{path!r} has an empty name")
    name = parts[-1]
    stem = name[:-4] if name.lower().endswith(".npy") else name
    return root + "/".join([*parts[:-1], f"{stem}.{to}.npy"])


class FileReport(Record, kw_only=True):
    """What one file conversion did (a cast or a rescale): the files, the types, the array, the counts.
    `as_dict` is the JSON report: these fields around the conversion's own settings (`settings()`)."""

    input: str
    output: str
    src: str
    dst: str
    shape: tuple
    fortran_order: bool
    elements: int
    stats: dict = factory(dict)
    seconds: float = 0.0
    bytes_in: int = 0
    bytes_out: int = 0

    def settings(self) -> dict:
        return {}

    def as_dict(self) -> dict:
        return {"input": self.input, "output": self.output, "from": self.src, "to": self.dst, **self.settings(),
                "shape": list(self.shape), "fortran_order": self.fortran_order, "elements": self.elements,
                "stats": dict(self.stats), "seconds": round(self.seconds, 6), "bytes_in": self.bytes_in,
                "bytes_out": self.bytes_out}


class CastReport(FileReport):
    """What one file cast did."""

    mode: str
    saturate: bool
    semantics: str = "tosa"

    def settings(self) -> dict:
        out = {"mode": self.mode, "saturate": self.saturate}
        return out if self.semantics == "tosa" else {**out, "semantics": self.semantics}

    def triggered(self, fail_on: Iterable[str]) -> list[str]:
        """The --fail-on conditions this cast met, in the order given."""
        out = []
        for cond in fail_on:
            if any(self.stats.get(k, 0) for k in FAIL_ON[cond]):
                out.append(cond)
        return out


class CastJob(Record, frozen=True):
    """One planned file cast: the input as stat'ed and the output as checked, before
    anything was written."""

    input: str
    output: str
    source: FileId  # the input file; the cast reads it only if it is still this file
    target: npyio.OutputTarget
    target_key: tuple = ()  # `target.key`: the file the output will be


def _stat_input(src: str) -> FileId:
    """The identity of the regular file `src` (symlinks followed); a UsageError otherwise."""
    return FileId.of(stat_regular(src))


def _plan_output(src: str, source: FileId, dst: str | None, to: str, force: bool) -> CastJob:
    out = os.fspath(dst) if dst is not None else default_output(src, to)
    target = npyio.check_output(out, force=force)
    return CastJob(src, out, source, target, target.key)


class CastPlan(Record):
    """The casts of a run, in input order: a `CastJob` each, or the `Outcome` of an input
    refused while planning, and the cast every job does. No file of the plan is both read and
    written, and no two jobs write one file (`plan_casts` checks)."""

    items: list
    request: CastRequest

    @property
    def jobs(self) -> list[CastJob]:
        return [j for j in self.items if isinstance(j, CastJob)]

    def kept(self) -> list[str]:
        """The outputs that exist now and were not there (as that file) when planned:
        what a run interrupted part-way has finished."""
        out = []
        for job in self.jobs:
            try:
                st = os.lstat(job.target.write_path)
            except OSError:
                continue
            was = job.target.replaces
            if was is None or FileId.of(st) != was:
                out.append(job.output)
        return out


def plan(inputs, to, *, output=None, from_=None, mode: str = "tosa", saturate: bool | None = None,
         semantics: str = "tosa", force: bool = False, exclude=()) -> CastPlan:
    """The plan of a command-line cast: the cast asked for decided (`legality.request`), directories expanded
    (leaving out the files `exclude`'s patterns match), `output` for one input only, then `plan_casts`; a run
    of several files in which one has no cast to the target is refused whole (`_refuse_uncastable`); a
    pending interruption raises before anything is written."""
    asked = request(to, from_, mode, saturate, semantics)
    files = expand_inputs(inputs, asked.dst, exclude)
    if output is not None and len(files) != 1:
        raise UsageError("-o/--output needs exactly one input file")
    planned = plan_casts(files, asked, outputs=[output] if output is not None else None, force=force)
    if len(files) > 1:
        _refuse_uncastable(planned)
    npyio.check_interrupted()
    return planned


def _refuse_uncastable(planned: CastPlan) -> None:
    """Refuse a run of several files, before anything is written, when one of them holds a type with no cast
    to the target (in the plan's mode): the first such file named, with the `--exclude` options that leave
    them out. A file whose header cannot be read is left to its own cast to report."""
    asked = planned.request
    refused = []
    for job in planned.jobs:
        try:
            with npyio.NpyInput(job.input) as f:
                if f.ident.key != job.source.key:
                    continue
                source = npyio.resolve_source(f.header, asked.src)
        except (PromoteError, OSError, ValueError):
            continue
        try:
            asked.check(source.canonical)
        except UsageError as e:
            refused.append((job, str(e)))
    if not refused:
        return
    job, message = refused[0]
    more = f" (and {len(refused) - 1} more files with no cast to {asked.dst})" if len(refused) > 1 else ""
    leave = " ".join(f"--exclude {exclude_option(j.input)}" for j, _ in refused[:3])
    leave += " ..." if len(refused) > 3 else ""
    raise UsageError(f"{naming(job, message)}{more}; nothing written "
                     f"(leave {'it' if len(refused) == 1 else 'them'} out with {leave})")


def exclude_option(path: str) -> str:
    """The `--exclude` value that leaves out exactly the file `path` (its name, glob characters escaped),
    quoted for a POSIX shell."""
    import shlex

    name = "".join(f"[{c}]" if c in "*?[" else c for c in os.path.basename(path))
    return shlex.quote(name)


def plan_casts(
    inputs: list[str | os.PathLike],
    asked: CastRequest,
    *,
    outputs: list | None = None,
    force: bool = False,
) -> CastPlan:
    """Plan the casts `asked` of `inputs` (outputs default to `default_output`) before anything is
    written. An input that is not a regular file, or whose output must not be written,
    gets an `Outcome` with the error. A run that would write a file it reads, or write
    one file twice, is refused as a whole: a UsageError, nothing written.

    Files are compared by device and inode after following symlinks (so hard links,
    symlinks and `./` spellings of one file are one file); new outputs by their
    directory's device and inode and their name.
    """
    return CastPlan(_plan_items(inputs, asked.dst, outputs, force), asked)


def _plan_items(inputs, to: str, outputs, force: bool) -> list:
    """`plan_casts`'s items, the outputs named for the canonical type `to` (a cast's or a rescale's)."""
    outputs = list(outputs) if outputs is not None else [None] * len(inputs)
    if len(outputs) != len(inputs):
        raise UsageError("as many outputs as inputs are needed")
    items: list = []
    read: dict = {}  # every input that is a regular file, whether or not its cast can go on
    for src, dst in zip(inputs, outputs):
        src = os.fspath(src)
        try:
            source = _stat_input(src)
            read.setdefault(source.key, src)
            items.append(_plan_output(src, source, dst, to, force))
        except UsageError as e:
            items.append(Outcome(src, error=str(e), exit_code=e.exit_code))
    conflicts: list[str] = []
    written: dict = {}
    for job in (j for j in items if isinstance(j, CastJob)):
        key = job.target_key
        if key[0] == "file" and key[1:] in read:
            src = read[key[1:]]
            named = "" if src == job.output else f" {src}"
            by = "" if src == job.input else f" with the cast of {job.input}"
            conflicts.append(f"{job.output}: refusing to overwrite the input file{named}{by}")
        elif key in written:
            other = written[key]
            conflicts.append(f"{job.output}: both {other.input} and {job.input} would be cast to this file")
        else:
            written[key] = job
    if conflicts:
        more = f" (and {len(conflicts) - 1} more conflicts)" if len(conflicts) > 1 else ""
        raise UsageError(f"{conflicts[0]}{more}; nothing written")
    return items


def cast_file(
    src_path: str | os.PathLike,
    dst_path: str | os.PathLike | None = None,
    to="",
    *,
    from_=None,
    mode: str = "tosa",
    saturate: bool | None = None,
    semantics: str = "tosa",
    force: bool = False,
    chunk_bytes: int | None = None,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> CastReport:
    """Cast the `.npy` file `src_path` to dtype `to`, writing `dst_path` atomically.

    `to` and `from_` take any dtype name or alias, or a numpy dtype. `dst_path` defaults to
    `default_output(src_path, to)`. `from_` reinterprets the stored bits (a uint16
    or |V2 file as bf16). Raises `UsageError` for bad input, an illegal pair
    (TOSA mode), an existing output without `force`, an output that is not a regular
    file (with `force`, only a regular file is replaced, keeping its mode) or that is the
    input. `semantics` casts as another library does (`numerics.semantics`). `progress`, if given, is called with the number of input bytes done after
    each chunk. `chunk_bytes` bounds the input bytes cast at a time
    (default `npyio.DEFAULT_CHUNK_BYTES`). `threads` > 1 casts that many chunks at a
    time, one thread each; 1 casts in this thread alone; the default casts each chunk with
    `numerics.cast.default_threads()` threads while other threads read and write, and a
    file of `SPLIT_MIN_BYTES` or more in two halves at once (a forked process, two CPUs).
    Returns a `CastReport` with the element statistics.
    """
    planned = plan_casts([src_path], request(to, from_, mode, saturate, semantics), outputs=[dst_path], force=force)
    item = planned.items[0]
    if isinstance(item, Outcome):
        raise UsageError(item.error)
    return run_job(item, planned.request, chunk_bytes=chunk_bytes, threads=threads, progress=progress)


def run_job(
    job: CastJob,
    asked: CastRequest,
    *,
    chunk_bytes: int | None = None,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> CastReport:
    """Do one planned cast (`cast_file`'s work once planned). The input is read through one
    descriptor and must still be the file planned; the output replaces only what the plan
    saw there."""
    start = time.perf_counter()
    with npyio.NpyInput(job.input) as f:
        if f.ident.key != job.source.key:
            raise UsageError(f"{job.input}: was replaced since the cast started")
        report = _cast_open(f, job, asked, chunk_bytes, threads, progress)
    report.seconds = time.perf_counter() - start
    return report


def _cast_open(f, job, asked, chunk_bytes, threads, progress) -> CastReport:
    from promote_cli.numerics.cast import Converter
    from promote_cli.numerics.stats import CastStats

    header = f.header
    source = npyio.resolve_source(header, asked.src)
    cast = Converter(asked, source.canonical)
    # Default: one converting thread, each chunk cast as `cast_array` casts by default (in threads of
    # its own), or in one thread when the file is split between two processes; an explicit `threads`
    # (1 in worker processes) is the whole cast's thread count.
    each = {"threads": None if threads is None else 1}

    def convert(chunk, out, first):
        return cast(chunk, out=out, threads=each["threads"])[1]

    def on_split():
        each["threads"] = 1

    total, written = _convert_open(f, job, source, cast.out_dtype, convert, chunk_bytes, threads, progress,
                                   on_split)
    return CastReport(
        input=job.input,
        output=job.output,
        src=source.canonical,
        dst=asked.dst,
        mode=asked.mode,
        saturate=asked.saturate,
        semantics=asked.semantics,
        shape=header.shape,
        fortran_order=header.fortran_order,
        elements=header.count,
        stats=(CastStats() if total is None else total).as_dict(),  # None: an empty array
        bytes_in=header.offset + header.nbytes,
        bytes_out=written,
    )


def convert_file(
    src_path: str | os.PathLike,
    dst_path: str | os.PathLike | None,
    to: str,
    prepare: Callable,
    convert: Callable,
    *,
    force: bool = False,
    chunk_bytes: int | None = None,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple:
    """The streaming driver of `cast_file` for any per-element conversion: plans the output
    as a cast to `to` would (default `default_output(src_path, to)`), then reads the input a
    chunk at a time, converts and writes atomically. `prepare(header, source)` checks the
    conversion before anything is written and returns the output dtype; `convert(chunk,
    out, first)` fills `out` from `chunk` (the file's elements `first`..., in its order) and
    returns summable statistics or None. Returns (job, header, statistics or None, bytes
    written)."""
    job = _plan_items([src_path], to, [dst_path], force)[0]
    if isinstance(job, Outcome):
        raise UsageError(job.error)
    with npyio.NpyInput(job.input) as f:
        if f.ident.key != job.source.key:
            raise UsageError(f"{job.input}: was replaced since the conversion started")
        source = npyio.resolve_source(f.header, None)
        out_dtype = prepare(f.header, source)
        total, written = _convert_open(f, job, source, out_dtype, convert, chunk_bytes, threads, progress)
        return job, f.header, total, written


def _convert_open(f, job, source, out_dtype, convert, chunk_bytes, threads, progress, on_split=None) -> tuple:
    """Stream the open input `f` through `convert` into the job's output: (statistics, bytes written).
    `on_split`, if given, is called before a large file is split between two processes."""
    header = f.header
    head = npyio.header_bytes(header.shape, header.fortran_order, out_dtype)
    chunk_bytes = chunk_bytes or npyio.DEFAULT_CHUNK_BYTES
    reader = npyio.ChunkReader(header, source, chunk_bytes=chunk_bytes, fd=f.fd)
    with npyio.atomic_output(job.output, target=job.target, protect=(job.source,)) as fp:
        fp.write(head)
        split = _split_at(header, reader.chunk_elems, threads)
        helper = None
        if split is not None:
            if on_split is not None:
                on_split()
            # Before any thread of ours starts: a forked process casts the second half.
            try:
                helper = _HalfCaster(f, header, source, out_dtype, convert, chunk_bytes, split, fp.fileno(),
                                     len(head), job.output)
            except OSError:  # no process to be had: cast it all here
                helper = None
        if helper is None:
            return _convert_range(f, reader, fp, len(head), out_dtype, convert, threads, progress)
        try:
            first = npyio.ChunkReader(header, source, chunk_bytes=chunk_bytes, fd=f.fd, stop=split)
            total, written = _convert_range(f, first, fp, len(head), out_dtype, convert, 1, progress)
            theirs, their_bytes = helper.result()
        except BaseException:
            helper.stop()
            raise
        if progress is not None:
            progress(header.count * header.dtype.itemsize)
        return (theirs if total is None else total if theirs is None else total + theirs), written + their_bytes


#: A default file cast of at least this many input bytes is split in two halves, the second one cast by a
#: forked process, which reads, casts and writes its half while this one does the first (each with one
#: casting thread).
SPLIT_MIN_BYTES = 64 << 20


def _split_at(header, chunk_elems: int, threads) -> int | None:
    """Where a cast is split between this process and a helper (an element index), or None."""
    if threads is not None or not hasattr(os, "fork") or header.nbytes < SPLIT_MIN_BYTES:
        return None
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    nchunks = -(-header.count // chunk_elems)
    if cpus < 2 or nchunks < 2:
        return None
    return (nchunks // 2) * chunk_elems


# os.pwrite, by a name of this module's own (tests simulate a full disk with it).
_pwrite = os.pwrite


class _HalfCaster:
    """A forked process that casts the elements `split`... of the open input into the output's
    temporary file (positioned writes after the header and the first half), and hands back its
    statistics and byte count, or its error, through a pipe. It ignores SIGINT (the parent acts
    on it) and dies on SIGTERM; it never names, removes or renames a file: the parent's atomic
    output does that once the helper is done, or kills it (`stop`) on the way out."""

    def __init__(self, f, header, source, out_dtype, convert, chunk_bytes, split, out_fd, head_len, output):
        import signal

        rfd, wfd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(rfd)
            os.close(wfd)
            raise
        if pid == 0:  # pragma: no cover - the helper process (covered through its results)
            code = 0
            try:
                os.close(rfd)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                result = ("ok",) + self._cast(f, header, source, out_dtype, convert, chunk_bytes, split, out_fd,
                                              head_len, output)
            except PromoteError as e:
                result, code = ("error", str(e), e.exit_code), 1
            except OSError as e:
                result, code = ("error", f"{output}: cannot write output: {os_message(e)}", 2), 1
            except BaseException as e:  # noqa: BLE001 - reported by the parent, one line
                result, code = ("error", f"{output}: {type(e).__name__}: {e}", 2), 1
            try:
                import pickle

                data = memoryview(pickle.dumps(result))
                while data:
                    data = data[os.write(wfd, data):]
            finally:
                os._exit(code)
        os.close(wfd)
        self.pid, self.rfd, self.output = pid, rfd, output

    @staticmethod
    def _cast(f, header, source, out_dtype, convert, chunk_bytes, split, out_fd, head_len, output) -> tuple:
        # the same pipeline as the parent's (reading and writing threads of its own), writing at its place
        reader = npyio.ChunkReader(header, source, chunk_bytes=chunk_bytes, fd=f.fd, start=split)
        sink = _PositionedSink(out_fd, head_len + split * out_dtype.itemsize)
        return _convert_range(f, reader, sink, 0, out_dtype, convert, 1, None)

    def result(self) -> tuple:
        """(statistics, bytes written) once the helper is done; its error raised here. Waits in short
        steps, so that a signal acts promptly."""
        import pickle
        import select

        got = []
        while True:
            ready, _, _ = select.select([self.rfd], [], [], 0.05)
            npyio.check_interrupted()
            if ready:
                b = os.read(self.rfd, 1 << 16)
                if not b:
                    break
                got.append(b)
        os.close(self.rfd)
        self.rfd = None
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if not got:
            raise UsageError(f"{self.output}: the casting process ended without a result "
                             f"(exit status {os.waitstatus_to_exitcode(status)}); nothing written")
        result = pickle.loads(b"".join(got))
        if result[0] != "ok":
            _, message, exit_code = result
            err = UsageError(message)
            err.exit_code = exit_code
            raise err
        return result[1], result[2]

    def stop(self) -> None:
        """Kill the helper (if still there) and reap it: nothing writes to the output after this."""
        import signal

        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None
        if self.rfd is not None:
            os.close(self.rfd)
            self.rfd = None


class _PositionedSink:
    """A file object writing with `os.pwrite` from `base` on (the helper's part of the output)."""

    def __init__(self, fd: int, base: int):
        self.fd, self.base, self.offset = fd, base, base

    def write(self, data) -> int:
        data = memoryview(data).cast("B")
        total = len(data)
        while data:
            n = _pwrite(self.fd, data, self.offset)
            if n <= 0:  # a write that makes no progress would loop forever
                import errno

                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            data, self.offset = data[n:], self.offset + n
        return total

    def fileno(self) -> int:
        return self.fd


def _convert_range(f, reader, fp, head_len, out_dtype, convert, threads, progress) -> tuple:
    """Convert the reader's elements, writing them to `fp` (just after what it holds): (statistics,
    bytes written, header included)."""
    header = f.header
    total = None
    done = 0
    item = header.dtype.itemsize
    written = head_len
    nchunks = -(-(reader.stop - reader.start) // reader.chunk_elems)
    if nchunks <= 1:
        # One chunk (a small file): no threads to start, nothing to overlap.
        for chunk in reader:
            npyio.check_interrupted()
            y = np.empty(chunk.size, out_dtype)
            total = convert(chunk, y, reader.start)
            fp.write(y.view(np.uint8))
            written += y.nbytes
            done += chunk.size * item
            if progress is not None:
                progress(done)
    else:
        # Reading (a thread inside the reader), converting (here, or `threads` threads
        # taking turns by chunk) and writing (a thread) overlap: file I/O and most numpy
        # loops release the GIL. Buffers are reused: nothing is allocated per chunk.
        threads = max(1, min(threads or _default_threads(), nchunks, MAX_THREADS))
        with _Writer(fp, min(header.count, reader.chunk_elems), out_dtype, pool=threads + 2) as writer:
            pending: deque = deque()

            def finish() -> None:
                nonlocal total, done
                fut, buf, n = pending.popleft()
                st = fut.result() if threads > 1 else fut
                if st is not None:
                    total = st if total is None else total + st
                writer.put(buf)
                done += n * item
                if progress is not None:
                    progress(done)

            chunks = reader.prefetched(keep=threads)
            first = reader.start
            if threads > 1:
                from concurrent.futures import ThreadPoolExecutor
            try:
                with ThreadPoolExecutor(threads) if threads > 1 else _nullcontext() as pool:
                    try:
                        for chunk in chunks:
                            npyio.check_interrupted()
                            buf = writer.buffer(chunk.size)
                            if threads > 1:
                                fut = pool.submit(convert, chunk, buf, first)
                            else:
                                fut = convert(chunk, buf, first)
                            first += chunk.size
                            pending.append((fut, buf, chunk.size))
                            if len(pending) >= threads:
                                finish()
                        while pending:
                            finish()
                    except BaseException:
                        for fut, _, _ in pending:
                            if threads > 1:
                                fut.cancel()
                        raise
            finally:
                chunks.close()  # stops the reading thread
        written += writer.written
    return total, written


class _Writer:
    """Writes output chunks in a background thread, from a small pool of reused buffers.

    `buffer(n)` hands out a free buffer of n elements (waiting while all are queued),
    `put(buf)` queues it for writing. Leaving the `with` block waits for every queued
    write; a write error is raised in the caller's thread at the next `buffer`/`put` or
    on exit. On an exception in the caller, queued chunks are dropped and the thread is
    stopped before the caller's clean-up runs.
    """

    def __init__(self, fp, elems: int, dtype: np.dtype, pool: int = 2):
        import queue
        import threading

        self.fp = fp
        self.written = 0
        self.flushed = 0  # bytes whose writeback was started (`_start_writeback`)
        self.base = getattr(fp, "base", None)  # where the first byte goes (None: at the file's position)
        if self.base is None:
            try:
                self.base = os.lseek(fp.fileno(), 0, os.SEEK_CUR)
            except (OSError, AttributeError, ValueError):
                self.base = 0
        self.error: BaseException | None = None
        self.free: queue.Queue = queue.Queue()
        self.todo: queue.Queue = queue.Queue()
        self.pool = [np.empty(max(elems, 1), dtype) for _ in range(pool)]
        for b in self.pool:
            self.free.put(b)
        self.stop = False
        self.thread = threading.Thread(target=self._run, name="promote-cast-writer", daemon=True)

    def __enter__(self) -> _Writer:
        self.thread.start()
        return self

    def _run(self) -> None:
        while True:
            buf = self.todo.get()
            if buf is None:
                return
            try:
                if not self.stop and self.error is None:
                    data = memoryview(buf.view(np.uint8))
                    self.fp.write(data)
                    self.written += data.nbytes
                    self._start_writeback()
            except BaseException as e:  # reported to the caller
                self.error = e
            finally:
                self.free.put(buf if buf.base is None else buf.base)

    def _start_writeback(self) -> None:
        """Have the kernel start writing what was written so far to disk (without waiting):
        the final fsync then finds little left to do, and the disk works while we cast."""
        done = self.written - self.flushed
        if done < WRITEBACK_BYTES or _FADV is None:
            return
        try:
            os.posix_fadvise(self.fp.fileno(), self.base + self.flushed, done, _FADV)
        except (OSError, AttributeError, ValueError):
            pass  # only a hint
        self.flushed = self.written

    def _check(self) -> None:
        if self.error is not None:
            raise self.error

    def buffer(self, n: int) -> np.ndarray:
        self._check()
        return self.free.get()[:n]

    def put(self, buf: np.ndarray) -> None:
        self._check()
        self.todo.put(buf)

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.stop = True
        self.todo.put(None)
        self.thread.join()
        if exc_type is None:
            self._check()


def expand_inputs(paths: Iterable[str | os.PathLike], to: str, exclude: Iterable[str] = ()) -> list[str]:
    """Files to cast: each path as given; each directory's `*.npy` entries, sorted; less the files whose
    name (in its directory) an `exclude` pattern matches (a glob: `*`, `?`, `[...]`, case-sensitive).

    In a directory, subdirectories, our own temporary files and earlier outputs of the
    same cast (`*.TO.npy`) are skipped; any other `*.npy` entry is listed, so that one
    that is not a regular file (a FIFO, a device, a dangling symlink) is reported by the
    cast rather than skipped in silence.
    """
    left_out = _matcher(exclude)
    out: list[str] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            try:
                with os.scandir(p) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                raise UsageError(f"{p}: {os_message(e)}") from None
            found = []
            for e in entries:
                n = e.name
                if not n.lower().endswith(".npy") or npyio.TEMP_MARK in n or n.endswith(f".{to}.npy"):
                    continue
                try:
                    if e.is_dir():
                        continue
                except OSError:
                    pass
                found.append(n)
            if not found:
                raise UsageError(f"{p}: directory holds no .npy files")
            out.extend(os.path.join(p, n) for n in found if not left_out(n))
        elif os.path.lexists(p):
            if not left_out(os.path.basename(p)):
                out.append(p)
        else:
            raise UsageError(f"{p}: cannot read: No such file or directory")
    if not out:
        raise UsageError("--exclude leaves out every input; nothing to cast")
    return out


def _matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """Whether a file name matches one of the glob `patterns` (`--exclude`)."""
    patterns = tuple(patterns)
    if not patterns:
        return lambda name: False
    from fnmatch import fnmatchcase

    return lambda name: any(fnmatchcase(name, pattern) for pattern in patterns)


class Outcome(Record):
    """The result of one file in a batch: a report, or an error message."""

    input: str
    report: CastReport | None = None
    error: str | None = None
    exit_code: int = 0


class CastTotals(Record):
    """What a run of several files did, summed over its outcomes (`of`): the files, those that failed, the
    elements and each counter of the files cast, and their bytes."""

    files: int = 0
    failed: int = 0
    elements: int = 0
    stats: dict = factory(dict)
    bytes_in: int = 0
    bytes_out: int = 0

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> CastTotals:
        from promote_cli.numerics.stats import CastStats

        totals = cls(stats=CastStats().as_dict())
        for oc in outcomes:
            totals.files += 1
            r = oc.report
            if r is None:
                totals.failed += 1
                continue
            totals.elements += r.elements
            totals.bytes_in += r.bytes_in
            totals.bytes_out += r.bytes_out
            for k, v in r.stats.items():
                totals.stats[k] = totals.stats.get(k, 0) + v
        return totals

    def as_dict(self) -> dict:
        return {"files": self.files, "cast": self.files - self.failed, "failed": self.failed,
                "elements": self.elements, "stats": dict(self.stats), "bytes_in": self.bytes_in,
                "bytes_out": self.bytes_out}


def naming(job: CastJob, message: str) -> str:
    """An error of one cast of a run, starting with the name of the file it concerns: as it is when it
    names the input or the output first, else with the input's name put in front."""
    return message if message.startswith((f"{job.input}: ", f"{job.output}: ")) else f"{job.input}: {message}"


def _run_one(args: tuple) -> Outcome:
    job, asked, kwargs = args
    try:
        return Outcome(job.input, report=run_job(job, asked, **kwargs))
    except PromoteError as e:
        return Outcome(job.input, error=naming(job, str(e)), exit_code=e.exit_code)
    except (OSError, ValueError) as e:  # a defect of ours: still one line, naming the input
        reason = os_message(e) if isinstance(e, OSError) else str(e)
        return Outcome(job.input, error=f"{job.input}: {reason}", exit_code=2)


# In a worker process: SIGTERM during a cast is deferred to the next safe point, where it
# raises (so the temporary file is removed on the way out), then the worker exits; an idle
# worker exits at once.
_busy = False


def _worker_sigterm(signum, frame):
    if not _busy:
        os._exit(128 + signum)
    # The parent's SIGTERM is followed by the pool's own once a worker has gone (a broken pool terminates
    # every process): that second one must not raise at once, as a user's second Ctrl-C would, at an
    # arbitrary point that may hold a lock the writer thread needs; the worker is already on its way out.
    if atomic._pending is None:
        atomic._defer(signum, frame)


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGTERM, _worker_sigterm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it sends SIGTERM


def _run_in_worker(args: tuple) -> Outcome:
    global _busy
    _busy = True
    try:
        return _run_one(args)
    except (npyio.Terminated, KeyboardInterrupt):
        os._exit(143)  # the cast's clean-up has run
    finally:
        _busy = False


def job_count(requested: int | None, files: int) -> int:
    """Worker processes for `files` casts: as requested (default: the CPUs), never more
    than the files, the CPUs or `MAX_JOBS`."""
    cpus = os.cpu_count() or 1
    want = requested if requested is not None else cpus
    return max(1, min(want, files, cpus, MAX_JOBS))


def run_plan(plan: CastPlan, *, jobs: int | None = None, progress: Callable[[int], None] | None = None,
             **kwargs) -> Iterator[Outcome]:
    """Do a plan's casts, `jobs` at a time in worker processes; yields in input order.

    `progress` (one job only, done in this process) is called as `cast_file`'s is; `kwargs` are
    `run_job`'s `chunk_bytes` and `threads`."""
    jobs = job_count(jobs, len(plan.jobs))
    if jobs > 1:
        kwargs.setdefault("threads", 1)  # the processes already use the CPUs
    if jobs == 1:
        for item in plan.items:
            npyio.check_interrupted()
            if isinstance(item, Outcome):
                yield item
            else:
                yield _run_one((item, plan.request, dict(kwargs, progress=progress)))
        return
    from concurrent.futures import ProcessPoolExecutor, wait

    ex = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    futures: list = []
    try:
        for item in plan.items:
            futures.append(item if isinstance(item, Outcome)
                           else ex.submit(_run_in_worker, (item, plan.request, kwargs)))
        for f in futures:
            if not isinstance(f, Outcome):
                while not wait([f], timeout=0.05).done:  # short waits: a signal acts promptly
                    npyio.check_interrupted()
            npyio.check_interrupted()
            yield f if isinstance(f, Outcome) else f.result()
    except BaseException:
        # Interrupted: stop the workers; each removes its temporary file on SIGTERM.
        for f in futures:
            if not isinstance(f, Outcome):
                f.cancel()
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            try:
                proc.terminate()
            except Exception:
                pass
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    else:
        ex.shutdown(wait=True)


def cast_files(
    inputs: list[str],
    outputs: list[str | None] | None = None,
    to="",
    *,
    from_=None,
    mode: str = "tosa",
    saturate: bool | None = None,
    semantics: str = "tosa",
    jobs: int | None = None,
    force: bool = False,
    **kwargs,
) -> Iterator[Outcome]:
    """Cast several files as `cast_file` casts one, `jobs` at a time in worker processes; yields in input
    order (`kwargs`: `run_plan`'s).

    The run is planned first (`plan_casts`): a run that would write a file it reads, or
    one file twice, raises UsageError before anything is written."""
    planned = plan_casts(inputs, request(to, from_, mode, saturate, semantics), outputs=outputs, force=force)
    yield from run_plan(planned, jobs=jobs, **kwargs)
