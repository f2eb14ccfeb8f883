"""Every statistics plan of the table-driven casts (`tables.Table`), forced one at a time,
gives `reference_cast`'s output bit for bit and the statistics of the reference
classification, through `apply` (cast and count) and through `count` alone; the default
choice is one of them, so tests/test_kernels.py only sees the chosen plan of each pair."""

from __future__ import annotations

import numpy as np
import pytest

from promote_cli.numerics import tables
from promote_cli.numerics.blocks import Scratch, uint_view
from promote_cli.numerics.legality import LEGAL
from promote_cli.numerics.reference import classify, reference_cast
from promote_cli.numerics.stats import Counts, stats_of_classes
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

PLANS = ("ranges", "gather", "bincount", "tagged")
TRIPLES = [("bf16", "i8", False), ("bf16", "i32", False), ("f16", "i16", False), ("i16", "bf16", False),
           ("f16", "f8e4m3", False), ("f16", "f8e4m3", True), ("bf16", "f8e5m2", True), ("i16", "f16", False),
           ("f16", "f32", False), ("i8", "f16", False), ("f8e4m3", "bf16", False), ("f8e5m2", "i8", True),
           ("f16", "f64", False)]


def _inputs(src: str) -> np.ndarray:
    """Every bit pattern of `src`, then a shuffled repeat: an odd length over two blocks."""
    bits = 8 * numpy_dtype(src).itemsize
    pat = np.arange(1 << bits, dtype=np.dtype(f"u{bits // 8}"))
    rng = np.random.default_rng(7)
    u = np.concatenate([pat, rng.permutation(pat)[: (1 << bits) // 2 + 1], pat[:3]])
    return u.view(numpy_dtype(src))


def _expected(x, src, dst, saturate):
    want = reference_cast(x, src, dst, saturate)
    return want, stats_of_classes(*classify(x, want, src, dst, saturate)).as_dict()


@pytest.mark.parametrize("src,dst,saturate", TRIPLES)
def test_every_plan_equals_reference(src, dst, saturate):
    x = _inputs(src)
    want, stats = _expected(x, src, dst, saturate)
    tried = []
    for plan in PLANS:
        try:
            t = tables.Table(src, dst, saturate, plan=plan)
        except ValueError:
            assert plan == "tagged" and not (DTYPES[src].bits == 16 and DTYPES[dst].bits <= 32)
            continue
        tried.append(plan)
        out = np.empty(x.size, want.dtype)
        acc, only = Counts(), Counts()
        sc = Scratch()
        block = 1 << 16
        for i in range(0, x.size, block):
            xb, ob = uint_view(x[i:i + block]), uint_view(out[i:i + block])
            t.apply(xb, ob, acc, sc)
            t.count(xb, ob, only, sc)
        assert (uint_view(out) == uint_view(want)).all(), plan
        assert acc.result().as_dict() == stats, plan
        assert only.result().as_dict() == stats, plan
        # the same from the patterns as intp indices (the f32 -> fp8 kernels' entry)
        out2, by_index = np.zeros(x.size, want.dtype), Counts()
        for i in range(0, x.size, block):
            idx = uint_view(x[i:i + block]).astype(np.intp)
            t.apply_indices(idx, uint_view(out2[i:i + block]), by_index, sc)
        assert (uint_view(out2) == uint_view(want)).all(), plan
        assert by_index.result().as_dict() == stats, plan
    assert len(tried) >= 3


def test_tagged_plan_serves_sixteen_bit_sources():
    """The default choice gives the tagged plan to the 16-bit sources with few classes,
    so the kernel tests run it; wider outputs cannot be tagged."""
    chosen = {(s, d): tables.table(s, d, False).plan for s, d in LEGAL if DTYPES[s].bits == 16}
    assert chosen[("bf16", "i8")] == chosen[("f16", "f8e4m3")] == "tagged"
    assert chosen[("f16", "f32")] != "tagged"
    with pytest.raises(ValueError):
        tables.Table("f16", "f64", False, plan="tagged")


@pytest.mark.parametrize("src,dst,saturate", [t for t in TRIPLES if numpy_dtype(t[0]).itemsize <= 2])
def test_distinct_rows_are_numpys_unique_rows(src, dst, saturate):
    """The classes of the tagged plan: the rows and row numbers `np.unique(axis=0)` gives, found faster."""
    ind = tables.Table(src, dst, saturate).indicators
    rows, cls = np.unique(ind, axis=0, return_inverse=True)
    got_rows, got_cls = tables._distinct_rows(ind)
    assert got_rows.tolist() == rows.tolist()
    assert got_cls.tolist() == cls.reshape(-1).tolist()


def test_distinct_rows_of_a_matrix_that_is_not_zero_one():
    ind = np.array([[2, 0], [0, 1], [2, 0], [0, 0]])
    rows, cls = tables._distinct_rows(ind)
    assert rows.tolist() == [[0, 0], [0, 1], [2, 0]] and cls.tolist() == [2, 1, 2, 0]
