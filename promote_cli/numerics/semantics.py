"""How other libraries cast: `library_cast` converts an array the way ml_dtypes (numpy ``astype``), PyTorch
(``Tensor.to`` on CPU) or ONNX Runtime (``Cast``) does, bit for bit, from a few traits per library.

One path serves every library and pair: values are rounded to the output format (nearest, ties to even,
`reference.f64_to_bits`), and the traits say what a library does where the formats run out:

* ``overflow``: ``"inf"`` (IEEE: +-inf, NaN for formats without infinities), ``"saturate"`` (+-max, infinite
  inputs included), ``"nan"`` (values that round past the largest finite one give NaN; beyond the top
  binade, and infinities, give +-inf where the format has infinities),
  ``"nan_but_top"`` (as ``"nan"``, except that values which truncate to the format's NaN pattern give +-max:
  ONNX Runtime's non-saturating float8 e4m3 conversion);
* ``nan``: the NaN produced for a NaN input, as (mantissa, quiet, sign): mantissa ``"zero"``, ``"payload"``
  (the input's leading payload bits, made non-zero) or ``"ones"``; whether the quiet bit is set; the sign
  ``"keep"``, ``"clear"`` or ``"set"``;
* ``nan_tail``: (width, rule) where a library converts in vectors of `width` elements and the last
  ``n % width`` elements of an array take a scalar path with another NaN rule;
* integer -> float rounds once (to bf16 through f32), integer -> integer wraps;
* float -> integer: truncation toward zero as x86's ``cvtt`` instructions do it, into 32 bits (64 for a
  64-bit output), where NaN and out-of-range values give the most negative integer, then wrapped to the
  output's width (the C casts of these libraries compile to exactly that on x86; other CPUs differ).

`RULES` holds the traits, each library's list read first match first. The truth is recorded from the
libraries themselves (`promote_cli.probes.cast_semantics`, tests/data/recordings/cast-*).
"""

from __future__ import annotations

import fnmatch

import numpy as np

from promote_cli.errors import UsageError
from promote_cli.numerics.reference import _int_to_f64_rto as int_to_f64_rto
from promote_cli.numerics.reference import f64_to_bits, float_format, narrow_int
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype

#: the libraries whose casts are known, besides TOSA's (`cast_array`)
LIBRARIES = ("ml_dtypes", "torch", "onnx")
SEMANTICS = ("tosa",) + LIBRARIES

#: what each library is, in words
TITLES = {"tosa": "TOSA CAST", "ml_dtypes": "ml_dtypes 0.6 (numpy astype)", "torch": "PyTorch 2.13 (.to, CPU)",
          "onnx": "ONNX Runtime 1.32 (Cast)"}

#: the conversions whose semantics are recorded: these sources to these destinations
SOURCES = ("f32", "f16", "bf16", "i8", "i16", "i32", "i64")
DESTINATIONS = ("f8e4m3", "f8e5m2", "bf16", "f16", "f32", "i8", "u8", "i16", "i32", "i64")

QUIET = ("zero", True, "keep")          # the format's quiet NaN, sign kept
PAYLOAD = ("payload", False, "keep")    # payload kept (truncated or widened), not quieted
PAYLOAD_QUIET = ("payload", True, "keep")
ONES = ("ones", True, "keep")           # every mantissa bit set

#: library -> [(source glob, destination glob, saturate (None: either), traits)], first match wins;
#: every rule's missing traits come from DEFAULT
RULES: dict[str, list] = {
    "ml_dtypes": [
        ("f32", "f16", None, {"nan": PAYLOAD}),     # numpy's own half conversion
        ("*", "f32", None, {"nan": PAYLOAD}),
        ("*", "*", None, {}),
    ],
    "torch": [
        ("*", "f8e4m3", None, {"overflow": "saturate"}),
        ("*", "f8e5m2", None, {"nan": ONES}),
        ("f32", "bf16", None, {"nan": ("ones", True, "set")}),
        ("f16", "bf16", None, {"nan": ("zero", True, "clear")}),
        ("bf16", "f32", None, {"nan": PAYLOAD}),
        ("*", "f16", None, {"nan": PAYLOAD_QUIET}),
        ("*", "f32", None, {"nan": PAYLOAD_QUIET}),
        ("*", "*", None, {}),
    ],
    "onnx": [
        ("*", "f8e*", True, {"overflow": "saturate", "nan": ONES}),
        ("bf16", "f8e4m3", False, {"overflow": "nan_but_top", "nan": ("zero", True, "clear")}),
        ("*", "f8e4m3", False, {"overflow": "nan_but_top"}),
        ("bf16", "f8e5m2", False, {"overflow": "nan", "nan": ("ones", True, "clear")}),
        ("*", "f8e5m2", False, {"overflow": "nan", "nan": ONES}),
        ("f32", "f16", None, {"nan": PAYLOAD_QUIET, "nan_tail": (8, QUIET)}),
        ("f16", "f32", None, {"nan": PAYLOAD_QUIET}),
        ("bf16", "f32", None, {"nan": PAYLOAD}),
        ("*", "*", None, {}),
    ],
}
DEFAULT = {"overflow": "inf", "nan": QUIET, "nan_tail": None}


