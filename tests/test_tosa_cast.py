"""TOSA CAST kernels: bit-exact with the reference model's recorded vectors, refusals,
extended mode and --saturate against an independent float64 computation, statistics."""

from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from support import require_framework

# The float64 oracles below cast NaN and infinities on purpose (and mask those elements).
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

from promote_cli.errors import UsageError  # noqa: E402
from promote_cli.numerics.cast import cast_array  # noqa: E402
from promote_cli.numerics.legality import EXTENDED_TYPES, LEGAL, TOSA_TYPES, check_pair  # noqa: E402
from promote_cli.numerics.stats import CastStats  # noqa: E402
from promote_cli.probes import tosa as probe  # noqa: E402
from promote_cli.vocab.dtypes import DTYPES  # noqa: E402
from promote_cli.vocab.numpy_types import canonical_of, numpy_dtype  # noqa: E402

RECORDING = Path(__file__).parent / "data" / "recordings" / "tosa-cast"
MANIFEST, DATA = probe.load_cast_recording(RECORDING)
FLOATS = tuple(t for t in EXTENDED_TYPES if DTYPES[t].kind == "float")
INTS = tuple(t for t in EXTENDED_TYPES if DTYPES[t].is_integer)
SUB_BYTE = tuple(t for t in INTS if DTYPES[t].bits < 8)


def _values(src: str, bits: np.ndarray) -> np.ndarray:
    return bits if src == "bool" else bits.view(numpy_dtype(src))


# --------------------------------------------------------------------------- the reference model


def test_recording_covers_the_spec_table():
    spec = {(s, d): p for s, d, p in MANIFEST["spec"]["pairs"]}
    assert spec == LEGAL
    assert {(s, d): p for s, d, p in MANIFEST["pairs"]} == LEGAL
    assert len(LEGAL) == 52


def test_reference_model_refuses_every_other_pair():
    refused = {tuple(p) for p in MANIFEST["refused_by_reference"]}
    others = {(s, d) for s in TOSA_TYPES for d in TOSA_TYPES if (s, d) not in LEGAL}
    assert refused == others
    assert MANIFEST["accepted_beyond_spec"] == []


@pytest.mark.parametrize("pair", sorted(LEGAL), ids=lambda p: f"{p[0]}->{p[1]}")
def test_bit_exact_with_reference_model(pair):
    src, dst = pair
    z = DATA[src]
    bits, expected = z["input"], z[dst]
    y, st = cast_array(_values(src, bits), dst, src=src)
    assert y.dtype == numpy_dtype(dst) and y.flags.c_contiguous
    bad = probe.mismatches(src, dst, bits, expected, y)
    assert not bad.any(), (
        f"{int(bad.sum())} of {bits.size} differ; inputs {bits[bad][:8]}, "
        f"reference {expected[bad][:8]}, ours {np.asarray(y)[bad][:8]}"
    )
    assert st.total == bits.size
    if src in FLOATS and dst in INTS:
        with np.errstate(invalid="ignore"):
            nans = int(np.isnan(_values(src, bits).astype(np.float64)).sum())
            assert st.unpredictable == st.nan_in == nans
            with np.errstate(invalid="ignore"):
                nan_mask = np.isnan(_values(src, bits).astype(np.float64))
            assert not y[nan_mask].any()  # the documented choice: NaN -> 0
    else:
        assert st.unpredictable == 0


def test_recorded_inputs_are_exhaustive_for_narrow_sources():
    for src in ("i8", "i16", "f16", "bf16", "f8e4m3", "f8e5m2"):
        bits = DATA[src]["input"]
        assert np.unique(bits.view(f"u{bits.itemsize}")).size == 1 << (8 * bits.itemsize)
    for src in ("f32", "i32", "i64"):
        assert DATA[src]["input"].size >= 3000


@pytest.mark.live
def test_probe_agrees_live():  # pragma: no cover - needs the reference model
    require_framework(probe)
    x = probe.cast_inputs("f32")
    for dst in ("f8e4m3", "bf16", "i8"):
        ref = probe.run_cast(x, "f32", dst)
        y, _ = cast_array(x.view(np.float32), dst)
        assert not probe.mismatches("f32", dst, x, ref, y).any()


# --------------------------------------------------------------------------- refusals

ROUTE = re.compile(r"cast via [^(]*\(([^)]*)\)")


