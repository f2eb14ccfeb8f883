"""CANN aclnn: the documentation table (cann) and what PromoteType computes (cann@opbase).

Expected values come from the spec page, parsed here at test time by
tools/import_spec_tables.py, and from tests/data/derived/cann-opbase.json, which
tools/derive_cann_opbase.py derived from hicann/opbase's kPromoteTypesLookup.  No
result is typed by hand.

The repository does not hold the page (spec/README.md says why): the tests that read
it take the `page` fixture and skip, naming it, where it is absent; the others run.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support import load_tool, outside_spec_page
from support import run_cli as _cli

from promote_cli import query
from promote_cli.errors import UsageError
from promote_cli.vocab import dtypes
from promote_cli.vocab.dtypes import lookup

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DERIVED = ROOT / "tests" / "data" / "derived" / "cann-opbase.json"
DOC = ROOT / "docs" / "frameworks" / "cann.md"
OPBASE_RULES = ROOT / "rules" / "cann@opbase.toml"

spec_tables = load_tool("import_spec_tables")


class Page:
    """The aclnn page: its text, its types in page order, its table (None for ×)."""

    def __init__(self, path: Path):
        self.path = path
        self.text = path.read_text(encoding="utf-8")
        self.types, self.table = spec_tables.cann_table(path)
        self.pairs = [(a, b) for a in self.types for b in self.types]


@pytest.fixture(scope="module")
def page() -> Page:
    return Page(outside_spec_page(spec_tables.CANN_SPEC))


def _derived() -> dict:
    data = json.loads(DERIVED.read_text(encoding="utf-8"))
    data["results"] = {(a, b): result for op, a, b, options, result, error in data["cases"]}
    return data


# ----------------------------------------------------------------- the spec page

def test_spec_table_shape_and_names(page):
    assert len(page.types) == 16 and len(page.table) == 256
    # every short name of the page maps explicitly, and onto distinct canonical names
    assert sorted(page.types) == sorted(set(spec_tables.CANN_NAMES.values()))
    assert {"i8", "i16", "i32", "i64", "c32"} <= set(page.types)
    assert spec_tables.is_commutative(page.types, page.table)


def test_short_names_are_the_page_note(page):
    """The page's note spells each short name out (ACL_INT8(s8)); the mapping agrees."""
    pairs = re.findall(r"(ACL\\?_\w+?)\\?\((\w+)\\?\)", page.text)
    assert len(pairs) == 16
    for acl, short in pairs:
        assert lookup(acl.replace("\\", "")).name == spec_tables.CANN_NAMES[short]


def test_every_cell(page):
    wrong = []
    for a, b in page.pairs:
        ans = query("cann", a, b)
        if ans.result != page.table[a, b]:
            wrong.append((a, b, page.table[a, b], ans.result))
        if page.table[a, b] is None:
            assert ans.refusal and "aclnn does not promote" in ans.refusal
    assert not wrong


@pytest.mark.parametrize("op", ["sub", "mul", "subtract", "multiply", "aclnnAdd", "aclnnMul", "+", "*"])
def test_ops_share_the_table(page, op):
    assert all(query("cann", a, b, op=op).result == page.table[a, b] for a, b in page.pairs)


def test_ops_the_page_does_not_cover():
    for op in ("div", "matmul", "equal"):
        with pytest.raises(UsageError):
            query("cann", "f32", "f16", op=op)


def test_page_examples(page):
    """推导示例: 'one is float16, one is float32 ... converted to float32'."""
    examples = re.findall(r"一个为(\w+)，一个为(\w+).*?转换成(\w+)的数据类型然后进行计算", page.text)
    assert len(examples) == 2
    for a, b, r in examples:
        a, b, r = (lookup(x).name for x in (a, b, r))
        assert query("cann", a, b).result == r
        assert query("cann", b, a).result == r


def test_rank0_is_a_tensor(page):
    for a, b in [("0d:f16", "f32"), ("i8", "0d:u8"), ("0d:u16", "0d:i8")]:
        assert query("cann", a, b).result == page.table[a.removeprefix("0d:"), b.removeprefix("0d:")]


@pytest.mark.parametrize("framework", ["cann", "cann@opbase"])
@pytest.mark.parametrize("a,b", [("py:int", "f32"), ("f16", "py:float"), ("weak:f32", "i8"), ("i8", "f32?")])
def test_python_scalars_and_weak_types_are_usage_errors(framework, a, b):
    with pytest.raises(UsageError, match="aclnn has no rules for Python scalars or weak types"):
        query(framework, a, b)
    code, out, err = _cli("query", a, b, "-f", framework)
    assert code == 2 and out == "" and "aclnn has no rules for Python scalars" in err


@pytest.mark.parametrize("dtype", ["f8e4m3", "i4", "u4", "nf4", "f4e2m1"])
def test_types_the_table_lacks(dtype):
    ans = query("cann", dtype, "f32")
    assert ans.result is None and dtype in ans.refusal and "no" in ans.refusal


