"""A framework's ops by its own names (`[opgroups]`, docs/ops.md): one op over one to three operands.

    answer(rs, "sum", ["i8"]) -> Answer        numpy's np.sum of an int8 array: 0d:i64
    answer(rs, "/", ["i8", "u8"]) -> Answer    what `promote expr "x:i8 / y:u8"` gives

A group starts from its `operator`'s answer (the `[expressions.operators]` block evaluated as `promote expr`
evaluates it, so a query and an expression agree), from `promote`'s (a ruleset op, or another group's op,
over the operands `args` names), or from the first operand; `refuse_if` may refuse and `result` gives the
op's dtype; `rank` says its form (`keep`: 0-d when every array operand is, `zero`: 0-d, `tensor`, `contract`),
and `zero_if` where it holds makes it 0-d whatever `rank` says.
"""

from __future__ import annotations

from promote_cli.errors import Refusal, RuleDefect, UsageError
from promote_cli.oracle import engine
from promote_cli.oracle.model import OpGroup, Ruleset
from promote_cli.vocab import operands as operand_grammar
from promote_cli.vocab import operators
from promote_cli.vocab.dtypes import DType
from promote_cli.vocab.operands import PYTHON, RANK0, TENSOR, WEAK, Operand

NAMES = ("a", "b", "c")
VARIABLES = ("x", "y", "z")


def group_of(rs: Ruleset, op: str) -> OpGroup:
    """The op group of an op name or alias; UsageError naming the closest ops the ruleset has."""
    name = rs.op_names.get(op)
    if name is None:
        engine.resolve_op(rs, op)  # a pair op is no group's: UsageError with the closest names when unknown
        raise UsageError(f"{rs.key}: {op!r} is an op of its promotion rules, not of an op group")
    return rs.opgroups[name]


def canonical(group: OpGroup, op: str) -> str:
    """The group's own name of an op (an alias's target)."""
    return group.aliases.get(op, op)


def answer(rs: Ruleset, op: str, operand_list, options: dict | None = None, hint: bool = True) -> engine.Answer:
    """The answer of op `op` of ruleset `rs` for its operands (an `Answer`; `result_operand` keeps a 0-d
    result's form, `result` shows it as its dtype, as a pair answer does); with `hint`, a refusal's hint (the
    option change under which it answers: the op is asked again)."""
    group = group_of(rs, op)
    given = [x if isinstance(x, Operand) else operand_grammar.parse(x) for x in operand_list]
    if len(given) != group.arity:
        raise UsageError(f"{op} ({rs.key} op group {group.name}) takes {group.arity} operand"
                         f"{'s' if group.arity != 1 else ''}, not {len(given)}")
    values = engine.parse_options(rs, options)
    shown = {k: v.name if isinstance(v, DType) else v for k, v in values.items()}
    names = tuple(str(x) for x in given)
    base = dict(framework=rs.name, version=rs.version, op=op, a=names[0], b=names[1] if len(names) > 1 else "",
                options=shown, operands=names)
    memo = engine.engine(rs, values).memo  # the group's decision, once per canonical op and operands
    key = ("opgroups", group.name, canonical(group, op), names)
    decided = memo.get(key)
    if decided is None:
        try:
            decided = memo[key] = _decide(rs, group, canonical(group, op), given, values, options)
        except Refusal as exc:
            decided = memo[key] = (None, getattr(exc, "rule", group.name), str(exc))
    result, rule, reason = decided
    if result is None:
        return engine.Answer(**base, result=None, rule=rule, reason=reason, refusal=reason,
                             hint=_hint(rs, group, canonical(group, op), given, values) if hint else None)
    return engine.Answer(**base, result=str(_shown(result)), rule=rule, reason=reason, result_operand=result)


def _hint(rs: Ruleset, group: OpGroup, op: str, given: list[Operand], values: dict) -> dict | None:
    """A refused op's hint, as a pair answer's: the first single option change under which it answers."""
    def decide(other: engine.Engine):
        shown = {name: rs.options[name].show(value) for name, value in other.values.items()}
        try:
            return _shown(_decide(rs, group, op, given, other.values, shown)[0])
        except Refusal:
            return None

    return engine.engine(rs, values).hint(decide)


