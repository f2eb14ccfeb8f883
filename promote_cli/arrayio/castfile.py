"""Casting `.npy` files: the streaming driver behind `promote cast`.

`cast_file` reads the input a chunk at a time (`npyio.ChunkReader`), casts each
chunk with `tosa_cast.cast_array`, adds up the statistics and writes the output
atomically (`npyio.atomic_output`), so memory stays bounded whatever the file
size and an interrupted cast leaves no output behind. `cast_files` does several
files in worker processes and hands the results back in input order.
"""

from __future__ import annotations

import os
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import nullcontext as _nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from promote_cli.arrayio import npy as npyio
from promote_cli.errors import PromoteError, UsageError

#: --fail-on conditions and the statistics that trigger them.
FAIL_ON = {
    "overflow": ("overflow_inf", "overflow_nan", "saturated", "wrapped"),
    "inexact": ("rounded", "wrapped", "overflow_inf", "overflow_nan", "saturated", "unpredictable"),
    "nan": ("nan_in", "overflow_nan"),
}

#: Casts smaller than this never show a progress bar.
PROGRESS_MIN_BYTES = 64 << 20


def _default_threads() -> int:
    # One: measured on 2 CPUs, a second casting thread sped f32 -> f16 up by ~15% and
    # slowed f32 -> bf16 / fp8 down by as much (the reading and writing threads, the
    # fsync and the GIL share the CPUs).
    return 1


def canonical_name(name: str) -> str:
    """A dtype name or alias (`float16`, `fp8e4m3`, ...) as its canonical name."""
    from promote_cli.vocab.dtypes import lookup

    return lookup(name).name


def default_output(src: str | os.PathLike, to: str) -> Path:
    """`DIR/w.npy` cast to f16 is written to `DIR/w.f16.npy` (suffix `.npy` replaced)."""
    p = Path(src)
    stem = p.name[:-4] if p.name.lower().endswith(".npy") else p.name
    return p.with_name(f"{stem}.{to}.npy")


@dataclass
class CastReport:
    """What one file cast did."""

    input: str
    output: str
    src: str
    dst: str
    mode: str
    saturate: bool
    shape: tuple
    fortran_order: bool
    elements: int
    stats: dict = field(default_factory=dict)
    seconds: float = 0.0
    bytes_in: int = 0
    bytes_out: int = 0

    def triggered(self, fail_on: Iterable[str]) -> list[str]:
        """The --fail-on conditions this cast met, in the order given."""
        out = []
        for cond in fail_on:
            if any(self.stats.get(k, 0) for k in FAIL_ON[cond]):
                out.append(cond)
        return out

    def as_dict(self) -> dict:
        return {
            "input": self.input,
            "output": self.output,
            "from": self.src,
            "to": self.dst,
            "mode": self.mode,
            "saturate": self.saturate,
            "shape": list(self.shape),
            "fortran_order": self.fortran_order,
            "elements": self.elements,
            "stats": dict(self.stats),
            "seconds": round(self.seconds, 6),
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
        }


def _stats_dict(stats) -> dict:
    if stats is None:
        return {}
    d = stats.as_dict()
    return {k: int(v) for k, v in d.items()}


