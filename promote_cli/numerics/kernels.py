"""Fast kernels for TOSA CAST: accelerations of `reference.reference_cast` for
particular (src, dst, saturate) triples, each computing the statistics of its block from
values it computes anyway.

A kernel is run(x, out, acc, sc) on one block: it fills `out` from `x` and, when `acc`
(a `stats.Counts`) is not None, adds the block's statistics to it.  `sc` hands out
reusable scratch buffers of the block size, so the several numpy passes of a kernel stay
in cache and allocate nothing.  Statistics come from the values the kernel computes
anyway (masks counted with np.count_nonzero, round trips compared in place) rather than
from a separate classification pass.

Every kernel is registered (`accelerates`) for the triples it serves; `kernel_for`
picks the first registered one for a triple, or the reference path.  Each one must give
`reference_cast`'s output bit for bit and the statistics of `reference.classify`
(tests/test_kernels.py checks every legal and extended triple).

Kernels: sources of 8 or 16 bits go through a lookup table over every bit pattern
(built once from the reference path and cached); f32 and i32 sources use bit
manipulation on integer views (f32 -> fp8 rounds to odd at bfloat16 precision, then
looks the result up in the bf16 table, which is exact because bf16 keeps more than two
extra bits); bf16 -> i8/i16/i32 widens to f32 (exact) and runs the f32 kernel, which
beats the table's gather, as do i8 -> bf16 (ml_dtypes' conversion, always exact) and
i16 -> bf16 (through f32, exact, then the f32 -> bf16 kernel); everything else uses the
reference path.
"""

from __future__ import annotations

import functools

import ml_dtypes  # noqa: F401  (registers the narrow float dtypes)
import numpy as np

from promote_cli.numerics.blocks import Scratch
from promote_cli.numerics.blocks import count as _count
from promote_cli.numerics.blocks import uint_view as _uint_view
from promote_cli.numerics.reference import classify, reference_cast
from promote_cli.numerics.stats import (
    EXACT,
    FIELDS,
    NAN_IN,
    OVERFLOW_INF,
    ROUNDED,
    SATURATED,
    SUBNORMAL_OUT,
    UNPREDICTABLE,
    WRAPPED,
    stats_of_classes,
)
from promote_cli.numerics.tables import table as _lut
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype


def _slow_stats(run, src, dst, saturate):
    """A kernel without statistics of its own: classify the block (float64 path)."""
    def k(x, out, acc, sc):
        run(x, out, None, sc)
        if acc is not None:
            st = stats_of_classes(*classify(x, out, src, dst, saturate))
            for slot, name in enumerate(FIELDS):
                acc.add(slot, getattr(st, name))
    return k


def _table_stats(run, src, dst, saturate):
    """A kernel for an 8/16-bit source whose statistics come from that source's table."""
    lut = _lut(src, dst, saturate)

    def k(x, out, acc, sc):
        run(x, out, None, sc)
        if acc is not None:
            lut.count(_uint_view(x), _uint_view(out), acc, sc)
    return k


def _run_reference(src, dst, saturate):
    def run(x, out, acc, sc):
        out[...] = reference_cast(x, src, dst, saturate)
    return _slow_stats(run, src, dst, saturate)


def _astype(x, out, acc, sc):
    np.copyto(out, x, casting="unsafe")


def _all_exact(run):
    def k(x, out, acc, sc):
        run(x, out, None, sc)
        if acc is not None:
            acc.add(EXACT, x.size)
    return k


def _all_within(x, lo: int, hi: int, sc) -> bool:
    """Are all of the integer block `x` within [lo, hi]?  Two reductions (about a quarter of a compare
    and a count) answer it for data that fits, as most does; a thread whose block did not fit stops
    asking for the rest of the cast (`sc.hints` is its own) and counts element by element."""
    key = ("within", x.dtype, lo, hi)
    if not x.size or key in sc.hints:
        return False
    if int(x.min()) >= lo and int(x.max()) <= hi:
        return True
    sc.hints[key] = False
    return False


def _int_to_int(x, out, acc, sc):
    np.copyto(out, x, casting="unsafe")          # numpy wraps like two's complement
    if acc is not None:
        m = x.size
        info = np.iinfo(out.dtype)
        if (out.dtype.itemsize >= x.dtype.itemsize and out.dtype.kind == x.dtype.kind) or \
                _all_within(x, int(info.min), int(info.max), sc):
            acc.add(EXACT, m)
            return
        ex = _count(np.equal(out, x, out=sc("b0", np.bool_, m)))
        acc.add(EXACT, ex)
        acc.add(WRAPPED, m - ex)


