"""The reference semantics of TOSA CAST, and the classification of each element.

Semantics (TOSA 1.x, CAST):

* integer -> narrower integer wraps (two's-complement truncation); -> wider sign-extends;
* float -> integer rounds to nearest, ties to even, then saturates to the output range;
* integer or float -> float rounds to nearest, ties to even; a result beyond the output
  range is +-inf, except for f8e4m3 (no infinities), which follows the OCP OFP8
  non-saturating mode and gives NaN;
* bool -> number gives 0 or 1; number -> bool is ``x != 0`` (NaN -> true);
* NaN stays NaN (same sign, the output type's quiet NaN; the "fnuz" formats of the
  extended mode have one unsigned NaN, and give +0 for -0).

Where the specification leaves a choice, this module makes one deterministic choice:

* NaN -> integer is *unpredictable* in the spec; here it is always 0, and such elements
  are flagged unpredictable (tests mask them when comparing with the reference model,
  which gives other values);
* flushing subnormal inputs or outputs to zero is optional; here subnormals are always
  kept (as the reference model does), and subnormal outputs are flagged;
* integer -> bf16 rounds to f32 first and then to bf16, as the reference model does
  (a second rounding the spec's error bound for integer -> float tolerates); every other
  conversion rounds once.

With ``saturate=True`` (extended mode) float overflow gives the largest finite value of
the right sign (infinite inputs included; NaN stays NaN), as ONNX ``saturate=1`` and
OCP MX scaling do.

`reference_cast` computes in float64 / int64 with explicit rounding: slow but simple.
The fast kernels (`kernels.py`) are built from it or checked against it. Float formats
and integer widths come from the dtype vocabulary.
"""

from __future__ import annotations

import functools

import ml_dtypes  # noqa: F401  (registers the narrow float dtypes)
import numpy as np

from promote_cli.records import Record
from promote_cli.numerics.stats import EXACT, NAN_IN, OVERFLOW_INF, OVERFLOW_NAN, ROUNDED, SATURATED, WRAPPED
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

# --------------------------------------------------------------------------- float formats


class FloatFormat(Record, frozen=True):
    """The bit patterns of a binary float type, from its vocabulary traits."""

    exp_bits: int
    man_bits: int
    bias: int
    has_inf: bool
    bits: int
    unsigned_zero: bool = False    # "fnuz": NaN is the negative-zero pattern

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def max_bits(self) -> int:  # largest finite magnitude
        if self.has_inf:
            return ((1 << self.exp_bits) - 1 << self.man_bits) - 1
        if self.unsigned_zero:
            return (1 << (self.exp_bits + self.man_bits)) - 1  # e4m3fnuz: S.1111.111
        return (1 << (self.exp_bits + self.man_bits)) - 2  # e4m3fn: S.1111.110

    @property
    def inf_bits(self) -> int:
        return self.max_bits + 1

    @property
    def nan_bits(self) -> int:  # quiet NaN, positive (fnuz: the one NaN, 1.0000.000)
        if self.has_inf:
            return self.inf_bits | (1 << (self.man_bits - 1))
        if self.unsigned_zero:
            return self.sign_bit
        return (1 << (self.exp_bits + self.man_bits)) - 1

    @property
    def sign_bit(self) -> int:
        return 1 << (self.exp_bits + self.man_bits)

    @property
    def uint(self) -> np.dtype:
        return np.dtype(f"u{self.bits // 8}")


@functools.lru_cache(maxsize=None)
def float_format(name: str) -> FloatFormat:
    """The bit layout of float type `name`: IEEE-style, "fn" (NaN all ones, no inf) or
    "fnuz" (NaN the negative-zero pattern, no inf), signed, whole bytes: the formats
    CAST's NaN and overflow rules apply to."""
    d = DTYPES[name]
    if d.kind != "float" or d.specials not in ("ieee", "fn", "fnuz") or not d.signed or d.bits % 8:
        raise ValueError(f"{name} is not a float format the reference cast implements")
    return FloatFormat(d.exp_bits, d.man_bits, d.bias, d.has_inf, d.bits, d.specials == "fnuz")


def _is_int(t: str) -> bool:
    return DTYPES[t].is_integer


_U64 = np.uint64
_ABS64 = _U64(0x7FFF_FFFF_FFFF_FFFF)
_MANT64 = _U64((1 << 52) - 1)


