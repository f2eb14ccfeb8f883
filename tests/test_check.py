"""`promote check -f FW` and `promote_cli.check`: each property's counterexamples are exactly those the query API
gives, and a rule file's claims are judged (exit 1 when one does not hold)."""

from __future__ import annotations

import json
import textwrap
from itertools import product

import pytest

import promote_cli
from promote_cli.errors import RuleFileError, UsageError
from promote_cli.oracle import registry
from promote_cli.oracle.properties import fits
from promote_cli.vocab.dtypes import DTYPES
from support import run_cli

SHIPPED = [label for label in registry.labels() if "@" in label]


def _types(fw: str) -> list[str]:
    """The ruleset's types in its file's order (the order a check asks them in)."""
    return [d.name for d in registry.load(fw).types]


def _r(fw: str, a, b, op: str = "add"):
    return promote_cli.query(fw, a, b, op).result


def _finding(check, prop: str, op: str = "add", other=None):
    return next(f for f in check.findings if f.property == prop and f.op == op and f.other == other)


def test_cann_opbase_reports_exactly_its_order_dependent_pairs():
    types = _types("cann@opbase")
    want = [(a, b) for i, a in enumerate(types) for b in types[i + 1:] if _r("cann@opbase", a, b)
            != _r("cann@opbase", b, a)]
    code, out, err = run_cli("check", "-f", "cann@opbase", "--format", "json", "--limit", "100")
    data = json.loads(out)
    comm = next(p for p in data["properties"] if p["property"] == "commutative")
    assert code == 0 and err == "" and want
    assert comm["counterexamples"] == len(want) and not comm["holds"]
    assert [(e["a"], e["b"]) for e in comm["examples"]] == want
    assert all(e["ab"] == _r("cann@opbase", e["a"], e["b"]) and e["ba"] == _r("cann@opbase", e["b"], e["a"])
               for e in comm["examples"])
    code, out, _ = run_cli("check", "-f", "cann@opbase")
    assert f"add: commutative: no: {len(want)} of {len(types) * (len(types) - 1) // 2} pairs depend on the " \
           "operands' order" in out
    for a, b in want:
        assert f"{a} add {b} -> {_r('cann@opbase', a, b) or 'refused'}, {b} add {a} -> " \
               f"{_r('cann@opbase', b, a) or 'refused'}" in out or len(want) > 5


def test_associativity_counts_every_triple_that_groups_differently():
    fw = "cann"
    types = _types(fw)
    different = refused = 0
    for a, b, c in product(types, repeat=3):
        ab, bc = _r(fw, a, b), _r(fw, b, c)
        left = _r(fw, ab, c) if ab else None
        right = _r(fw, a, bc) if bc else None
        if left != right:
            if left is None or right is None:
                refused += 1
            else:
                different += 1
    f = _finding(promote_cli.check(fw), "associative")
    assert f.checked == len(types) ** 3 and f.count == different + refused and f.count
    assert f.kinds == {"different_results": different, "one_refused": refused}
    for e in f.examples:
        assert e["left"] == _r(fw, e["ab"], e["c"]) and e["right"] == _r(fw, e["a"], e["bc"]) != e["left"]


def test_lossy_results_are_those_that_cannot_hold_an_operand():
    fw = "openvino"
    types = _types(fw)
    want = set()
    for a, b in product(types, repeat=2):
        r = _r(fw, a, b)
        if r is not None and (fits(DTYPES[a], DTYPES[r]) or fits(DTYPES[b], DTYPES[r])):
            want.add((frozenset((a, b)), r))
    f = _finding(promote_cli.check(fw, limit=1000), "lossless")
    assert f.count == len(want) and {(frozenset((e["a"], e["b"])), e["result"]) for e in f.examples} == want
    for fw, a, b, r in [("cann", "i64", "f16", "f16"), ("numpy", "u64", "i64", "f64")]:
        found = {(frozenset((e["a"], e["b"])), e["result"]): e
                 for e in _finding(promote_cli.check(fw, op="add", limit=1000), "lossless").examples}
        lost = {x for x in (a, b) if fits(DTYPES[x], DTYPES[r])}
        assert _r(fw, a, b) == r and lost and set(found[frozenset((a, b)), r]["loses"]) == lost


def test_an_op_whose_results_are_all_bool_is_not_judged_lossy():
    f = _finding(promote_cli.check("tosa", op="equal"), "lossless", "equal")
    assert f.note and f.holds and f.checked == 0


