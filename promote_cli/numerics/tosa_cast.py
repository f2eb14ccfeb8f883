"""TOSA CAST over numpy arrays, bit-exact with the TOSA reference model.

Semantics (TOSA 1.x, CAST):

* integer -> narrower integer wraps (two's-complement truncation); -> wider sign-extends;
* float -> integer rounds to nearest, ties to even, then saturates to the output range;
* integer or float -> float rounds to nearest, ties to even; a result beyond the output
  range is +-inf, except for f8e4m3 (no infinities), which follows the OCP OFP8
  non-saturating mode and gives NaN;
* bool -> number gives 0 or 1; number -> bool is ``x != 0`` (NaN -> true);
* NaN stays NaN (same sign, the output type's quiet NaN).

Where the specification leaves a choice, this module makes one deterministic choice:

* NaN -> integer is *unpredictable* in the spec; here it is always 0, and such elements
  are counted in `CastStats.unpredictable` (tests mask them when comparing with the
  reference model, which gives other values);
* flushing subnormal inputs or outputs to zero is optional; here subnormals are always
  kept (as the reference model does), and subnormal outputs are counted in
  `CastStats.subnormal_out`;
* integer -> bf16 rounds to f32 first and then to bf16, as the reference model does
  (a second rounding the spec's error bound for integer -> float tolerates); every other
  conversion rounds once.

Mode ``"tosa"`` accepts exactly the 52 ordered pairs that TOSA 1.1 defines (`LEGAL`).
Mode ``"extended"`` applies the same rounding, wrapping and saturation rules to any
pair of `EXTENDED_TYPES`; there ``saturate=True`` turns float overflow into the largest
finite value of the right sign (infinite inputs included; NaN stays NaN), as ONNX
``saturate=1`` and OCP MX scaling do.

Kernels: sources of 8 or 16 bits go through a lookup table over every bit pattern
(built once from the reference path below and cached); f32 and i32 sources use bit
manipulation on integer views (f32 -> fp8 rounds to odd at bfloat16 precision, then
looks the result up in the bf16 table, which is exact because bf16 keeps more than two
extra bits); everything else uses the reference path, which computes in float64 /
int64 with explicit rounding.  Large arrays are processed in cache-sized blocks.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from dataclasses import dataclass, fields

import ml_dtypes  # noqa: F401  (registers the narrow float dtypes)
import numpy as np

from promote_cli.errors import UsageError
from promote_cli.vocab.numpy_types import canonical_of, numpy_dtype

# --------------------------------------------------------------------------- pairs

#: the element types TOSA CAST knows (canonical names), in the spec's order
TOSA_TYPES: tuple[str, ...] = (
    "bool", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f8e4m3", "f8e5m2",
)


def _tosa_legal() -> dict[tuple[str, str], str]:
    """The CAST type-support table of TOSA 1.1 (tosa.xml), one entry per ordered pair.

    Pairs marked DEDUCE-EXT in the spec get the extensions their types imply, joined
    with " and " the way the spec joins op profiles.
    """
    legal: dict[tuple[str, str], str] = {}

    def add(srcs, dsts, profile):
        for s in srcs:
            for d in dsts:
                legal[(s, d)] = profile

    signed = ("i8", "i16", "i32")
    add(["bool"], signed, "PRO-INT")                      # bool to signed
    add(["bool", "i32"], ["i64"], "EXT-INT64")            # to signed 64
    add(["bool"], ["f32"], "PRO-FP")                      # bool to fp32
    add(signed, ["bool"], "PRO-INT")                      # signed to bool
    add(["i64"], ["bool", "i32"], "EXT-INT64")            # signed 64 to bool/i32
    add(["i8"], ["i16", "i32"], "PRO-INT")                # signed 8 to signed wider
    add(["i16"], ["i8", "i32"], "PRO-INT")                # signed 16 to signed 8/32
    add(["i32"], ["i8", "i16"], "PRO-INT")                # signed 32 to signed narrower
    add(signed, ["f16", "f32"], "PRO-FP")                 # signed to fp16/fp32
    add(["f16", "f32"], signed, "PRO-FP")                 # fp16/fp32 to signed
    add(["f16"], ["f32"], "PRO-FP")
    add(["f32"], ["f16"], "PRO-FP")
    add(["f32"], ["bool"], "PRO-FP")
    add(signed + ("f32",), ["bf16"], "EXT-BF16")          # to bf16
    add(["bf16"], signed + ("f32",), "EXT-BF16")          # bf16 to signed/fp32
    ext = {"bf16": "EXT-BF16", "f8e4m3": "EXT-FP8E4M3", "f8e5m2": "EXT-FP8E5M2"}
    for fp in ("bf16", "f16", "f32"):                     # fp to fp8, fp8 to fp
        for f8 in ("f8e4m3", "f8e5m2"):
            for s, d in ((fp, f8), (f8, fp)):
                legal[(s, d)] = " and ".join(sorted({ext[t] for t in (s, d) if t in ext}))
    return legal


LEGAL: dict[tuple[str, str], str] = _tosa_legal()
assert len(LEGAL) == 52

#: canonical dtypes usable with mode="extended": every real numeric type numpy and
#: ml_dtypes hold whose values have a sign and a NaN or are integers.  Left out:
#: f4e2m1 and f8e8m0 (no NaN / no sign or zero: CAST's NaN and overflow rules do not
#: apply), nf4 and u1 (no numpy dtype), complex types (not real).
EXTENDED_TYPES: tuple[str, ...] = (
    "bool", "i4", "i8", "i16", "i32", "i64", "u4", "u8", "u16", "u32", "u64",
    "f8e4m3", "f8e5m2", "bf16", "f16", "f32", "f64",
)

MODES = ("tosa", "extended")

_INT_BITS = {"i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
             "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


def _kind(t: str) -> str:
    if t == "bool":
        return "bool"
    if t in _INT_BITS:
        return "int"
    return "float"


@functools.lru_cache(maxsize=None)
def _route(src: str, dst: str) -> tuple[str, ...] | None:
    """Shortest chain of legal TOSA casts from src to dst (preferring f32 and i32 hops)."""
    order = ("f32", "i32", "bf16", "f16", "i16", "i8", "bool", "i64", "f8e4m3", "f8e5m2")
    prev = {src: None}
    queue = deque([src])
    while queue:
        t = queue.popleft()
        if t == dst:
            path = [t]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])
            return tuple(reversed(path))
        for n in order:
            if (t, n) in LEGAL and n not in prev:
                prev[n] = t
                queue.append(n)
    return None


def check_pair(src: str, dst: str, mode: str = "tosa") -> None:
    """Raise UsageError unless `mode` defines a cast from `src` to `dst`.

    The message names a legal route when one exists.
    """
    if mode not in MODES:
        raise UsageError(f"unknown cast mode {mode!r}; choose one of: {', '.join(MODES)}")
    if mode == "extended":
        for t in (src, dst):
            if t not in EXTENDED_TYPES:
                raise UsageError(
                    f"cast --mode extended does not support {t}; supported types: "
                    + " ".join(EXTENDED_TYPES)
                )
        return
    if (src, dst) in LEGAL:
        return
    head = f"TOSA CAST does not define {src} -> {dst}"
    if src == dst:
        raise UsageError(f"{head}: the input already has type {dst} (use --mode extended to copy)")
    foreign = [t for t in (src, dst) if t not in TOSA_TYPES]
    if foreign:
        what = " or ".join(foreign)
        extra = ", or use --mode extended" if all(t in EXTENDED_TYPES for t in (src, dst)) else ""
        raise UsageError(f"{head}: TOSA has no {what} type{extra}")
    path = _route(src, dst)
    if path is None:  # pragma: no cover - every TOSA type reaches every other
        raise UsageError(f"{head}; use --mode extended")
    via = ", ".join(path[1:-1])
    raise UsageError(f"{head}; cast via {via} ({' -> '.join(path)}), or use --mode extended")


# --------------------------------------------------------------------------- stats

# element categories; every element falls in exactly one of these
_EXACT, _ROUNDED, _WRAPPED, _SATURATED, _OVF_INF, _OVF_NAN, _NAN_IN = range(7)
_CATEGORY_FIELDS = ("exact", "rounded", "wrapped", "saturated", "overflow_inf",
                    "overflow_nan", "nan_in")


@dataclass
class CastStats:
    """What happened to the elements of one cast.

    Every element is counted in exactly one of `exact` (the output has the input's
    value), `rounded` (a nearby value: float rounding, or a non-0/1 value cast to bool),
    `wrapped` (integer narrowing changed the value), `saturated` (clamped to the output
    range: float -> int, or --saturate), `overflow_inf` (finite input, infinite output),
    `overflow_nan` (non-NaN input, NaN output: f8e4m3 overflow, infinities included) and
    `nan_in` (NaN input).
    `subnormal_out` counts subnormal outputs (kept, though the spec allows flushing), and
    `unpredictable` the NaN -> integer elements whose value the spec leaves open (here 0).
    """

    exact: int = 0
    rounded: int = 0
    wrapped: int = 0
    saturated: int = 0
    overflow_inf: int = 0
    overflow_nan: int = 0
    nan_in: int = 0
    subnormal_out: int = 0
    unpredictable: int = 0

    def __add__(self, other: "CastStats") -> "CastStats":
        if not isinstance(other, CastStats):
            return NotImplemented
        return CastStats(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                            for f in fields(self)})

    def as_dict(self) -> dict:
        return {f.name: int(getattr(self, f.name)) for f in fields(self)}

    @property
    def total(self) -> int:
        return sum(getattr(self, n) for n in _CATEGORY_FIELDS)


def _stats_from(codes: np.ndarray, subnormal: np.ndarray, unpredictable: np.ndarray,
                weights: np.ndarray | None = None) -> CastStats:
    counts = np.bincount(codes.ravel(), weights=None if weights is None else weights.ravel(),
                         minlength=len(_CATEGORY_FIELDS))
    if weights is None:
        sub = int(np.count_nonzero(subnormal))
        unp = int(np.count_nonzero(unpredictable))
    else:
        sub = int(weights[subnormal].sum())
        unp = int(weights[unpredictable].sum())
    kw = {n: int(round(counts[i])) for i, n in enumerate(_CATEGORY_FIELDS)}
    return CastStats(subnormal_out=sub, unpredictable=unp, **kw)


# --------------------------------------------------------------------------- float formats


@dataclass(frozen=True)
class _Fmt:
    exp_bits: int
    man_bits: int
    has_inf: bool
    bits: int

    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def max_bits(self) -> int:  # largest finite magnitude
        if self.has_inf:
            return ((1 << self.exp_bits) - 1 << self.man_bits) - 1
        return (1 << (self.exp_bits + self.man_bits)) - 2  # e4m3fn: S.1111.110

    @property
    def inf_bits(self) -> int:
        return self.max_bits + 1

    @property
    def nan_bits(self) -> int:  # quiet NaN, positive
        if self.has_inf:
            return self.inf_bits | (1 << (self.man_bits - 1))
        return (1 << (self.exp_bits + self.man_bits)) - 1

    @property
    def sign_bit(self) -> int:
        return 1 << (self.exp_bits + self.man_bits)

    @property
    def min_normal_bits(self) -> int:
        return 1 << self.man_bits

    @property
    def uint(self) -> np.dtype:
        return np.dtype(f"u{self.bits // 8}")


_FLOATS = {
    "f64": _Fmt(11, 52, True, 64),
    "f32": _Fmt(8, 23, True, 32),
    "f16": _Fmt(5, 10, True, 16),
    "bf16": _Fmt(8, 7, True, 16),
    "f8e5m2": _Fmt(5, 2, True, 8),
    "f8e4m3": _Fmt(4, 3, False, 8),
}

_U64 = np.uint64
_ABS64 = _U64(0x7FFF_FFFF_FFFF_FFFF)
_MANT64 = _U64((1 << 52) - 1)


def _f64_to_bits(v: np.ndarray, dst: str, saturate: bool) -> np.ndarray:
    """Round float64 values to format `dst` (nearest, ties to even); return its bit patterns.

    Overflow (and infinite input) gives +-inf, NaN for f8e4m3, or +-max with saturate.
    """
    fmt = _FLOATS[dst]
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
    dt = np.dtype(np.int64) if dst in ("i4", "i8", "i16", "i32", "i64") else np.dtype(np.uint64)
    bits = _INT_BITS[dst]
    if dst.startswith("i"):
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:
        lo, hi = 0, (1 << bits) - 1
    r = np.rint(v)
    too_high = r >= float(hi + 1)
    too_low = r < float(lo)
    nan = np.isnan(r)
    with np.errstate(invalid="ignore"):
        y = np.where(too_high | too_low | nan, 0.0, r).astype(dt)
    y[too_high] = hi
    y[too_low] = lo
    return _narrow_int(y, dst)


def _narrow_int(y: np.ndarray, dst: str) -> np.ndarray:
    """int64/uint64 values -> integer type `dst`, wrapping (two's complement)."""
    if dst in ("i4", "u4"):
        w = y.astype(np.int64) & 0xF
        if dst == "i4":
            w = (w ^ 8) - 8
        return w.astype(np.int8).astype(numpy_dtype(dst))
    with np.errstate(over="ignore"):
        return y.astype(numpy_dtype(dst))


def _as_plain(x: np.ndarray, src: str) -> np.ndarray:
    """4-bit integers widened to 8 bits (exact); other arrays unchanged."""
    if src == "i4":
        return x.astype(np.int8)
    if src == "u4":
        return x.astype(np.uint8)
    return x


def reference_cast(x: np.ndarray, src: str, dst: str, saturate: bool = False) -> np.ndarray:
    """The straightforward implementation, on float64/int64 with explicit rounding.

    Slow but simple; the fast kernels are built from (or checked against) it.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return _reference_cast(_as_plain(np.asarray(x), src), src, dst, saturate)


def _reference_cast(x: np.ndarray, src: str, dst: str, saturate: bool) -> np.ndarray:
    sk, dk = _kind(src), _kind(dst)
    out_dt = numpy_dtype(dst)
    if dk == "bool":
        if sk == "float":
            return x.astype(np.float64) != 0
        return x != 0
    if sk == "bool":
        return x.astype(np.uint8).astype(out_dt)
    if dk == "int":
        if sk == "int":
            return _narrow_int(x, dst)
        return _float_to_int(x.astype(np.float64), dst)
    # float output
    if sk == "int":
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
    return _f64_to_bits(v, dst, saturate).view(out_dt)


# --------------------------------------------------------------------------- classification


def _as_f64(x: np.ndarray, t: str) -> np.ndarray:
    return _as_plain(x, t).astype(np.float64)


def classify(x: np.ndarray, y: np.ndarray, src: str, dst: str, saturate: bool = False):
    """Per-element category codes, subnormal-output and unpredictable flags."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _classify(x, y, src, dst, saturate)


def _classify(x, y, src, dst, saturate):
    x = _as_plain(np.asarray(x), src).ravel()
    y = _as_plain(np.asarray(y), dst).ravel()
    sk, dk = _kind(src), _kind(dst)
    n = x.size
    codes = np.zeros(n, np.uint8)
    subnormal = np.zeros(n, bool)
    unpredictable = np.zeros(n, bool)
    nan_in = np.zeros(n, bool)
    if sk == "float":
        xf = x.astype(np.float64)
        nan_in = np.isnan(xf)
    if sk == "bool":
        return codes, subnormal, unpredictable
    if dk == "bool":
        if sk == "float":
            exact = (xf == 0) | (xf == 1)
        else:
            exact = (x == 0) | (x == 1)
        codes[~exact] = _ROUNDED
    elif dk == "int":
        if sk == "int":
            back = y.astype(x.dtype)
            with np.errstate(invalid="ignore"):
                exact = (back == x) & ((x < 0) == (y < 0))
            codes[~exact] = _WRAPPED
        else:
            r = np.rint(xf)
            info = np.iinfo(y.dtype)
            with np.errstate(invalid="ignore"):
                sat = (r > float(info.max)) | (r < float(info.min))
                exact = xf == y.astype(np.float64)
            codes[:] = _ROUNDED
            codes[exact] = _EXACT
            codes[sat] = _SATURATED
            unpredictable = nan_in
    else:  # float output
        fmt = _FLOATS[dst]
        yf = y.astype(np.float64)
        ynan = np.isnan(yf)
        yinf = np.isinf(yf)
        if sk == "int":
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
        codes[:] = _ROUNDED
        codes[exact] = _EXACT
        codes[yinf & xfin] = _OVF_INF
        codes[ynan] = _OVF_NAN   # NaN inputs are re-labelled below
        if saturate:
            ybits = y.view(fmt.uint) if y.dtype.itemsize * 8 == fmt.bits else None
            if ybits is not None:
                at_max = (ybits & (fmt.sign_bit - 1)) == fmt.max_bits
                codes[at_max & ~exact & (xfin | xinf)] = _SATURATED
        ymag = np.abs(yf)
        min_normal = 2.0 ** fmt.emin
        subnormal = (ymag > 0) & (ymag < min_normal)
    codes[nan_in] = _NAN_IN
    return codes, subnormal, unpredictable


def _stats_of(x, y, src, dst, saturate) -> CastStats:
    return _stats_from(*classify(x, y, src, dst, saturate))


# --------------------------------------------------------------------------- kernels
#
# A kernel is run(x, out, acc, sc) on one block: it fills `out` from `x` and, when `acc`
# is not None, adds the block's statistics to it.  `sc` hands out reusable scratch
# buffers of the block size, so the several numpy passes of a kernel stay in cache and
# allocate nothing.  Statistics come from the values the kernel computes anyway (masks
# counted with np.count_nonzero, round trips compared in place) rather than from a
# separate classification pass.

_BLOCK = 1 << 16
_SUB, _UNP = 7, 8              # acc slots after the 7 categories


class _Acc:
    """Running counts: 7 categories, subnormal_out, unpredictable; plus raw histograms
    of table-driven casts, folded into the counts at the end."""

    def __init__(self):
        self.c = [0] * 9
        self.hists: dict = {}

    def add(self, slot: int, n) -> None:
        self.c[slot] += int(n)

    def result(self) -> CastStats:
        c = list(self.c)
        for lut, h in self.hists.values():
            folded = h @ lut.indicators
            for i in range(9):
                c[i] += int(folded[i])
        kw = {n: c[i] for i, n in enumerate(_CATEGORY_FIELDS)}
        return CastStats(subnormal_out=c[_SUB], unpredictable=c[_UNP], **kw)


class _Scratch:
    """Block-sized buffers, one per (name, dtype), reused from block to block."""

    def __init__(self, n: int = _BLOCK):
        self.n = n
        self.bufs: dict = {}

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


def _uint_view(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _count(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Inclusive index ranges [lo, hi] where `mask` is True."""
    m = np.concatenate(([0], mask.astype(np.int8), [0]))
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1).tolist(), (np.flatnonzero(d == -1) - 1).tolist()))


def _count_ranges(u: np.ndarray, ranges, top: int, sc: _Scratch) -> int:
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


class _Lut:
    """Everything table-driven about an 8- or 16-bit source type: the output for every
    bit pattern and how to count the statistics of a block cheaply.

    Statistics plans, chosen once per pair by estimated cost:
    * "ranges": every counter is a union of few ranges of source patterns (of their
      magnitude bits when the table is sign-symmetric): compare and count;
    * "gather": exact = a gather from a per-pattern table of exactness flags (with the
      native-width indices the cast gathers with anyway), counted; the other counters
      by ranges, rounded = the rest;
    * "bincount": a histogram of the patterns, folded through the per-pattern
      indicators once at the end.
    """

    def __init__(self, src: str, dst: str, saturate: bool):
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
        ind = np.zeros((n, 9), np.int64)
        ind[np.arange(n), codes] = 1
        ind[:, _SUB] = subnormal
        ind[:, _UNP] = unpredictable
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
        self._plan(src, osize)

    def _plan(self, src: str, osize: int) -> None:
        ind = self.indicators.astype(bool)
        n = self.size
        space, top, self.sym = n, n - 1, None
        if _kind(src) == "float" and n > 2:
            half = n // 2
            if (ind[:half] == ind[half:]).all():
                space, top, self.sym = half, half - 1, half - 1
        self.top = top
        runs = [_runs(ind[:space, k]) for k in range(9)]
        self.runs = runs
        cats = range(7)
        resid = max(cats, key=lambda k: len(runs[k]))
        c_ranges = sum(len(runs[k]) for k in range(9) if k != resid) * _COST_RANGE
        others = [k for k in range(9) if k not in (_EXACT, _ROUNDED)]
        c_gather = _COST_GATHER + sum(len(runs[k]) for k in others) * _COST_RANGE
        best = min(c_ranges, c_gather, _COST_BINCOUNT)
        if best == c_ranges:
            self.plan, self.counted, self.resid = "ranges", [k for k in range(9) if k != resid], resid
        elif best == c_gather:
            self.plan, self.counted, self.resid = "gather", others, _ROUNDED
            self.exact_flags = np.ascontiguousarray(ind[:, _EXACT])
        else:
            self.plan = "bincount"

    # -- the cast
    def __call__(self, x, out, acc, sc) -> None:
        self.apply(_uint_view(x), _uint_view(out), acc, sc)

    def apply(self, xu: np.ndarray, ou: np.ndarray, acc, sc) -> None:
        """Cast unsigned source patterns `xu` into unsigned output patterns `ou`."""
        m = xu.size
        idx = None
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

    # -- the statistics
    def count(self, xu: np.ndarray, ou: np.ndarray, acc, sc, idx=None) -> None:
        m = xu.size
        if m == 0:
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
            if k < 7:
                done += c
        if self.plan == "gather":
            if idx is None:
                idx = sc("idx", np.intp, m)
                np.copyto(idx, xu, casting="unsafe")
            fl = sc("flags", np.bool_, m)
            np.take(self.exact_flags, idx, out=fl, mode="wrap")
            ex = _count(fl)
            acc.add(_EXACT, ex)
            done += ex
        acc.add(self.resid, m - done)


@functools.lru_cache(maxsize=None)
def _lut(src: str, dst: str, saturate: bool) -> _Lut:
    return _Lut(src, dst, saturate)


def _slow_stats(run, src, dst, saturate):
    """A kernel without statistics of its own: classify the block (float64 path)."""
    def k(x, out, acc, sc):
        run(x, out, None, sc)
        if acc is not None:
            codes, sub, unp = classify(x, out, src, dst, saturate)
            h = np.bincount(codes, minlength=7)
            for i in range(7):
                acc.add(i, h[i])
            acc.add(_SUB, _count(sub))
            acc.add(_UNP, _count(unp))
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
            acc.add(_EXACT, x.size)
    return k


def _int_to_int(x, out, acc, sc):
    np.copyto(out, x, casting="unsafe")          # numpy wraps like two's complement
    if acc is not None:
        m = x.size
        if out.dtype.itemsize >= x.dtype.itemsize and out.dtype.kind == x.dtype.kind:
            acc.add(_EXACT, m)
            return
        ex = _count(np.equal(out, x, out=sc("b0", np.bool_, m)))
        acc.add(_EXACT, ex)
        acc.add(_WRAPPED, m - ex)


def _int_to_bool(x, out, acc, sc):
    np.not_equal(x, 0, out=out)
    if acc is not None:
        m = x.size
        ex = _count(np.less_equal(_uint_view(x), 1, out=sc("b0", np.bool_, m)))   # 0 or 1
        acc.add(_EXACT, ex)
        acc.add(_ROUNDED, m - ex)


def _f32_to_bool(x, out, acc, sc):
    np.not_equal(x, 0, out=out)
    if acc is not None:
        m = x.size
        bm = sc("b0", np.bool_, m)
        nan = _count(np.not_equal(x, x, out=bm))
        ex = _count(np.equal(x, 0, out=bm)) + _count(np.equal(x, 1, out=bm))
        acc.add(_NAN_IN, nan)
        acc.add(_EXACT, ex)
        acc.add(_ROUNDED, m - ex - nan)


def _int_to_float_exact_check(x, out, acc, sc):
    """int32 -> f32 (hardware conversion, nearest even); exact = converts back equal."""
    np.copyto(out, x, casting="unsafe")
    if acc is not None:
        m = x.size
        ex = _count(np.equal(out, x, out=sc("b0", np.bool_, m)))   # compared in float64
        acc.add(_EXACT, ex)
        acc.add(_ROUNDED, m - ex)


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
    if x.dtype == np.float32:
        ex = _count(np.equal(back.view(np.float32), x, out=bm))
    else:
        ex = _count(np.equal(back.view(np.float32), x, out=bm))   # compared in float64
    ya = sc("ya", np.uint32, m)
    np.bitwise_and(r, np.uint32(0x7FFF), out=ya)
    ovf = _count(np.equal(ya, np.uint32(0x7F80), out=bm)) - inf
    np.subtract(ya, np.uint32(1), out=ya)
    sub = _count(np.less(ya, np.uint32(0x7F), out=bm))
    acc.add(_EXACT, ex)
    acc.add(_OVF_INF, ovf)
    acc.add(_NAN_IN, nan)
    acc.add(_SUB, sub)
    acc.add(_ROUNDED, m - ex - ovf - nan)


def _bf16_by_astype(x, out, acc, sc, stats_x=None):
    """f32 -> bf16 by ml_dtypes' conversion, which `_ml_dtypes_bf16_agrees` checked
    once against the bit kernel.  Statistics from the bf16 patterns."""
    m = x.size
    np.copyto(out, x, casting="unsafe")
    if acc is None:
        return
    y = out.view(np.uint16)
    bm = sc("bn", np.bool_, m)
    ya = sc("ya16", np.uint16, m)
    np.bitwise_and(y, np.uint16(0x7FFF), out=ya)
    nan = _count(np.greater(ya, np.uint16(0x7F80), out=bm))      # only from NaN inputs
    inf_out = _count(np.equal(ya, np.uint16(0x7F80), out=bm))
    inf = _count(np.isinf(x, out=bm)) if stats_x is None else 0
    back = sc("t32", np.uint32, m)
    np.left_shift(y, np.uint32(16), out=back, casting="unsafe")
    xs = x if stats_x is None else stats_x
    ex = _count(np.equal(back.view(np.float32), xs, out=bm))   # int32 x: compared in float64
    np.subtract(ya, np.uint16(1), out=ya)
    sub = _count(np.less(ya, np.uint16(0x7F), out=bm))
    ovf = inf_out - inf
    acc.add(_EXACT, ex)
    acc.add(_OVF_INF, ovf)
    acc.add(_NAN_IN, nan)
    acc.add(_SUB, sub)
    acc.add(_ROUNDED, m - ex - ovf - nan)


@functools.lru_cache(maxsize=None)
def _ml_dtypes_bf16_agrees() -> bool:
    """Does ml_dtypes' f32 -> bf16 round exactly like `_f32_bits_to_bf16`?  Checked on
    every sign/exponent class crossed with the bit patterns around each rounding
    boundary, plus random patterns (NaN: the quiet NaN of the same sign)."""
    exps = np.array([0, 1, 2, 0x66, 0x7E, 0x7F, 0x80, 0xFD, 0xFE, 0xFF], np.uint32)
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1_0000, 0x1_7FFF, 0x1_8000,
                     0x1_8001, 0x7F_0000, 0x7F_7FFF, 0x7F_8000, 0x7F_FFFF, 0x40_0000,
                     0x40_8000, 0x3F_8000], np.uint32)
    u = ((exps[:, None] << np.uint32(23)) | lows[None, :]).ravel()
    u = np.concatenate([u, u | np.uint32(0x8000_0000),
                        np.random.default_rng(0).integers(0, 1 << 32, 1 << 16, dtype=np.uint32)])
    sc = _Scratch(u.size)
    mine = np.empty(u.size, np.uint16)
    with np.errstate(all="ignore"):
        _f32_bits_to_bf16(u, mine, sc)
        theirs = u.view(np.float32).astype(numpy_dtype("bf16")).view(np.uint16)
    nan = (u & _F32_ABS) > _F32_INF
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
    if acc is not None:
        _f16_stats(o, a, m, acc, sc)
    nan = np.greater(a, _F32_INF, out=sc("bn", np.bool_, m))
    sign = an                                  # reuse
    np.right_shift(u, np.uint32(16), out=sign)
    sign &= np.uint32(0x8000)
    o |= sign
    if nan.any():
        i = np.flatnonzero(nan)
        o[i] = sign[i] | np.uint32(0x7E00)
    np.copyto(out.view(np.uint16), o, casting="unsafe")


def _f16_stats(o, a, m, acc, sc):
    """Counts of f32 -> f16 from |x| bits `a` and the unsigned f16 patterns `o` (NaN
    inputs still 0x7C00 there).  Exact = the pattern converts back to |x|, computed as
    (normal formula at max(o, 0x400)) + (subnormal formula at min(o, 0x400)) - 2**-14:
    each term is 2**-14 where the other formula applies.  The infinity pattern converts
    back to 65536 that way, so |x| == 65536 (an overflow) is taken out and infinite
    inputs (exact) are added."""
    bm = sc("b0", np.bool_, m)
    nan = _count(np.greater(a, _F32_INF, out=bm))
    inf = _count(np.equal(a, _F32_INF, out=bm))
    back = sc("back", np.uint32, m)
    np.maximum(o, sc.const(0x400, np.uint32, m), out=back)
    back <<= np.uint32(13)
    back += np.uint32(0xFF80_0000)             # (112 << 23) - bits(2**-14), mod 2**32
    f = sc("f32b", np.float32, m)
    np.minimum(o, sc.const(0x400, np.uint32, m), out=sc("t32b", np.uint32, m))
    np.copyto(f, sc("t32b", np.uint32, m), casting="unsafe")
    f *= np.float32(2.0 ** -24)
    back += f.view(np.uint32)
    ex = _count(np.equal(back, a, out=bm)) - _count(np.equal(a, np.uint32(0x4780_0000), out=bm)) + inf
    ovf = _count(np.equal(o, np.uint32(0x7C00), out=bm)) - inf - nan
    t = sc("t32b", np.uint32, m)
    np.subtract(o, np.uint32(1), out=t)
    sub = _count(np.less(t, np.uint32(0x3FF), out=bm))
    acc.add(_EXACT, ex)
    acc.add(_OVF_INF, ovf)
    acc.add(_NAN_IN, nan)
    acc.add(_SUB, sub)
    acc.add(_ROUNDED, m - ex - ovf - nan)


def _f16_out_stats(out, m, acc, sc, ex, nan, inf):
    y = out.view(np.uint16)
    ya = sc("ya16", np.uint16, m)
    np.bitwise_and(y, np.uint16(0x7FFF), out=ya)
    bm = sc("b0", np.bool_, m)
    ovf = _count(np.equal(ya, np.uint16(0x7C00), out=bm)) - inf
    np.subtract(ya, np.uint16(1), out=ya)
    sub = _count(np.less(ya, np.uint16(0x3FF), out=bm))
    acc.add(_EXACT, ex)
    acc.add(_OVF_INF, ovf)
    acc.add(_NAN_IN, nan)
    acc.add(_SUB, sub)
    acc.add(_ROUNDED, m - ex - ovf - nan)


def _i32_to_f16(x, out, acc, sc):
    """int32 -> f16 through f32: exact below 2**24, and every larger magnitude
    overflows f16 however it rounds, so rounding twice changes nothing."""
    f = sc("i2f", np.float32, x.size)
    np.copyto(f, x, casting="unsafe")
    _f32_to_f16(f, out, acc, sc)


def _bf16_to_f32(x, out, acc, sc):
    np.left_shift(x.view(np.uint16), np.uint32(16), out=out.view(np.uint32), casting="unsafe")


def _f32_via_bf16_lut(dst: str, saturate: bool):
    """float32 -> 8-bit float: round to odd at bfloat16 precision, then the bf16 table.

    Truncating to bf16 and setting the last bit when any dropped bit was set keeps the
    information a correct rounding to <= 5 significant bits needs (round-to-odd).  The
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
        idx = sc("rto", np.uint16, m)
        np.copyto(idx, t, casting="unsafe")
        lut.apply(idx, out.view(np.uint8), acc, sc)
    return run


_LITTLE = np.dtype(np.uint32).byteorder == "=" and np.little_endian


def _float_to_small_int(dst: str):
    """f32 -> i8/i16/i32: nearest even, saturate, NaN -> 0, computed in f32.

    Saturated and exact elements are counted from the same rounded values."""
    info = np.iinfo(numpy_dtype(dst))
    top = np.float32(float(info.max) + 1.0)       # a power of two: exact in f32
    lo = np.float32(info.min)
    # the largest f32 not above info.max: info.max itself for i8/i16
    hi = np.float32(np.nextafter(top, np.float32(0))) if info.bits >= 32 else np.float32(info.max)

    def run(x, out, acc, sc):
        m = x.size
        r = sc("f32", np.float32, m)
        np.rint(x, out=r)
        bm = sc("b0", np.bool_, m)
        nanm = np.not_equal(r, r, out=bm)
        nan = _count(nanm)
        if nan:
            r[np.flatnonzero(nanm)] = 0
        above = np.greater_equal(r, top, out=sc("b1", np.bool_, m))
        n_hi = _count(above)
        if acc is not None:
            n_lo = _count(np.less(r, lo, out=bm))
        np.clip(r, lo, hi, out=r)
        np.copyto(out, r, casting="unsafe")
        if n_hi and info.bits >= 32:
            out[np.flatnonzero(above)] = info.max
        if acc is not None:
            ex = _count(np.equal(r, x, out=bm))
            acc.add(_EXACT, ex)
            acc.add(_SATURATED, n_hi + n_lo)
            acc.add(_NAN_IN, nan)
            acc.add(_UNP, nan)
            acc.add(_ROUNDED, m - ex - n_hi - n_lo - nan)
    return run


def _select_kernel(src: str, dst: str, saturate: bool):
    """A function run(x_block, out_block, acc, scratch) filling out_block."""
    sk, dk = _kind(src), _kind(dst)
    small = numpy_dtype(src).itemsize <= 2 and src not in ("i4", "u4")
    if src in ("i4", "u4") or dst in ("i4", "u4"):
        return _run_reference(src, dst, saturate)
    if src == "bool":
        return _all_exact(_astype)
    if dk == "bool" and sk == "int":
        return _int_to_bool
    if sk == "int" and dk == "int":
        xs, ys = numpy_dtype(src), numpy_dtype(dst)
        if np.result_type(xs, ys).kind in "iu":
            return _int_to_int
        return _slow_stats(_astype, src, dst, saturate)      # u64 vs i64: compare exactly
    if sk == "int" and numpy_dtype(src).itemsize <= 2 and dst in ("f32", "f64"):
        return _all_exact(_astype)
    if sk == "int" and dst in ("f32", "f64") and not saturate and numpy_dtype(src).itemsize <= 4:
        return _int_to_float_exact_check   # hardware conversion: nearest even
    if not saturate:
        if src == "f32" and dst == "f16":
            return _f32_to_f16
        if src == "i32" and dst == "f16":
            # exact in f32 below 2**24; larger values overflow f16 however they round
            return _i32_to_f16
        if src == "f16" and dst == "f64":
            return _table_stats(_astype, src, dst, saturate)
        if src == "f32" and dst == "f64":
            return _slow_stats(_astype, src, dst, saturate)
        if src == "bf16" and dst == "f32":
            return _table_stats(_bf16_to_f32, src, dst, saturate)
        if src == "f32" and dst == "bf16":
            return _f32_to_bf16
        if src == "i32" and dst == "bf16":
            return _i32_to_bf16
    if src == "f32" and dst in ("f8e4m3", "f8e5m2"):
        return _f32_via_bf16_lut(dst, saturate)
    if src == "f32" and dst in ("i8", "i16", "i32"):
        return _float_to_small_int(dst)
    if src == "f32" and dst == "bool":
        return _f32_to_bool
    if small:
        return _lut(src, dst, saturate)
    return _run_reference(src, dst, saturate)


@functools.lru_cache(maxsize=None)
def _kernel(src: str, dst: str, saturate: bool):
    return _select_kernel(src, dst, saturate)


# --------------------------------------------------------------------------- entry point

_local = threading.local()


def _scratch() -> _Scratch:
    sc = getattr(_local, "scratch", None)
    if sc is None:
        sc = _local.scratch = _Scratch()
    return sc


def cast_array(x: np.ndarray, dst: str, *, src: str | None = None, mode: str = "tosa",
               saturate: bool = False, stats: bool = True,
               out: np.ndarray | None = None) -> tuple[np.ndarray, CastStats | None]:
    """Cast `x` (values of dtype `src`) to `dst` with TOSA CAST semantics.

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
    kernel = _kernel(src, dst, saturate)
    acc = _Acc() if stats else None
    sc = _scratch()
    n = flat_x.size
    with np.errstate(all="ignore"):
        for s in range(0, n, _BLOCK):
            kernel(flat_x[s:s + _BLOCK], flat_o[s:s + _BLOCK], acc, sc)
    return out, (acc.result() if stats else None)