@pytest.mark.parametrize("src", TOSA_TYPES)
def test_refusals_name_a_legal_route(src):
    for dst in TOSA_TYPES:
        if (src, dst) in LEGAL:
            check_pair(src, dst)
            continue
        with pytest.raises(UsageError) as ei:
            check_pair(src, dst)
        msg = str(ei.value)
        assert msg.startswith(f"TOSA CAST does not define {src} -> {dst}")
        assert "--mode extended" in msg
        if src == dst:
            continue
        hops = ROUTE.search(msg).group(1).split(" -> ")
        assert hops[0] == src and hops[-1] == dst
        assert all((a, b) in LEGAL for a, b in zip(hops, hops[1:]))
        with pytest.raises(UsageError):
            cast_array(np.zeros(3, numpy_dtype(src)), dst)


def test_f16_to_bf16_goes_via_f32():
    with pytest.raises(UsageError, match=r"cast via f32 \(f16 -> f32 -> bf16\)"):
        check_pair("f16", "bf16")


@pytest.mark.parametrize("t", ["u8", "u16", "f64", "u32", "i4"])
def test_types_outside_tosa_are_refused(t):
    with pytest.raises(UsageError, match=f"TOSA has no {t} type"):
        check_pair(t, "i32")
    with pytest.raises(UsageError, match=f"TOSA has no {t} type"):
        check_pair("f32", t)
    check_pair(t, "f32", mode="extended")


def test_bad_mode_and_saturate_without_extended():
    with pytest.raises(UsageError, match="unknown cast mode"):
        check_pair("f32", "f16", mode="fast")
    with pytest.raises(UsageError, match="--saturate needs --mode extended"):
        cast_array(np.zeros(2, np.float32), "f16", saturate=True)
    with pytest.raises(UsageError):
        check_pair("f32", "f4e2m1", mode="extended")
    with pytest.raises(UsageError):
        canonical_of(np.dtype("U3"))


def test_src_reinterprets_same_width_arrays():
    bits = np.array([0x3F80, 0x7F80], np.uint16)
    y, _ = cast_array(bits, "f32", src="bf16")
    assert y.tolist() == [float(v) for v in bits.view(ml_dtypes.bfloat16)]
    with pytest.raises(UsageError):
        cast_array(np.zeros(2, np.uint8), "f32", src="bf16")


# --------------------------------------------------------------------------- extended mode, oracle


def _grid(dst: str):
    """Every non-negative finite value of a <=16-bit float format (sorted, as float64),
    its bit patterns, and the pattern/value one step past the largest finite value."""
    dt = numpy_dtype(dst)
    n = 1 << (8 * dt.itemsize)
    bits = np.arange(n // 2, dtype=np.dtype(f"u{dt.itemsize}"))
    with np.errstate(invalid="ignore"):
        vals = bits.view(dt).astype(np.float64)
    ok = np.isfinite(vals)
    bits, vals = bits[ok], vals[ok]
    step = vals[-1] - vals[-2]
    return vals, bits.astype(np.int64), vals[-1] + step, int(bits[-1]) + 1


def _oracle_float(v: np.ndarray, dst: str, saturate: bool) -> np.ndarray:
    """Round float64 values to dst by searching the list of its values (ties to even)."""
    dt = numpy_dtype(dst)
    if dst in ("f32", "f64"):
        with np.errstate(over="ignore", invalid="ignore"):
            y = v.astype(dt)
        if saturate:
            big = np.finfo(dt).max
            y = np.where(np.isinf(y), np.copysign(big, v), y).astype(dt)
        return y
    vals, bits, beyond_v, beyond_b = _grid(dst)
    vals = np.append(vals, beyond_v)
    bits = np.append(bits, beyond_b)
    a = np.abs(v)
    with np.errstate(invalid="ignore"):
        i = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)
    lo, hi = vals[i - 1], vals[i]
    pick_hi = (a - lo > hi - a) | ((a - lo == hi - a) & (bits[i] % 2 == 0))
    j = np.where(a >= vals[-1], len(vals) - 1, np.where(a <= 0, 0, np.where(pick_hi, i, i - 1)))
    out = vals[j]
    over = j == len(vals) - 1
    finfo = ml_dtypes.finfo(dt)
    if saturate:
        out = np.where(over, float(finfo.max), out)
    else:
        out = np.where(over, np.inf if DTYPES[dst].has_inf else np.nan, out)
    out = np.where(np.isnan(v), np.nan, np.copysign(out, v))
    with np.errstate(over="ignore", invalid="ignore"):
        return out.astype(dt)