def _int_to_bool(x, out, acc, sc):
    np.not_equal(x, 0, out=out)
    if acc is not None:
        m = x.size
        if _all_within(x, 0, 1, sc):
            acc.add(EXACT, m)
            return
        ex = _count(np.less_equal(_uint_view(x), 1, out=sc("b0", np.bool_, m)))   # 0 or 1
        acc.add(EXACT, ex)
        acc.add(ROUNDED, m - ex)


def _f32_to_bool(x, out, acc, sc):
    np.not_equal(x, 0, out=out)
    if acc is not None:
        m = x.size
        bm = sc("b0", np.bool_, m)
        # NaN only in a block whose minimum is NaN; zeros are the elements the output has False for
        nan = _count(np.isnan(x, out=bm)) if m and np.isnan(x.min()) else 0
        ex = (m - _count(out)) + _count(np.equal(x, 1, out=bm))
        acc.add(NAN_IN, nan)
        acc.add(EXACT, ex)
        acc.add(ROUNDED, m - ex - nan)


def _int_to_float_exact_check(x, out, acc, sc):
    """32-bit integer -> f32 (hardware conversion, nearest even); exact = converts back equal (every
    magnitude up to 2**24 does: a block within that is exact from its min and max)."""
    np.copyto(out, x, casting="unsafe")
    if acc is not None:
        m = x.size
        if _all_within(x, -(1 << 24), 1 << 24, sc):
            acc.add(EXACT, m)
            return
        ex = _count(np.equal(out, x, out=sc("b0", np.bool_, m)))   # compared in float64
        acc.add(EXACT, ex)
        acc.add(ROUNDED, m - ex)


_F32_ABS, _F32_INF = np.uint32(0x7FFF_FFFF), np.uint32(0x7F80_0000)


def _f32_nan_inf(u, sc, m):
    """(NaN count, infinity count) of float32 bit patterns u, and |u| in scratch."""
    a = sc("a32", np.uint32, m)
    np.bitwise_and(u, _F32_ABS, out=a)
    bm = sc("b1", np.bool_, m)
    nan = _count(np.greater(a, _F32_INF, out=bm))
    inf = _count(np.equal(a, _F32_INF, out=bm))
    return nan, inf, a