def test_table_json_is_the_page(page):
    code, out, _ = _cli("table", "-f", "cann", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["types"] == page.types
    assert data["matrix"] == [[page.table[a, b] for b in page.types] for a in page.types]


def test_generated_block_is_fresh(page):
    assert spec_tables.main(["cann", "--check", "--spec", str(page.path)]) == 0


# ----------------------------------------------------------------- cann@opbase

def test_derived_answers_cover_every_ordered_pair():
    data = _derived()
    assert data["ruleset"] == "cann@opbase" and data["package"] == "hicann/opbase"
    assert re.fullmatch(r"[0-9a-f]{40}", data["version"])
    types = sorted({a for a, _ in data["results"]})
    assert len(data["cases"]) == len(data["results"]) == len(types) ** 2
    for op, a, b, options, result, error in data["cases"]:
        assert op == "add" and options == {}
        assert (result is None) == (error is not None)


def test_derived_answers_cover_the_pages_types(page):
    assert set(page.types) <= {a for a, _ in _derived()["results"]}


def _differences(page: Page) -> list[tuple[str, str]]:
    """Cells of the page's 16 x 16 table where PromoteType answers differently."""
    derived = _derived()["results"]
    return [(a, b) for a, b in page.pairs if derived[a, b] != page.table[a, b]]


def _order_dependent() -> list[tuple[str, str]]:
    derived = _derived()["results"]
    return sorted({tuple(sorted((a, b))) for (a, b), r in derived.items() if derived[b, a] != r})


def test_diff_lists_exactly_the_cells_that_differ(page):
    derived = _derived()["results"]
    opbase_types = {a for a, _ in derived}
    union = [name for name in dtypes.DTYPES if name in opbase_types | set(page.types)]
    expected = []
    for a in union:
        for b in union:
            doc = page.table.get((a, b))          # a type the page lacks reads null
            impl = derived.get((a, b))
            if doc != impl:
                expected.append({"a": a, "b": b, "cann": doc, "cann@opbase": impl})
    code, out, _ = _cli("table", "--diff", "cann", "cann@opbase", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["frameworks"] == ["cann", "cann@opbase"]
    key = lambda d: (d["a"], d["b"])  # noqa: E731
    assert sorted(data["differences"], key=key) == sorted(expected, key=key)
    code, _, _ = _cli("table", "--diff", "cann", "cann@opbase", "--exit-code", "--format", "json")
    assert code == 1


def _opbase_notes() -> str:
    return " ".join(tomllib.loads(OPBASE_RULES.read_text(encoding="utf-8"))["notes"])


def test_opbase_notes_state_the_measured_differences(page):
    """The notes of cann@opbase quote the counts; they must be the measured ones."""
    assert f"{len(_differences(page))} of the documentation table's 256 cells differ" in _opbase_notes()


def test_opbase_notes_state_the_order_dependent_and_zero_filled_pairs():
    notes = _opbase_notes()
    derived = _derived()["results"]
    order = _order_dependent()
    assert f"{len(order)} pairs depend on operand order" in notes
    for a, b in order:
        unsigned, cplx = sorted((a, b), key=lambda t: t.startswith("c"))
        assert f"({unsigned}, {cplx})" in notes
        assert query("cann@opbase", unsigned, cplx).result == derived[unsigned, cplx] is not None
        assert query("cann@opbase", cplx, unsigned).result is derived[cplx, unsigned] is None
    narrow = ("f8e5m2", "f8e4m3", "f8e8m0", "f4e2m1")
    zero = [(a, b) for (a, b) in derived if a != b and (a in narrow or b in narrow)]
    assert {query("cann@opbase", a, b).result for a, b in zero} == {"f32"}
    assert f"{len(zero)} ordered pairs of two different types lie outside" in notes


def test_opbase_diagonal_is_the_type_itself():
    """PromoteType returns type_a when both types are equal, whatever the table's diagonal holds."""
    types = sorted({a for a, _ in _derived()["results"]})
    assert [query("cann@opbase", a, a).result for a in types] == types


def test_opbase_answers_like_its_derived_answers_for_new_types():
    derived = _derived()["results"]
    for a, b in [("f8e4m3", "c128"), ("bool", "f4e2m1"), ("i4", "i4"), ("i4", "i8"), ("u1", "f8e8m0")]:
        assert query("cann@opbase", a, b).result == derived[a, b]


# ----------------------------------------------------------------- docs/frameworks/cann.md

def _doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_doc_figures_from_the_derived_answers():
    """The doc's counts and version are the measured ones."""
    text = _doc_text()
    assert f"**{len(_order_dependent())}** pairs depend on operand order" in text
    assert _derived()["version"][:12] in text


def test_doc_figure_of_differing_cells(page):
    assert f"**{len(_differences(page))}** of the page's 256 cells" in _doc_text()


def _doc_tables():
    return spec_tables.markdown_tables(_doc_text())


def test_doc_table_is_the_page(page):
    header, body = next(t for t in _doc_tables() if t[0][0] == "a \\ b")
    assert header[1:] == page.types
    shown = {(row[0], b): (None if cell == "×" else cell) for row in body for b, cell in zip(page.types, row[1:])}
    assert shown == page.table


def test_doc_differences_table_is_measured(page):
    header, body = next(t for t in _doc_tables() if t[0][:2] == ["a", "b"])
    derived = _derived()["results"]
    shown = [(a, b, None if d == "×" else d, None if o == "×" else o) for a, b, d, o in body]
    assert shown == [(a, b, page.table[a, b], derived[a, b]) for a, b in _differences(page)]
