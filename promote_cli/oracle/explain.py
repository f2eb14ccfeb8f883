"""`promote explain`: which rule of a ruleset decided a pair, what it consulted, and what other options give.

`explain(rs, a, b, op, options)` decides the pair again with a trace of its own (`Engine.decide(..., trace=)`,
no memo), so it sees the table cells and lattice joins the rule looked up, and the `[[after]]` clauses that
changed the result.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from promote_cli.errors import Refusal
from promote_cli.oracle import engine
from promote_cli.oracle.model import Clause, Lattice, Ruleset, json_value
from promote_cli.vocab import operands
from promote_cli.vocab.dtypes import DType


@dataclass
class Step:
    """One thing the decision consulted or applied, in order.

    kind "table": `name`, the cell (`row`, `column`) and its `value` (None: refused or absent);
    kind "lattice": `name`, the nodes of both operands (`row`, `column`), their join `value` and `path`, the
    edges from each node up to the join; kind "after": the `[[after]]` clause `name` changing `row` to `value`.
    """

    kind: str
    name: str
    row: str | None
    column: str | None
    value: str | None
    path: list[list[str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = {"kind": self.kind, "name": self.name}
        if self.kind == "after":
            data.update({"from": self.row, "to": self.value})
        else:
            data.update({"a": self.row, "b": self.column, "result": self.value})
        if self.kind == "lattice":
            data["paths"] = self.path
        return data


@dataclass
class Alternative:
    """The answer with one option changed."""

    option: str
    value: object  # as JSON: true/false, a number, a dtype's name, a choice
    result: str | None
    refusal: str | None

    def to_dict(self) -> dict:
        return {"option": self.option, "value": self.value, "result": self.result, "error": self.refusal}


@dataclass
class Explanation:
    framework: str
    version: str
    op: str
    op_group: str
    a: str
    b: str
    normalised: tuple[str, str]     # the operands as the rules see them (after the file's [operands] policy)
    operand_policy: list[str]       # how an operand's form was read, when it changed
    options: dict                   # every option's value, as JSON (true/false, numbers, names)
    result: str | None
    refusal: str | None
    reason: str
    rule: dict | None               # the [[rules]] clause that decided: name, ops, if, result/refuse, reason
    rule_result: str | None         # what that clause gave before the [[after]] clauses
    refused_by: dict | None         # the [[after]] clause that refused, if one did
    steps: list[Step]
    alternatives: list[Alternative]
    operands: list[str] | None = None  # an op group's operands (one to three); None for a pair of the rules

    def to_dict(self) -> dict:
        extra = {"operands": self.operands} if self.operands is not None else {}
        return {**extra, "framework": self.framework, "version": self.version, "op": self.op, "op_group": self.op_group,
                "a": self.a, "b": self.b, "normalised": list(self.normalised),
                "operand_policy": self.operand_policy, "options": self.options, "result": self.result,
                "error": self.refusal, "reason": self.reason, "rule": self.rule, "rule_result": self.rule_result,
                "refused_by": self.refused_by, "steps": [s.to_dict() for s in self.steps],
                "alternatives": [x.to_dict() for x in self.alternatives]}


def clause_dict(clause: Clause, section: str) -> dict:
    data = {"section": section, "name": clause.name}
    if clause.ops is not None:
        data["ops"] = sorted(clause.ops)
    if clause.cond is not None:
        data["if"] = clause.cond.text
    if clause.refuse is not None:
        data["refuse"] = clause.refuse
    if clause.result is not None:
        data["result"] = clause.result.text
    if clause.symmetric:
        data["symmetric"] = True
    return data


def lattice_path(lat: Lattice, start: str, goal: str) -> list[str]:
    """The shortest chain of edges from `start` up to `goal` (just [start] when they are the same node)."""
    previous = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for up in lat.edges.get(node, ()):
            if up not in previous:
                previous[up] = node
                queue.append(up)
    if goal not in previous:
        return [start, goal]
    path = [goal]
    while previous[path[-1]] is not None:
        path.append(previous[path[-1]])
    return path[::-1]


def _steps(rs: Ruleset, trace: list) -> list[Step]:
    out = []
    for kind, name, x, y, value in trace:
        if kind == "lattice":
            lat = rs.lattices[name]
            paths = [lattice_path(lat, n, value) for n in (x, y)] if value is not None and None not in (x, y) else []
            out.append(Step(kind, name, x, y, value, paths))
        else:
            out.append(Step(kind, name, x, y, None if value is None else str(value)))
    return out


def option_values(opt) -> list:
    """Every value of an option worth trying: both booleans, each choice, the dtypes it names, its hints."""
    if opt.type == "bool":
        return [False, True]
    seen, out = set(), []
    for v in (*opt.values, *opt.hint, opt.default):
        key = v.name if isinstance(v, DType) else v
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def explain(rs: Ruleset, a, b, op: str = "add", options: dict | None = None) -> Explanation:
    group = engine.resolve_op(rs, op)
    values = engine.parse_options(rs, options)
    a_in, b_in = (x if isinstance(x, operands.Operand) else operands.parse(x) for x in (a, b))
    shown = {k: json_value(v) for k, v in values.items()}
    base = dict(framework=rs.name, version=rs.version, op=op, op_group=group, a=str(a_in), b=str(b_in),
                options=shown)
    try:
        na, nb = engine.normalise(rs, a_in), engine.normalise(rs, b_in)
    except Refusal as exc:
        return Explanation(**base, normalised=(str(a_in), str(b_in)), operand_policy=[], result=None,
                           refusal=str(exc), reason=str(exc), rule={"section": "types", "name": "types"},
                           rule_result=None, refused_by=None, steps=[],
                           alternatives=_alternatives(rs, a_in, b_in, op, values))
    policy = [f"{x} is read as {n}" for x, n in ((a_in, na), (b_in, nb)) if str(x) != str(n)]
    decider = engine.engine(rs, values)
    before = decider.decide(op, na, nb, after=False)
    trace: list = []
    result, rule, reason, refusal = decider.decide(op, na, nb, trace=trace)
    refused = engine.value_refusal(rs, values, op, [a_in, b_in], result)
    if refused is not None:  # a Python int that does not fit, as `answer` refuses it
        result, refusal, reason = None, refused[0], refused[0]
    clauses = {c.name: c for c in rs.rules}
    afters = {c.name: c for c in rs.after}
    main = before[1]
    refused_by = None
    if refusal is not None and rule in afters and before[0] is not None:
        refused_by = clause_dict(afters[rule], "after")
    steps = _steps(rs, trace)
    return Explanation(**base, normalised=(str(na), str(nb)), operand_policy=policy,
                       result=str(result) if result is not None else None, refusal=refusal, reason=reason,
                       rule=clause_dict(clauses[main], "rules") if main in clauses else None,
                       rule_result=str(before[0]) if before[0] is not None else None, refused_by=refused_by,
                       steps=steps, alternatives=_alternatives(rs, a_in, b_in, op, values))


def _alternatives(rs: Ruleset, a, b, op: str, values: dict) -> list[Alternative]:
    out = []
    for name, opt in rs.options.items():
        for v in option_values(opt):
            current = values[name]
            if (v.name if isinstance(v, DType) else v) == (current.name if isinstance(current, DType) else current):
                continue
            ans = engine.answer(rs, a, b, op, {**values, name: v})
            out.append(Alternative(name, json_value(v), ans.result, ans.refusal))
    return out