def _f32_bits_to_bf16(u: np.ndarray, out16: np.ndarray, sc, a=None) -> np.ndarray:
    """float32 bit patterns -> bfloat16 bit patterns: nearest, ties to even.

    The carry of the rounding bias runs into the exponent, so overflow gives inf and
    subnormals stay subnormal; NaN gives the quiet NaN of its sign (the bias could
    carry it into inf).
    Returns the 32-bit intermediate (the bf16 pattern in the low half).
    """
    m = u.size
    r = sc("r32", np.uint32, m)
    t = sc("t32", np.uint32, m)
    np.right_shift(u, np.uint32(16), out=t)
    np.bitwise_and(t, np.uint32(1), out=t)
    np.add(u, np.uint32(0x7FFF), out=r)
    r += t
    r >>= np.uint32(16)
    if a is None:
        a = sc("a32", np.uint32, m)
        np.bitwise_and(u, _F32_ABS, out=a)
    nan = np.greater(a, _F32_INF, out=sc("bn", np.bool_, m))
    if nan.any():
        i = np.flatnonzero(nan)   # few: fancy indexing on them beats a masked pass
        r[i] = ((u[i] >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7FC0)
    np.copyto(out16, r, casting="unsafe")
    return r


def _bf16_stats(r, x, m, acc, sc, nan, inf):
    """Counts of a cast to bf16 whose 32-bit result patterns are r (x: the values)."""
    back = sc("t32", np.uint32, m)
    np.left_shift(r, np.uint32(16), out=back)
    bm = sc("b0", np.bool_, m)
    ex = _count(np.equal(back.view(np.float32), x, out=bm))   # int32 x: compared in float64
    ya = sc("ya", np.uint32, m)
    np.bitwise_and(r, np.uint32(0x7FFF), out=ya)
    ovf = _count(np.equal(ya, np.uint32(0x7F80), out=bm)) - inf
    np.subtract(ya, np.uint32(1), out=ya)
    sub = _count(np.less(ya, np.uint32(0x7F), out=bm))
    acc.add(EXACT, ex)
    acc.add(OVERFLOW_INF, ovf)
    acc.add(NAN_IN, nan)
    acc.add(SUBNORMAL_OUT, sub)
    acc.add(ROUNDED, m - ex - ovf - nan)


def _bf16_by_astype(x, out, acc, sc, stats_x=None):
    """f32 -> bf16 by ml_dtypes' conversion, which `_ml_dtypes_bf16_agrees` checked
    once against the bit kernel.  Statistics from the dropped bits and the bf16 patterns:
    bf16 is the high half of f32 (subnormals included), so a value is exact when its low
    16 bits are zero, unless its result is infinite or NaN; those few are counted by
    index (NaN in, infinity in: exact, or overflow).  `stats_x`: the int32 values an
    f32 `x` was converted from (no NaN, infinity or overflow there)."""
    m = x.size
    np.copyto(out, x, casting="unsafe")
    if acc is None:
        return
    u = x.view(np.uint32)
    if stats_x is None:
        low = sc("t32", np.uint32, m)
        np.bitwise_and(u, np.uint32(0xFFFF), out=low)
        rounded = int(np.count_nonzero(low))
    y = out.view(np.uint16)
    ya = sc("ya16", np.uint16, m)
    np.bitwise_and(y, np.uint16(0x7FFF), out=ya)
    bm = sc("bn", np.bool_, m)
    nan = inf = ovf = 0
    if m and ya.max() >= 0x7F80:          # infinity or NaN out: few, counted by index
        i = np.flatnonzero(np.greater_equal(ya, np.uint16(0x7F80), out=bm))
        a = u[i] & _F32_ABS
        nan = _count(a > _F32_INF)
        inf = _count(a == _F32_INF)
        ovf = i.size - nan - inf
        if stats_x is None:
            rounded -= _count((a & np.uint32(0xFFFF)) != 0)    # counted as NaN or overflow
    if stats_x is not None:
        # int32 (via f32): exact = the bf16 value equals the integer, compared in float64
        back = sc("t32", np.uint32, m)
        np.left_shift(y, np.uint32(16), out=back, casting="unsafe")
        rounded = m - _count(np.equal(back.view(np.float32), stats_x, out=sc("b0", np.bool_, m)))
    sub = _subnormal_bf16(ya, bm)
    acc.add(EXACT, m - rounded - ovf - nan)
    acc.add(ROUNDED, rounded)
    acc.add(OVERFLOW_INF, ovf)
    acc.add(NAN_IN, nan)
    acc.add(SUBNORMAL_OUT, sub)


def _subnormal_bf16(ya: np.ndarray, bm: np.ndarray) -> int:
    """How many of the bf16 magnitude patterns `ya` (overwritten) are subnormal: 1..0x7F, found as
    ya - 1 < 0x7F (zero wraps around); a block whose smallest ya - 1 is above that has none."""
    np.subtract(ya, np.uint16(1), out=ya)
    if not ya.size or ya.min() >= 0x7F:
        return 0
    return _count(np.less(ya, np.uint16(0x7F), out=bm))


@functools.lru_cache(maxsize=None)
def _ml_dtypes_bf16_agrees() -> bool:
    """Does ml_dtypes' f32 -> bf16 round exactly like `_f32_bits_to_bf16`?  Checked on
    every sign/exponent class crossed with the bit patterns around each rounding
    boundary, plus 64 Ki patterns spread over all 2**32 (NaN: the quiet NaN of the same sign)."""
    exps = np.array([0, 1, 2, 0x66, 0x7E, 0x7F, 0x80, 0xFD, 0xFE, 0xFF], np.uint32)
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1_0000, 0x1_7FFF, 0x1_8000,
                     0x1_8001, 0x7F_0000, 0x7F_7FFF, 0x7F_8000, 0x7F_FFFF, 0x40_0000,
                     0x40_8000, 0x3F_8000], np.uint32)
    u = ((exps[:, None] << np.uint32(23)) | lows[None, :]).ravel()
    spread = np.arange(1 << 16, dtype=np.uint32) * np.uint32(2654435761)   # Knuth's multiplicative hash
    u = np.concatenate([u, u | np.uint32(0x8000_0000), spread])
    sc = Scratch(u.size)
    mine = np.empty(u.size, np.uint16)
    with np.errstate(all="ignore"):
        _f32_bits_to_bf16(u, mine, sc)
        theirs = u.view(np.float32).astype(numpy_dtype("bf16")).view(np.uint16)
    return bool((mine == theirs).all())