def test_consistency_compares_each_op_with_add_on_tensors():
    fw = "numpy"
    types = _types(fw)
    want = [(a, b) for a, b in product(types, repeat=2) if _r(fw, a, b) != _r(fw, a, b, "promote_types")]
    f = _finding(promote_cli.check(fw, limit=3), "consistent", "add", "promote_types")
    assert f.count == len(want) and f.checked == len(types) ** 2 and want
    assert [(e["a"], e["b"]) for e in f.examples] == [
        (a, b) for a, b in want if _r(fw, a, b) is not None and _r(fw, a, b, "promote_types") is not None][:3]


def test_operand_forms_beyond_tensors():
    plain = promote_cli.check("jax", op="add")
    forms = promote_cli.check("jax", op="add", forms="all")
    assert len(plain.operands) == len(_types("jax")) and plain.forms == ["tensor"]
    assert "py:int" in forms.operands and "weak:i8" in forms.operands and "0d:i8" not in forms.operands
    assert forms.forms == ["tensor", "py", "weak"] and "0d" in forms.skipped_forms
    assert not forms.claims_checked and plain.claims == [] and not plain.claims_checked
    comm = _finding(forms, "commutative")
    assert comm.checked == len(forms.operands) * (len(forms.operands) - 1) // 2
    assert _finding(promote_cli.check("cann", forms="py"), "commutative").checked == 16 * 15 // 2
    with pytest.raises(UsageError, match="unknown operand form 'scalar'"):
        promote_cli.check("jax", forms="scalar")


@pytest.mark.parametrize("fw", SHIPPED)
def test_every_shipped_ruleset_claims_only_what_holds(fw):
    code, out, err = run_cli("check", "-f", fw)
    assert code == 0 and err == "", err
    rs = registry.load(fw)
    assert rs.claims and all(f"claim {k} = {str(v).lower()}: holds" in out for k, v in rs.claims.items())


def test_options_and_one_op_leave_the_claims_unjudged():
    code, out, _ = run_cli("check", "-f", "openvino", "-O", "promote_unsafe=true")
    assert code == 0 and "claims: not judged" in out and "options promote_unsafe=true" in out
    assert run_cli("check", "-f", "cann@opbase", "--op", "add")[1].splitlines()[-1].startswith("claims: not judged")


@pytest.fixture
def claiming(tmp_path, monkeypatch):
    """A ruleset whose left operand always wins, claiming what the test says."""

    def write(claims: str):
        (tmp_path / "leftwins.toml").write_text(textwrap.dedent(f"""\
            name = "leftwins"
            version = "1"
            types = ["i8", "i16", "f32"]
            {claims}
            [[rules]]
            name = "left"
            result = "a"
            """))
        monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
        monkeypatch.setenv("PROMOTE_CACHE_DIR", "")
        registry.clear_cache()
        return str(tmp_path / "leftwins.toml")
    yield write
    registry.clear_cache()


def test_a_claim_the_rules_contradict_exits_1(claiming):
    claiming("[claims]\ncommutative = true\nassociative = true\nlossless = true")
    code, out, err = run_cli("check", "-f", "leftwins")
    assert code == 1
    assert err == "promote: leftwins@1 claims commutative = true and lossless = true, which the rules contradict\n"
    assert "claim commutative = true: does not hold (3 counterexamples)" in out
    assert "claim associative = true: holds (0 counterexamples)" in out
    assert promote_cli.check("leftwins").broken[0].property == "commutative"


@pytest.mark.parametrize("claims, key", [
    ("[claims]\ncommutative = 1", "claims.commutative: expected true or false"),
    ("[claims]\nsymmetric = true", "claims.symmetric: unknown key"),
    ("claims = [1]", "claims: expected a table"),
])
def test_claims_are_validated_on_load(claiming, claims, key):
    path = claiming(claims)
    with pytest.raises(RuleFileError, match=key.replace(".", r"\.")):
        registry.load_path(path)
    code, out, _ = run_cli("validate", path)
    assert code == 2 and key in out


def test_the_cli_reports_the_api_error():
    with pytest.raises(UsageError) as caught:
        promote_cli.check("cnn")
    assert run_cli("check", "-f", "cnn") == (2, "", f"promote: {caught.value}\n")
    with pytest.raises(UsageError) as caught:
        promote_cli.check("cann", op="frob")
    assert run_cli("check", "-f", "cann", "--op", "frob") == (2, "", f"promote: {caught.value}\n")
    assert run_cli("check")[0] == 2


