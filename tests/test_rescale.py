"""TOSA RESCALE: agreement with the reference model's recordings (type support, values,
unpredictable values), the fast kernel against the spec's pseudocode transliterated
(`rescale_reference`), INEXACT_ROUND within the spec's error bound, the rules table, scale
normalization, and chunked / per-channel / Fortran-order runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from promote_cli.errors import UsageError
from promote_cli.numerics import rescale_reference as ref
from promote_cli.numerics.rescale import STORAGE, make_plan, normalize_scale, rescale_array
from promote_cli.numerics.rescale_rules import (
    LOGICAL,
    RULE,
    RULES,
    SUPPORT,
    Config,
    RescaleError,
    broken_rules,
    check_config,
    logical_range,
    type_combinations,
)
from promote_cli.probes import tosa_rescale as probe

RECORDING = Path(__file__).parent / "data" / "recordings" / "tosa-rescale"
MANIFEST, DATA = probe.load(RECORDING)
CASES = MANIFEST["cases"]


# --------------------------------------------------------------------------- the reference model


def test_recording_says_what_it_ran():
    assert MANIFEST["package"] == "tosa-tools" and MANIFEST["version"]
    assert MANIFEST["probe"] == "promote_cli.probes.tosa_rescale"
    assert len(MANIFEST["support"]) == len(probe.support_jobs())


def test_type_support_agrees_with_reference_model():
    """Every recorded form: refused exactly when the model refuses it, quoting the spec's rule."""
    disagree = []
    for row in MANIFEST["support"]:
        accepted, message = row[10], row[11]
        ours, why = probe.ours_accepts(probe.support_form(row))
        if ours != accepted:
            disagree.append(f"{row[:10]}: model {message or 'accepts'}; ours {why or 'accepts'}")
        if not ours:
            assert "ERROR_IF(" in why or "has no" in why, why
        if not accepted:
            assert "TypeError" not in message and "ValueError" not in message, message
    assert not disagree, "\n".join(disagree[:20])


def test_support_recording_covers_every_flag_and_both_answers():
    rows = MANIFEST["support"]
    every = set(probe.SUPPORT_TYPES + probe.OTHER_TYPES)
    assert {r[0] for r in rows} == {r[1] for r in rows} == every
    assert {r[3] for r in rows} == {"single", "double", "inexact"}
    others = [r for r in rows if {r[0], r[1]} & set(probe.OTHER_TYPES)]
    assert len(others) == 2 * 3 * (len(every) ** 2 - len(probe.SUPPORT_TYPES) ** 2)
    assert not any(r[10] for r in others)  # the model has no i4 or i64 RESCALE, as the spec says
    accepted = [r for r in rows if r[10]]
    refused = [r for r in rows if not r[10]]
    assert len(accepted) > 100 and len(refused) > 1000
    rank0 = [r for r in rows if r[5] == 0]
    assert rank0 and all(r[10] for r in rank0 if not r[4] and ours_legal(r))
    twins = {tuple(r[:4] + r[6:10]): r[10] for r in rank0 if not r[4]}
    only_rank = [r for r in rank0 if r[4] and twins[tuple(r[:4] + r[6:10])]]
    assert only_rank and all(not r[10] and "per_channel" in r[11] for r in only_rank)
    # every ERROR_IF rule is what refuses at least one recorded form
    hit = set()
    for r in refused:
        for rule in broken_rules(probe.config_of(probe.support_form(r))):
            hit.add(rule.name)
    assert hit == {r.name for r in RULES if r.kind == "ERROR_IF"}


def test_unsigned_i48_input_is_refused_as_the_model_refuses_it():
    """i48 input with input_unsigned: the model refuses every form, scale16 with SINGLE_ROUND
    and INEXACT_ROUND to i8 and i16 for that flag alone; `rescale_array` given --from i48
    and the flag (the support check's path) refuses them quoting the same rule."""
    rows = [r for r in MANIFEST["support"] if r[0] == "i48" and r[6]]
    assert rows and not any(r[10] for r in rows)
    alone = [r for r in rows if not r[2] and r[3] in ("single", "inexact") and r[1] in ("i8", "i16")
             and not r[7] and not r[4] and r[5] == 1 and not r[8] and not r[9]]
    assert sorted((r[1], r[3]) for r in alone) == sorted((o, m) for o in ("i8", "i16") for m in ("single", "inexact"))
    for row in alone:
        assert "unsigned int48" in row[11], row
        ours, why = probe.ours_accepts(probe.support_form(row))
        assert not ours and RULE["u48_input"].text in why, (row, why)