def _f32_to_bf16(x, out, acc, sc):
    if _ml_dtypes_bf16_agrees():
        return _bf16_by_astype(x, out, acc, sc)
    u = x.view(np.uint32)
    m = x.size
    if acc is None:
        _f32_bits_to_bf16(u, out.view(np.uint16), sc)
        return
    nan, inf, a = _f32_nan_inf(u, sc, m)
    r = _f32_bits_to_bf16(u, out.view(np.uint16), sc, a)
    _bf16_stats(r, x, m, acc, sc, nan, inf)


def _i32_to_bf16(x, out, acc, sc):
    # the reference model's way: to f32 (nearest even), then to bf16
    m = x.size
    f = sc("i2f", np.float32, m)
    np.copyto(f, x, casting="unsafe")
    if _ml_dtypes_bf16_agrees():
        return _bf16_by_astype(f, out, acc, sc, stats_x=x)
    r = _f32_bits_to_bf16(f.view(np.uint32), out.view(np.uint16), sc)
    if acc is not None:
        _bf16_stats(r, x, m, acc, sc, 0, 0)


def _i16_to_bf16(x, out, acc, sc):
    """Through f32, which holds every i16 exactly: the f32 -> bf16 conversion and its
    statistics (no NaN, infinity or overflow can occur)."""
    f = sc("i2f", np.float32, x.size)
    np.copyto(f, x, casting="unsafe")
    _bf16_by_astype(f, out, acc, sc)


_HALF = np.float32(0.5)


def _f32_to_f16(x, out, acc, sc):
    """float32 -> f16: nearest, ties to even; inf on overflow; subnormals kept; NaN ->
    the quiet NaN of the same sign.  On the integer view, in whole-block passes:

    * normal results: the rounding bias 0xFFF plus the lowest kept bit, added together
      with the exponent re-bias (the carry runs into the exponent, up to inf);
      magnitudes below 2**-14 are first raised to 2**-14, which gives 0x0400;
    * subnormal results: |x| + 0.5 in f32 arithmetic rounds |x| to a multiple of
      2**-24 (nearest even), and its bits minus those of 0.5 are the f16 pattern;
    * the f16 pattern is the smaller of the two: equal at 2**-14, the second one
      grows faster above it and the first one is 0x0400 below it.

    The elements whose pattern is 0x7C00 (infinite and NaN inputs, overflow) are few in
    practice: they are fixed up (NaN) and classified by index.
    """
    m = x.size
    u = x.view(np.uint32)
    a = sc("a32", np.uint32, m)
    np.bitwise_and(u, _F32_ABS, out=a)
    an = sc("t32", np.uint32, m)
    np.maximum(a, sc.const(0x3880_0000, np.uint32, m), out=an)   # 2**-14
    o = sc("r32", np.uint32, m)
    np.right_shift(an, np.uint32(13), out=o)
    o &= np.uint32(1)
    o += an
    o += np.uint32(0xC800_0FFF)                # (15 - 127) << 23 (mod 2**32) + 0xFFF
    o >>= np.uint32(13)
    np.minimum(o, sc.const(0x7C00, np.uint32, m), out=o)
    sub = sc("f32", np.float32, m)
    np.add(a.view(np.float32), _HALF, out=sub)
    sv = sub.view(np.uint32)
    sv -= np.uint32(0x3F00_0000)
    np.minimum(o, sv, out=o)
    top = np.equal(o, np.uint32(0x7C00), out=sc("bn", np.bool_, m))
    big = np.flatnonzero(top) if top.any() else None
    if acc is not None:
        _f16_stats(o, a, an, big, m, acc, sc)
    sign = an                                  # reuse
    np.right_shift(u, np.uint32(16), out=sign)
    sign &= np.uint32(0x8000)
    o |= sign
    if big is not None:
        i = big[a[big] > _F32_INF]             # NaN inputs
        o[i] = sign[i] | np.uint32(0x7E00)
    np.copyto(out.view(np.uint16), o, casting="unsafe")


_F16_TINY = np.uint32(0x3880_0000)             # bits of 2**-14, the smallest normal f16


