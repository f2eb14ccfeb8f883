"""The routes a refused TOSA pair's hint names: chains of legal CASTs, the shortest, exact where a
shortest one is; for a type TOSA lacks, the way in or out through --mode extended; for the `tosa`
ruleset, the casts that make two operands meet. `legality.holds` (does a type keep every value of
another) is checked against what NumPy and ml_dtypes do to every value of the narrow types."""

from __future__ import annotations

import re
import textwrap
import warnings

import ml_dtypes  # noqa: F401
import numpy as np
import pytest

from promote_cli import query
from promote_cli.errors import RuleFileError, UsageError
from promote_cli.numerics import legality
from promote_cli.numerics.legality import EXTENDED_TYPES, LEGAL, TOSA_TYPES, check_pair, holds, meeting, route
from promote_cli.oracle.engine import answer
from promote_cli.oracle.loader import build
from promote_cli.vocab.numpy_types import numpy_dtype
from support import load_tool

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

#: types whose every value can be listed (all bit patterns)
ENUMERABLE = ("bool", "i8", "i16", "f16", "bf16", "f8e4m3", "f8e5m2", "u8", "u16")


def every_value(t: str) -> np.ndarray:
    dt = numpy_dtype(t)
    if t == "bool":
        return np.array([False, True])
    bits = np.arange(1 << (8 * dt.itemsize), dtype=np.int64).astype(f"u{dt.itemsize}")
    return bits.view(dt)


@pytest.mark.parametrize("src", ENUMERABLE)
def test_holds_is_what_a_round_trip_keeps(src):
    x = every_value(src)
    for dst in sorted(set(TOSA_TYPES) | {"u8", "u16", "u32", "f64"}):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            wide = x.astype(np.float64)
            there = x.astype(numpy_dtype(dst))
            back = there.astype(x.dtype).astype(np.float64)
            if dst == "bool" and src != "bool" or (numpy_dtype(dst).kind in "iu" and x.dtype.kind not in "biu"):
                kept = False  # bool keeps only 0 and 1; an integer type keeps no fraction, infinity or NaN
            else:
                same = (back == wide) | (np.isnan(wide) & np.isnan(back))
                exact = (there.astype(np.float64) == wide) | ~np.isfinite(wide)
                kept = bool(np.all(same) and np.all(exact))
        assert holds(dst, src) == kept, (src, dst)


def test_holds_of_wide_types_at_their_edges():
    assert holds("f32", "i16") and not holds("f32", "i32") and not holds("f16", "i16")
    assert holds("i64", "i32") and holds("f64", "i32") and not holds("f64", "i64")
    assert float(np.float32(2 ** 24 + 1)) != 2 ** 24 + 1  # the witness that f32 does not hold i32
    assert holds("f32", "bf16") and holds("f32", "f16") and not holds("bf16", "f16") and not holds("f16", "bf16")


def _shortest(src, dst):
    """Every shortest chain of legal casts, by brute force."""
    paths = [(src,)]
    while paths:
        done = [p for p in paths if p[-1] == dst]
        if done:
            return done
        paths = [p + (n,) for p in paths for n in TOSA_TYPES if (p[-1], n) in LEGAL and n not in p]
    return []


@pytest.mark.parametrize("src", TOSA_TYPES)
def test_routes_are_shortest_legal_and_exact_where_a_shortest_one_is(src):
    for dst in TOSA_TYPES:
        if src == dst or (src, dst) in LEGAL:
            continue
        path = route(src, dst)
        every = _shortest(src, dst)
        assert len(path) == len(every[0]) and all((a, b) in LEGAL for a, b in zip(path, path[1:]))
        if any(not legality.inexact_steps(p) for p in every):
            assert not legality.inexact_steps(path), (src, dst, path)
        assert "bool" not in path[1:-1]
        with pytest.raises(UsageError) as err:
            check_pair(src, dst)
        message = str(err.value)
        assert f"({' -> '.join(path)})" in message
        assert ("may change values" in message) == bool(legality.inexact_steps(path))