def test_text_and_json_say_the_same():
    code, out, _ = run_cli("check", "-f", "tosa", "--format", "json", "--limit", "2")
    data = json.loads(out)
    text = run_cli("check", "-f", "tosa", "--limit", "2")[1]
    assert data["ops"] == promote_cli.check("tosa").ops
    for p in data["properties"]:
        head = f"{p['op']} vs {p['other']}" if "other" in p else p["op"]
        if p.get("note"):
            assert f"{head}: {p['property']}: not judged" in text
        elif p["holds"]:
            assert f"{head}: {p['property']}: yes ({p['checked']} " in text
        else:
            assert f"{head}: {p['property']}: no: {p['counterexamples']} of {p['checked']} " in text
            assert len(p["examples"]) == min(2, p["counterexamples"])


def test_one_op_is_compared_with_every_other_op_group():
    found = promote_cli.check("numpy", op="+")
    assert found.ops == ["+"]
    assert [f.other for f in found.findings if f.property == "consistent"] == ["promote_types", "result_type"]
    assert {f.op for f in found.findings} == {"+"}


@pytest.mark.parametrize("fw", ["anvil", "jax"])
def test_results_outside_the_operands_are_asked_as_operands_too(fw):
    """With Python scalars, some results are weak (weak:i32), which are not among the operands; triples
    through them are still compared exactly."""
    found = promote_cli.check(fw, op="add", forms="py")
    operands = found.operands
    memo = {}

    def r(a, b):
        if (a, b) not in memo:
            memo[a, b] = promote_cli.query(fw, a, b).result
        return memo[a, b]

    outside = {r(a, b) for a, b in product(operands, repeat=2)} - set(operands) - {None}
    assert "py:int" in operands and "weak:i32" in outside
    different = refused = 0
    for a, b, c in product(operands, repeat=3):
        ab, bc = r(a, b), r(b, c)
        left = r(ab, c) if ab else None
        right = r(a, bc) if bc else None
        if left != right:
            refused += left is None or right is None
            different += left is not None and right is not None
    f = _finding(found, "associative")
    assert f.kinds == {"different_results": different, "one_refused": refused}
    assert f.count == different + refused and (f.count or fw == "anvil")


@pytest.mark.parametrize("args, needle", [
    (["-f", "cann", "--forms", "scalar"], "unknown operand form 'scalar'"),
    (["-f", "cann", "--limit", "-1"], "--limit"),
    (["-f", "cann", "-O", "x=1"], "no option 'x'"),
    (["-f", "cann", "-O", "x"], "KEY=VALUE"),
    (["-f", "cann", "--format", "csv"], "csv"),
    (["-f", "cann", "--op", "frob"], "no op 'frob'"),
])
def test_usage_errors_are_one_line_exit_2(args, needle):
    code, out, err = run_cli("check", *args)
    assert code == 2 and out == "" and needle in err and len(err.splitlines()) == 1


def test_the_opbase_notes_count_the_pairs_the_check_finds():
    import re

    rs = registry.load("cann@opbase")
    stated = [int(m.group(1)) for note in rs.notes for m in [re.match(r"(\d+) pairs depend on operand order", note)]
              if m]
    assert stated == [_finding(promote_cli.check("cann@opbase"), "commutative").count]


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """Write tiny rule files (NAME -> (types, result)) on PROMOTE_RULES_PATH."""
    def write(**files):
        for name, (types, result) in files.items():
            (tmp_path / f"{name}.toml").write_text(f'name = "{name}"\nversion = "1"\ntypes = {json.dumps(types)}\n'
                                                   f'[[rules]]\nname = "r"\nresult = "{result}"\n')
        monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
        registry.clear_cache()
    yield write
    registry.clear_cache()


def test_counts_of_one_are_said_in_english(tiny):
    """Not `1 operands`, `1 pairs`, `1 triples`, `1 of 1 results cannot hold`."""
    tiny(one=(["i8"], "a"), lossy=(["i8", "u8"], "u8"))
    out = run_cli("check", "-f", "one")[1].splitlines()
    assert out[:4] == ["one@1: 1 operand (tensors); ops add; options none", "add: commutative: yes (0 pairs)",
                       "add: associative: yes (1 triple)", "add: lossless: yes (1 result)"]
    out = run_cli("check", "-f", "lossy")[1]
    assert "add: commutative: yes (1 pair)" in out
    assert "add: lossless: no: 2 of 3 results cannot hold every value of both operands exactly" in out