def _f16_stats(o, a, an, big, m, acc, sc):
    """Counts of f32 -> f16 from |x| bits `a`, max(|x|, 2**-14) bits `an`, the unsigned
    f16 patterns `o` (NaN inputs still 0x7C00 there) and the indices `big` of the
    elements whose pattern is 0x7C00 (None: no such element).

    Below 2**-14 an element is exact when |x| + 0.5 - 0.5 == |x| in f32 (a multiple of
    2**-24, the subnormal spacing); above, when the 13 bits rounding drops are zero.
    Elements at 0x7C00 are NaN in, infinite in (exact) or overflow; they and the
    elements below 2**-14 are counted by index when they are few."""
    bm = sc("b0", np.bool_, m)
    low = sc("back", np.uint32, m)
    np.bitwise_and(an, np.uint32(0x1FFF), out=low)   # 0 below 2**-14
    rounded = int(np.count_nonzero(low))
    nan = inf = 0
    if big is not None:
        ab = a[big]
        nan = _count(ab > _F32_INF)
        inf = _count(ab == _F32_INF)
        rounded -= _count((ab & np.uint32(0x1FFF)) != 0)     # counted as NaN or overflow
    ovf = (0 if big is None else big.size) - nan - inf
    tiny = np.less(a, _F16_TINY, out=bm)
    nt = _count(tiny)
    if nt:
        if nt <= m // 8:
            i = np.flatnonzero(tiny)
            at = a.view(np.float32)[i]
            rounded += _count((at + _HALF) - _HALF != at)
            sub = _count((o[i] - np.uint32(1)) < np.uint32(0x3FF))   # not 0, not 0x400
        else:
            f = sc("f32b", np.float32, m)
            np.minimum(a, _F16_TINY, out=f.view(np.uint32))   # 2**-14 (exact) above
            back = sc("t32b", np.float32, m)
            np.add(f, _HALF, out=back)
            back -= _HALF
            rounded += _count(np.not_equal(back, f, out=bm))
            t = sc("t32b", np.uint32, m)
            np.subtract(o, np.uint32(1), out=t)
            sub = _count(np.less(t, np.uint32(0x3FF), out=bm))
    else:
        sub = 0
    acc.add(EXACT, m - rounded - ovf - nan)
    acc.add(ROUNDED, rounded)
    acc.add(OVERFLOW_INF, ovf)
    acc.add(NAN_IN, nan)
    acc.add(SUBNORMAL_OUT, sub)


def _i32_to_f16(x, out, acc, sc):
    """int32 -> f16 through f32: exact below 2**24, and every larger magnitude
    overflows f16 however it rounds, so rounding twice changes nothing."""
    f = sc("i2f", np.float32, x.size)
    np.copyto(f, x, casting="unsafe")
    _f32_to_f16(f, out, acc, sc)


def _bf16_to_f32(x, out, acc, sc):
    """bf16 -> f32: the bf16 pattern in the high half (ml_dtypes' widening, about twice
    as fast as a shift); NaN -> the quiet NaN of its sign (the widening keeps payloads
    and signalling NaN).  Statistics from the same magnitude patterns: NaN in, subnormal
    outputs (the subnormal inputs); everything else is exact."""
    m = x.size
    u = x.view(np.uint16)
    o = out.view(np.uint32)
    np.copyto(out, x, casting="unsafe")
    a = sc("ya16", np.uint16, m)
    np.bitwise_and(u, np.uint16(0x7FFF), out=a)
    nan = 0
    if m and a.max() > 0x7F80:    # a block with NaN
        i = np.flatnonzero(np.greater(a, np.uint16(0x7F80), out=sc("bn", np.bool_, m)))
        o[i] = (o[i] & np.uint32(0x8000_0000)) | np.uint32(0x7FC0_0000)
        nan = i.size
    if acc is not None:
        sub = _subnormal_bf16(a, sc("bn", np.bool_, m))
        acc.add(NAN_IN, nan)
        acc.add(SUBNORMAL_OUT, sub)
        acc.add(EXACT, m - nan)


