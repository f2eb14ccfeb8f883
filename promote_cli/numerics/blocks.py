"""Blocks: the unit the kernels work on. `BLOCK` elements at a time, with `Scratch`
buffers of that size reused from block to block, so the several numpy passes of a kernel
stay in cache and allocate nothing; and the small helpers every kernel counts with."""

from __future__ import annotations

import numpy as np

#: elements per block. 256 Ki: each numpy call of a kernel is long enough (tens of microseconds)
#: that a second casting thread runs while the first waits to take the GIL back (with 64 Ki blocks,
#: handing the GIL over took as long as the call, and two threads were no faster than one), and the
#: scratch buffers of two threads still fit in the L3 cache. Measured on 16 Mi elements, one thread
#: is also 5-30% faster than with 64 Ki blocks (fewer Python-level calls).
BLOCK = 1 << 18


class Scratch:
    """Block-sized buffers, one per (name, dtype), reused from block to block."""

    def __init__(self, n: int = BLOCK):
        self.n = n
        self.bufs: dict = {}
        self.hints: dict = {}   # what a kernel learnt from this cast's earlier blocks (cleared per cast)

    def __call__(self, name: str, dtype, m: int) -> np.ndarray:
        key = (name, dtype)
        b = self.bufs.get(key)
        if b is None:
            b = self.bufs[key] = np.empty(self.n, dtype)
        return b[:m]

    def const(self, value, dtype, m: int) -> np.ndarray:
        """A block filled with `value`: numpy's minimum/maximum run several times
        faster on two arrays than on an array and a scalar."""
        key = ("const", value, dtype)
        b = self.bufs.get(key)
        if b is None:
            b = self.bufs[key] = np.full(self.n, value, dtype)
        return b[:m]


def uint_view(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def count(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))
