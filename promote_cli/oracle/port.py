"""`promote port`: the explicit casts that make a target ruleset reproduce a source ruleset.

For every case of an op that the source answers (its operands: every pair, or single operand or triple, of
the source's types in the operand forms asked), the target is asked the same; where its dtype differs, or
it refuses, a plan is searched: cast some inputs to dtypes the target has, run the op in the target, cast
its output to the source's dtype. A plan is kept only when the target's own rules give, for the cast
inputs, a dtype the output cast turns into the source's (checked case by case, through the same `ask` the
CLI answers with). Among the plans, one whose input casts all lose no value (`properties.fits`, as
`promote check` judges) and whose op runs in a type that holds the source's result (not int32 widened to
int64 afterwards) wins over one that may, then the fewest casts, then casts to the kind of the source's result, then the narrowest types. A case no
plan reproduces is listed with the reason: the target lacks the source's dtype, no plan exists, or only a
plan with a cast that may lose values does (that plan is shown, `lossless` false, and the case counts as one
that cannot be reproduced).

An op is named as either side names it (`Add`, `+`, `add`, `sum`): each side is asked the name itself where
it has it, else the first it has of the names the other side gives that op (its group's op and aliases),
operator symbols first. `ask(rs, operands, op, options) -> Answer` is the public API's dispatcher (an op
group's op, else the rules' pair or N-operand answer), passed in so this layer needs no other.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from promote_cli.errors import PromoteError, UsageError
from promote_cli.oracle.engine import resolve_op
from promote_cli.oracle.model import Ruleset
from promote_cli.oracle.properties import fits, operands_of, parse_forms
from promote_cli.vocab import operands as operand_grammar
from promote_cli.vocab.dtypes import lookup
from promote_cli.vocab.operands import PYTHON, RANK0, TENSOR, Operand
from promote_cli.vocab.operators import BINARY

#: how many cast targets each operand of a three-operand op tries (the search is the product of them)
TERNARY_CANDIDATES = 6
#: how many casts that may lose values each operand tries, after every one that cannot
LOSSY_CANDIDATES = 3


@dataclass
class PortCase:
    """One case where the target does not reproduce the source, and the plan that does (or why none does)."""

    op: str                       # the op as asked (the source's name for it)
    target_op: str                # the target's name for it
    operands: list[str]
    source: str                   # the source's result operand
    target: str | None            # the target's result operand for the same operands (None: it refuses)
    target_refusal: str | None
    casts: list[dict] = field(default_factory=list)   # {"operand": INDEX, "to": DTYPE}
    compute_operands: list[str] | None = None
    compute: str | None = None
    output_cast: str | None = None
    lossless: bool | None = None
    impossible: str | None = None

    def to_dict(self) -> dict:
        return {"op": self.op, "target_op": self.target_op, "operands": self.operands, "source": self.source,
                "target": self.target, "target_refusal": self.target_refusal, "casts": self.casts,
                "compute_operands": self.compute_operands, "compute": self.compute,
                "output_cast": self.output_cast, "lossless": self.lossless, "impossible": self.impossible}


@dataclass
class OpPort:
    """One op: its name on each side, how many cases agree, and the differing cases."""

    op: str
    source_op: str
    target_op: str
    arity: int
    agree: int = 0
    source_refuses: int = 0
    cases: list[PortCase] = field(default_factory=list)


@dataclass
class Port:
    """Everything `promote port` found: per op, the cases that need casts or cannot be reproduced."""

    source: str                   # the source side's label (NAME[@VERSION][:KEY=VALUE])
    target: str
    source_ruleset: str           # NAME@VERSION
    target_ruleset: str
    kinds: list[str]
    ops: list[OpPort]
    skipped_ops: list[str]        # ops asked for that one side does not have

    @property
    def cases(self) -> list[PortCase]:
        return [c for o in self.ops for c in o.cases]

    def counts(self) -> dict:
        cases = self.cases
        return {"agree": sum(o.agree for o in self.ops),
                "cast": sum(1 for c in cases if c.impossible is None),
                "impossible": sum(1 for c in cases if c.impossible is not None),
                "source_refuses": sum(o.source_refuses for o in self.ops)}

    def summary(self) -> str:
        n = self.counts()
        return (f"{self.source} -> {self.target}: {n['agree']} cases agree, {n['cast']} need casts, "
                f"{n['impossible']} cannot be reproduced ({n['source_refuses']} the source refuses; "
                f"ops: {len(self.ops)})")

    @property
    def needs_casts(self) -> bool:
        return bool(self.cases)


# ---- op names ---------------------------------------------------------------------------------------------

def _arity(rs: Ruleset, name: str) -> int | None:
    """How many operands `name` takes in `rs`; None where `rs` does not have it."""
    if rs.by_group(name):
        return rs.opgroups[rs.op_names[name]].arity
    return 2 if name in rs.op_index else None


def _equivalents(rs: Ruleset, name: str) -> list[str]:
    """The names `rs` gives the op it calls `name`: the group's op and its aliases, symbols first."""
    if not rs.by_group(name):
        return [name]
    group = rs.opgroups[rs.op_names[name]]
    op = name if name in group.ops else group.aliases[name]
    names = [op, *(a for a, target in group.aliases.items() if target == op)]
    return sorted(dict.fromkeys([name, *names]), key=lambda n: (n not in BINARY, not _portable(n)))