def _decide(rs: Ruleset, group: OpGroup, op: str, given: list[Operand], values: dict, options):
    """(result operand with its form, rule, reason); Refusal (with `.rule`) when the op refuses."""
    normal = []
    for x in given:
        try:
            normal.append(engine.normalise(rs, x))
        except Refusal as exc:
            raise _refusal(str(exc), "types") from None
    rule, reason = f"opgroups.{group.name}", group.doc
    if group.operator is not None:
        start, step_rule = _operator(rs, group, given, options)
        rule = f"{rule} (operator {group.operator}: {step_rule})"
    elif group.promote is not None or group.via is not None:
        picked = [_arg(rs, group, arg, given, values) for arg in group.args]
        if group.via is not None:
            got, how = answer(rs, group.via, picked, options), f"via {group.via}"
        elif len(picked) == 2:
            got, how = engine.answer(rs, picked[0], picked[1], group.promote, options), f"promote {group.promote}"
        else:
            got, how = engine.answer_n(rs, picked, group.promote, options), f"promote {group.promote}"
        if got.refused:
            raise _refusal(got.refusal, f"{rule} ({how}: {got.rule})")
        start = got.result_operand
        rule = f"{rule} ({how}: {got.rule})"
    else:
        start = normal[0]
    names = {NAMES[i]: x for i, x in enumerate(given)}  # as written, forms and all (as `promote expr` sees them)
    eng = engine.engine(rs, values)
    if group.refuse_if is not None and eng.formula(group.refuse_if, f"{rule}.refuse_if", op=op, result=start,
                                                   **names):
        fields = {**eng.set_text, **values, **names, "op": op, "op_group": group.name, "result": start}
        raise _refusal(group.refuse.format(**fields), f"{rule}.refuse_if")
    result = start
    if group.result is not None:
        value = eng.formula(group.result, f"opgroups.{group.name}.result", op=op, result=start, **names)
        result = _operand(rs, group, value, start)
    zero = group.zero_if is not None and eng.formula(group.zero_if, f"{rule}.zero_if", op=op,
                                                          result=result, **names)
    return _form(group, result, given, zero), rule, reason


def _operator(rs: Ruleset, group: OpGroup, given: list[Operand], options) -> tuple[Operand, str]:
    """The `[expressions.operators]` entry's answer, as `promote expr` evaluates it on variables of these operands."""
    from promote_cli.expressions.evaluate import evaluate

    variables = [f"{v}:{x.without_value()}" for v, x in zip(VARIABLES, given)]
    name = group.operator
    if name in operators.UNARY.values():
        text = f"{name[0]}{variables[0]}"
    elif name in operators.CALLS:
        text = f"{name}({', '.join(variables)})"
    else:
        text = f"{variables[0]} {name} {variables[1]}"
    got = evaluate(rs, text, options, bound=dict(zip(VARIABLES, given)))
    if got.refused:
        step = next(s for s in got.steps() if s.error is not None)
        raise _refusal(step.error, f"opgroups.{group.name} (operator {name}: {step.rule or 'refused'})")
    return operand_grammar.parse(got.result), got.tree.rule


def _arg(rs: Ruleset, group: OpGroup, arg, given: list[Operand], values: dict) -> Operand:
    """An operand `promote` or `via` combines: an operand as given, or what an `args` expression gives of them."""
    if isinstance(arg, int):
        return given[arg]
    value = engine.engine(rs, values).formula(arg, f"opgroups.{group.name}.args", op=group.name,
                                              **{NAMES[i]: x for i, x in enumerate(given)})
    return Operand(TENSOR, value) if isinstance(value, DType) else value


def _refusal(message: str, rule: str) -> Refusal:
    exc = Refusal(message)
    exc.rule = rule
    return exc


def _operand(rs: Ruleset, group: OpGroup, value, start: Operand) -> Operand:
    """A `result` expression's value as an operand: a dtype keeps the starting result's weakness."""
    if isinstance(value, DType):
        value = Operand(WEAK if start.form == WEAK else TENSOR, value)
    if isinstance(value, Operand) and value.form == PYTHON:  # `py(x)`: a Python scalar comes back
        return value
    if not isinstance(value, Operand) or value.dtype is None:
        raise RuleDefect(f"{rs.path}: opgroups.{group.name}.result gives {value!r}, not a dtype")
    if value.dtype not in rs.type_set:
        raise RuleDefect(f"{rs.path}: opgroups.{group.name}.result gives {value}, which is not one of the file's types")
    return value


