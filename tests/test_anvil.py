"""anvil: known and ambiguous types, checked against its page and against its code.

Two referees, neither typed by hand:
* the page's two tables (spec/anvil-type-promotion.md), parsed at test time by
  tools/import_spec_tables.py: the result dtype where a table applies;
* `common_dtype` below, a line-by-line transliteration of r-xla/anvil R/promotion.R:
  the result dtype and the ambiguity flag for every combination, including the
  both-ambiguous case that no table of the page shows.
Plus the worked examples the page prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import load_tool, spec_page

from promote_cli import query
from promote_cli.errors import UsageError
from promote_cli.vocab.dtypes import lookup

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "frameworks" / "anvil.md"

spec_tables = load_tool("import_spec_tables")
SPEC = spec_page(spec_tables.ANVIL_SPEC)
TYPES, KNOWN, AMBIGUOUS = spec_tables.anvil_tables(SPEC)
PAGE = SPEC.read_text(encoding="utf-8")


# ----------------------------------------------------------------- R/promotion.R, transliterated

@dataclass(frozen=True)
class RType:
    """stablehlo's dtype classes: BooleanType, IntegerType, UIntegerType, FloatType."""

    cls: str
    value: int = 0


def as_dtype(name: str) -> RType:
    if name in ("bool", "i1", "pred"):
        return RType("BooleanType")
    m = re.fullmatch(r"(ui|u|i|f)(\d+)", name)
    cls = {"i": "IntegerType", "ui": "UIntegerType", "u": "UIntegerType", "f": "FloatType"}[m[1]]
    return RType(cls, int(m[2]))


def canonical(t: RType) -> str:
    return {"BooleanType": "bool", "IntegerType": f"i{t.value}", "UIntegerType": f"u{t.value}",
            "FloatType": f"f{t.value}"}[t.cls]


def promote_dt_known(dt1: RType, dt2: RType) -> RType:
    if dt1 == dt2:
        return dt1
    if dt1.cls == "BooleanType":
        return dt2
    if dt2.cls == "BooleanType":
        return dt1
    if dt1.cls == "FloatType":
        if dt2.cls == "FloatType":
            return RType("FloatType", max(dt1.value, dt2.value))
        return dt1
    if dt2.cls == "FloatType":
        return dt2
    if dt1.cls == "IntegerType":
        if dt2.cls == "IntegerType":
            return RType("IntegerType", max(dt1.value, dt2.value))
        if dt2.value < dt1.value:
            return dt1
        return RType("IntegerType", min(64, dt2.value * 2))
    if dt2.cls == "IntegerType":
        if dt1.cls == "UIntegerType":
            if dt2.value > dt1.value:
                return dt2
            return RType("IntegerType", min(64, dt1.value * 2))
        raise AssertionError("internal error")
    return RType("UIntegerType", max(dt1.value, dt2.value))


def promote_dt_ambiguous_to_known(adtype: RType, dtype: RType) -> RType:
    if adtype.cls == "FloatType" and dtype.cls != "FloatType":
        return adtype
    if adtype.cls != "BooleanType" and dtype.cls == "BooleanType":
        return adtype
    return dtype


def common_dtype(lhs: str, rhs: str, lhs_ambiguous: bool = False, rhs_ambiguous: bool = False):
    """(dtype, ambiguous) as R's common_dtype() returns them."""
    lhs_dtype, rhs_dtype = as_dtype(lhs), as_dtype(rhs)
    if lhs_ambiguous and rhs_ambiguous:
        return canonical(promote_dt_known(lhs_dtype, rhs_dtype)), True
    if lhs_ambiguous:
        dt = promote_dt_ambiguous_to_known(lhs_dtype, rhs_dtype)
        return canonical(dt), dt == lhs_dtype and dt != rhs_dtype
    if rhs_ambiguous:
        dt = promote_dt_ambiguous_to_known(rhs_dtype, lhs_dtype)
        return canonical(dt), dt == rhs_dtype and dt != lhs_dtype
    return canonical(promote_dt_known(lhs_dtype, rhs_dtype)), False


# ----------------------------------------------------------------- helpers

def operand(dtype: str, ambiguous: bool) -> str:
    return f"weak:{dtype}" if ambiguous else dtype


COMBINATIONS = [(False, False), (False, True), (True, False), (True, True)]


# ----------------------------------------------------------------- the page

def test_page_tables_parsed():
    assert TYPES == ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"]
    assert len(KNOWN) == len(AMBIGUOUS) == 121
    assert spec_tables.is_commutative(TYPES, KNOWN)
    assert not spec_tables.is_commutative(TYPES, AMBIGUOUS)


def test_anvil_names_map_explicitly():
    for anvil_name, name in spec_tables.ANVIL_NAMES.items():
        assert lookup(anvil_name).name == name


# ----------------------------------------------------------------- every case

@pytest.mark.parametrize("la,lb", COMBINATIONS, ids=["known-known", "known-ambiguous", "ambiguous-known",
                                                     "ambiguous-ambiguous"])