def _oracle(x: np.ndarray, src: str, dst: str, saturate: bool) -> np.ndarray:
    if src in SUB_BYTE:
        x = x.astype(np.int8 if DTYPES[src].kind == "signed" else np.uint8)
    if dst == "bool":
        return x.astype(np.float64) != 0 if src in FLOATS else x != 0
    if src == "bool":
        return np.where(x, 1, 0).astype(numpy_dtype(dst))
    if dst in INTS:
        bits = int(re.sub(r"\D", "", dst))
        signed = dst.startswith("i")
        out = []
        for v in x.tolist():
            if src in FLOATS:
                if v != v:
                    r = 0
                else:
                    r = int(np.rint(v)) if abs(v) != float("inf") else (1 << 70) * (1 if v > 0 else -1)
                    lo = -(1 << (bits - 1)) if signed else 0
                    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
                    r = min(max(r, lo), hi)
            else:
                r = int(v) % (1 << bits)
                if signed and r >= 1 << (bits - 1):
                    r -= 1 << bits
            out.append(r)
        return np.array(out, dtype=np.int64 if signed else np.uint64).astype(numpy_dtype(dst))
    # float destination
    if src in INTS:
        if dst == "bf16":
            v = x.astype(np.float32).astype(np.float64)
        elif x.dtype.itemsize == 8 and dst != "f64":
            # exact integers beyond 2**53 only matter for f32 here (others overflow)
            if dst == "f32":
                y = x.astype(np.float32)
                return np.where(np.isinf(y), np.float32(np.finfo(np.float32).max), y) if saturate else y
            v = x.astype(np.float64)
        else:
            v = x.astype(np.float64)
    else:
        with np.errstate(invalid="ignore"):
            v = x.astype(np.float64)
    return _oracle_float(v, dst, saturate)


def _sample(src: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    dt = numpy_dtype(src)
    if src == "bool":
        return np.array([False, True])
    if src in SUB_BYTE:
        d = DTYPES[src]
        return np.arange(int(d.min), int(d.max) + 1).astype(dt)
    if dt.itemsize == 1:
        return np.arange(256, dtype=np.uint8).view(dt)
    if src in FLOATS:
        bits = rng.integers(0, 1 << (8 * dt.itemsize), 1500, dtype=np.uint64).astype(f"u{dt.itemsize}")
        with np.errstate(over="ignore"):
            special = np.array([0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 127.5, 128.5, 255.5, 448, 464, 465,
                                57344, 61440, 61441, 65504, 65520, 3.4e38, 1e39, 2.0 ** 63, 2.0 ** 64,
                                -2.0 ** 63, -2.0 ** 64, 1e-40, 2.0 ** -16, 2.0 ** -17, 2.0 ** -10,
                                np.inf, -np.inf, np.nan]).astype(dt)
        return np.concatenate([bits.view(dt), special])
    info = np.iinfo(dt)
    edges = [int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2, 65504, 65519, 65520,
             61440, 61441, 464, 465, 2 ** 24 + 1, 2 ** 53 + 1, 2 ** 62 + 2 ** 38 + 1]
    edges = [e for e in edges if info.min <= e <= info.max]
    return np.concatenate([rng.integers(info.min, info.max, 800, dtype=dt, endpoint=True),
                           np.array(edges).astype(dt)])


def _same(a: np.ndarray, b: np.ndarray, dst: str) -> np.ndarray:
    if dst in FLOATS:
        with np.errstate(invalid="ignore"):
            af, bf = a.astype(np.float64), b.astype(np.float64)
        sa = np.signbit(af) == np.signbit(bf)
        return ((af == bf) & sa) | (np.isnan(af) & np.isnan(bf))
    return a.astype(np.int64) == b.astype(np.int64) if dst != "bool" else a == b


@pytest.mark.parametrize("src", EXTENDED_TYPES)
def test_extended_mode_matches_float64_oracle(src):
    x = _sample(src)
    for dst in EXTENDED_TYPES:
        for saturate in ((False, True) if dst in FLOATS else (False,)):
            y, st = cast_array(x, dst, src=src, mode="extended", saturate=saturate)
            want = _oracle(x, src, dst, saturate)
            ok = _same(y, want, dst)
            assert ok.all(), (src, dst, saturate, x[~ok][:5], y[~ok][:5], want[~ok][:5])
            assert st.total == x.size


def test_saturate_clamps_to_largest_finite():
    x = np.array([3.4e38, -3.4e38, np.inf, -np.inf, np.nan, 1.0], np.float32)
    for dst in ("f8e4m3", "f8e5m2", "f8e4m3ieee", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4",
                "f16", "bf16"):
        y, st = cast_array(x, dst, mode="extended", saturate=True)
        big = float(ml_dtypes.finfo(numpy_dtype(dst)).max)
        yf = y.astype(np.float64)
        assert yf[:4].tolist() == [big, -big, big, -big]
        assert np.isnan(yf[4]) and yf[5] == 1.0
        assert st.saturated == 4 and st.nan_in == 1 and st.exact == 1
        y2, st2 = cast_array(x, dst, mode="extended")
        assert st2.saturated == 0
        assert st2.overflow_inf + st2.overflow_nan == (2 if DTYPES[dst].has_inf else 4)


# --------------------------------------------------------------------------- statistics


def test_stats_f32_to_f8e4m3_counted_independently():
    x = DATA["f32"]["input"].view(np.float32)
    y, st = cast_array(x, "f8e4m3")
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    fin = np.isfinite(xf)
    assert st.nan_in == int(np.isnan(xf).sum())
    assert st.overflow_nan == int((np.isnan(yf) & ~np.isnan(xf)).sum())
    assert st.overflow_inf == 0
    assert st.exact == int((yf == xf).sum())
    assert st.rounded == int((fin & ~np.isnan(yf) & (yf != xf)).sum())
    tiny = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).smallest_normal)
    assert st.subnormal_out == int(((np.abs(yf) > 0) & (np.abs(yf) < tiny)).sum())
    assert st.total == x.size
    _, none = cast_array(x, "f8e4m3", stats=False)
    assert none is None