def test_the_routes_of_the_examples():
    assert route("bf16", "f16") == ("bf16", "f32", "f16")
    assert route("i64", "f8e4m3") == ("i64", "i32", "f32", "f8e4m3")
    with pytest.raises(UsageError, match=r"cast via i32 \(i64 -> i32 -> f16\), where i64 -> i32 may change values"):
        check_pair("i64", "f16")


@pytest.mark.parametrize("src, dst", [("f16", "i4"), ("f32", "u8"), ("f64", "f16"), ("f64", "i8"), ("u8", "f16"),
                                      ("i4", "bf16"), ("u16", "f32")])
def test_a_type_tosa_lacks_gets_a_way_through_tosa(src, dst):
    with pytest.raises(UsageError) as err:
        check_pair(src, dst)
    message = str(err.value)
    assert "use --mode extended" in message
    outside = src if src not in TOSA_TYPES else dst
    m = re.search(r"or cast (.+?) (?:with --mode extended \((exact|which may change values)(?:: [^)]+)?\) and then "
                  r"(.+) in TOSA|in TOSA and then (\w+) -> (\w+) with --mode extended \((exact|which may change "
                  r"values)(?:: [^)]+)?\))", message)
    assert m, message
    if outside == src:
        hop, exactness, inside = m.group(1).split(" -> "), m.group(2), m.group(3).split(" -> ")
        assert hop[0] == src and hop[1] == inside[0] and inside[-1] == dst
        assert (exactness == "exact") == holds(hop[1], src)
    else:
        inside, exactness = m.group(1).split(" -> "), m.group(6)
        assert inside[0] == src and (m.group(4), m.group(5)) == (inside[-1], dst) and holds(inside[-1], dst)
        assert exactness == ("exact" if holds(dst, inside[-1]) else "which may change values")
    assert all((a, b) in LEGAL for a, b in zip(inside, inside[1:]))
    assert all(t in EXTENDED_TYPES for t in (src, dst))


@pytest.mark.parametrize("src, dst, way, lost", [
    ("u64", "f16", ("cast u64 -> f32 with --mode extended (which may change values: integers beyond 16777216 in "
                   "magnitude) and then f32 -> f16 in TOSA"), "no TOSA type holds every u64 value"),
    ("u64", "i32", ("cast u64 -> i64 with --mode extended (which may change values: those above 9223372036854775807) "
                   "and then i64 -> i32 in TOSA"), "no TOSA type holds every u64 value"),
    ("i32", "u64", ("cast i32 -> i64 in TOSA and then i64 -> u64 with --mode extended (which may change values: those "
                   "below 0)"), "no TOSA type holds every u64 value"),
    ("f32", "u64", ("cast f32 -> i32 in TOSA and then i32 -> u64 with --mode extended (which may change values: "
                   "fractions, and values outside 0..18446744073709551615), where f32 -> i32 changes fractions, and "
                   "values outside -2147483648..2147483647"), "no TOSA type holds every u64 value"),
    # i64 holds every u32 value, but the way on from i64 to f16 passes i32: through f32 instead
    ("u32", "f16", ("cast u32 -> f32 with --mode extended (which may change values: integers beyond 16777216 in "
                   "magnitude) and then f32 -> f16 in TOSA"), "no way through TOSA keeps every u32 value"),
    ("u32", "i32", "cast u32 -> i64 with --mode extended (exact) and then i64 -> i32 in TOSA", None),
])
def test_a_foreign_type_no_tosa_type_holds_gets_the_nearest_way_and_what_it_changes(src, dst, way, lost):
    with pytest.raises(UsageError) as err:
        check_pair(src, dst)
    message = str(err.value)
    assert message.endswith(f"use --mode extended, or {way}"), message
    if lost:
        assert f"; {lost}: use --mode extended, or " in message
    else:
        assert "; use --mode extended, or " in message