def ours_legal(row) -> bool:
    return probe.ours_accepts(probe.support_form(row))[0]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['id']}-{c['input']}-{c['output']}-{c['rounding']}")
def test_values_bit_exact_with_reference_model(case):
    x, expected = DATA[f"{case['id']}_in"], DATA[f"{case['id']}_out"]
    y = probe.ours(case, x)
    assert not isinstance(y, str), y
    assert y.dtype == STORAGE[case["output"]] and y.shape == x.shape
    bad = np.flatnonzero(y.reshape(-1) != expected.reshape(-1))
    assert bad.size == 0, (f"{bad.size} of {x.size} differ, e.g. input {x.reshape(-1)[bad[:3]].tolist()}: "
                           f"model {expected.reshape(-1)[bad[:3]].tolist()}, ours {y.reshape(-1)[bad[:3]].tolist()}")


def test_recorded_cases_cover_what_matters():
    by = lambda key: {c[key] for c in CASES}  # noqa: E731
    assert by("input") == {"i8", "u8", "i16", "u16", "i32", "i48"}
    assert by("output") == {"i8", "u8", "i16", "u16", "i32"}
    assert by("rounding") == {"single", "double", "inexact"} and by("scale32") == {True, False}
    shifts = {s for c in CASES for s in c["shift"]}
    assert {2, 30, 31, 32, 33, 40, 62} <= shifts
    assert any(c["per_channel"] for c in CASES)
    assert any(c["input_zp"] for c in CASES) and any(c["output_zp"] for c in CASES)
    # DOUBLE_ROUND cases where the model's answer differs from SINGLE_ROUND's
    assert sum(c.get("differs_from_single", 0) for c in CASES) > 50
    assert sum(c["count"] for c in CASES) > 100_000


@pytest.mark.parametrize("case", MANIFEST["unpredictable"], ids=lambda c: f"{c['id']}-{c['rule']}")
def test_values_the_model_finds_unpredictable_are_refused(case):
    """Values that break a REQUIRE: the model says UNPREDICTABLE (with INEXACT_ROUND it checks
    nothing and computes in float32; the spec's pseudocode still calls the helpers, so
    `promote` refuses those too)."""
    if case["rounding"] == "inexact":
        assert case["model"].startswith("valid: ")
    else:
        assert case["model"].startswith("graph status TOSA_UNPREDICTABLE")
    x = np.array(case["values"], dtype=STORAGE[case["input"]])
    with pytest.raises(RescaleError) as e:
        rescale_array(x, case["output"], case["multiplier"], case["shift"], input_zp=case["input_zp"],
                      output_zp=case["output_zp"], scale32=case["scale32"], rounding=case["rounding"],
                      from_=case["input"])
    assert e.value.rule.name == case["rule"]
    assert RULE[case["rule"]].text in str(e.value)


# --------------------------------------------------------------------------- kernel vs the spec's pseudocode


def _zero_point(rng, t, unsigned):
    """A zero point the spec allows: any 8-bit value, 32768 for u16, else 0."""
    if t == "i8":
        return int(rng.integers(*logical_range(t, unsigned), endpoint=True))
    return 32768 if (t, unsigned) == ("i16", True) else 0


def _random_case(rng):
    while True:
        i = str(rng.choice(["i8", "u8", "i16", "u16", "i32", "i48"]))
        o = str(rng.choice(["i8", "u8", "i16", "u16", "i32"]))
        scale32 = bool(rng.integers(2))
        rounding = str(rng.choice(["single", "double"]))
        (it, iu), (ot, ou) = LOGICAL[i], LOGICAL[o]
        izp = _zero_point(rng, it, iu)
        ozp = _zero_point(rng, ot, ou)
        cfg = Config(it, ot, scale32, rounding, True, iu, ou, izp, ozp, 2)
        if not broken_rules(cfg):
            return i, o, cfg


