"""`[opgroups.NAME]`: a framework's ops by its own names, each group one rule (docs/ops.md).

    [opgroups.sums]
    doc = "integer and bool sums accumulate in the default integer"
    source = "numpy/_core/_methods.py:_sum"
    arity = 1
    ops = ["sum", "cumsum"]
    aliases = { cumulative_sum = "cumsum" }
    result = "default_int if is_int(a) or is_bool(a) else a"
    rank = "zero"

Read and checked here (for the loader, which passes its checker and expression scope), answered by `expressions/ops.py` (a group may reuse an `[expressions.operators]`
block, which only the evaluator applies).
"""

from __future__ import annotations

from promote_cli.errors import one_line
from promote_cli.oracle.checked import ExprError
from promote_cli.oracle.model import OpGroup, Ruleset
from promote_cli.vocab import operators as operators_vocab

KEYS = {"doc", "source", "arity", "ops", "aliases", "operator", "promote", "via", "args", "refuse_if", "refuse",
        "result", "rank", "zero_if"}
RANKS = ("keep", "zero", "tensor", "contract")
#: the operands' names in a group's expressions, by position
OPERANDS = ("a", "b", "c")
#: the longest expression a group may write (name a part of a longer one in [let])
LONGEST = 120


def operator_arity(name: str) -> int:
    """How many operands an `[expressions.operators]` entry takes."""
    if name in operators_vocab.UNARY.values():
        return 1
    return operators_vocab.CALLS.get(name, 2)


def opgroups(check, raw, rs: Ruleset, scope, fields) -> tuple[dict[str, OpGroup], dict[str, str]]:
    """Every group of `[opgroups]`, and each op name and alias -> its group; RuleFileError on the first problem.
    `check` and `scope` are the loader's `_Checker` and `_Scope`; `fields`: the placeholders every message has."""
    raw = check.table_of(raw, "opgroups")
    groups: dict[str, OpGroup] = {}
    names: dict[str, str] = {}
    for name, spec in raw.items():
        group = _group(check, f"opgroups.{one_line(name)}", name, spec, rs, scope, fields)
        for op in (*group.ops, *group.aliases):
            if op in names:
                check.fail(f"opgroups.{one_line(name)}", f"op {op!r} is already in group {names[op]!r}")
            names[op] = name
        groups[name] = group
    for name, group in groups.items():
        _check_via(check, name, group, groups, names)
    return groups, names


def _group(check, key: str, name: str, spec, rs: Ruleset, scope, fields) -> OpGroup:
    spec = check.table_of(spec, key)
    check.unknown_keys(spec, KEYS, key)
    for required in ("doc", "source", "arity", "ops"):
        if required not in spec:
            check.fail(f"{key}.{required}", "every op group says it (docs/ops.md)")
    arity = spec["arity"]
    if arity not in (1, 2, 3) or isinstance(arity, bool):
        check.fail(f"{key}.arity", f"expected 1, 2 or 3, got {arity!r}")
    ops = check.list_of(spec["ops"], f"{key}.ops")
    if not ops:
        check.fail(f"{key}.ops", "a group lists its ops")
    for index, op in enumerate(ops):
        if not isinstance(op, str) or not op.strip() or ops.index(op) != index:
            check.fail(f"{key}.ops[{index}]", f"expected a new op name, got {op!r}")
    aliases = check.table_of(spec.get("aliases", {}), f"{key}.aliases")
    for alias, target in aliases.items():
        if target not in ops:
            check.fail(f"{key}.aliases.{one_line(alias)}", f"{target!r} is not one of this group's ops")
    operator, promote, via = spec.get("operator"), spec.get("promote"), spec.get("via")
    if sum(x is not None for x in (operator, promote, via)) > 1:
        check.fail(key, "a group starts from one of `operator`, `promote` and `via`")
    if operator is not None:
        operator = check.str_of(operator, f"{key}.operator")
        known = rs.expressions.operators if rs.expressions is not None else {}
        if operator not in known:
            check.fail(f"{key}.operator", f"{operator!r} is no [expressions.operators] entry of this file "
                                          f"({', '.join(known) or 'none'})")
        if operator_arity(operator) != arity:
            check.fail(f"{key}.arity", f"operator {operator!r} takes {operator_arity(operator)} operands, not {arity}")
    if promote is not None:
        promote = check.str_of(promote, f"{key}.promote")
        if rs.ops is not None and promote not in rs.op_index:
            check.fail(f"{key}.promote", f"{promote!r} is not an op of this file's promotion rules "
                                         f"(ops: {', '.join(rs.op_index)}; another group's op is `via`)")
    if via is not None:
        via = check.str_of(via, f"{key}.via")
    names = (scope.names_with_result - set(OPERANDS)) | set(OPERANDS[:arity])
    args = spec.get("args")
    if promote is not None or via is not None:
        args = check.list_of(args if args is not None else list(OPERANDS[:arity]), f"{key}.args")
        if not args:
            check.fail(f"{key}.args", "expected the operands it combines")
        args = tuple(_arg(check, f"{key}.args[{i}]", x, arity, scope, names - {"result"}) for i, x in enumerate(args))
    elif args is not None:
        check.fail(f"{key}.args", "only `promote` and `via` read args")
    rank = spec.get("rank", "keep")
    if rank not in RANKS:
        check.fail(f"{key}.rank", f"expected one of {', '.join(RANKS)}, got {rank!r}")

    def expr(field: str):
        return scope.field(check, key, spec, field, names, LONGEST)

    refuse_if = expr("refuse_if")
    fields = set(fields) | set(OPERANDS[:arity]) | set(rs.options) | set(rs.sets)
    refuse = check.refusal(key, refuse_if, spec.get("refuse"), fields, rs.sets)
    return OpGroup(name, check.str_of(spec["doc"], f"{key}.doc"), check.str_of(spec["source"], f"{key}.source"),
                   arity, tuple(ops), dict(aliases), operator, promote, args or (), refuse_if, refuse or "",
                   expr("result"), rank, via, expr("zero_if"))


def _arg(check, key: str, raw, arity: int, scope, names):
    """An operand `promote` or `via` combines: an operand's name (its index), or an expression over the operands
    (the operand it gives: `array_of(a)`)."""
    if raw in OPERANDS[:arity]:
        return OPERANDS.index(raw)
    text = check.str_of(raw, key)
    if len(" ".join(text.split())) > LONGEST:
        check.fail(key, f"longer than {LONGEST} characters: name a part of it in [let]")
    try:
        return scope.compile(key, text, names)
    except ExprError as exc:
        check.fail(key, str(exc))


def _check_via(check, name: str, group: OpGroup, groups: dict, names: dict) -> None:
    """`via` names an op of a group taking as many operands as `args` gives, without a cycle."""
    seen = [name]
    while group.via is not None:
        key = f"opgroups.{one_line(seen[-1])}.via"
        target = names.get(group.via)
        if target is None:
            check.fail(key, f"{group.via!r} is no op of an op group of this file")
        if groups[target].arity != len(group.args):
            check.fail(key, f"{group.via!r} takes {groups[target].arity} operands, `args` gives {len(group.args)}")
        if target in seen:
            check.fail(key, f"op groups go through each other: {' -> '.join([*seen, target])}")
        seen.append(target)
        group = groups[target]
