"""CANN aclnn: the documentation table (cann) and what PromoteType computes (cann@opbase).

Expected values come from the spec page, parsed here at test time by
tools/import_spec_tables.py, and from tests/data/recordings/cann-opbase.json, which
tools/record_cann_opbase.py derived from hicann/opbase's kPromoteTypesLookup.  No
result is typed by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "tests" / "data" / "recordings" / "cann-opbase.json"
DOC = ROOT / "docs" / "frameworks" / "cann.md"
OPBASE_RULES = ROOT / "rules" / "cann@opbase.toml"


from support import load_tool as _tool  # noqa: E402

spec_tables = _tool("import_spec_tables")
try:
    spec_tables.find_spec(spec_tables.CANN_SPEC if "cann" in __name__ else spec_tables.ANVIL_SPEC)
except spec_tables.SpecError as exc:  # a checkout without ../shared/spec: these tests read the spec page
    pytest.skip(str(exc), allow_module_level=True)
TYPES, TABLE = spec_tables.cann_table()
PAIRS = [(a, b) for a in TYPES for b in TYPES]


def _query():
    pytest.importorskip("promote_cli.oracle.engine")
    from promote_cli import query

    return query


from support import run_cli as _cli  # noqa: E402


def _recording() -> dict:
    data = json.loads(RECORDING.read_text(encoding="utf-8"))
    data["results"] = {(a, b): result for op, a, b, options, result, error in data["cases"]}
    return data


# ----------------------------------------------------------------- the spec page

def test_spec_table_shape_and_names():
    assert len(TYPES) == 16 and len(TABLE) == 256
    # every short name of the page maps explicitly, and onto distinct canonical names
    assert sorted(TYPES) == sorted(set(spec_tables.CANN_NAMES.values()))
    assert {"i8", "i16", "i32", "i64", "c32"} <= set(TYPES)
    assert spec_tables.is_commutative(TYPES, TABLE)


def test_short_names_are_the_page_note():
    """The page's note spells each short name out (ACL_INT8(s8)); the mapping agrees."""
    from promote_cli.vocab.dtypes import lookup

    text = spec_tables.find_spec(spec_tables.CANN_SPEC).read_text(encoding="utf-8")
    pairs = re.findall(r"(ACL\\?_\w+?)\\?\((\w+)\\?\)", text)
    assert len(pairs) == 16
    for acl, short in pairs:
        assert lookup(acl.replace("\\", "")).name == spec_tables.CANN_NAMES[short]


def test_every_cell():
    query = _query()
    wrong = []
    for a, b in PAIRS:
        ans = query("cann", a, b)
        if ans.result != TABLE[a, b]:
            wrong.append((a, b, TABLE[a, b], ans.result))
        if TABLE[a, b] is None:
            assert ans.refusal and "aclnn does not promote" in ans.refusal
    assert not wrong


@pytest.mark.parametrize("op", ["sub", "mul", "subtract", "multiply", "aclnnAdd", "aclnnMul", "+", "*"])
def test_ops_share_the_table(op):
    query = _query()
    assert all(query("cann", a, b, op=op).result == TABLE[a, b] for a, b in PAIRS)


def test_ops_the_page_does_not_cover():
    from promote_cli.errors import UsageError

    query = _query()
    for op in ("div", "matmul", "equal"):
        with pytest.raises(UsageError):
            query("cann", "f32", "f16", op=op)


def test_page_examples():
    """推导示例: 'one is float16, one is float32 ... converted to float32'."""
    query = _query()
    from promote_cli.vocab.dtypes import lookup

    text = spec_tables.find_spec(spec_tables.CANN_SPEC).read_text(encoding="utf-8")
    examples = re.findall(r"一个为(\w+)，一个为(\w+).*?转换成(\w+)的数据类型然后进行计算", text)
    assert len(examples) == 2
    for a, b, r in examples:
        a, b, r = (lookup(x).name for x in (a, b, r))
        assert query("cann", a, b).result == r
        assert query("cann", b, a).result == r


def test_rank0_is_a_tensor():
    query = _query()
    for a, b in [("0d:f16", "f32"), ("i8", "0d:u8"), ("0d:u16", "0d:i8")]:
        assert query("cann", a, b).result == TABLE[a.removeprefix("0d:"), b.removeprefix("0d:")]


@pytest.mark.parametrize("framework", ["cann", "cann@opbase"])
@pytest.mark.parametrize("a,b", [("py:int", "f32"), ("f16", "py:float"), ("weak:f32", "i8"), ("i8", "f32?")])
def test_python_scalars_and_weak_types_are_usage_errors(framework, a, b):
    from promote_cli.errors import UsageError

    query = _query()
    with pytest.raises(UsageError, match="aclnn has no rules for Python scalars or weak types"):
        query(framework, a, b)
    code, out, err = _cli("query", a, b, "-f", framework)
    assert code == 2 and out == "" and "aclnn has no rules for Python scalars" in err