def _values_in_range(rng, i, cfg, mults, shifts, n):
    """Random logical inputs (dense near zero and at the edges) that break no REQUIRE."""
    lo, hi = logical_range(cfg.in_t, cfg.input_unsigned)
    if cfg.in_t == "i48":
        lo, hi = -(1 << 47), (1 << 47) - 1
    v = np.concatenate([rng.integers(lo, hi, n, endpoint=True), rng.integers(-300, 300, n), [lo, hi, 0]])
    v = np.clip(v, lo, hi)
    if cfg.scale32:
        s = min(shifts)
        v = np.clip(v, cfg.input_zp - (1 << (s - 1)), cfg.input_zp + (1 << (s - 1)) - 1)
    if not cfg.scale32:
        bound = min(((1 << 31) - 1 - abs(cfg.output_zp)) * (1 << s) // max(m, 1) for m, s in zip(mults, shifts))
        bound = min(bound, 1 << 62)  # the values are int64 (at most 2**47 here); numpy 2.0's clip takes int64 bounds
        v = np.clip(v, cfg.input_zp - bound, cfg.input_zp + bound)
    return v


@pytest.mark.parametrize("seed", range(60))
def test_kernel_equals_the_pseudocode(seed):
    rng = np.random.default_rng(seed)
    i, o, cfg = _random_case(rng)
    C = int(rng.integers(1, 6))
    top = 31 if cfg.scale32 else 15
    mults = [int(m) for m in rng.integers(0, 1 << top, C)]
    shifts = [int(s) for s in rng.integers(2, 63, C)]
    v = _values_in_range(rng, i, cfg, mults, shifts, 200)
    rows = -(-v.size // C)
    v = np.resize(v, rows * C)
    chans = [k % C for k in range(v.size)]
    want = ref.rescale_values(v.tolist(), chans, cfg, mults, shifts)
    x = v.astype(STORAGE[i]).reshape(rows, C)
    y, st = rescale_array(x, o, mults, shifts, input_zp=cfg.input_zp, output_zp=cfg.output_zp,
                          scale32=cfg.scale32, rounding=cfg.rounding, per_channel=True, from_=i)
    assert y.reshape(-1).astype(np.int64).tolist() == want
    lo, hi = logical_range(cfg.out_t, cfg.output_unsigned)
    assert st.elements == v.size
    assert st.saturated_low <= sum(w == lo for w in want) and st.saturated_high <= sum(w == hi for w in want)


@pytest.mark.parametrize("fortran", [False, True])
def test_any_chunking_gives_the_same_result(fortran):
    """The file driver hands `Plan.run` pieces at any element offset, in C or Fortran order."""
    rng = np.random.default_rng(3)
    shape = (7, 5, 3)
    x = rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32)
    mults, shifts = [1518500250, 1 << 30, 2000000000], [38, 33, 40]
    whole, st = rescale_array(x, "i8", mults, shifts, per_channel=True, rounding="double")
    plan = make_plan("i32", "i8", mults, shifts, rounding="double", per_channel=True, rank=3, channels=3)
    flat = np.asarray(x, order="F" if fortran else "C").reshape(-1, order="F" if fortran else "C")
    out = np.empty(flat.size, np.int8)
    total = None
    cuts = [0, 1, 4, 5, 17, 18, 40, 99, flat.size]
    for a, b in zip(cuts, cuts[1:]):
        s = plan.run(flat[a:b], out[a:b], a, shape, fortran)
        total = s if total is None else total + s
    got = out.reshape(shape, order="F" if fortran else "C")
    assert np.array_equal(got, whole)
    assert total.as_dict() == st.as_dict()


def test_double_round_differs_from_single_where_the_spec_says():
    # 3 * 2^30 / 2^33 = 0.375: single rounding gives 0; double rounding first rounds to 2^31 (0.5), then up
    x = np.array([3, -3, 11, 5], np.int32)
    single, _ = rescale_array(x, "i32", 1 << 30, 33)
    double, _ = rescale_array(x, "i32", 1 << 30, 33, rounding="double")
    assert single.tolist() == [ref.apply_scale_32(int(v), 1 << 30, 33) for v in x]
    assert double.tolist() == [ref.apply_scale_32(int(v), 1 << 30, 33, True) for v in x]
    assert single.tolist() != double.tolist()


def test_inexact_round_stays_within_the_spec_bound():
    for case in CASES:
        if case["rounding"] != "inexact":
            continue
        x, y = DATA[f"{case['id']}_in"], DATA[f"{case['id']}_out"]
        ot, ou = LOGICAL[case["output"]]
        lo, hi = logical_range(ot, ou)
        C = case["channels"]
        for k, (v, out) in enumerate(zip(x.reshape(-1).tolist(), y.reshape(-1).tolist())):
            ch = k % C
            a, b = ref.inexact_bounds(v - case["input_zp"], case["multiplier"][ch], case["shift"][ch],
                                      case["output_zp"], lo, hi)
            assert a <= out <= b, (case["id"], v, out, a, b)


# --------------------------------------------------------------------------- rules


def test_type_support_is_tosa_xml():
    assert set(SUPPORT) == {(i, o) for i in ("i8", "i16", "i32", "i48") for o in ("i8", "i16", "i32")}
    assert {p for p in SUPPORT.values()} == {"PRO-INT", "EXT-INT16"}


def test_every_refusal_quotes_its_rule():
    with pytest.raises(RescaleError, match=r"ERROR_IF\(input_unsigned && output_unsigned\);"):
        check_config(Config("i8", "i8", input_unsigned=True, output_unsigned=True))
    with pytest.raises(RescaleError, match=r"ERROR_IF\(scale32 && is_same<in_t,i48_t>\(\)\);"):
        check_config(Config("i48", "i8"))
    with pytest.raises(RescaleError, match=r"ERROR_IF\(!scale32 && \(rounding_mode == DOUBLE_ROUND\)\);"):
        check_config(Config("i8", "i8", scale32=False, rounding="double"))
    with pytest.raises(RescaleError, match=r"input_zp != 32768"):
        check_config(Config("i16", "i8", input_unsigned=True, input_zp=1))
    with pytest.raises(UsageError, match="input zero point 300 is not a u8 value"):
        check_config(Config("i8", "i8", input_unsigned=True, input_zp=300))
    with pytest.raises(UsageError, match="no output type i48"):
        check_config(Config("i8", "i48"))


def test_listing_has_every_pair_and_flag():
    rows = type_combinations()
    assert len(rows) == 8 * 6 * 6
    legal = {(r["from"], r["to"], r["scale32"], r["rounding"]) for r in rows if r["legal"]}
    assert ("u8", "i8", True, "double") in legal and ("i48", "i32", False, "inexact") in legal
    assert ("u8", "u8", True, "single") not in legal and ("i32", "u8", True, "single") not in legal
    assert all(r["rule"] for r in rows if not r["legal"])


def test_scales_checked():
    with pytest.raises(RescaleError, match=r"REQUIRE\(2 <= shift && shift <= 62\);"):
        rescale_array(np.zeros(3, np.int8), "i8", 1 << 30, 63)
    with pytest.raises(RescaleError, match=r"REQUIRE\(multiplier >= 0\);"):
        rescale_array(np.zeros(3, np.int8), "i8", -5, 30)
    with pytest.raises(UsageError, match="not an i16 value"):
        rescale_array(np.zeros(3, np.int8), "i8", 1 << 15, 14, scale32=False)
    with pytest.raises(UsageError, match="2 multiplier values given, 1 needed"):
        rescale_array(np.zeros(3, np.int8), "i8", [1, 2], [30, 30])
    with pytest.raises(UsageError, match="3 needed"):
        rescale_array(np.zeros((2, 3), np.int8), "i8", [1, 2], [30, 30], per_channel=True)
    with pytest.raises(RescaleError, match=r"per_channel && rank\(input\) < 1"):
        rescale_array(np.int8(3), "i8", [1], [30], per_channel=True)
    with pytest.raises(UsageError, match="--from i48"):
        rescale_array(np.zeros(3, np.int64), "i8", 1 << 14, 14, scale32=False)
    with pytest.raises(UsageError, match="not an i48 value"):
        rescale_array(np.array([1 << 50]), "i32", 1 << 14, 14, scale32=False, from_="i48")


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.75, 3.0, 1e-3, 0.0052, 2.0 ** -32, 4096.0, 1.9999999999])
@pytest.mark.parametrize("scale32", [True, False])
def test_normalize_scale(scale, scale32):
    m, s = normalize_scale(scale, scale32)
    base = 30 if scale32 else 14
    assert (1 << base) <= m < (1 << (base + 1))
    assert abs(m * 2.0 ** -s - scale) <= 2.0 ** -s / 2
    if scale == 1.0:
        assert (m, s) == (1 << base, base)


def test_normalize_scale_refuses_what_no_shift_reaches():
    with pytest.raises(RescaleError, match="shift"):
        normalize_scale(2.0 ** -40, scale32=True)
    with pytest.raises(UsageError):
        normalize_scale(-1.0)
