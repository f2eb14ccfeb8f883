"""Every fast kernel is a verified acceleration of the reference: for every legal TOSA
pair and every extended-mode pair (with and without saturate), `cast_array` gives
`reference_cast`'s output bit for bit and the statistics of the reference
classification, on every bit pattern of 8/16-bit sources and on crafted inputs (specials,
boundaries of every output format, rounding ties, subnormals, seeded random values) of
32/64-bit ones, at lengths that cross the block boundary and at odd lengths."""

from __future__ import annotations

import os

import numpy as np
import pytest

from promote_cli.numerics import blocks, kernels
from promote_cli.numerics import cast as cast_mod
from promote_cli.numerics.cast import cast_array
from promote_cli.numerics.legality import EXTENDED_TYPES, LEGAL
from promote_cli.numerics.reference import classify, reference_cast
from promote_cli.numerics.stats import stats_of_classes
from promote_cli.probes import tosa as probe
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

#: the block size the tests cast with: the kernels do not depend on it (their scratch buffers are
#: `blocks.BLOCK` long, at least this), and a smaller one keeps the comparisons with the reference quick
TEST_BLOCK = 1 << 16
assert TEST_BLOCK <= blocks.BLOCK

#: long enough to need two blocks, and odd
LENGTH = TEST_BLOCK + 4097


@pytest.fixture(autouse=True)
def _test_blocks(monkeypatch):
    monkeypatch.setattr(cast_mod, "BLOCK", TEST_BLOCK)
    monkeypatch.setattr(cast_mod, "PARALLEL_MIN", 4 * TEST_BLOCK)

TRIPLES = sorted({(s, d, False, "tosa") for s, d in LEGAL}
                 | {(s, d, sat, "extended") for s in EXTENDED_TYPES for d in EXTENDED_TYPES for sat in (False, True)})


def _f64_inputs(rng) -> np.ndarray:
    """float64 bit patterns: the f32 probe inputs widened, ties at f32 precision and
    their neighbours in every binade f32 reaches (and beyond), random patterns."""
    with np.errstate(invalid="ignore"):
        f32 = probe.cast_inputs("f32").view(np.float32).astype(np.float64).view(np.uint64)
    e = np.arange(1023 - 160, 1023 + 140, dtype=np.uint64)
    frac = rng.integers(0, 1 << 23, e.size, dtype=np.uint64) << np.uint64(29)
    tie = (e << np.uint64(52)) | frac | np.uint64(1 << 28)
    ties = np.concatenate([tie, tie + np.uint64(1), tie - np.uint64(1)])
    ties = np.concatenate([ties, ties | np.uint64(1 << 63)])
    special = np.array([0x7FF0_0000_0000_0000, 0x7FF8_0000_0000_0001, 0xFFF0_0000_0000_0000, 1,
                        0x7FEF_FFFF_FFFF_FFFF, 0x0010_0000_0000_0000], dtype=np.uint64)
    return np.concatenate([f32, ties, special, rng.integers(0, np.iinfo(np.uint64).max, 4000, dtype=np.uint64)])


@pytest.fixture(scope="module")
def inputs():
    return make_inputs()


