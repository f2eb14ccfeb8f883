"""docs/ops.md "How frameworks differ": every cell of its table is what `promote query` answers (the op
groups agree with the frameworks' op recordings, tests/test_op_rules.py), so each cell is a tested example."""

from __future__ import annotations

import re

import pytest
from support import ROOT

import promote_cli

CELL = re.compile(r"^`(?P<op>[^`]+)` → (?P<result>\S+)$")


def table_cells() -> list[tuple[str, str, list[str], str]]:
    """(framework, op, operands, expected result or 'refused') for each cell of the table."""
    text = (ROOT / "docs" / "ops.md").read_text(encoding="utf-8")
    section = text.split("## How frameworks differ", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|")]
    head, body = rows[0], rows[2:]
    frameworks = [h.strip("`") for h in head[2:]]
    cells = []
    for row in body:
        operands = row[1].split()
        for framework, cell in zip(frameworks, row[2:]):
            m = CELL.match(cell)
            assert m, f"cell {cell!r} is not `OP` → RESULT"
            cells.append((framework, m["op"], operands, m["result"]))
    return cells


CELLS = table_cells()


def test_the_table_compares_the_frameworks_on_ten_ops_or_more():
    assert len({(op, tuple(operands)) for _, op, operands, _ in CELLS}) >= 10
    assert {"numpy", "torch"} <= {fw for fw, *_ in CELLS}


@pytest.mark.parametrize(("framework", "op", "operands", "expected"), CELLS,
                         ids=[f"{fw}-{op}-{'-'.join(o)}" for fw, op, o, _ in CELLS])
def test_each_cell_is_what_promote_answers(framework, op, operands, expected):
    ans = promote_cli.query_n(framework, operands, op)
    got = ans.result.split(":")[-1] if ans.result else "refused"
    assert got == expected, (framework, op, operands, ans.refusal)
