"""Every op recording (`tests/data/recordings/ops-*.json`, docs/recordings.md "Op recordings") agrees, case by
case, with its ruleset's op groups (docs/ops.md): the same result operand, form included, or a refusal where
the framework raised. A recording whose ruleset declares no op groups yet fails here: a recording comes into
the repository together with the rules that answer it. `tests/data/opgroups/ops-opsdemo.json` (NumPy 2.4.6's
answers for the ops of the test ruleset `opsdemo`) is checked the same way."""

from __future__ import annotations

import copy

import pytest
from support import ROOT

from promote_cli.oracle import registry
from promote_cli.probes.recordings import compare_ops, load_recording, run

OPS_DIR = ROOT / "tests" / "data" / "opgroups"
RECORDINGS = [*sorted((ROOT / "tests" / "data" / "recordings").glob("ops-*.json")), *sorted(OPS_DIR.glob("ops-*.json"))]


@pytest.fixture(autouse=True)
def rules_path(monkeypatch):
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(OPS_DIR))


#: a recording over 2 MB (NumPy's, JAX's, PyTorch's, TensorFlow's: 0.4 to 0.9 million cases, 20 s to 2 min each) is a
#: long check, behind the `slow` marker (`pytest -m slow`, which `.ci/run` runs)
CASES = [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.stat().st_size > 2_000_000 else [])
         for p in RECORDINGS]


@pytest.mark.parametrize("path", CASES)
def test_every_op_recording_agrees_with_its_rulesets_op_groups(path):
    data = load_recording(path)
    rs = registry.load(data["ruleset"])
    assert rs.opgroups, f"{rs.key} declares no op groups ([opgroups], docs/ops.md) for {path.name}"
    n, bad = compare_ops(data)
    assert n > 0
    assert not bad, f"{len(bad)} of {n} cases disagree, e.g.\n" + "\n".join(bad[:20])


def demo() -> dict:
    return load_recording(OPS_DIR / "ops-opsdemo.json")


#: TensorFlow's rows that need more than one promotion rule: tnp.clip of a Python scalar, a 4-bit or a float8 type
#: (np.result_type's sequence in off and legacy mode, the lattice's fold in safe and all), tnp.matmul (the lattice
#: only where both are on it), tf.where of Python scalars and matmul of bfloat16 with float32
SECOND_LOOK = {"tnp.matmul", "tf.where", "tf.linalg.matmul", "@"}
ODD_OPERANDS = {"py:int", "py:float", "py:bool", "i4", "u4", "f8e5m2", "bf16"}


def test_tensorflows_rows_of_more_than_one_promotion_agree_in_the_default_suite():
    data = load_recording(ROOT / "tests" / "data" / "recordings" / "ops-tensorflow.json")
    data["aliases"] = {}
    data["rows"] = [row for row in data["rows"] if row[0] in SECOND_LOOK
                    or row[0] == "tnp.clip" and ODD_OPERANDS & set(row[2]) and "bool" in row[2]]
    n, bad = compare_ops(data)
    assert n > 5000 and not bad, f"{len(bad)} of {n} cases disagree, e.g.\n" + "\n".join(bad[:20])


def test_a_changed_cell_an_unknown_op_and_a_missing_alias_disagree():
    data = copy.deepcopy(demo())
    row = next(r for r in data["rows"] if r[0] == "sum")
    row[3][data["axis"].index("i8")] = "0d:i32"
    data["rows"].append(["summit", 0, [], ["i8"] * len(data["axis"])])
    data["aliases"]["total"] = "sum"
    n, bad = compare_ops(data)
    assert "sum(i8): framework gives 0d:i32, ruleset gives 0d:i64" in bad
    assert sum(line.startswith("summit(") for line in bad) == len(data["axis"])
    assert "alias total of sum: the ruleset's op groups do not have it as sum's" in bad
    assert len(bad) == len(data["axis"]) + 2


def test_a_refusal_where_the_framework_answers_disagrees():
    data = copy.deepcopy(demo())
    row = next(r for r in data["rows"] if r[0] == "subtract" and r[2] == ["bool"])
    bool_index = data["axis"].index("bool")
    assert isinstance(row[3][bool_index], int)   # NumPy refuses bool - bool
    row[3][bool_index] = "bool"
    _, bad = compare_ops(data)
    assert bad == ["subtract(bool, bool): framework gives bool, ruleset gives a refusal (TypeError: numpy boolean "
                   "subtract, the `-` operator, is not supported)"]


def test_verify_compares_a_saved_op_recording():
    report = run("opsdemo", str(OPS_DIR / "ops-opsdemo.json"))
    assert report.agrees and report.checks[0][0] == "ops" and report.checks[0][1] > 3000