def canonical(rs: Ruleset, name: str) -> str:
    """The op a name is in `rs` (an alias's group op: ONNX's `+` is Add); the name itself otherwise."""
    if rs.by_group(name):
        return rs.opgroups[rs.op_names[name]].aliases.get(name, name)
    return name


def _portable(name: str) -> bool:
    return name.isidentifier() and name.islower()


def side_name(rs: Ruleset, other: Ruleset, name: str) -> str | None:
    """The name `rs` asks for the op `name` (as either side spells it); None where it has none."""
    if _arity(rs, name) is not None:
        return name
    for candidate in _equivalents(other, name):
        if _arity(rs, candidate) is not None:
            return candidate
    return None


def default_ops(source: Ruleset, target: Ruleset) -> list[str]:
    """Every op name the source has that the target has too (through the names either gives it)."""
    if source.opgroups:
        names = [n for g in source.opgroups.values() for n in g.ops]
    else:   # the rules' ops: their operator symbols, else each op's first name
        names = [n for group in source.ops.values() for n in ([x for x in group if x in BINARY] or group[:1])]
    return [n for n in dict.fromkeys(names) if side_name(target, source, n) is not None]


# ---- operands and casts -----------------------------------------------------------------------------------

def _cast(x: Operand, to) -> Operand:
    """The operand a cast of `x` gives: its form kept for tensors and 0-d tensors; a Python scalar or weak value
    becomes a 0-d tensor (a constant of that type)."""
    form = x.form if x.form in (TENSOR, RANK0) else RANK0
    return Operand(form, to)


def _lossless(x: Operand, to) -> bool:
    if x.form == PYTHON:   # a literal: exact in any type of its kind or a higher one
        order = ["bool", "signed", "float", "complex"]
        kind = "signed" if to.kind == "unsigned" else to.kind
        return order.index(kind) >= order.index(x.kind) and not (x.pykind == "int" and to.kind == "unsigned")
    return fits(x.dtype, to) is None


def _dtype_of(result: str):
    return operand_grammar.parse(result).dtype


@dataclass
class _Plan:
    casts: list[tuple[int, object]]
    compute_operands: list[Operand]
    compute: str
    output_cast: object
    lossless: bool
    want: object

    def key(self, order: dict) -> tuple:
        count = len(self.casts) + (self.output_cast is not None)
        other_kind = sum(to.kind != self.want.kind for _, to in self.casts)
        bits = sum(to.bits for _, to in self.casts)
        return (not self.lossless, count, other_kind, bits, [order.get(to.name, 99) for _, to in self.casts])