def _f32_via_bf16_lut(dst: str, saturate: bool):
    """float32 -> 8-bit float: round to odd at bfloat16 precision, then the bf16 table.

    Truncating to bf16 and setting the last bit when any dropped bit was set keeps the
    information a correct rounding to <= 6 significant bits needs (round-to-odd).  The
    statistics are the bf16 table's, counted on the rounded-to-odd patterns: an f32 value
    whose dropped bits are not all zero maps to a bf16 pattern with its last bit set, which
    no fp8 value has, so both fall in the same category (rounded, overflow or NaN).
    """
    lut = _lut("bf16", dst, saturate)

    def run(x, out, acc, sc):
        m = x.size
        u = x.view(np.uint32)
        t = sc("t32", np.uint32, m)
        # (low half + 0xFFFF) carries into bit 16 exactly when the low half is not zero
        np.bitwise_and(u, np.uint32(0xFFFF), out=t)
        t += np.uint32(0xFFFF)
        t |= u
        t >>= np.uint32(16)
        idx = sc("idx", np.intp, m)
        np.copyto(idx, t, casting="unsafe")
        lut.apply_indices(idx, out.view(np.uint8), acc, sc)
    return run


def _float_to_small_int(dst: str):
    """f32 -> i8/i16/i32: nearest even, saturate, NaN -> 0, computed in f32.

    The statistics come from the rounded values `r` and the clamped ones `c`: exact where
    c == x; saturated or NaN where c != r (NaN differs from itself); NaN inputs are counted
    only in a block whose smallest value is NaN (numpy's minimum propagates NaN), which is
    also the only block that needs its NaNs set to 0."""
    info = np.iinfo(numpy_dtype(dst))
    top = np.float32(float(info.max) + 1.0)       # a power of two: exact in f32
    lo = np.float32(info.min)
    # the largest f32 not above info.max: info.max itself for i8/i16
    hi = np.float32(np.nextafter(top, np.float32(0))) if info.bits >= 32 else np.float32(info.max)

    def run(x, out, acc, sc):
        m = x.size
        r = sc("f32", np.float32, m)
        np.rint(x, out=r)
        c = sc("f32c", np.float32, m)
        np.clip(r, lo, hi, out=c)
        bm = sc("b0", np.bool_, m)
        nan = 0
        if m and np.isnan(c.min()):
            nanm = np.isnan(c, out=bm)
            nan = _count(nanm)
            np.copyto(c, np.float32(0), where=nanm)
        if acc is not None:
            moved = _count(np.not_equal(c, r, out=bm))        # saturated, and NaN (now 0, or NaN != NaN)
            ex = _count(np.equal(c, x, out=bm))
        np.copyto(out, c, casting="unsafe")
        if info.bits >= 32:
            above = np.greater_equal(r, top, out=bm)
            if above.any():
                out[np.flatnonzero(above)] = info.max
        if acc is not None:
            acc.add(EXACT, ex)
            acc.add(SATURATED, moved - nan)
            acc.add(NAN_IN, nan)
            acc.add(UNPREDICTABLE, nan)
            acc.add(ROUNDED, m - ex - moved)
    return run


def _bf16_widened(run):
    """A bf16 source through an f32 kernel that does not look at NaN payloads: widened
    by ml_dtypes (exact: the pattern in the high half), the f32 value is the bf16 one,
    so the f32 kernel's output and statistics are the bf16 cast's."""
    def k(x, out, acc, sc):
        w = sc("w32", np.float32, x.size)
        np.copyto(w, x, casting="unsafe")
        run(w, out, acc, sc)
    return k


# --------------------------------------------------------------------------- the registry

_REGISTRY: list[tuple[str, object, object]] = []    # (name, applies(s, d, saturate), make(src, dst, saturate))


def accelerates(applies):
    """Register `make(src, dst, saturate) -> run` as the kernel of every triple for which
    `applies(s, d, saturate)` holds (s, d: the vocabulary's DTypes). Earlier
    registrations win; a triple no kernel claims runs the reference path."""
    def register(make):
        _REGISTRY.append((make.__name__.lstrip("_"), applies, make))
        return make
    return register


def _int(d) -> bool:
    return d.is_integer


def _pair(src: str, dst: str, saturate: bool | None = None):
    return lambda s, d, sat: s.name == src and d.name == dst and (saturate is None or sat == saturate)


@accelerates(lambda s, d, sat: (_int(s) and s.bits < 8) or (_int(d) and d.bits < 8))
def _sub_byte(src, dst, saturate):      # numpy cannot wrap sub-byte integers itself
    return _run_reference(src, dst, saturate)


@accelerates(lambda s, d, sat: s.kind == "bool")
def _from_bool(src, dst, saturate):
    return _all_exact(_astype)