@pytest.mark.parametrize("dtype", ["f8e4m3", "i4", "u4", "nf4", "f4e2m1"])
def test_types_the_table_lacks(dtype):
    query = _query()
    ans = query("cann", dtype, "f32")
    assert ans.result is None and dtype in ans.refusal and "no" in ans.refusal


def test_table_json_is_the_page():
    code, out, _ = _cli("table", "-f", "cann", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["types"] == TYPES
    assert data["matrix"] == [[TABLE[a, b] for b in TYPES] for a in TYPES]


def test_generated_block_is_fresh():
    assert spec_tables.main(["cann", "--check"]) == 0


# ----------------------------------------------------------------- cann@opbase

def test_recording_covers_every_ordered_pair():
    rec = _recording()
    assert rec["ruleset"] == "cann@opbase" and rec["package"] == "hicann/opbase"
    assert re.fullmatch(r"[0-9a-f]{40}", rec["version"])
    types = sorted({a for a, _ in rec["results"]})
    assert len(rec["cases"]) == len(rec["results"]) == len(types) ** 2
    assert set(TYPES) <= set(types)
    for op, a, b, options, result, error in rec["cases"]:
        assert op == "add" and options == {}
        assert (result is None) == (error is not None)


def _differences() -> list[tuple[str, str]]:
    """Cells of the page's 16 x 16 table where PromoteType answers differently."""
    rec = _recording()["results"]
    return [(a, b) for a, b in PAIRS if rec[a, b] != TABLE[a, b]]


def _order_dependent() -> list[tuple[str, str]]:
    rec = _recording()["results"]
    return sorted({tuple(sorted((a, b))) for (a, b), r in rec.items() if rec[b, a] != r})


def test_diff_lists_exactly_the_cells_that_differ():
    from promote_cli.vocab import dtypes

    rec = _recording()["results"]
    opbase_types = {a for a, _ in rec}
    union = [name for name in dtypes.DTYPES if name in opbase_types | set(TYPES)]
    expected = []
    for a in union:
        for b in union:
            doc = TABLE.get((a, b))          # a type the page lacks reads null
            impl = rec.get((a, b))
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


def test_opbase_notes_state_the_measured_figures():
    """The notes of cann@opbase quote the counts; they must be the measured ones."""
    import tomllib

    notes = " ".join(tomllib.loads(OPBASE_RULES.read_text(encoding="utf-8"))["notes"])
    rec = _recording()["results"]
    differing = _differences()
    assert f"{len(differing)} of the documentation table's 256 cells differ" in notes
    order = _order_dependent()
    assert f"{len(order)} pairs depend on operand order" in notes
    for a, b in order:
        unsigned, cplx = sorted((a, b), key=lambda t: t.startswith("c"))
        assert f"({unsigned}, {cplx})" in notes
        assert rec[unsigned, cplx] is not None and rec[cplx, unsigned] is None
    narrow = ("f8e5m2", "f8e4m3", "f8e8m0", "f4e2m1")
    zero = [(a, b) for (a, b), r in rec.items() if a != b and (a in narrow or b in narrow)]
    assert all(rec[p] == "f32" for p in zero)
    assert f"{len(zero)} ordered pairs of two different types lie outside" in notes


def test_opbase_diagonal_is_the_type_itself():
    rec = _recording()["results"]
    assert all(rec[a, a] == a for a, _ in rec)


def test_opbase_answers_like_its_recording_for_new_types():
    query = _query()
    rec = _recording()["results"]
    for a, b in [("f8e4m3", "c128"), ("bool", "f4e2m1"), ("i4", "i4"), ("i4", "i8"), ("u1", "f8e8m0")]:
        assert query("cann@opbase", a, b).result == rec[a, b]


# ----------------------------------------------------------------- docs/frameworks/cann.md

def test_doc_figures():
    """The doc's counts are the measured ones."""
    text = DOC.read_text(encoding="utf-8")
    assert f"**{len(_differences())}** of the page's 256 cells" in text
    assert f"**{len(_order_dependent())}** pairs depend on operand order" in text
    rec = _recording()
    assert rec["version"][:12] in text


def _doc_tables():
    return spec_tables.markdown_tables(DOC.read_text(encoding="utf-8"))


def test_doc_table_is_the_page():
    header, body = next(t for t in _doc_tables() if t[0][0] == "a \\ b")
    assert header[1:] == TYPES
    assert {(row[0], b): (None if cell == "×" else cell) for row in body for b, cell in zip(TYPES, row[1:])} == TABLE


def test_doc_differences_table_is_measured():
    header, body = next(t for t in _doc_tables() if t[0][:2] == ["a", "b"])
    rec = _recording()["results"]
    shown = [(a, b, None if d == "×" else d, None if o == "×" else o) for a, b, d, o in body]
    assert shown == [(a, b, TABLE[a, b], rec[a, b]) for a, b in _differences()]