class Porter:
    """Ports one op from a source side to a target side, case by case, through `ask`."""

    def __init__(self, ask, source: Ruleset, source_options: dict, target: Ruleset, target_options: dict):
        self.ask, self.s, self.so, self.t, self.to = ask, source, source_options, target, target_options
        self.order = {d.name: i for i, d in enumerate(target.types)}
        self._memo: dict = {}

    def answer(self, rs, options, operands: list[Operand], op: str) -> tuple[str | None, str | None]:
        key = (rs is self.t, op, tuple(str(x) for x in operands))
        if key not in self._memo:
            try:
                got = self.ask(rs, [str(x) for x in operands], op, options)
                self._memo[key] = (got.result, got.refusal) if not got.refused else (None, got.refusal)
            except PromoteError as exc:
                self._memo[key] = (None, str(exc))
        return self._memo[key]

    def case(self, op: str, target_op: str, operands: list[Operand]) -> PortCase | None | bool:
        """None where the source refuses; True where the target agrees; else the differing case."""
        source, _ = self.answer(self.s, self.so, operands, op)
        if source is None:
            return None
        want = _dtype_of(source)
        target, refusal = self.answer(self.t, self.to, operands, target_op)
        if target is not None and _dtype_of(target) is want:
            return True
        case = PortCase(op, canonical(self.t, target_op), [str(x) for x in operands], source, target, refusal)
        if want not in self.t.type_set:
            case.impossible = f"{self.t.key} has no {want.name}"
            return case
        plan = self.plan(target_op, operands, want)
        if plan is None:
            case.impossible = (f"no cast of the inputs to types of {self.t.key} makes its {target_op} give a type "
                               f"that casts to {want.name}")
            return case
        case.casts = [{"operand": i, "to": to.name} for i, to in plan.casts]
        case.compute_operands = [str(x) for x in plan.compute_operands]
        case.compute = plan.compute
        case.output_cast = plan.output_cast.name if plan.output_cast is not None else None
        case.lossless = plan.lossless
        if not plan.lossless:
            lossy = [f"{operands[i]} -> {to.name}" for i, to in plan.casts if not _lossless(operands[i], to)]
            if plan.output_cast is not None and fits(want, _dtype_of(plan.compute)) is not None:
                lossy.append(f"computing in {_dtype_of(plan.compute).name}, narrower than {want.name}")
            case.impossible = f"only a cast that may lose values would do ({', '.join(lossy)})"
        return case

    def candidates(self, x: Operand, want, limit: int) -> list:
        """The types `x` may be cast to, best first: the source's result type, the ones that hold every value of
        `x` narrowest first, then `limit` of the others, narrowest first (a plan through one of those is reported
        as one that cannot reproduce the source, so the first few say enough)."""
        own = x.dtype
        types = [d for d in self.t.types if d is not own]
        types.sort(key=lambda d: (d is not want, not _lossless(x, d), d.kind != want.kind, d.bits, self.order[d.name]))
        lossy = [d for d in types if d is not want and not _lossless(x, d)]
        return [d for d in types if d not in lossy] + lossy[:limit]

    def plan(self, op: str, given: list[Operand], want) -> _Plan | None:
        n = len(given)
        options = [self.candidates(x, want, LOSSY_CANDIDATES) for x in given]
        if n == 3:
            options = [o[:TERNARY_CANDIDATES] for o in options]
        best: _Plan | None = None
        for k in range(n + 1):
            for which in itertools.combinations(range(n), k):
                for targets in itertools.product(*(options[i] for i in which)):
                    plan = self._try(op, given, dict(zip(which, targets)), want)
                    if plan is not None and (best is None or plan.key(self.order) < best.key(self.order)):
                        best = plan
            if best is not None and best.lossless and len(best.casts) + (best.output_cast is not None) <= k + 1:
                break
        return best

    def _try(self, op: str, given: list[Operand], casts: dict, want) -> _Plan | None:
        operands = [_cast(x, casts[i]) if i in casts else x for i, x in enumerate(given)]
        compute, _ = self.answer(self.t, self.to, operands, op)
        if compute is None:
            return None
        got = _dtype_of(compute)
        output = None if got is want else want
        if output is not None and (want not in self.t.type_set or got not in self.t.type_set):
            return None
        # lossless: no input cast may lose a value, and the op does not run in a type narrower than the source's
        # result (a sum of int32 in int32, then widened to int64, overflows where the source's does not)
        lossless = all(_lossless(given[i], to) for i, to in casts.items()) and (output is None or fits(want, got) is None)
        return _Plan(sorted(casts.items()), operands, compute, output, lossless, want)


def port(ask, source_side, target_side, ops: list[str] | None = None, types: list[str] | None = None,
         kinds=None) -> Port:
    """The plans that make the target side reproduce the source side (see the module docstring)."""
    from promote_cli.oracle.matrix import sides

    s, t = sides([source_side, target_side])
    forms = parse_forms(kinds if kinds is not None else "all")
    axis, _ = operands_of(s.ruleset, forms)
    if types:
        wanted = {lookup(x) for x in types}
        axis = [x for x in axis if x.dtype is None or x.dtype in wanted]
    names = list(ops) if ops else default_ops(s.ruleset, t.ruleset)
    porter = Porter(ask, s.ruleset, s.options, t.ruleset, t.options)
    result, skipped = [], []
    for name in dict.fromkeys(names):
        source_op = side_name(s.ruleset, t.ruleset, name)
        target_op = side_name(t.ruleset, s.ruleset, name)
        if source_op is None or target_op is None:
            if ops:   # asked for by name: one side lacking it is the user's mistake, said as the side says it
                resolve_op(s.ruleset if source_op is None else t.ruleset, name)
                raise UsageError(f"{(s if source_op is None else t).label} has no op {name!r}")
            skipped.append(name)
            continue
        arity = _arity(s.ruleset, source_op)
        one = OpPort(name, canonical(s.ruleset, source_op), canonical(t.ruleset, target_op), arity)
        for operands in _tuples(axis, arity):
            got = porter.case(source_op, target_op, operands)
            if got is None:
                one.source_refuses += 1
            elif got is True:
                one.agree += 1
            else:
                got.op = name
                one.cases.append(got)
        result.append(one)
    return Port(s.label, t.label, s.ruleset.key, t.ruleset.key, forms, result, skipped)


def _tuples(axis: list[Operand], arity: int):
    """The operand tuples asked: every operand, pair (not two Python scalars: that is Python's arithmetic), or
    triple whose first operand is a tensor."""
    if arity == 1:
        return ([x] for x in axis)
    if arity == 2:
        return ([a, b] for a in axis for b in axis if not (a.form == PYTHON and b.form == PYTHON))
    firsts = [x for x in axis if x.form == TENSOR]
    return ([a, b, c] for a in firsts for b in axis for c in axis if not (b.form == PYTHON and c.form == PYTHON))