@accelerates(lambda s, d, sat: _int(s) and d.kind == "bool")
def _int_to_bool_kernel(src, dst, saturate):
    return _int_to_bool


@accelerates(lambda s, d, sat: _int(s) and _int(d))
def _int_to_int_kernel(src, dst, saturate):
    if np.result_type(numpy_dtype(src), numpy_dtype(dst)).kind in "iu":
        return _int_to_int
    return _slow_stats(_astype, src, dst, saturate)      # u64 vs i64: compare exactly


@accelerates(lambda s, d, sat: _int(s) and (s.bits <= 16 and d.name == "f32" or s.bits <= 32 and d.name == "f64"))
def _small_int_to_float(src, dst, saturate):             # always exact
    return _all_exact(_astype)


@accelerates(lambda s, d, sat: _int(s) and s.bits == 32 and d.name == "f32" and not sat)
def _int_to_float(src, dst, saturate):                   # hardware conversion: nearest even
    return _int_to_float_exact_check


@accelerates(_pair("f32", "f16", False))
def _f32_to_f16_kernel(src, dst, saturate):
    return _f32_to_f16


@accelerates(_pair("i32", "f16", False))
def _i32_to_f16_kernel(src, dst, saturate):
    # exact in f32 below 2**24; larger values overflow f16 however they round
    return _i32_to_f16


@accelerates(_pair("f16", "f64", False))
def _f16_to_f64(src, dst, saturate):
    return _table_stats(_astype, src, dst, saturate)


@accelerates(_pair("f32", "f64", False))
def _f32_to_f64(src, dst, saturate):
    return _slow_stats(_astype, src, dst, saturate)


@accelerates(_pair("bf16", "f32", False))
def _bf16_to_f32_kernel(src, dst, saturate):
    return _bf16_to_f32


@accelerates(_pair("f32", "bf16", False))
def _f32_to_bf16_kernel(src, dst, saturate):
    return _f32_to_bf16


@accelerates(_pair("i32", "bf16", False))
def _i32_to_bf16_kernel(src, dst, saturate):
    return _i32_to_bf16


@accelerates(lambda s, d, sat: s.name == "f32" and d.kind == "float" and d.bits == 8
             and d.man_bits + 2 <= DTYPES["bf16"].man_bits)
def _f32_to_fp8(src, dst, saturate):             # bf16 keeps two more bits than dst needs
    return _f32_via_bf16_lut(dst, saturate)


@accelerates(lambda s, d, sat: s.name == "f32" and d.name in ("i8", "i16", "i32"))
def _f32_to_int(src, dst, saturate):
    return _float_to_small_int(dst)


@accelerates(lambda s, d, sat: s.name == "bf16" and d.name in ("i8", "i16", "i32"))
def _bf16_to_int(src, dst, saturate):            # faster than the table's gather
    return _bf16_widened(_float_to_small_int(dst))


@accelerates(lambda s, d, sat: s.name == "i8" and d.name == "bf16")
def _i8_to_bf16(src, dst, saturate):             # bf16 holds every i8 exactly
    return _all_exact(_astype)


@accelerates(lambda s, d, sat: s.name == "i16" and d.name == "bf16" and _ml_dtypes_bf16_agrees())
def _i16_to_bf16_kernel(src, dst, saturate):     # faster than the table's gather
    return _i16_to_bf16


@accelerates(_pair("f32", "bool"))
def _f32_to_bool_kernel(src, dst, saturate):
    return _f32_to_bool


@accelerates(lambda s, d, sat: s.bits <= 16)
def _table(src, dst, saturate):                          # 8/16-bit sources: every pattern
    return _lut(src, dst, saturate)


def kernel_name(src: str, dst: str, saturate: bool) -> str:
    """The name of the kernel that runs a triple ("reference" when none claims it)."""
    s, d = DTYPES[src], DTYPES[dst]
    return next((name for name, applies, _ in _REGISTRY if applies(s, d, saturate)), "reference")


@functools.lru_cache(maxsize=None)
def kernel_for(src: str, dst: str, saturate: bool):
    """run(x_block, out_block, acc, scratch) for a triple: its registered kernel or the reference path."""
    s, d = DTYPES[src], DTYPES[dst]
    for _, applies, make in _REGISTRY:
        if applies(s, d, saturate):
            return make(src, dst, saturate)
    return _run_reference(src, dst, saturate)