@pytest.mark.parametrize("a, b, of, said", [
    ("u64", "i64", None, "those above 9223372036854775807"), ("i64", "u32", None, "those above 4294967295 and below 0"),
    ("u64", "f32", None, "integers beyond 16777216 in magnitude"), ("i8", "u8", None, "those below 0"),
    ("i32", "f16", None, "integers beyond 2048 in magnitude"), ("i64", "i32", "u32", "those above 2147483647"),
    ("f32", "i8", None, "fractions, and values outside -128..127"), ("i8", "bool", None, "every value but 0 and 1"),
    ("f32", "f16", None, "those f16 cannot hold exactly"), ("u8", "i16", None, ""), ("i64", "i32", "i16", ""),
])
def test_what_a_cast_changes_in_words(a, b, of, said):
    assert legality.changes(a, b, of) == said


def test_a_type_neither_mode_has_gets_no_route():
    with pytest.raises(UsageError) as err:
        check_pair("c64", "f32")
    assert str(err.value) == "TOSA CAST does not define c64 -> f32: TOSA has no c64 type"


# ---------------------------------------------------------------- the tosa ruleset


def _casts(refusal: str) -> list[list[str]]:
    return [r.split(" -> ") for r in re.search(r"insert CASTs (.+?)(?: \(|$)", refusal).group(1).split(" and ")]


def test_every_pair_no_single_cast_joins_names_casts_that_meet():
    for a in TOSA_TYPES:
        for b in TOSA_TYPES:
            if a == b or (a, b) in LEGAL or (b, a) in LEGAL:
                continue
            ans = query("tosa", a, b)
            assert ans.result is None and "no single TOSA CAST joins" in ans.refusal
            routes = _casts(ans.refusal)
            ends = {r[-1] for r in routes}
            starts = {r[0] for r in routes} | ends
            assert len(ends) == 1 and starts >= {a, b} - ends and {a, b} <= starts, (a, b, ans.refusal)
            assert all((x, y) in LEGAL for r in routes for x, y in zip(r, r[1:])), ans.refusal
            m, ra, rb = meeting(a, b)
            exact = holds(m, a) and holds(m, b)
            assert ("may change" in ans.refusal) == (not exact)


def test_the_tosa_rule_file_holds_what_the_tool_derives():
    assert load_tool("tosa_join").main(["--check"]) == 0
    assert "insert CASTs f16 -> f32 and bf16 -> f32" in query("tosa", "f16", "bf16").refusal


BASE = """
schema = 1
name = "demo"
version = "1"
types = ["i8", "u8", "u16"]
[tables.main]
commutative = true
reason = "demo does not promote {a} with {b}"
columns = ["i8", "u8", "u16"]
rows.i8  = ["i8",  "i16", "x"]
rows.u8  = ["i16", "u8",  "u16"]
rows.u16 = ["x",   "u16", "u16"]
[[rules]]
name = "table"
result = "table('main', a, b)"
"""


def test_a_table_cell_can_have_its_own_reason():
    rs = build(tomllib.loads(BASE.replace("i16", "u16") + textwrap.dedent("""
        [tables.main.reasons]
        "i8 u16" = "no {a} with {b}: widen to i32 first"
    """)), "demo.toml")
    assert answer(rs, "i8", "u16", "add", {}).refusal == "no i8 with u16: widen to i32 first"
    assert answer(rs, "u16", "i8", "add", {}).refusal == "no u16 with i8: widen to i32 first"  # commutative


@pytest.mark.parametrize("reasons, message", [
    ('"i8 u8" = "not refused"', "row i8, column u8 is not a refused cell"),
    ('"i8" = "one operand"', "two operands"),
    ('"i8 u16" = "{c}"', "unknown placeholder {c}"),
    ('"i8 i9" = "x"', "unknown dtype 'i9'"),
])
def test_a_cell_reason_is_checked_on_load(reasons, message):
    text = BASE.replace("i16", "u16") + f"[tables.main.reasons]\n{reasons}\n"
    with pytest.raises(RuleFileError) as err:
        build(tomllib.loads(text), "demo.toml")
    assert "tables.main.reasons" in str(err.value) and message in str(err.value)
