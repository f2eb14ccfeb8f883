"""`cast_array`: TOSA CAST of a numpy array, bit-exact with the TOSA reference model,
with statistics. Checks the pair (`legality`), then runs the pair's kernel (`kernels`)
over cache-sized blocks, summing the statistics (`stats`)."""

from __future__ import annotations

import threading

import numpy as np

from promote_cli.errors import UsageError
from promote_cli.numerics.blocks import BLOCK, Scratch
from promote_cli.numerics.kernels import kernel_for
from promote_cli.numerics.legality import check_pair
from promote_cli.numerics.stats import CastStats, Counts
from promote_cli.vocab.numpy_types import canonical_of, numpy_dtype

_local = threading.local()


def _scratch() -> Scratch:
    sc = getattr(_local, "scratch", None)
    if sc is None:
        sc = _local.scratch = Scratch()
    return sc


def cast_array(x: np.ndarray, dst: str, *, src: str | None = None, mode: str = "tosa",
               saturate: bool = False, stats: bool = True,
               out: np.ndarray | None = None) -> tuple[np.ndarray, CastStats | None]:
    """Cast `x` (values of dtype `src`) to `dst` with TOSA CAST semantics.

    Mode ``"tosa"`` accepts exactly the 52 ordered pairs TOSA 1.1 defines
    (`legality.LEGAL`); ``"extended"`` any pair of `legality.EXTENDED_TYPES`, where
    ``saturate=True`` clamps float overflow to the largest finite value.
    Returns a new C-contiguous array of dst's numpy dtype (or `out`, when given: a
    C-contiguous array of that dtype and x's size, reshaped to x's shape) and, unless
    stats=False, the `CastStats` of the conversion.
    """
    x = np.asarray(x)
    if src is None:
        src = canonical_of(x.dtype)
    elif x.dtype != numpy_dtype(src):
        sdt = numpy_dtype(src)
        if x.dtype.itemsize != sdt.itemsize:
            raise UsageError(f"array of dtype {x.dtype} does not hold {src} values")
        x = x.view(sdt)
    check_pair(src, dst, mode)
    if saturate and mode != "extended":
        raise UsageError("--saturate needs --mode extended (TOSA CAST does not saturate floats)")
    if not x.flags.c_contiguous:
        x = x.copy(order="C")
    if out is None:
        out = np.empty(x.shape, numpy_dtype(dst))
    else:
        if out.dtype != numpy_dtype(dst) or out.size != x.size or not out.flags.c_contiguous:
            raise ValueError("out must be a C-contiguous array of the output dtype and x's size")
        out = out.reshape(x.shape)
    flat_x = x.reshape(-1)
    flat_o = out.reshape(-1)
    kernel = kernel_for(src, dst, saturate)
    acc = Counts() if stats else None
    sc = _scratch()
    n = flat_x.size
    with np.errstate(all="ignore"):
        for s in range(0, n, BLOCK):
            kernel(flat_x[s:s + BLOCK], flat_o[s:s + BLOCK], acc, sc)
    return out, (acc.result() if stats else None)