def cast_file(
    src_path: str | os.PathLike,
    dst_path: str | os.PathLike | None = None,
    to: str = "",
    *,
    from_: str | None = None,
    mode: str = "tosa",
    saturate: bool = False,
    force: bool = False,
    chunk_bytes: int | None = None,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> CastReport:
    """Cast the `.npy` file `src_path` to dtype `to`, writing `dst_path` atomically.

    `to` and `from_` take any dtype name or alias. `dst_path` defaults to
    `default_output(src_path, to)`. `from_` reinterprets the stored bits (a uint16
    or |V2 file as bf16). Raises `UsageError` for bad input, an illegal pair
    (TOSA mode), an existing output without `force`, or an output naming the input.
    `progress`, if given, is called with the number of input bytes done after
    each chunk. `chunk_bytes` bounds the input bytes cast at a time
    (default `npyio.DEFAULT_CHUNK_BYTES`). `threads` > 1 casts that many chunks at a
    time in threads (default 1: casting in this thread while others read and write). Returns a `CastReport` with the element statistics.
    """
    from promote_cli.numerics import cast as tosa_cast  # cast_array, check_pair

    if not to:
        raise UsageError("no target dtype given (--to)")
    if mode not in ("tosa", "extended"):
        raise UsageError(f"unknown mode {mode!r} (use tosa or extended)")
    to = canonical_name(to)
    if from_ is not None:
        from_ = canonical_name(from_)
    src_path = os.fspath(src_path)
    dst = os.fspath(dst_path) if dst_path is not None else os.fspath(default_output(src_path, to))

    start = time.perf_counter()
    kw = dict(src=None, mode=mode, saturate=saturate, stats=True)

    def prepare(header, source):
        tosa_cast.check_pair(source.canonical, to, mode=mode)
        if saturate and mode != "extended":
            raise UsageError("--saturate is only meaningful with --mode extended (TOSA fixes overflow behaviour)")
        kw["src"] = source.canonical
        return npyio._numpy_dtype(to)

    def convert(chunk, out, first):
        return tosa_cast.cast_array(chunk, to, out=out, **kw)[1]

    header, source, total, written = convert_file(src_path, dst, prepare, convert, from_=from_, force=force,
                                                  chunk_bytes=chunk_bytes, threads=threads, progress=progress)
    if total is None:  # empty array: all-zero statistics
        _, total = tosa_cast.cast_array(np.empty(0, dtype=source.native), to, **kw)
    return CastReport(
        input=src_path,
        output=dst,
        src=source.canonical,
        dst=to,
        mode=mode,
        saturate=saturate,
        shape=header.shape,
        fortran_order=header.fortran_order,
        elements=header.count,
        stats=_stats_dict(total),
        seconds=time.perf_counter() - start,
        bytes_in=header.offset + header.nbytes,
        bytes_out=written,
    )


def convert_file(src_path: str, dst: str, prepare: Callable, convert: Callable, *, from_: str | None = None,
                 force: bool = False, chunk_bytes: int | None = None, threads: int | None = None,
                 progress: Callable[[int], None] | None = None) -> tuple:
    """The streaming driver: read `src_path` a chunk at a time, convert each chunk, write
    `dst` atomically. `prepare(header, source)` checks the conversion before anything is
    written and returns the output dtype; `convert(chunk, out, first)` fills `out` from
    `chunk` (elements `first`... of the file, in its order) and returns summable statistics
    (or None). Returns (header, source, summed statistics or None, bytes written)."""
    header = npyio.read_header(src_path)
    source = npyio.resolve_source(header, from_)
    out_dtype = prepare(header, source)
    reader = npyio.ChunkReader(header, source, chunk_bytes=chunk_bytes or npyio.DEFAULT_CHUNK_BYTES)
    total = None
    done = 0
    item = header.dtype.itemsize
    with npyio.atomic_output(dst, force=force, protect=(src_path,)) as fp:
        head = npyio.header_bytes(header.shape, header.fortran_order, out_dtype)
        fp.write(head)
        written = len(head)
        # Reading (a thread inside the reader), converting (here, or `threads` threads
        # taking turns by chunk) and writing (a thread) overlap: file I/O and most numpy
        # loops release the GIL. Buffers are reused: nothing is allocated per chunk.
        nchunks = -(-header.count // reader.chunk_elems)
        threads = max(1, min(threads or _default_threads(), nchunks))
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
            first = 0
            try:
                with ThreadPoolExecutor(threads) if threads > 1 else _nullcontext() as pool:
                    try:
                        for chunk in chunks:
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
    return header, source, total, written


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
        self.error: BaseException | None = None
        self.free: "queue.Queue" = queue.Queue()
        self.todo: "queue.Queue" = queue.Queue()
        self.pool = [np.empty(max(elems, 1), dtype) for _ in range(pool)]
        for b in self.pool:
            self.free.put(b)
        self.stop = False
        self.thread = threading.Thread(target=self._run, name="promote-cast-writer", daemon=True)

    def __enter__(self) -> "_Writer":
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
            except BaseException as e:  # reported to the caller
                self.error = e
            finally:
                self.free.put(buf if buf.base is None else buf.base)

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


def expand_inputs(paths: Iterable[str | os.PathLike], to: str) -> list[str]:
    """Files to cast: each file as given; each directory's `*.npy` files, sorted.

    In a directory, our own temporary files and earlier outputs of the same cast
    (`*.TO.npy`) are skipped.
    """
    out: list[str] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            names = sorted(os.listdir(p))
            found = [
                os.path.join(p, n)
                for n in names
                if n.lower().endswith(".npy")
                and npyio.TEMP_MARK not in n
                and not n.endswith(f".{to}.npy")
                and os.path.isfile(os.path.join(p, n))
            ]
            if not found:
                raise UsageError(f"{p}: directory holds no .npy files")
            out.extend(found)
        elif os.path.exists(p):
            out.append(p)
        else:
            raise UsageError(f"{p}: no such file or directory")
    return out


@dataclass
class Outcome:
    """The result of one file in a batch: a report, or an error message."""

    input: str
    report: CastReport | None = None
    error: str | None = None
    exit_code: int = 0


def _run_one(args: tuple) -> Outcome:
    src, dst, kwargs = args
    try:
        return Outcome(src, report=cast_file(src, dst, **kwargs))
    except PromoteError as e:
        return Outcome(src, error=str(e), exit_code=e.exit_code)
    except (OSError, ValueError) as e:
        return Outcome(src, error=f"{src}: {e}", exit_code=2)


# In a worker process: SIGTERM during a cast raises (so the temporary file is
# removed on the way out), then the worker exits; an idle worker exits at once.
_busy = False


def _worker_sigterm(signum, frame):
    if _busy:
        raise npyio.Terminated(f"terminated by signal {signum}")
    os._exit(128 + signum)


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


def cast_files(
    inputs: list[str],
    outputs: list[str | None] | None = None,
    *,
    jobs: int | None = None,
    **kwargs,
) -> Iterator[Outcome]:
    """Cast several files, `jobs` at a time in worker processes; yields in input order."""
    outputs = outputs or [None] * len(inputs)
    jobs = jobs or os.cpu_count() or 1
    jobs = max(1, min(jobs, len(inputs)))
    if jobs > 1:
        kwargs.setdefault("threads", 1)  # the processes already use the CPUs
    tasks = [(s, d, kwargs) for s, d in zip(inputs, outputs)]
    if jobs == 1:
        for t in tasks:
            yield _run_one(t)
        return
    ex = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    try:
        futures = [ex.submit(_run_in_worker, t) for t in tasks]
        for f in futures:
            yield f.result()
    except BaseException:
        # Interrupted: stop the workers; each removes its temporary file on SIGTERM.
        for f in futures if "futures" in locals() else ():
            f.cancel()
        for proc in list(getattr(ex, "_processes", {}).values()):
            try:
                proc.terminate()
            except Exception:
                pass
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    else:
        ex.shutdown(wait=True)
