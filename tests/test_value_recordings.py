"""Every value recording (`tests/data/recordings/values/*.json`: each dtype's array with each value operand of
`probes.cases.VALUES`, both orders, as the installed framework answered) agrees, case by case, with what
`promote query` answers; and each holds every value for every dtype its probe asks."""

from __future__ import annotations

import copy
import importlib

import pytest
from support import ROOT

from promote_cli.probes import cases as operand_cases
from promote_cli.probes.opcases import PLACE, cases
from promote_cli.probes.recordings import compare_ops, load_recording, run

RECORDINGS = sorted((ROOT / "tests" / "data" / "recordings" / "values").glob("*.json"))


def test_there_are_value_recordings():
    assert {p.name for p in RECORDINGS} >= {"numpy.json"}


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_every_value_case_agrees_with_the_ruleset(path):
    data = load_recording(path)
    assert data["kind"] == "values"
    n, bad = compare_ops(data)
    assert n > 1000 and not bad, f"{len(bad)} of {n} cases disagree, e.g.\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_a_value_recording_asks_every_value_of_every_type_both_ways(path):
    data = load_recording(path)
    probe = importlib.import_module(data["probe"])
    types = list(getattr(probe, "VALUE_TYPES", None) or probe.TYPES)
    assert data["axis"] == operand_cases.values_for(types)
    for index in range(len(data["options"])):
        for op in {row[0] for row in data["rows"]}:
            asked = [tuple(row[2]) for row in data["rows"] if row[1] == index and row[0] == op]
            assert sorted(asked) == sorted([*((t, PLACE) for t in types), *((PLACE, t) for t in types)]), (op, index)


def test_a_changed_value_cell_disagrees():
    data = copy.deepcopy(load_recording(ROOT / "tests" / "data" / "recordings" / "values" / "numpy.json"))
    at = data["axis"].index("py:300")
    row = next(r for r in data["rows"] if r[2] == ["i8", PLACE] and r[0] == "add")
    row[3][at] = "i16"  # NumPy 1's value-based answer, not NumPy 2's OverflowError
    n, bad = compare_ops(data)
    assert bad == ["add(i8, py:300): framework gives i16, ruleset gives a refusal (OverflowError: Python integer 300 "
                   "out of bounds for int8)"]


def test_the_cases_put_the_value_where_the_row_says():
    data = {"kind": "values", "axis": ["py:1", "py:300"], "options": [{}], "messages": ["too big"],
            "rows": [["add", 0, ["i8", PLACE], ["i8", 0]], ["add", 0, [PLACE, "i8"], ["i8", 0]]]}
    assert list(cases(data)) == [("add", ["i8", "py:1"], {}, "i8", None), ("add", ["i8", "py:300"], {}, None, "too big"),
                                 ("add", ["py:1", "i8"], {}, "i8", None), ("add", ["py:300", "i8"], {}, None, "too big")]


def test_verify_takes_a_saved_value_recording():
    report = run("numpy", str(ROOT / "tests" / "data" / "recordings" / "values" / "numpy.json"))
    assert report.agrees and report.checks[0][0] == "values" and report.checks[0][1] > 1000
