"""Table-driven casts of 8- and 16-bit sources: the output for every bit pattern (from
`reference_cast`) and the cheapest way to count a block's statistics from the patterns."""

from __future__ import annotations

import functools

import numpy as np

from promote_cli.numerics.blocks import Scratch
from promote_cli.numerics.blocks import count as _count
from promote_cli.numerics.blocks import uint_view as _uint_view
from promote_cli.numerics.reference import classify, reference_cast
from promote_cli.numerics.stats import CATEGORIES, EXACT, ROUNDED, SLOTS, SUBNORMAL_OUT, UNPREDICTABLE
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

_LITTLE = np.dtype(np.uint32).byteorder == "=" and np.little_endian


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Inclusive index ranges [lo, hi] where `mask` is True."""
    m = np.concatenate(([0], mask.astype(np.int8), [0]))
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1).tolist(), (np.flatnonzero(d == -1) - 1).tolist()))


def _count_ranges(u: np.ndarray, ranges, top: int, sc: Scratch) -> int:
    """How many elements of the unsigned array `u` fall in the union of `ranges`."""
    total = 0
    m = u.size
    t = u.dtype.type
    bm = sc("rbool", np.bool_, m)
    for lo, hi in ranges:
        if lo == 0 and hi == top:
            total += m
        elif lo == hi:
            total += _count(np.equal(u, t(lo), out=bm))
        elif lo == 0:
            total += _count(np.less_equal(u, t(hi), out=bm))
        elif hi == top:
            total += _count(np.greater_equal(u, t(lo), out=bm))
        else:
            d = sc("rdiff", u.dtype, m)
            np.subtract(u, t(lo), out=d)
            total += _count(np.less_equal(d, t(hi - lo), out=bm))
    return total


# relative costs per element, in units of one compare-and-count pass
_COST_RANGE, _COST_GATHER, _COST_BINCOUNT = 1.0, 4.0, 10.0
# the "tagged" plan: the cost of splitting the outputs out of the tagged gather
_COST_SPLIT = 1.0


class Table:
    """Everything table-driven about an 8- or 16-bit source type: the output for every
    bit pattern and how to count the statistics of a block cheaply.

    Statistics plans, chosen once per pair by estimated cost:
    * "ranges": every counter is a union of few ranges of source patterns (of their
      magnitude bits when the table is sign-symmetric): compare and count;
    * "gather": exact = a gather from a per-pattern table of exactness flags (with the
      native-width indices the cast gathers with anyway), counted; the other counters
      by ranges, rounded = the rest;
    * "bincount": a histogram of the patterns, folded through the per-pattern
      indicators once at the end;
    * "tagged" (16-bit sources, outputs of up to 32 bits): the patterns fall in few
      classes (distinct rows of indicators); one gather from a table of twice the output
      width gives each output with its class number above it, so a block costs that
      gather, a copy of the low halves into the output and one compare-and-count of the
      tagged values per class boundary (class >= k <=> tagged >= k << output bits).
    """

    def __init__(self, src: str, dst: str, saturate: bool, plan: str | None = None):
        sdt = numpy_dtype(src)
        n = 1 << (8 * sdt.itemsize)
        upat = np.arange(n, dtype=np.dtype(f"u{sdt.itemsize}"))
        patterns = upat.view(sdt)
        if src == "bool":
            patterns = np.array([False, True])
            upat = patterns.view(np.uint8)
            n = 2
        y = reference_cast(patterns, src, dst, saturate)
        self.table = np.ascontiguousarray(y)
        self.table_bits = _uint_view(self.table)
        codes, subnormal, unpredictable = classify(patterns, y, src, dst, saturate)
        self.size = n
        self.in_uint = upat.dtype
        ind = np.zeros((n, SLOTS), np.int64)
        ind[np.arange(n), codes] = 1
        ind[:, SUBNORMAL_OUT] = subnormal
        ind[:, UNPREDICTABLE] = unpredictable
        self.indicators = ind
        self.pairs = None
        osize = self.table.dtype.itemsize
        if sdt.itemsize == 1 and src != "bool" and osize <= 4:
            # two elements per gather: a table over every pair of input bytes
            wide = np.dtype(f"u{2 * osize}")
            tb = self.table_bits.astype(wide)
            first, second = np.meshgrid(np.arange(256), np.arange(256), indexing="xy")
            if _LITTLE:   # element 0 is the low byte of the u16 index
                self.pairs = tb[first.ravel()] | (tb[second.ravel()] << wide.type(8 * osize))
            else:
                self.pairs = (tb[second.ravel()] << wide.type(8 * osize)) | tb[first.ravel()]
            self.pair_view = wide
        self._plan(src, osize, plan)

    def _plan(self, src: str, osize: int, plan: str | None) -> None:
        """Choose the statistics plan of least estimated cost (or the one asked for)."""
        ind = self.indicators.astype(bool)
        n = self.size
        space, top, self.sym = n, n - 1, None
        if DTYPES[src].kind == "float" and n > 2:
            half = n // 2
            if (ind[:half] == ind[half:]).all():
                space, top, self.sym = half, half - 1, half - 1
        self.top = top
        runs = [_runs(ind[:space, k]) for k in range(SLOTS)]
        self.runs = runs
        cats = range(CATEGORIES)
        resid = max(cats, key=lambda k: len(runs[k]))
        c_ranges = sum(len(runs[k]) for k in range(SLOTS) if k != resid) * _COST_RANGE
        others = [k for k in range(SLOTS) if k not in (EXACT, ROUNDED)]
        c_gather = _COST_GATHER + sum(len(runs[k]) for k in others) * _COST_RANGE
        rows, cls = _distinct_rows(self.indicators)
        costs = {"ranges": c_ranges, "gather": c_gather, "bincount": _COST_BINCOUNT}
        if n == 1 << 16 and osize <= 4 and len(rows) <= 256:
            costs["tagged"] = _COST_SPLIT + (len(rows) - 1) * _COST_RANGE
        if plan is None:
            plan = min(costs, key=costs.get)
        elif plan not in costs:
            raise ValueError(f"no {plan!r} statistics plan for this table")
        self.plan = plan
        if plan == "tagged":
            self.class_rows = [[int(v) for v in r] for r in rows]
            wide = np.dtype(f"u{2 * osize}")
            self.tag_shift = 8 * osize
            self.tagged = (self.table_bits.astype(wide)
                           | (cls.ravel().astype(wide) << wide.type(self.tag_shift)))
            self.tag_bounds = [wide.type(k << self.tag_shift) for k in range(1, len(rows))]
        elif plan == "ranges":
            self.counted, self.resid = [k for k in range(SLOTS) if k != resid], resid
        elif plan == "gather":
            self.counted, self.resid = others, ROUNDED
            self.exact_flags = np.ascontiguousarray(ind[:, EXACT])

    # -- the cast
    def __call__(self, x, out, acc, sc) -> None:
        self.apply(_uint_view(x), _uint_view(out), acc, sc)

    def apply(self, xu: np.ndarray, ou: np.ndarray, acc, sc) -> None:
        """Cast unsigned source patterns `xu` into unsigned output patterns `ou`."""
        m = xu.size
        idx = None
        if self.plan == "tagged":
            self._apply_tagged(xu, ou, acc, sc)
            return
        if self.pairs is not None and m >= 2:
            k = m & ~1
            px = xu[:k].view(np.uint16)
            pidx = sc("pidx", np.intp, k // 2)
            np.copyto(pidx, px, casting="unsafe")
            np.take(self.pairs, pidx, out=ou[:k].view(self.pair_view), mode="wrap")
            if k < m:
                ou[k:] = self.table_bits[xu[k:]]
        else:
            idx = sc("idx", np.intp, m)
            np.copyto(idx, xu, casting="unsafe")
            np.take(self.table_bits, idx, out=ou, mode="wrap")
        if acc is not None:
            self.count(xu, ou, acc, sc, idx)

    def _apply_tagged(self, xu: np.ndarray, ou: np.ndarray, acc, sc) -> None:
        idx = sc("idx", np.intp, xu.size)
        np.copyto(idx, xu, casting="unsafe")
        self.apply_indices(idx, ou, acc, sc)

    def apply_indices(self, idx: np.ndarray, ou: np.ndarray, acc, sc) -> None:
        """`apply` of the tagged plan from the source patterns as `intp` indices (all below `size`)."""
        if self.plan != "tagged":
            xu = sc("xu", self.in_uint, idx.size)
            np.copyto(xu, idx, casting="unsafe")
            self.apply(xu, ou, acc, sc)
            return
        m = idx.size
        g = sc("tagged", self.tagged.dtype, m)
        np.take(self.tagged, idx, out=g, mode="wrap")
        np.copyto(ou, g, casting="unsafe")     # the narrowing keeps the low half: the output bits
        if acc is not None and m:
            self._count_tagged(g, acc, sc)

    def _count_tagged(self, g: np.ndarray, acc, sc) -> None:
        m = g.size
        bm = sc("rbool", np.bool_, m)
        at_least = [m] + [_count(np.greater_equal(g, b, out=bm)) for b in self.tag_bounds] + [0]
        for k, row in enumerate(self.class_rows):
            c = at_least[k] - at_least[k + 1]
            if c:
                for slot, flag in enumerate(row):
                    if flag:
                        acc.add(slot, c)

    # -- the statistics
    def count(self, xu: np.ndarray, ou: np.ndarray, acc, sc, idx=None) -> None:
        m = xu.size
        if m == 0:
            return
        if self.plan == "tagged":
            idx = sc("idx", np.intp, m)
            np.copyto(idx, xu, casting="unsafe")
            g = sc("tagged", self.tagged.dtype, m)
            np.take(self.tagged, idx, out=g, mode="wrap")
            self._count_tagged(g, acc, sc)
            return
        if self.plan == "bincount":
            if idx is None:
                idx = sc("idx", np.intp, m)
                np.copyto(idx, xu, casting="unsafe")
            h = np.bincount(idx, minlength=self.size)
            key = id(self)
            if key in acc.hists:
                acc.hists[key][1][:] += h
            else:
                acc.hists[key] = (self, h.astype(np.int64))
            return
        a = xu
        if self.sym is not None:
            a = sc("abs", xu.dtype, m)
            np.bitwise_and(xu, xu.dtype.type(self.sym), out=a)
        done = 0
        for k in self.counted:
            c = _count_ranges(a, self.runs[k], self.top, sc) if self.runs[k] else 0
            acc.add(k, c)
            if k < CATEGORIES:
                done += c
        if self.plan == "gather":
            if idx is None:
                idx = sc("idx", np.intp, m)
                np.copyto(idx, xu, casting="unsafe")
            fl = sc("flags", np.bool_, m)
            np.take(self.exact_flags, idx, out=fl, mode="wrap")
            ex = _count(fl)
            acc.add(EXACT, ex)
            done += ex
        acc.add(self.resid, m - done)


def _distinct_rows(ind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 0/1 indicator matrix in lexicographic order, and each row's number among
    them: `np.unique(ind, axis=0, return_inverse=True)`, but each row read as one binary number (first
    column highest), so the sort is of 64 Ki integers, not of 64 Ki rows (0.2 s: a cast's start-up)."""
    width = ind.shape[1]
    if width > 62 or ((ind != 0) & (ind != 1)).any():
        rows, cls = np.unique(ind, axis=0, return_inverse=True)
        return rows, cls.reshape(-1)    # numpy 2.0 gives the inverse another shape
    weights = np.left_shift(1, np.arange(width - 1, -1, -1, dtype=np.int64))
    keys, first, cls = np.unique(ind @ weights, return_index=True, return_inverse=True)
    return ind[first], cls.reshape(-1)


@functools.lru_cache(maxsize=None)
def table(src: str, dst: str, saturate: bool) -> Table:
    return Table(src, dst, saturate)