def make_inputs() -> dict:
    """Source type -> values (as that type's numpy dtype), LENGTH long."""
    rng = np.random.default_rng(2026)
    made = {}
    for src in EXTENDED_TYPES:
        dt = numpy_dtype(src)
        d = DTYPES[src]
        if src == "bool":
            base = np.array([False, True])
        elif d.bits <= 16:
            n = 1 << d.bits
            bits = np.arange(n, dtype=np.uint64)
            if d.is_integer and d.bits < 8:        # sub-byte: every value
                base = (bits.astype(np.int64) - (n // 2 if d.kind == "signed" else 0)).astype(dt)
            else:                                   # every bit pattern
                base = bits.astype(f"u{dt.itemsize}").view(dt)
        elif src in ("f32", "i32", "i64"):
            base = probe.cast_inputs(src).view(dt)
        elif src in ("u32", "u64"):
            base = probe.cast_inputs("i" + src[1:]).view(dt)
        elif src == "f64":
            base = _f64_inputs(rng).view(dt)
        else:  # pragma: no cover - a new extended type needs inputs here
            raise AssertionError(f"no crafted inputs for {src}")
        if base.size < LENGTH:
            extra = rng.integers(0, base.size, LENGTH - base.size)
            base = np.concatenate([base, base[extra]])
        made[src] = np.ascontiguousarray(base)
    return made


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint8)


def _check(x, src, dst, saturate, mode):
    y, st = cast_array(x, dst, src=src, mode=mode, saturate=saturate)
    want = reference_cast(x, src, dst, saturate)
    assert y.dtype == want.dtype == numpy_dtype(dst)
    same = _bits(y).reshape(x.size, -1) == _bits(want).reshape(x.size, -1)
    bad = ~same.all(axis=1)
    assert not bad.any(), (f"{kernels.kernel_name(src, dst, saturate)}: {int(bad.sum())} of {x.size} differ; "
                           f"inputs {x[bad][:6]}, reference {want[bad][:6]}, kernel {y[bad][:6]}")
    expected = stats_of_classes(*classify(x, want, src, dst, saturate))
    assert st.as_dict() == expected.as_dict(), kernels.kernel_name(src, dst, saturate)


def _disagreements(x, src, dst, saturate, mode) -> list[str]:
    try:
        _check(x, src, dst, saturate, mode)
    except AssertionError as exc:
        return [f"{src}->{dst} saturate={saturate} {mode}, {x.size} elements: {exc}"]
    return []


@pytest.mark.parametrize("src", EXTENDED_TYPES)
def test_kernels_equal_reference(inputs, src):
    """Every triple from `src`; a triple that runs the reference path itself only checks
    the block loop and the statistics glue, on a shorter (still odd) input."""
    bad = []
    for s, dst, saturate, mode in TRIPLES:
        if s != src:
            continue
        x = inputs[src]
        if kernels.kernel_name(src, dst, saturate) in ("reference", "sub_byte"):
            x = x[:4097]
        bad += _disagreements(x, src, dst, saturate, mode)
        for n in (1, 3, 255):                   # odd lengths, one short block
            bad += _disagreements(x[-n:], src, dst, saturate, mode)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("src", ["f32", "i32"])
def test_bf16_bit_kernel_equals_reference(inputs, monkeypatch, src):
    """The bit kernel that replaces ml_dtypes' f32 -> bf16 when the start-up check finds
    them different."""
    monkeypatch.setattr(kernels, "_ml_dtypes_bf16_agrees", lambda: False)
    x = inputs[src]
    _check(x, src, "bf16", False, "tosa")
    _check(x[-3:], src, "bf16", False, "tosa")


def test_every_triple_has_a_named_kernel():
    names = {kernels.kernel_name(s, d, sat) for s, d, sat, _ in TRIPLES}
    assert {"table", "f32_to_bf16_kernel", "f32_to_f16_kernel", "f32_to_fp8", "sub_byte"} <= names
    assert kernels.kernel_name("i64", "f16", False) == "reference"


#: low 16 bits combined with every high half: zero, one, and both sides of the rounding
#: points of f16 (13 dropped bits) and bf16 (16); the fp8 ones lie in the high half
LOW_HALVES = (0, 1, 0x0FFF, 0x1000, 0x1001, 0x7FFF, 0x8000, 0x8001, 0xFFFF)


@pytest.mark.slow
@pytest.mark.parametrize("src", ["f32", "i32"])
def test_32_bit_kernels_on_every_high_half(src):
    """Every 16-bit high half (for f32: sign, exponent and 7 mantissa bits) with each of
    LOW_HALVES and a few random low halves: every kernel from a 32-bit source."""
    high = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    lows = np.array(LOW_HALVES + tuple(np.random.default_rng(5).integers(0, 1 << 16, 4)), np.uint32)
    x = (high[:, None] | lows[None, :]).ravel().view(numpy_dtype(src))
    bad = []
    for s, dst, saturate, mode in TRIPLES:
        if s == src:
            bad += _disagreements(x, src, dst, saturate, mode)
    assert not bad, "\n".join(bad)


def _dominated_blocks(src: str) -> np.ndarray:
    """Whole blocks of one kind of value, where kernels switch from counting a few
    elements by index to whole-block passes: tiny magnitudes (f16 subnormals, zeros),
    NaN/infinity/overflow, then a block where they are few."""
    rng = np.random.default_rng(7)
    n = TEST_BLOCK
    if src == "f32":
        tiny = rng.integers(0, 0x3880_0000, n, dtype=np.uint32)                 # below 2**-14
        huge = rng.integers(0x4780_0000, 0x8000_0000, n, dtype=np.uint32)       # 65536 .. NaN
        mixed = rng.integers(0x3880_0000, 0x4780_0000, n, dtype=np.uint32)       # f16 normals
        mixed[:4096] = np.arange(0x387F_F000, 0x3880_0000, dtype=np.uint32)   # some round up to 2**-14
        sign = rng.integers(0, 2, 3 * n, dtype=np.uint32) << np.uint32(31)
        return (np.concatenate([tiny, huge, mixed]) | sign).view(np.float32)
    info = np.iinfo(np.int32)
    small = rng.integers(-70000, 70000, n, dtype=np.int32)
    huge = rng.integers(info.min, info.max, n, dtype=np.int32, endpoint=True)
    return np.concatenate([small, huge, np.zeros(n, np.int32)])


@pytest.mark.parametrize("src", ["f32", "i32"])
def test_32_bit_kernels_on_dominated_blocks(src):
    x = _dominated_blocks(src)
    bad = []
    for s, dst, saturate, mode in TRIPLES:
        if s == src:
            bad += _disagreements(x, src, dst, saturate, mode)
    assert not bad, "\n".join(bad)


PARALLEL_PAIRS = [("f32", "f16"), ("f32", "bf16"), ("f32", "f8e4m3"), ("f32", "i8"), ("bf16", "f32"),
                  ("f16", "f8e5m2"), ("i8", "f32"), ("i32", "i16"), ("i64", "bool"), ("bool", "i32")]


@pytest.mark.parametrize("src,dst", PARALLEL_PAIRS)
def test_threads_change_nothing(inputs, src, dst):
    """A large array is cast by several threads taking runs of blocks: the output and the
    statistics are those of one thread, and of the reference."""
    base = inputs[src]
    n = cast_mod.PARALLEL_MIN + 3 * cast_mod.BLOCK + 5          # a last run that is short
    x = np.resize(base, n)
    y1, s1 = cast_array(x, dst, src=src, threads=1)
    for threads in (2, 3):
        y, s = cast_array(x, dst, src=src, threads=threads)
        assert (_bits(y) == _bits(y1)).all() and s == s1, threads
    want = reference_cast(x, src, dst, False)
    assert (_bits(y1) == _bits(want)).all()
    assert s1 == stats_of_classes(*classify(x, want, src, dst, False))


def test_a_failing_block_fails_the_cast(monkeypatch):
    """An error in any thread's block is raised to the caller once every thread stopped."""
    from promote_cli.numerics import cast as cm

    def kernel(x, out, acc, sc):
        if x[0] == 7:
            raise ValueError("boom")
        out[...] = 0

    monkeypatch.setattr(cm, "kernel_for", lambda *a: kernel)
    x = np.zeros(cm.PARALLEL_MIN * 2, np.int32)
    x[cm.PARALLEL_MIN + cast_mod.BLOCK] = 7
    with pytest.raises(ValueError, match="boom"):
        cm.cast_array(x, "i8", threads=2)


@pytest.mark.parametrize("src,dst", [("f32", "f16"), ("i32", "i16"), ("f16", "f8e4m3")])
def test_runs_of_blocks_change_nothing(inputs, src, dst):
    """An array large enough that threads take `_RUN` blocks at a time (with a last run that is short)."""
    n = 4 * cast_mod._RUN * cast_mod.BLOCK * 3 + 12345
    x = np.resize(inputs[src], n)
    y1, s1 = cast_array(x, dst, src=src, threads=1)
    for threads in (2, 3):
        y, s = cast_array(x, dst, src=src, threads=threads)
        assert (_bits(y) == _bits(y1)).all() and s == s1, threads


@pytest.mark.parametrize("src,dst", [("i32", "i8"), ("i32", "i16"), ("i64", "i32"), ("i16", "i8"), ("i32", "bool"),
                                     ("i8", "bool"), ("u8", "i8"), ("i32", "u16"), ("i32", "f32"), ("u32", "f32")])
def test_integer_blocks_that_fit_and_blocks_that_do_not(src, dst):
    """Integer narrowing (and -> bool, and 32-bit integers -> f32 within 2**24) counts a block whose values all
    fit as exact from its min and max:
    blocks that fit, then one that does not (an element at either end), then fitting ones again, in one
    thread and in three, equal the reference; a later cast asks afresh."""
    sdt, ddt = numpy_dtype(src), numpy_dtype(dst)
    lo, hi = ((0, 1) if dst == "bool" else (-(1 << 24), 1 << 24) if dst == "f32"
              else (int(np.iinfo(ddt).min), int(np.iinfo(ddt).max)))
    lo, hi = max(lo, int(np.iinfo(sdt).min)), min(hi, int(np.iinfo(sdt).max))     # what fits both
    rng = np.random.default_rng(3)
    b = cast_mod.BLOCK
    x = rng.integers(lo, hi, 6 * b + 77, dtype=sdt, endpoint=True)
    x[2 * b + 5] = hi + 1                     # a block that does not fit, just above (a wrap, a 2, 2**24 + 1)
    x[4 * b + 9] = lo - 1 if lo > np.iinfo(sdt).min else hi + 1    # just below, where the source has it
    for threads in (1, 3):
        y, st = cast_array(x, dst, src=src, threads=threads, mode="extended")
        want = reference_cast(x, src, dst, False)
        assert (_bits(y) == _bits(want)).all()
        assert st == stats_of_classes(*classify(x, want, src, dst, False)), threads
    fits = rng.integers(lo, hi, 5 * b, dtype=sdt, endpoint=True)
    y, st = cast_array(fits, dst, src=src, threads=1, mode="extended")     # after a cast that did not fit
    assert st.exact == fits.size and st.total == fits.size


def test_default_threads_are_the_cpus_this_process_may_use(monkeypatch):
    monkeypatch.setattr(cast_mod.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert cast_mod.default_threads() == 3
    monkeypatch.setattr(cast_mod.os, "sched_getaffinity", lambda pid: set(range(100)), raising=False)
    assert cast_mod.default_threads() == cast_mod.MAX_DEFAULT_THREADS


def test_a_large_array_is_cast_in_the_default_threads(monkeypatch):
    """Without `threads`, an array of `PARALLEL_MIN` elements or more is cast in `default_threads()` threads."""
    calls = []
    monkeypatch.setattr(cast_mod, "default_threads", lambda: 2)
    monkeypatch.setattr(cast_mod, "_cast_parallel", lambda k, x, o, st, n: calls.append(n) or None)
    cast_array(np.zeros(cast_mod.PARALLEL_MIN, np.float32), "f16", stats=False)
    cast_array(np.zeros(cast_mod.PARALLEL_MIN - 1, np.float32), "f16", stats=False)
    assert calls == [2]


def test_histogram_counts_merge():
    """Counts of parts of one cast merged (histogram plans included) equal the whole's."""
    from promote_cli.numerics.stats import Counts
    from promote_cli.numerics.tables import Table

    t = Table("f16", "f8e4m3", False)
    t.plan = "bincount"
    x = np.arange(1 << 16, dtype=np.uint16)
    y = np.empty(x.size, np.uint8)
    whole, a, b = Counts(), Counts(), Counts()
    sc = blocks.Scratch(x.size)
    t.apply(x, y, whole, sc)
    t.apply(x[:1000], y[:1000], a, sc)
    t.apply(x[1000:], y[1000:], b, sc)
    a.merge(b)
    assert a.result() == whole.result()
    assert b.result() != whole.result()


def test_a_forked_child_casts_with_helpers_of_its_own():
    """After the parent's helper threads were started, a forked child (a worker process
    of a many-file cast) still casts large arrays in parallel: it starts its own."""
    x = np.arange(2 * cast_mod.PARALLEL_MIN, dtype=np.float32)
    want, st = cast_array(x, "f16", threads=2)              # the parent's helpers exist now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                            # pragma: no cover - the child
        try:
            y, s = cast_array(x, "f16", threads=2)
            ok = bool((y.view(np.uint16) == want.view(np.uint16)).all() and s == st)
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    import select
    import signal

    os.close(w)
    ready, _, _ = select.select([r], [], [], 120)             # a child waiting on no helper hangs
    got = os.read(r, 1) if ready else b"hung"
    os.close(r)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert got == b"1"
