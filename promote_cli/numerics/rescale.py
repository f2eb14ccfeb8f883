"""`rescale_array`: TOSA RESCALE of a numpy array, exact to the TOSA reference model.

A `Plan` is one checked RESCALE: its configuration (`rescale_rules.Config`, refused
unless the spec defines it), the per-channel multipliers and shifts, and the constants
the kernel needs. `Plan.run(x, out, start)` rescales one flat piece of an array (element
`start` onwards, in the array's C or Fortran order) in cache-sized blocks of int64
arithmetic: every product fits (|value| < 2^33 times a multiplier < 2^31 for scale32,
|value| < 2^48 times < 2^15 for scale16), so numpy's int64 gives the spec's exact
results. The value-dependent REQUIREs (apply_scale_32's value range, apply_scale_16's
result range, the output zero point's add) are checked on the data only where the
types' bounds do not already rule a failure out.

INEXACT_ROUND is computed the way the TOSA reference model (tosa-tools 2026.8) computes
it: ``clip(rint(float32(value) * float32(multiplier) * 2^-shift) + output_zp)``, the
products in float32 arithmetic, rounding half to even. Its results lie
within the spec's INEXACT_ROUND error bound (0.5 plus three float32 relative errors),
which `rescale_reference.inexact_bounds` states and the tests check.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from promote_cli.errors import UsageError
from promote_cli.numerics.blocks import BLOCK
from promote_cli.numerics.rescale_rules import (
    BITS,
    LOGICAL,
    RULE,
    SHIFT_MAX,
    SHIFT_MIN,
    Config,
    RescaleError,
    check_config,
    check_scales,
    logical_range,
)

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1

#: storage dtype of each logical type (i48 is kept in int64)
STORAGE: dict[str, np.dtype] = {
    "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i48": np.dtype(np.int64),
    "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32),
    "u48": np.dtype(np.uint64),
}
_OF_STORAGE = {np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
               np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32"}


def logical_name(t: str, unsigned: bool) -> str:
    return ("u" if unsigned else "i") + str(BITS[t])


def normalize_scale(scale: float, scale32: bool = True) -> tuple[int, int]:
    """The spec's normalized multiplier and shift for a scaling `scale` = m * 2^-n with
    1 <= m < 2: multiplier = (1<<30)*m, shift = 30+n (apply_scale_32) or (1<<14)*m,
    14+n (apply_scale_16), the multiplier rounded to the nearest integer."""
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise UsageError(f"scale {scale!r} is not a positive finite number")
    frac, exp = math.frexp(scale)  # scale = frac * 2^exp, 0.5 <= frac < 1
    m, n = frac * 2.0, 1 - exp  # scale = m * 2^-n, 1 <= m < 2
    base = 30 if scale32 else 14
    multiplier = round(math.ldexp(m, base))
    if multiplier == 1 << (base + 1):  # m rounded up to 2.0
        multiplier, n = multiplier >> 1, n - 1
    shift = base + n
    if not SHIFT_MIN <= shift <= SHIFT_MAX:
        raise RescaleError(RULE["shift_range"], f"scale {scale!r} needs shift {shift} "
                           f"(multiplier {multiplier})")
    return multiplier, shift


@dataclass
class RescaleStats:
    """What a RESCALE did: elements, and how many outputs were clipped to the output type's
    smallest / largest value (saturated)."""

    elements: int = 0
    saturated_low: int = 0
    saturated_high: int = 0

    @property
    def saturated(self) -> int:
        return self.saturated_low + self.saturated_high

    def __add__(self, other: "RescaleStats") -> "RescaleStats":
        return RescaleStats(self.elements + other.elements, self.saturated_low + other.saturated_low,
                            self.saturated_high + other.saturated_high)

    def as_dict(self) -> dict:
        return {"elements": self.elements, "saturated": self.saturated,
                "saturated_low": self.saturated_low, "saturated_high": self.saturated_high}


def _as_list(v, name: str) -> list[int]:
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    try:
        out = [int(x) for x in v]
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be an integer or a list of integers") from None
    if any(int(x) != x for x in v):
        raise UsageError(f"{name} must be integers")
    return out


class Plan:
    """One RESCALE, checked: configuration, per-channel constants, and the kernel."""

    def __init__(self, config: Config, multipliers, shifts, channels: int = 1):
        check_config(config)
        self.config = c = config
        m, s = _as_list(multipliers, "multiplier"), _as_list(shifts, "shift")
        nc = channels if c.per_channel else 1
        for name, vals in (("multiplier", m), ("shift", s)):
            if len(vals) != nc:
                what = f"the last axis has {channels} channels" if c.per_channel else "not --per-channel"
                raise UsageError(f"{len(vals)} {name} value{'s' if len(vals) != 1 else ''} given, "
                                 f"{nc} needed ({what})")
        check_scales(m, s, c.scale32)
        self.multipliers, self.shifts, self.channels = m, s, nc
        self.in_name = logical_name(c.in_t, c.input_unsigned)
        self.out_name = logical_name(c.out_t, c.output_unsigned)
        self.in_dtype, self.out_dtype = STORAGE[self.in_name], STORAGE[self.out_name]
        self.lo, self.hi = logical_range(c.out_t, c.output_unsigned)
        double = c.scale32 and c.rounding == "double"
        self.M = np.array(m, np.int64)
        self.S = np.array(s, np.int64)
        rnd = np.array([1 << (x - 1) for x in s], np.int64)
        adj = np.array([(1 << 30) if (double and x > 31) else 0 for x in s], np.int64)
        self.double = bool(adj.any())
        self.R = rnd + adj  # round for value >= 0; value < 0 subtracts 2*adj
        self.ADJ2 = 2 * adj
        # value bounds from the input type, after the zero point
        vlo, vhi = logical_range(c.in_t, c.input_unsigned)
        vlo, vhi = vlo - c.input_zp, vhi - c.input_zp
        if c.in_t == "i48":
            vlo, vhi = -(1 << 47), (1 << 47) - 1
        self.VLO = np.array([-(1 << (x - 1)) for x in s], np.int64)
        self.VHI = np.array([(1 << (x - 1)) - 1 for x in s], np.int64)
        self.check_value = c.scale32 and any(vlo < a or vhi > b for a, b in zip(self.VLO.tolist(), self.VHI.tolist()))
        # result bounds (monotone in value: multiplier >= 0), for values that pass the check above
        rlo = rhi = None
        for i in range(nc):
            lo_v, hi_v = (max(vlo, int(self.VLO[i])), min(vhi, int(self.VHI[i]))) if c.scale32 else (vlo, vhi)
            a = (lo_v * m[i] + int(rnd[i]) - (int(adj[i]) if lo_v < 0 else -int(adj[i]))) >> s[i]
            b = (hi_v * m[i] + int(rnd[i]) - (int(adj[i]) if hi_v < 0 else -int(adj[i]))) >> s[i]
            rlo, rhi = (a, b) if rlo is None else (min(rlo, a), max(rhi, b))
        self.check_result16 = (not c.scale32) and (rlo < I32_MIN or rhi > I32_MAX)
        zp = c.output_zp
        self.check_add = (zp > 0 and rhi > I32_MAX - zp) or (zp < 0 and rlo < I32_MIN - zp)
        self.inexact = c.rounding == "inexact"
        self._local = threading.local()

    # ------------------------------------------------------------------ kernel

    def _params(self, ch) -> tuple:
        """(M, R, S, ADJ2, VLO, VHI) for `ch`: a channel index (scalars) or a slice of
        channels (1-D arrays, broadcast along the last axis of a block)."""
        return self.M[ch], self.R[ch], self.S[ch], self.ADJ2[ch], self.VLO[ch], self.VHI[ch]

    def _tiled(self, rows: int) -> tuple:
        """The per-channel constants repeated `rows` times: elementwise operands for blocks of
        whole rows (numpy runs flat arrays much faster than a broadcast short last axis)."""
        t = getattr(self._local, "tiles", None)
        if t is None or t[0] != rows:
            t = self._local.tiles = (rows, tuple(np.tile(a, rows) for a in self._params(slice(None))))
        return t[1]

    def run(self, x: np.ndarray, out: np.ndarray, start: int = 0, shape: tuple = (), fortran: bool = False,
            stats: RescaleStats | None = None) -> RescaleStats:
        """Rescale the flat piece `x` (input storage dtype) into `out` (output storage dtype),
        its first element being element `start` of an array of `shape` stored in C order (or
        Fortran order): channels follow the last axis. Returns the piece's statistics."""
        st = RescaleStats() if stats is None else stats
        self._layout = (shape, fortran)
        n = x.size
        st.elements += n
        if n == 0:
            return st
        if self.channels == 1:
            p = self._params(0)
            for b in range(0, n, BLOCK):
                self._block(x[b:b + BLOCK], out[b:b + BLOCK], p, st, start + b)
            return st
        C = self.channels
        if not fortran:
            # element i is channel i % C: blocks of whole rows, plus a partial row at each end
            i = head = min(n, (-start) % C)
            if head:
                ph = start % C
                self._block(x[:head], out[:head], self._params(slice(ph, ph + head)), st, start)
            rows_per = max(1, BLOCK // C)
            full = (n - i) // C
            tiles = self._tiled(rows_per)
            for r in range(0, full, rows_per):
                k = min(rows_per, full - r) * C
                p = tiles if k == rows_per * C else tuple(a[:k] for a in tiles)
                self._block(x[i:i + k], out[i:i + k], p, st, start + i)
                i += k
            if i < n:
                self._block(x[i:], out[i:], self._params(slice(0, n - i)), st, start + i)
        else:
            # element i is channel i // M (M = elements per channel): runs of one channel
            M = max(1, int(np.prod(shape[:-1], dtype=np.int64))) if shape else 1
            i = 0
            while i < n:
                ch = (start + i) // M
                end = min(n, (ch + 1) * M - start)
                p = self._params(ch)
                for b in range(i, end, BLOCK):
                    e = min(end, b + BLOCK)
                    self._block(x[b:e], out[b:e], p, st, start + b)
                i = end
        return st

    def _scratch(self, n: int):
        """Block buffers, one set per thread (the file driver runs pieces in two threads)."""
        sc = getattr(self._local, "sc", None)
        if sc is None or sc[0].size < n:
            m = max(n, BLOCK)
            sc = self._local.sc = (np.empty(m, np.int64), np.empty(m, np.bool_), np.empty(m, np.int32))
        return sc[0][:n], sc[1][:n], sc[2][:n]

    def _scratch64b(self, n: int) -> np.ndarray:
        u = getattr(self._local, "u", None)
        if u is None or u.size < n:
            u = self._local.u = np.empty(max(n, BLOCK), np.int64)
        return u[:n]

    def _block(self, x: np.ndarray, out: np.ndarray, p: tuple, st: RescaleStats, first: int) -> None:
        c = self.config
        M, R, S, ADJ2, VLO, VHI = p
        v, b, w = self._scratch(x.size)
        np.copyto(v, x, casting="unsafe")
        if c.input_zp:
            v -= c.input_zp
        if self.check_value:
            bad = (v < VLO) | (v > VHI)
            if bad.any():
                self._fail("value_range_32", v, bad, first)
        if self.inexact:
            self._inexact(v, out, M, S, st)
            return
        np.multiply(v, M, out=v)
        if self.double:
            # round - 2^30 instead of round + 2^30 for values < 0: the product has the value's
            # sign (a zero multiplier gives 0 either way, as 0 <= round +- 2^30 < 2^shift)
            u = self._scratch64b(v.size)
            np.right_shift(v, 63, out=u)
            np.bitwise_and(u, ADJ2, out=u)
            np.subtract(v, u, out=v)
        np.add(v, R, out=v)
        np.right_shift(v, S, out=v)
        if self.check_result16:
            bad = (v < I32_MIN) | (v > I32_MAX)
            if bad.any():
                self._fail("result_range_16", v, bad, first)
        if c.output_zp:
            if self.check_add:
                zp = c.output_zp
                bad = (v > I32_MAX - zp) if zp > 0 else (v < I32_MIN - zp)
                if bad.any():
                    self._fail("add_output_zp", v, bad, first)
            v += c.output_zp
        self._saturate(v, b, w, out, st)

    def _saturate(self, v: np.ndarray, b: np.ndarray, w: np.ndarray, out: np.ndarray, st: RescaleStats) -> None:
        """Count, clip to the output type and store. The REQUIREs keep every result an i32
        (checked above where the types do not already), so this runs on int32 copies."""
        np.copyto(w, v, casting="unsafe")
        np.less(w, self.lo, out=b)
        st.saturated_low += int(np.count_nonzero(b))
        np.greater(w, self.hi, out=b)
        st.saturated_high += int(np.count_nonzero(b))
        np.clip(w, self.lo, self.hi, out=w)
        np.copyto(out, w, casting="unsafe")

    def _inexact(self, v: np.ndarray, out: np.ndarray, M, S, st: RescaleStats) -> None:
        """INEXACT_ROUND as the reference model computes it: float32 products, rint, then
        the output zero point added and the result clipped."""
        f = v.astype(np.float32)
        np.multiply(f, np.asarray(M).astype(np.float32), out=f)
        np.multiply(f, np.ldexp(np.float32(1), -np.asarray(S)).astype(np.float32), out=f)
        np.rint(f, out=f)
        np.copyto(v, f, casting="unsafe")
        if self.config.output_zp:
            v += self.config.output_zp
        np.clip(v, I32_MIN, I32_MAX, out=v)  # (the float path has no REQUIRE on its range)
        self._saturate(v, np.empty(v.shape, np.bool_), np.empty(v.shape, np.int32), out, st)

    def _fail(self, rule: str, v, bad, first: int) -> None:
        k = int(np.flatnonzero(bad.reshape(-1))[0])
        what = {"value_range_32": "input value minus input_zp", "result_range_16": "apply_scale_16 result",
                "add_output_zp": "scaled result"}[rule]
        ch = self._channel_of(first + k)
        where = f"channel {ch}, " if self.channels > 1 else ""
        raise RescaleError(RULE[rule], f"element {first + k}: {what} {int(v.reshape(-1)[k])} "
                                       f"({self.in_name} input, {where}shift {self.shifts[ch]})")

    def _channel_of(self, index: int) -> int:
        if self.channels == 1:
            return 0
        shape, fortran = getattr(self, "_layout", ((), False))
        if fortran:
            return index // max(1, int(np.prod(shape[:-1], dtype=np.int64)))
        return index % self.channels


def make_plan(in_name: str, to: str, multiplier, shift, *, input_zp: int = 0, output_zp: int = 0,
              scale32: bool = True, rounding: str = "single", per_channel: bool = False,
              rank: int = 1, channels: int = 1) -> Plan:
    """A `Plan` from type names (i8 i16 i32 i48 u8 u16 u32: unsigned names set
    input_unsigned / output_unsigned)."""
    if in_name not in LOGICAL:
        raise UsageError(f"TOSA RESCALE has no input type {in_name} (use i8, i16, i32, i48, u8 or u16)")
    if to not in LOGICAL:
        raise UsageError(f"TOSA RESCALE has no output type {to} (use i8, i16, i32, u8 or u16)")
    (in_t, iu), (out_t, ou) = LOGICAL[in_name], LOGICAL[to]
    cfg = Config(in_t, out_t, scale32, rounding, per_channel, iu, ou, int(input_zp), int(output_zp), rank)
    return Plan(cfg, multiplier, shift, channels if per_channel else 1)


def input_name(dtype: np.dtype, from_: str | None = None, unsigned: bool = False) -> str:
    """The logical input type of an array of storage `dtype`: `from_` when given (i48 for
    an int64 array; a same-sized reinterpretation otherwise), else the storage's own, read
    as unsigned with `unsigned` (input_unsigned: i8 as u8, i16 as u16, i48 as u48, which
    the spec refuses, so `make_plan` quotes its rule)."""
    dtype = np.dtype(dtype)
    if from_ is not None:
        name = from_.lower()
        if name not in STORAGE:
            raise UsageError(f"--from {from_}: TOSA RESCALE has no input type {name} (use i8, i16, i32, i48, u8 or u16)")
        if STORAGE[name].itemsize != dtype.itemsize or dtype.kind not in "iu":
            raise UsageError(f"--from {name} needs {STORAGE[name].itemsize}-byte integer storage, "
                             f"the array holds {dtype}")
        return unsigned_name(name, unsigned)
    dtype = dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype
    if dtype in _OF_STORAGE:
        return unsigned_name(_OF_STORAGE[dtype], unsigned)
    if dtype == np.dtype(np.int64):
        raise UsageError("an int64 array holds RESCALE input only as i48: say --from i48")
    raise UsageError(f"RESCALE takes integer input (i8, i16, i32, i48, u8, u16), not {dtype}")


def unsigned_name(name: str, unsigned: bool) -> str:
    """A type name read with input_unsigned / output_unsigned: the signed name's unsigned
    twin (i8 -> u8, i48 -> u48) when `unsigned`, else the name itself (lower-cased)."""
    name = name.lower()
    return "u" + name[1:] if unsigned and name.startswith("i") else name


def check_i48(x: np.ndarray, first: int = 0) -> None:
    """i48 input held in int64 must be within the 48-bit range."""
    if x.size and (int(x.min()) < -(1 << 47) or int(x.max()) >= (1 << 47)):
        k = int(np.flatnonzero((x < -(1 << 47)) | (x >= (1 << 47)))[0])
        raise UsageError(f"element {first + k}: {int(x.reshape(-1)[k])} is not an i48 value")


def rescale_array(x, to: str, multiplier, shift, *, input_zp: int = 0, output_zp: int = 0,
                  scale32: bool = True, rounding: str = "single", per_channel: bool = False,
                  from_: str | None = None, input_unsigned: bool = False, output_unsigned: bool = False,
                  out: np.ndarray | None = None) -> tuple[np.ndarray, RescaleStats]:
    """TOSA RESCALE of `x` to `to` (i8, i16, i32, u8, u16), exactly as the TOSA reference model.

    `multiplier` and `shift` are integers, or lists of one per channel (the last axis) with
    ``per_channel=True``. The input type comes from x's dtype (uint8 is u8, ...); int64
    arrays are i48 with ``from_="i48"``. ``input_unsigned`` / ``output_unsigned`` read
    signed storage as unsigned (the spec's attributes). Zero points are logical values
    (128 for u8). ``rounding`` is "single", "double" or "inexact" (computed as single:
    within INEXACT_ROUND's error bound). Anything the spec forbids raises `UsageError`
    naming the rule. Returns the output (storage dtype of `to`) and `RescaleStats`.
    """
    x = np.asarray(x)
    name = input_name(x.dtype, from_, input_unsigned)
    to = unsigned_name(to, output_unsigned)
    plan = make_plan(name, to, multiplier, shift, input_zp=input_zp, output_zp=output_zp, scale32=scale32,
                     rounding=rounding, per_channel=per_channel, rank=x.ndim,
                     channels=x.shape[-1] if x.ndim else 1)
    xs = np.ascontiguousarray(x).view(plan.in_dtype) if name != "i48" else np.ascontiguousarray(x, dtype=np.int64)
    if name == "i48":
        check_i48(xs)
    if out is None:
        out = np.empty(x.shape, plan.out_dtype)
    elif out.dtype != plan.out_dtype or out.size != x.size or not out.flags.c_contiguous:
        raise ValueError("out must be a C-contiguous array of the output storage dtype and x's size")
    st = plan.run(xs.reshape(-1), out.reshape(-1), 0, x.shape, False)
    return out.reshape(x.shape), st