def traits(library: str, src: str, dst: str, saturate: bool = True) -> dict:
    """The traits of `library`'s cast src -> dst (`saturate`: ONNX Runtime's attribute, fp8 outputs only)."""
    for s, d, sat, t in RULES[library]:
        if fnmatch.fnmatchcase(src, s) and fnmatch.fnmatchcase(dst, d) and sat in (None, saturate):
            return {**DEFAULT, **t}
    raise AssertionError("every library ends with a catch-all rule")


def check(library: str, src: str, dst: str) -> None:
    """UsageError unless `library`'s cast src -> dst is one whose semantics are recorded."""
    if library not in LIBRARIES:
        raise UsageError(f"unknown semantics {library!r}: expected one of {', '.join(SEMANTICS)}")
    if src not in SOURCES or dst not in DESTINATIONS or src == dst:
        raise UsageError(f"{src} -> {dst} under {library} semantics is not known: the recorded conversions are "
                         f"{'/'.join(SOURCES)} -> {'/'.join(DESTINATIONS)}")


def library_cast(x: np.ndarray, src: str, dst: str, library: str, saturate: bool = True) -> np.ndarray:
    """`x` (values of type `src`) cast to `dst` as `library` casts it; an array of dst's numpy dtype."""
    check(library, src, dst)
    shape = np.shape(x)
    x = np.ascontiguousarray(x).view(numpy_dtype(src)).reshape(-1)
    return _convert(x, src, dst, traits(library, src, dst, saturate)).reshape(shape)


def _convert(x: np.ndarray, src: str, dst: str, tr: dict) -> np.ndarray:
    """The flat array x converted by the traits `tr`."""
    with np.errstate(all="ignore"):
        if DTYPES[src].is_integer and DTYPES[dst].is_integer:
            return narrow_int(x.astype(np.int64), dst)             # C casts: wrapped
        if DTYPES[src].is_integer:                                 # rounded once (bf16: through f32)
            v = x.astype(np.float32).astype(np.float64) if dst == "bf16" else int_to_f64_rto(x)
            return _to_float(x, v, src, dst, tr)
        if DTYPES[dst].is_integer:
            return _to_int(x.astype(np.float64), dst)
        return _to_float(x, x.astype(np.float64), src, dst, tr)


def _to_int(v: np.ndarray, dst: str) -> np.ndarray:
    """x86 truncation into 32 or 64 bits (NaN and out of range: the most negative), wrapped to dst."""
    width = 64 if DTYPES[dst].bits == 64 else 32
    lo = -(2.0 ** (width - 1))
    t = np.trunc(v)
    bad = ~((t >= lo) & (t < -lo))
    t = np.where(bad, lo, t).astype(np.int64)
    return narrow_int(t, dst)


def _to_float(x: np.ndarray, v: np.ndarray, src: str, dst: str, tr: dict) -> np.ndarray:
    fmt = float_format(dst)
    over_mode = tr["overflow"]
    bits = f64_to_bits(v, dst, saturate=over_mode == "saturate").astype(np.uint64)
    a = np.abs(v)
    isnan = np.isnan(v)
    if over_mode in ("nan", "nan_but_top"):
        over = np.isfinite(a) & (bits & ~np.uint64(fmt.sign_bit) > fmt.max_bits)
        if fmt.has_inf:                     # beyond the top binade: infinity
            over &= a < 2.0 * _value(fmt, fmt.max_bits & ~((1 << fmt.man_bits) - 1))
        if over_mode == "nan_but_top":      # truncated to the NaN pattern: the largest finite value
            top, ulp = _value(fmt, fmt.max_bits), _value(fmt, fmt.max_bits) - _value(fmt, fmt.max_bits - 1)
            to_top = over & (a >= top + ulp) & (a < top + 1.5 * ulp)
            bits = np.where(to_top, bits & np.uint64(fmt.sign_bit) | np.uint64(fmt.max_bits), bits)
            over &= ~to_top
        neg = np.signbit(v).astype(np.uint64)      # NaN from a value: its sign, no payload
        bits = np.where(over, _nan_pattern(fmt, tr["nan"], neg), bits)
    if isnan.any():
        nb = _nan_bits(x, src, dst, tr["nan"])
        if tr["nan_tail"]:
            width, rule = tr["nan_tail"]
            tail = x.size - x.size % width
            nb[tail:] = _nan_bits(x[tail:], src, dst, rule)
        bits = np.where(isnan, nb, bits)
    return bits.astype(fmt.uint).view(numpy_dtype(dst))