def test_every_pair(la, lb):
    wrong = []
    for a in TYPES:
        for b in TYPES:
            dt, amb = common_dtype(a, b, la, lb)
            # the page's tables, where they apply
            if not la and not lb:
                page = KNOWN[a, b]
            elif la and not lb:
                page = AMBIGUOUS[a, b]
            elif lb and not la:
                page = AMBIGUOUS[b, a]
            else:
                page = KNOWN[a, b]  # "generally the same as if both were known": the code makes it exact
            assert page == dt, (a, b, la, lb)
            got = query("anvil", operand(a, la), operand(b, lb)).result
            if got != operand(dt, amb):
                wrong.append((operand(a, la), operand(b, lb), operand(dt, amb), got))
    assert not wrong


def test_ambiguity_flag_is_sometimes_dropped():
    """The flag rule: an ambiguous operand that meets its own type in a known one is not ambiguous."""
    expected = operand(*common_dtype("i32", "i32", True, False))
    assert query("anvil", "weak:i32", "i32").result == query("anvil", "i32", "weak:i32").result == expected
    assert not expected.startswith("weak:")
    assert query("anvil", "weak:i32", "weak:i32").result == operand(*common_dtype("i32", "i32", True, True))


@pytest.mark.parametrize("literal,position", [("py:int", 0), ("py:float", 1), ("py:bool", 2)])
def test_literals_are_ambiguous_defaults(literal, position):
    """R literals 1L, 1.0, TRUE: the page prints their default types (CPUi32, CPUf32, CPUpred)."""
    section = PAGE.split("Literals as Ambiguous Types", 1)[1].split("However", 1)[0]
    defaults = re.findall(r"CPU(\w+)\{\}", section)
    assert len(defaults) == 3
    default = lookup(defaults[position]).name
    assert query("anvil", literal, literal).result == f"weak:{default}"
    for t in TYPES:
        assert query("anvil", literal, t).result == operand(*common_dtype(default, t, True, False))


def test_complex_literals_do_not_exist():
    with pytest.raises(UsageError):
        query("anvil", "py:complex", "f32")


@pytest.mark.parametrize("dtype", ["f16", "bf16", "c64", "i4", "f8e4m3"])
def test_types_anvil_lacks(dtype):
    ans = query("anvil", dtype, "f32")
    assert ans.result is None and ans.refusal == f"anvil has no {dtype} type"


# ----------------------------------------------------------------- the page's worked examples

def _page_examples():
    """common_dtype(...) calls the page prints, with the dtype (and flag) it shows."""
    out = []
    pieces = re.split(r"(?=common_dtype\(\")", PAGE)
    for piece in pieces[1:]:
        call = re.match(r'common_dtype\("(\w+)", "(\w+)"(?:, (TRUE|FALSE), (TRUE|FALSE))?\)', piece)
        shown = re.search(r"<stablehlo::(\w+)Type>\s*## @ value: int (\d+)", piece)
        flag = re.search(r"\$ambiguous\s*## \[1\] (TRUE|FALSE)", piece)
        dtype = {"Float": "f", "Integer": "i", "UInteger": "u"}[shown[1]] + shown[2]
        la, lb = (call[3] == "TRUE", call[4] == "TRUE") if call[3] else (False, False)
        out.append((call[1], call[2], la, lb, dtype, None if flag is None else flag[1] == "TRUE"))
    return out


def test_page_examples_found():
    assert len(_page_examples()) == 5


@pytest.mark.parametrize("a,b,la,lb,dtype,flag", _page_examples())
def test_page_example(a, b, la, lb, dtype, flag):
    """The product prints what the page prints (where the page omits the flag, the code's flag)."""
    if flag is None:
        flag = common_dtype(a, b, la, lb)[1]
    assert query("anvil", operand(a, la), operand(b, lb)).result == operand(dtype, flag)


def test_page_propagation_example():
    """z <- x + 1L; z * y with x a known bool and y a known i16: the page prints CPUi16."""
    section = PAGE.split("Propagating Ambiguity", 1)[1]
    printed = lookup(re.findall(r"CPU(\w+)\{\}", section)[0]).name
    z = query("anvil", "bool", "py:int", op="add").result
    assert z == operand(*common_dtype("bool", "i32", False, True))
    assert query("anvil", z, "i16", op="mul").result == printed


def test_generated_block_is_fresh():
    assert spec_tables.main(["anvil", "--check", "--spec", str(SPEC)]) == 0


# ----------------------------------------------------------------- docs/frameworks/anvil.md

def test_doc_tables_are_the_page():
    tables = spec_tables.markdown_tables(DOC.read_text(encoding="utf-8"))
    corners = {"a \\ b": KNOWN, "ambiguous \\ known": AMBIGUOUS}
    seen = set()
    for header, body in tables:
        if header[0] in corners:
            assert header[1:] == TYPES
            assert {(row[0], b): c for row in body for b, c in zip(TYPES, row[1:])} == corners[header[0]]
            seen.add(header[0])
    assert seen == set(corners)