def f64_to_bits(v: np.ndarray, dst: str, saturate: bool) -> np.ndarray:
    """Round float64 values to format `dst` (nearest, ties to even); return its bit patterns.

    Overflow (and infinite input) gives +-inf, NaN for formats without infinities, or
    +-max with saturate. Formats with an unsigned zero ("fnuz") give +0 for -0 and for
    negative values that round to zero, and their one NaN for NaN.
    """
    fmt = float_format(dst)
    m = fmt.man_bits
    u = np.ascontiguousarray(v, dtype=np.float64).view(np.uint64)
    neg = (u >> _U64(63)).astype(bool)
    a = u & _ABS64
    e = (a >> _U64(52)).astype(np.int64)
    normal = e > 0
    sig = (a & _MANT64) | np.where(normal, _U64(1 << 52), _U64(0))
    unb = np.where(normal, e - 1023, -1023)
    qe = np.maximum(unb, fmt.emin) - m           # exponent of the output's ulp
    ue = np.maximum(e, 1) - 1075                 # exponent of the input's ulp
    shift = np.minimum(qe - ue, 60).astype(np.uint64)  # >= 0 for every output format
    half = (_U64(1) << shift) >> _U64(1)
    lsb = (sig >> shift) & _U64(1)
    bias = np.where(shift > 0, half - _U64(1) + lsb, _U64(0))
    q = ((sig + bias) >> shift).astype(np.int64)
    bits = q + ((qe - (fmt.emin - m)) << m)      # carries into the exponent as needed
    isnan = a > _U64(0x7FF0_0000_0000_0000)
    isinf = a == _U64(0x7FF0_0000_0000_0000)
    over = (bits > fmt.max_bits) | isinf
    if saturate:
        big = fmt.max_bits
    elif fmt.has_inf:
        big = fmt.inf_bits
    else:
        big = fmt.nan_bits
    bits = np.where(over, big, bits)
    bits = np.where(isnan, fmt.nan_bits, bits)
    if fmt.unsigned_zero:
        neg &= bits != 0                         # no negative zero (NaN is the sign bit alone)
    bits = bits.astype(np.uint64) | np.where(neg, _U64(fmt.sign_bit), _U64(0))
    return bits.astype(fmt.uint)


def _int_to_f64_rto(x: np.ndarray) -> np.ndarray:
    """Integers to float64: exact up to 2**53, else rounded to odd at 52+ bits.

    Rounding to odd keeps enough information for a later correct rounding to any
    format of at most 50 significant bits (all but f64).
    """
    if x.dtype.itemsize < 8:
        return x.astype(np.float64)
    neg = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, bool)
    xu = x.view(np.uint64)
    mag = np.where(neg, ~xu + _U64(1), xu)
    _, e = np.frexp(mag.astype(np.float64))    # bit length (maybe one too many)
    k = np.maximum(e - 53, 0).astype(np.uint64)
    t = (mag >> k) << k
    t |= (t != mag).astype(np.uint64) << k
    f = t.astype(np.float64)
    return np.where(neg, -f, f)


def _float_to_int(v: np.ndarray, dst: str) -> np.ndarray:
    """float64 values -> integer type: round half to even, saturate, NaN -> 0."""
    d = DTYPES[dst]
    dt = np.dtype(np.int64) if d.kind == "signed" else np.dtype(np.uint64)
    lo, hi = int(d.min), int(d.max)
    r = np.rint(v)
    too_high = r >= float(hi + 1)
    too_low = r < float(lo)
    nan = np.isnan(r)
    with np.errstate(invalid="ignore"):
        y = np.where(too_high | too_low | nan, 0.0, r).astype(dt)
    y[too_high] = hi
    y[too_low] = lo
    return narrow_int(y, dst)


def narrow_int(y: np.ndarray, dst: str) -> np.ndarray:
    """int64/uint64 values -> integer type `dst`, wrapping (two's complement)."""
    d = DTYPES[dst]
    if d.bits < 8:                                 # sub-byte: wrap by hand
        w = y.astype(np.int64) & ((1 << d.bits) - 1)
        if d.kind == "signed":
            half = 1 << (d.bits - 1)
            w = (w ^ half) - half
        return w.astype(np.int8).astype(numpy_dtype(dst))
    with np.errstate(over="ignore"):
        return y.astype(numpy_dtype(dst))


def _as_plain(x: np.ndarray, src: str) -> np.ndarray:
    """Sub-byte integers widened to 8 bits (exact); other arrays unchanged."""
    d = DTYPES[src]
    if d.is_integer and d.bits < 8:
        return x.astype(np.int8 if d.kind == "signed" else np.uint8)
    return x


