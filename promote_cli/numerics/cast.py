"""`cast_array`: TOSA CAST of a numpy array, bit-exact with the TOSA reference model,
with statistics. Takes the cast asked for (`legality.request`) and checks its pair once
(`Converter`, which a file cast reuses for every chunk), then runs the pair's kernel (`kernels`)
over cache-sized blocks, summing the statistics (`stats`); it casts large arrays in
several threads at once (by default one per CPU), each taking the next block as it
finishes one, with its own scratch buffers and counts."""

from __future__ import annotations

import itertools
import os
import threading

import numpy as np

from promote_cli.errors import UsageError
from promote_cli.numerics.blocks import BLOCK, Scratch
from promote_cli.numerics.kernels import kernel_for
from promote_cli.numerics.legality import CastRequest, request
from promote_cli.numerics.stats import CastStats, Counts
from promote_cli.vocab.numpy_types import canonical_of, numpy_dtype

#: arrays of fewer elements are cast in the calling thread alone
PARALLEL_MIN = 4 * BLOCK

#: blocks a thread takes at a time, in an array large enough that each thread takes four runs or more (light
#: kernels were 5-15% faster taking four blocks at a time than one)
_RUN = 4

_local = threading.local()
_helpers_of: dict = {}           # pid -> the helper threads' queue (a forked child starts its own)
_helpers_lock = threading.Lock()


def _helper_queue(n: int):
    """The work queue of at least `n` helper threads of this process. Helpers live as long
    as the process (idle ones cost nothing), so their scratch buffers are reused from cast
    to cast; each runs `fn(arg)` for the (fn, arg, done) items queued and sets `done`."""
    import queue

    with _helpers_lock:
        q, started = _helpers_of.get(os.getpid(), (None, 0))
        if q is None:
            q = queue.SimpleQueue()
        for _ in range(started, n):
            threading.Thread(target=_helper, args=(q,), name="promote-cast", daemon=True).start()
        _helpers_of[os.getpid()] = (q, max(started, n))
        return q


def _forget_helpers() -> None:
    """In a forked child: the parent's helper threads do not exist here, and its lock may
    have been held by one of its threads at the fork."""
    global _helpers_lock
    _helpers_lock = threading.Lock()
    _helpers_of.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def _helper(q) -> None:
    while True:
        fn, arg, done = q.get()
        try:
            fn(arg)
        finally:
            done.set()


def _scratch() -> Scratch:
    sc = getattr(_local, "scratch", None)
    if sc is None:
        sc = _local.scratch = Scratch()
    return sc