def _form(group: OpGroup, result: Operand, given: list[Operand], zero: bool = False) -> Operand:
    """The result's form by the group's `rank`: a weak result stays weak (it has no rank), a Python scalar one; else
    0-d where `zero_if` holds (`zero`), then `zero` 0-d, `tensor` a tensor, `keep` 0-d when every array operand is
    0-d (a Python scalar is no array), `contract` 0-d when every operand is a tensor (vectors contracted, as dot of
    two 1-d arrays), else as `keep`."""
    if result.form in (PYTHON, WEAK):  # a weak result has no rank
        return result
    if zero or group.rank == "zero" or (group.rank == "contract" and all(x.form == TENSOR for x in given)):
        return result.with_form(RANK0)
    if group.rank == "tensor":
        return result.with_form(TENSOR)
    arrays = [x for x in given if x.form != PYTHON]
    rank0 = all(x.form == RANK0 for x in arrays) if arrays else True
    return result.with_form(RANK0 if rank0 else TENSOR)


def _shown(result: Operand) -> Operand:
    """A result as `promote query` prints it: a 0-d result as its dtype."""
    return result.with_form(TENSOR) if result.form == RANK0 else result


def listing(rs: Ruleset) -> list[dict]:
    """Every op of the ruleset's groups, in the file's order: op, aliases, arity, group, rule, doc, source."""
    rows = []
    for group in rs.opgroups.values():
        for op in group.ops:
            aliases = [a for a, target in group.aliases.items() if target == op]
            rows.append({"op": op, "aliases": aliases, "arity": group.arity, "group": group.name,
                         "rule": describe(group), "doc": group.doc, "source": group.source})
    return rows


def describe(group: OpGroup) -> str:
    """A group's rule in one line: where it starts, what refuses, what it gives, its rank."""
    if group.operator is not None:
        parts = [f"operator {group.operator}"]
    elif group.promote is not None or group.via is not None:
        how = f"promote {group.promote}" if group.promote is not None else f"via {group.via}"
        parts = [f"{how}({', '.join(NAMES[i] if isinstance(i, int) else i.text for i in group.args)})"]
    else:
        parts = ["a"]
    if group.refuse_if is not None:
        parts.append(f"refuse if {group.refuse_if.text}")
    if group.result is not None:
        parts.append(f"result {group.result.text}")
    if group.zero_if is not None:
        parts.append(f"0-d if {group.zero_if.text}")
    if group.rank != "keep":
        parts.append(f"rank {group.rank}")
    return "; ".join(parts)


def explain(rs: Ruleset, op: str, operand_list, options: dict | None = None):
    """`promote explain` of an op group's op: its group, doc, source and rule, the answer, and what every other
    value of each option gives (an `oracle.explain.Explanation` with `operands`)."""
    from promote_cli.oracle import explain as explaining
    from promote_cli.oracle.model import json_value

    got = answer(rs, op, operand_list, options)
    group = group_of(rs, op)
    values = engine.parse_options(rs, options)
    alternatives = []
    for name, opt in rs.options.items():
        for v in explaining.option_values(opt):
            if json_value(v) != json_value(values[name]):
                other = answer(rs, op, operand_list, {**values, name: v})
                alternatives.append(explaining.Alternative(name, json_value(v), other.result, other.refusal))
    operands_shown = list(got.operands)
    rule = {"section": "opgroups", "name": group.name, "rule": describe(group), "doc": group.doc,
            "source": group.source, "decided": got.rule}
    return explaining.Explanation(
        framework=rs.name, version=rs.version, op=op, op_group=group.name, a=got.a, b=got.b,
        normalised=tuple(operands_shown), operand_policy=[], options={k: json_value(v) for k, v in values.items()},
        result=str(got.result_operand) if got.result_operand is not None else None, refusal=got.refusal,
        reason=got.reason, rule=rule, rule_result=None, refused_by=None, steps=[], alternatives=alternatives,
        operands=operands_shown)