def reference_cast(x: np.ndarray, src: str, dst: str, saturate: bool = False) -> np.ndarray:
    """The straightforward implementation, on float64/int64 with explicit rounding.

    Slow but simple; the fast kernels are built from (or checked against) it.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return _reference_cast(_as_plain(np.asarray(x), src), src, dst, saturate)


def _reference_cast(x: np.ndarray, src: str, dst: str, saturate: bool) -> np.ndarray:
    s, d = DTYPES[src], DTYPES[dst]
    out_dt = numpy_dtype(dst)
    if d.kind == "bool":
        if s.kind == "float":
            return x.astype(np.float64) != 0
        return x != 0
    if s.kind == "bool":
        return x.astype(np.uint8).astype(out_dt)
    if d.is_integer:
        if s.is_integer:
            return narrow_int(x, dst)
        return _float_to_int(x.astype(np.float64), dst)
    # float output
    if s.is_integer:
        if dst == "f64" and not saturate:
            return x.astype(np.float64)
        if dst == "f64":
            v = x.astype(np.float64)  # rounds once, to nearest even
        elif dst == "bf16":
            # the reference model rounds integers to f32 first, then to bf16
            v = x.astype(np.float32).astype(np.float64)
        else:
            v = _int_to_f64_rto(x)
    else:
        v = x.astype(np.float64)
    if dst == "f64" and not saturate:
        return v
    return f64_to_bits(v, dst, saturate).view(out_dt)


# --------------------------------------------------------------------------- classification


def classify(x: np.ndarray, y: np.ndarray, src: str, dst: str, saturate: bool = False):
    """Per-element category codes (stats.EXACT ...), subnormal-output and unpredictable
    flags of the cast of `x` (type src) to `y` (type dst)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _classify(x, y, src, dst, saturate)


def _classify(x, y, src, dst, saturate):
    x = _as_plain(np.asarray(x), src).ravel()
    y = _as_plain(np.asarray(y), dst).ravel()
    s, d = DTYPES[src], DTYPES[dst]
    n = x.size
    codes = np.zeros(n, np.uint8)
    subnormal = np.zeros(n, bool)
    unpredictable = np.zeros(n, bool)
    nan_in = np.zeros(n, bool)
    if s.kind == "float":
        xf = x.astype(np.float64)
        nan_in = np.isnan(xf)
    if s.kind == "bool":
        return codes, subnormal, unpredictable
    if d.kind == "bool":
        if s.kind == "float":
            exact = (xf == 0) | (xf == 1)
        else:
            exact = (x == 0) | (x == 1)
        codes[~exact] = ROUNDED
    elif d.is_integer:
        if s.is_integer:
            back = y.astype(x.dtype)
            with np.errstate(invalid="ignore"):
                exact = (back == x) & ((x < 0) == (y < 0))
            codes[~exact] = WRAPPED
        else:
            r = np.rint(xf)
            info = np.iinfo(y.dtype)
            with np.errstate(invalid="ignore"):
                sat = (r > float(info.max)) | (r < float(info.min))
                exact = xf == y.astype(np.float64)
            codes[:] = ROUNDED
            codes[exact] = EXACT
            codes[sat] = SATURATED
            unpredictable = nan_in
    else:  # float output
        fmt = float_format(dst)
        yf = y.astype(np.float64)
        ynan = np.isnan(yf)
        yinf = np.isinf(yf)
        if s.is_integer:
            if x.dtype.itemsize == 8:
                with np.errstate(invalid="ignore"):
                    lim = 2.0 ** 63 if x.dtype.kind == "i" else 2.0 ** 64
                    ok = np.isfinite(yf) & (np.abs(yf) < lim) & (yf >= (-lim if x.dtype.kind == "i" else 0))
                    back = np.where(ok, yf, 0).astype(x.dtype)
                exact = ok & (back == x)
            else:
                exact = yf == x.astype(np.float64)
            xinf = np.zeros(n, bool)
            xfin = np.ones(n, bool)
        else:
            with np.errstate(invalid="ignore"):
                exact = (yf == xf) | (np.isinf(xf) & (yf == xf))
            xinf = np.isinf(xf)
            xfin = np.isfinite(xf)
        codes[:] = ROUNDED
        codes[exact] = EXACT
        codes[yinf & xfin] = OVERFLOW_INF
        codes[ynan] = OVERFLOW_NAN   # NaN inputs are re-labelled below
        if saturate:
            ybits = y.view(fmt.uint) if y.dtype.itemsize * 8 == fmt.bits else None
            if ybits is not None:
                at_max = (ybits & (fmt.sign_bit - 1)) == fmt.max_bits
                codes[at_max & ~exact & (xfin | xinf)] = SATURATED
        ymag = np.abs(yf)
        subnormal = (ymag > 0) & (ymag < DTYPES[dst].smallest_normal)
    codes[nan_in] = NAN_IN
    return codes, subnormal, unpredictable