def default_threads() -> int:
    """Casting threads when the caller does not say: the CPUs this process may run on (at most
    `MAX_DEFAULT_THREADS`). numpy releases the GIL inside its loops, so threads working on
    blocks of `BLOCK` elements run at once (measured on two CPUs: up to 1.9x one thread)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT_THREADS))


#: the most threads a cast starts when the caller does not say
MAX_DEFAULT_THREADS = 8


def cast_array(x: np.ndarray, dst, *, src=None, mode: str = "tosa",
               saturate: bool | None = None, semantics: str = "tosa", stats: bool = True,
               out: np.ndarray | None = None, threads: int | None = None) -> tuple[np.ndarray, CastStats | None]:
    """Cast `x` (values of dtype `src`) to `dst` with TOSA CAST semantics.

    `dst` and `src` take any name of the vocabulary (`f16`, `float16`, `FP16`, `torch.float16`, ...) or a
    numpy dtype (`np.float16`, `ml_dtypes.bfloat16`); `src` (default: x's dtype) reinterprets x's elements.
    Mode ``"tosa"`` accepts exactly the 52 ordered pairs TOSA 1.1 defines
    (`legality.LEGAL`); ``"extended"`` any pair of `legality.EXTENDED_TYPES`, where
    ``saturate=True`` clamps float overflow to the largest finite value. `semantics` ``"ml_dtypes"``,
    ``"torch"`` or ``"onnx"`` casts as that library does (`numerics.semantics`; ``saturate``: ONNX Runtime's
    attribute, default on).
    Returns a new C-contiguous array of dst's numpy dtype (or `out`, when given: a
    C-contiguous array of that dtype and x's size, reshaped to x's shape) and, unless
    stats=False, the `CastStats` of the conversion. Arrays of at least `PARALLEL_MIN`
    elements are cast by `threads` threads (default `default_threads()`: the CPUs); the
    result and the statistics do not depend on how many.
    """
    asked = request(dst, src, mode, saturate, semantics)
    x = np.asarray(x)
    if not x.dtype.isnative:  # the kernels read native values
        x = x.astype(x.dtype.newbyteorder("="))
    src = asked.src or canonical_of(x.dtype)
    if x.dtype != numpy_dtype(src):
        if x.dtype.itemsize != numpy_dtype(src).itemsize:
            raise UsageError(f"array of dtype {x.dtype} does not hold {src} values")
        x = x.view(numpy_dtype(src))
    return Converter(asked, src)(x, out=out, stats=stats, threads=threads)


class Converter:
    """The cast a `CastRequest` asks for, of values of the canonical type `src`: the pair checked and its
    kernel found once (UsageError for a pair the mode does not define), then run on any number of arrays of
    src's numpy dtype (a whole array, or each chunk of a file)."""

    __slots__ = ("in_dtype", "out_dtype", "kernel")

    def __init__(self, asked: CastRequest, src: str):
        asked.check(src)
        self.in_dtype = numpy_dtype(src)
        self.out_dtype = numpy_dtype(asked.dst)
        if asked.semantics == "tosa":
            self.kernel = kernel_for(src, asked.dst, asked.saturate)
        else:
            from promote_cli.numerics.semantics import kernel

            self.kernel = kernel(asked.semantics, src, asked.dst, asked.saturate)

    def __call__(self, x: np.ndarray, *, out: np.ndarray | None = None, stats: bool = True,
                 threads: int | None = None) -> tuple[np.ndarray, CastStats | None]:
        """`x` cast into `out` (default: a new array), as `cast_array` does; and its statistics unless
        stats=False."""
        if x.dtype != self.in_dtype:
            raise ValueError(f"x must hold {self.in_dtype} elements, not {x.dtype}")
        if not x.flags.c_contiguous:
            x = x.copy(order="C")
        if out is None:
            out = np.empty(x.shape, self.out_dtype)
        else:
            if out.dtype != self.out_dtype or out.size != x.size or not out.flags.c_contiguous:
                raise ValueError("out must be a C-contiguous array of the output dtype and x's size")
            out = out.reshape(x.shape)
        flat_x = x.reshape(-1)
        flat_o = out.reshape(-1)
        kernel = self.kernel
        n = flat_x.size
        nthreads = default_threads() if threads is None else max(1, int(threads))
        if nthreads > 1 and n >= PARALLEL_MIN:
            acc = _cast_parallel(kernel, flat_x, flat_o, stats, nthreads)
        else:
            acc = Counts() if stats else None
            sc = _scratch()
            sc.hints.clear()
            with np.errstate(all="ignore"):
                for s in range(0, n, BLOCK):
                    kernel(flat_x[s:s + BLOCK], flat_o[s:s + BLOCK], acc, sc)
        return out, (acc.result() if stats else None)


def _cast_parallel(kernel, flat_x: np.ndarray, flat_o: np.ndarray, stats: bool, nthreads: int) -> Counts | None:
    """Cast in `nthreads` threads (this one and helpers); each takes the next `_RUN` blocks (one, in a
    smaller array) when it is done with its last, so a thread the machine slows down holds no one up."""
    n = flat_x.size
    step = (_RUN if n >= 4 * _RUN * BLOCK * nthreads else 1) * BLOCK
    starts = itertools.count(0, step)        # next() is atomic under the GIL
    accs = [Counts() if stats else None for _ in range(nthreads)]
    errors: list[BaseException] = []

    def work(acc) -> None:
        sc = _scratch()
        sc.hints.clear()
        try:
            with np.errstate(all="ignore"):
                while not errors:
                    lo = next(starts)
                    if lo >= n:
                        return
                    for s in range(lo, min(lo + step, n), BLOCK):
                        kernel(flat_x[s:s + BLOCK], flat_o[s:s + BLOCK], acc, sc)
        except BaseException as e:  # handed to the caller
            errors.append(e)

    q = _helper_queue(nthreads - 1)
    helpers = []
    for a in accs[1:]:
        done = threading.Event()
        q.put((work, a, done))
        helpers.append(done)
    work(accs[0])       # work() hands its errors over in `errors`
    for done in helpers:
        done.wait()
    if errors:
        raise errors[0]
    if not stats:
        return None
    total = accs[0]
    for a in accs[1:]:
        total.merge(a)
    return total