def _value(fmt, b: int) -> float:
    """The value of the positive bit pattern `b` of format `fmt` (a normal number)."""
    e = (b >> fmt.man_bits) - fmt.bias
    return (1 + (b & ((1 << fmt.man_bits) - 1)) / (1 << fmt.man_bits)) * 2.0 ** e


def _nan_bits(x: np.ndarray, src: str, dst: str, rule) -> np.ndarray:
    """The NaN bit patterns `rule` gives for the inputs x (only meaningful where x is NaN)."""
    s = float_format(src)
    b = x.view(s.uint).astype(np.uint64)
    neg = (b >> np.uint64(s.bits - 1)) & np.uint64(1)
    return _nan_pattern(float_format(dst), rule, neg, b & np.uint64((1 << s.man_bits) - 1), s.man_bits)


def _nan_pattern(d, rule, neg: np.ndarray, payload=None, payload_bits: int = 0) -> np.ndarray:
    """NaN bit patterns of format `d` by `rule`, with the sign bits `neg` (1: negative) and, for a rule that
    keeps it, the input's payload (`payload_bits` wide; None: an overflow, no payload)."""
    mantissa, quiet, sign = rule
    if not d.has_inf:                        # "fn": one NaN pattern a sign
        p = np.full(neg.shape, d.nan_bits, np.uint64)
    else:
        if mantissa == "payload" and payload is not None:
            shift = payload_bits - d.man_bits
            p = payload >> np.uint64(shift) if shift >= 0 else payload << np.uint64(-shift)
        elif mantissa == "ones":
            p = np.full(neg.shape, (1 << d.man_bits) - 1, np.uint64)
        else:
            p = np.zeros(neg.shape, np.uint64)
        if quiet:
            p |= np.uint64(1 << (d.man_bits - 1))
        p = np.where(p == 0, np.uint64(1), p) | np.uint64(d.inf_bits)
    if sign == "keep" or payload is None:
        p |= neg << np.uint64(d.bits - 1)
    elif sign == "set":
        p |= np.uint64(d.sign_bit)
    return p


def kernel(library: str, src: str, dst: str, saturate: bool = True):
    """run(x_block, out_block, acc, scratch) of `library`'s cast src -> dst, as `cast.Converter` runs kernels.

    To a float, the libraries round as TOSA CAST does and part from it only where CAST gives infinity or NaN
    (overflow, infinities, NaN): TOSA's kernel (`kernels.kernel_for`, extended mode) converts the block, and
    those elements are converted again by the traits, their statistics with them (`reference.classify`). To
    an integer, the whole block is converted and classified (out-of-range values counted as wrapped)."""
    from promote_cli.numerics.kernels import kernel_for

    check(library, src, dst)
    tr = traits(library, src, dst, saturate)
    saturates = tr["overflow"] == "saturate"
    if DTYPES[dst].is_integer:
        def run_int(x, out, acc, sc):
            out[...] = _convert(x, src, dst, tr)
            if acc is not None:
                _count(acc, x, out, src, dst, False, 1)
        return run_int
    base = kernel_for(src, dst, False)
    fmt = float_format(dst)
    width = tr["nan_tail"][0] if tr["nan_tail"] else 0
    body = {**tr, "nan_tail": None}
    tail_rule = None if not width else {**tr, "nan": tr["nan_tail"][1], "nan_tail": None}

    def run(x, out, acc, sc):
        base(x, out, acc, sc)
        m = (out.view(fmt.uint) & (fmt.sign_bit - 1)) > fmt.max_bits   # TOSA CAST gave infinity or NaN
        idx = np.flatnonzero(m)
        if idx.size:
            _patch(x, out, idx, body, acc, saturates)
        if width and x.size % width:
            _patch(x, out, np.arange(x.size - x.size % width, x.size), tail_rule, acc, saturates)

    def _patch(x, out, idx, rule, acc, sat):
        xm = x[idx]
        ym = _convert(xm, src, dst, rule)
        if acc is not None:
            _count(acc, xm, out[idx], src, dst, False, -1)
            _count(acc, xm, ym, src, dst, sat, 1)
        out[idx] = ym
    return run


def _count(acc, x, y, src: str, dst: str, saturates: bool, sign: int) -> None:
    """Add (sign 1) or take away (-1) the statistics of converting x to y; out-of-range float -> integer
    counts as wrapped (x86 truncation keeps the low bits)."""
    from promote_cli.numerics.reference import classify
    from promote_cli.numerics.stats import FIELDS, SATURATED, WRAPPED, stats_of_classes

    codes, subnormal, unpredictable = classify(x, y, src, dst, saturates)
    if DTYPES[dst].is_integer:
        codes[codes == SATURATED] = WRAPPED
    st = stats_of_classes(codes, subnormal, unpredictable)
    for slot, name in enumerate(FIELDS):
        acc.add(slot, sign * getattr(st, name))