def test_stats_integers_and_bool():
    x = np.array([0, 1, 2, -1, 300, -129, 127], np.int32)
    _, st = cast_array(x, "i8")
    assert (st.exact, st.wrapped) == (5, 2)
    _, st = cast_array(x, "bool")
    assert (st.exact, st.rounded) == (2, 5)
    f = np.array([0.5, 1.5, 1.0, 1e10, -np.inf, np.nan], np.float32)
    y, st = cast_array(f, "i16")
    assert y.tolist() == [0, 2, 1, 32767, -32768, 0]
    assert (st.rounded, st.exact, st.saturated, st.nan_in, st.unpredictable) == (2, 1, 2, 1, 1)


def test_stats_add_and_dict():
    a = CastStats(exact=1, rounded=2)
    b = CastStats(exact=3, nan_in=1, unpredictable=1)
    c = a + b
    assert c.as_dict() == {"exact": 4, "rounded": 2, "wrapped": 0, "saturated": 0,
                           "overflow_inf": 0, "overflow_nan": 0, "nan_in": 1,
                           "subnormal_out": 0, "unpredictable": 1}


def test_shapes_and_blocks():
    x = np.arange(-70000, 70000, dtype=np.int32).reshape(20, 7000)[:, ::2]
    y, st = cast_array(x, "bf16")
    assert y.shape == x.shape and y.flags.c_contiguous
    ref = DATA["i32"]
    assert st.total == x.size
    y0, _ = cast_array(np.zeros((), np.float32), "f16")
    assert y0.shape == ()
    assert ref["input"].size > 0


@pytest.mark.parametrize("pair", sorted(p for p in LEGAL if p[1] in ("f16", "bf16", "f32", "f8e5m2")),
                         ids=lambda p: f"{p[0]}->{p[1]}")
def test_nan_bits_match_reference_model(pair):
    """Every output bit agrees, NaN included (the model's quiet NaN of the input's sign),
    where the destination has infinities. (f8e4m3's NaN sign and NaN -> integer differ:
    `probe.mismatches` compares those as NaN and masks them.)"""
    src, dst = pair
    bits, expected = DATA[src]["input"], DATA[src][dst]
    y, _ = cast_array(_values(src, bits), dst, src=src)
    got = np.ascontiguousarray(y).view(expected.dtype)
    assert (got == expected).all(), np.flatnonzero(got != expected)[:8]


def test_the_probe_speaks_the_tosa_types():
    """The probe's serializer names cover exactly legality's TOSA types (stated there once)."""
    assert tuple(probe.TO_TOSA) == TOSA_TYPES
    assert set(probe.FROM_SPEC.values()) <= set(TOSA_TYPES)


@pytest.mark.parametrize("dst", ["f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz"])
def test_fnuz_formats_have_no_negative_zero_and_one_nan(dst):
    x = np.array([-0.0, -1e-30, np.nan, -np.nan, np.inf, 1.0], np.float32)
    y, st = cast_array(x, dst, mode="extended")
    assert y.view(np.uint8).tolist() == [0, 0, 0x80, 0x80, 0x80, y.view(np.uint8)[5]]
    assert y.view(np.uint8).tolist() == x.astype(numpy_dtype(dst)).view(np.uint8).tolist()
    assert (st.nan_in, st.overflow_nan, st.rounded, st.exact) == (2, 1, 1, 2)
