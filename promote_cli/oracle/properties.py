"""Properties of a rule system, each with its counterexamples: `promote check`.

    check(ruleset, op=None, options=None, forms=("tensor",), limit=5) -> Check

For each op group (or the one `op` names), over the operands (every type of the ruleset as a
tensor, and with `forms` its `0d:`, `py:` and `weak:` operands where the file distinguishes
them):

- **commutative**: `a op b` and `b op a` give the same answer (a refusal is an answer);
- **associative**: `(a op b) op c` and `a op (b op c)` give the same answer, the inner result
  being the next operand as it is (weak or not), as a left fold asks it;
- **lossless**: every result holds every value of both operands exactly (`fits`, derived from
  the vocabulary's traits; operands without a dtype, Python scalars, are not judged, nor is an
  op whose every result is `bool`: its result is a verdict, not a common type);
- **consistent**: on tensors, every op group answers each pair as the first one does (`add`'s
  group where there is one).

Every pair is asked once per op, through the engine's memo; triples are then table lookups.
A file's `[claims]` say which of these it has; they are judged by a whole check (every op,
default options, tensors), and `Check.broken` lists those the rules contradict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promote_cli.errors import RuleDefect, UsageError
from promote_cli.oracle.engine import answer, parse_options, resolve_op
from promote_cli.oracle.model import Ruleset
from promote_cli.vocab.dtypes import DTYPES, DType
from promote_cli.vocab.operands import PY_KINDS, Operand

PROPERTIES = ("commutative", "associative", "lossless", "consistent")
FORMS = ("tensor", "0d", "py", "weak")
LIMIT = 5  # counterexamples kept per property (all are counted)


@dataclass
class Finding:
    """One property of one op (`other`: the op compared with, for `consistent`): how many cases were checked,
    how many are counterexamples (`count`; where two answers are compared, `kinds` splits them into
    `different_results` and `one_refused`), some of them (`examples`: up to `limit` of each kind, different
    results first), and `note` where the property was not judged."""

    property: str
    op: str
    checked: int
    count: int
    examples: list[dict]
    other: str | None = None
    note: str = ""
    kinds: dict = field(default_factory=dict)  # counterexamples by kind: two results, or one side refused

    @property
    def holds(self) -> bool:
        return self.count == 0

    def to_dict(self) -> dict:
        data = {"property": self.property, "op": self.op}
        if self.other is not None:
            data["other"] = self.other
        data.update(holds=self.holds, checked=self.checked, counterexamples=self.count, **self.kinds,
                    examples=self.examples)
        if self.note:
            data["note"] = self.note
        return data


@dataclass
class Claim:
    """A property the rule file claims (`claimed`: it has it, or it lacks it) and what the check found."""

    property: str
    claimed: bool
    found: bool
    counterexamples: int

    @property
    def holds(self) -> bool:
        return self.claimed == self.found

    def to_dict(self) -> dict:
        return {"property": self.property, "claimed": self.claimed, "found": self.found, "holds": self.holds,
                "counterexamples": self.counterexamples}


@dataclass
class Check:
    """What `promote check` found: a `Finding` per property and op, and the file's claims judged."""

    framework: str
    version: str
    ops: list[str]
    options: dict
    forms: list[str]
    operands: list[str]
    findings: list[Finding]
    claims: list[Claim]
    claims_checked: bool
    limit: int
    skipped_forms: dict = field(default_factory=dict)  # a form asked for -> why it is not among the operands

    @property
    def broken(self) -> list[Claim]:
        """The claims of the file that the rules contradict (the check exits 1 when there are any)."""
        return [c for c in self.claims if not c.holds]

    def to_dict(self) -> dict:
        return {"framework": self.framework, "version": self.version, "ops": self.ops, "options": self.options,
                "forms": self.forms, "operands": len(self.operands), "limit": self.limit,
                "properties": [f.to_dict() for f in self.findings],
                "claims": [c.to_dict() for c in self.claims], "claims_checked": self.claims_checked,
                **({"skipped_forms": self.skipped_forms} if self.skipped_forms else {})}


# ---- which values a type holds ------------------------------------------------------

def fits(x: DType, r: DType) -> str | None:
    """None when every value of `x` (infinities and NaN included) is exactly a value of `r`; else why not.

    Integers (and bool, 0 and 1) fit an integer whose range contains theirs, and a binary float that is signed
    where they are, has a zero, reaches their largest magnitude and has enough significant bits for every
    integer up to it (`man_bits + 1` bits hold every integer up to 2**(man_bits + 1)). A binary float fits
    another whose precision, largest finite value and smallest subnormal contain its own, with a zero, a sign,
    infinities and NaN wherever it has them. A real type fits a complex one when it fits the part type; a
    complex type fits only a complex one. A float given as a table of values (nf4) fits only itself: the
    vocabulary knows its range, not its values.
    """
    if x is r:
        return None
    if r.kind == "complex":
        part = _part(r)
        why = fits(_part(x) if x.kind == "complex" else x, part)
        return None if why is None else f"{r}'s parts are {part}: {why}"
    if x.kind == "complex":
        return f"{r} has no imaginary part"
    if r.kind != "float":  # an integer or bool result
        if x.kind == "float":
            return f"{r} holds no fractions"
        if x.min < r.min or x.max > r.max:
            return f"{r} holds {_int(r.min)}..{_int(r.max)}, {x} {_int(x.min)}..{_int(x.max)}"
        return None
    if not r.is_binary_float:
        return f"{r} is a table of values"
    if x.kind == "float" and not x.is_binary_float:
        return f"{x} is a table of values the vocabulary does not list"
    if x.min < 0 and not r.signed:
        return f"{r} has no negative values"
    if _has_zero(x) and not _has_zero(r):
        return f"{r} has no zero"
    if x.kind != "float":
        top = max(-int(x.min), int(x.max))
        extreme = int(x.min) if -int(x.min) > int(x.max) else int(x.max)  # the value of that magnitude
        exact = 2 ** (r.man_bits + 1)
        if top > r.max:
            return f"{r}'s largest value is {_num(r.max)}, {x} reaches {extreme}"
        if top > exact:
            return f"{r} holds every integer only up to {exact} in magnitude, {x} reaches {extreme}"
        if r.emin > 0:
            return f"{r} has no 1"
        return None
    if x.man_bits > r.man_bits:
        return f"{x} has {x.man_bits + 1} significant bits, {r} {r.man_bits + 1}"
    if x.max > r.max:
        return f"{x} reaches {_num(x.max)}, {r} only {_num(r.max)}"
    if x.emin - x.man_bits < r.emin - r.man_bits:
        return f"{x} goes down to {_num(x.smallest_subnormal)}, {r} only to {_num(r.smallest_subnormal)}"
    if x.has_inf and not r.has_inf:
        return f"{r} has no infinity"
    if x.has_nan and not r.has_nan:
        return f"{r} has no NaN"
    return None


def _part(c: DType) -> DType:
    return next(f for f in DTYPES.values() if f.kind == "float" and 2 * f.bits == c.bits
                and (f.exp_bits, f.man_bits, f.bias) == (c.exp_bits, c.man_bits, c.bias))


def _has_zero(d: DType) -> bool:
    return d.min <= 0 <= d.max


def _int(value) -> str:
    return str(int(value))


def _num(value: float) -> str:
    return f"{value:g}"


# ---- the check ----------------------------------------------------------------------

class _Answers:
    """The answers of one op over operand indices: `get(x, y)` is the index of `x op y`'s result (-1: refused),
    asked once each. A result that is not among the operands gets the next index of the shared `universe`."""

    def __init__(self, rs: Ruleset, op: str, options: dict, universe: list[Operand], ids: dict[str, int]):
        self.rs, self.op, self.options = rs, op, options
        self.universe, self.ids = universe, ids
        self.cells: dict[tuple[int, int], int] = {}

    def get(self, x: int, y: int) -> int:
        key = (x, y)
        hit = self.cells.get(key)
        if hit is None:
            hit = self.cells[key] = self._ask(x, y)
        return hit

    def _ask(self, x: int, y: int) -> int:
        try:
            ans = answer(self.rs, self.universe[x], self.universe[y], self.op, self.options)
        except RuleDefect:
            raise
        except UsageError:
            return -1  # an operand form this ruleset does not reason about here
        if ans.result is None:
            return -1
        found = self.ids.get(ans.result)
        if found is None:
            found = self.ids[ans.result] = len(self.universe)
            self.universe.append(ans.result_operand)
        return found

    def rows(self, n: int) -> list[list[int]]:
        return [[self.get(x, y) for y in range(n)] for x in range(n)]


def operands_of(rs: Ruleset, forms) -> tuple[list[Operand], dict[str, str]]:
    """The operands a check asks: every type as a tensor, then each other form asked for that the file
    distinguishes (`0d:` with `rank0 = "distinct"`, `weak:` with `weak = "distinct"`, the Python scalars it
    has rules for); the forms left out, with the reason."""
    from promote_cli.vocab.operands import PYTHON, RANK0, TENSOR, WEAK

    policy = rs.operands
    out = [Operand(TENSOR, d) for d in rs.types]
    skipped: dict[str, str] = {}
    if "0d" in forms:
        if policy.rank0 == "distinct":
            out += [Operand(RANK0, d) for d in rs.types]
        else:
            skipped["0d"] = f"{rs.name} treats a 0-d tensor as a tensor"
    if "weak" in forms:
        if policy.weak == "distinct":
            out += [Operand(WEAK, d) for d in rs.types]
        else:
            skipped["weak"] = (f"{rs.name} has no rules for weak operands" if policy.weak == "refuse"
                               else f"{rs.name} treats a weak operand as a tensor")
    if "py" in forms:
        if policy.python == "refuse":
            skipped["py"] = f"{rs.name} has no rules for Python scalars"
        else:
            out += [Operand(PYTHON, None, k) for k in PY_KINDS
                    if not isinstance(policy.python, dict) or k in policy.python]
    return out, skipped


def parse_forms(forms) -> list[str]:
    """`forms` as the list of operand forms to check (`all`: every one); tensors are always checked."""
    if isinstance(forms, str):
        forms = [f.strip() for f in forms.split(",") if f.strip()]
    wanted = {"tensor"}
    for form in forms or ():
        if form == "all":
            wanted.update(FORMS)
        elif form in FORMS:
            wanted.add(form)
        else:
            raise UsageError(f"unknown operand form {form!r} (forms: {', '.join(FORMS)}, or all)")
    return [f for f in FORMS if f in wanted]


def op_names(rs: Ruleset, op: str | None) -> list[str]:
    """The ops a check asks: the one given, else each op group's first name (a file without [ops]: add)."""
    if op is not None:
        resolve_op(rs, op)
        return [op]
    if rs.ops is None:
        return ["add"]
    return [names[0] for names in rs.ops.values()]


def check(rs: Ruleset, op: str | None = None, options: dict | None = None, forms=("tensor",),
          limit: int = LIMIT) -> Check:
    """Every property of `rs` for `op` (None: every op group) with `options`, over the operands of `forms`;
    the file's claims are judged when the check is whole (every op, default options, tensors only)."""
    if not isinstance(limit, int) or limit < 0:
        raise UsageError(f"the number of counterexamples shown is 0 or more, not {limit!r}")
    values = parse_options(rs, options)  # unknown options and bad values fail here
    shown = {k: getattr(v, "name", v) for k, v in values.items()}
    forms = parse_forms(forms)
    asked = op_names(rs, op)
    every = op_names(rs, None)
    reference = next((o for o in every if rs.ops is None or rs.op_index.get("add") == rs.op_index.get(o)), every[0])
    base, skipped = operands_of(rs, forms)
    n = len(base)
    tensors = len(rs.types)
    universe = list(base)
    ids = {str(x): i for i, x in enumerate(universe)}
    tables: dict[str, _Answers] = {}

    def answers(name: str) -> _Answers:
        if name not in tables:
            tables[name] = _Answers(rs, name, options or {}, universe, ids)
        return tables[name]

    findings: list[Finding] = []
    for name in asked:
        table = answers(name)
        rows = table.rows(n)
        findings.append(_commutative(name, rows, universe, limit))
        findings.append(_associative(name, rows, table, universe, limit))
        findings.append(_lossless(name, rows, universe, limit))
    first = reference if op is None else asked[0]
    group = resolve_op(rs, first)
    compared = [o for o in every if resolve_op(rs, o) != group]
    if compared:
        mine = answers(first).rows(tensors)  # the tensors come first among the operands
        for other in compared:
            findings.append(_consistent(first, other, mine, answers(other).rows(tensors), universe, limit))
    whole = op is None and not options and all(f == "tensor" or f in skipped for f in forms)
    claims = _judge(rs.claims, findings) if whole else []
    present = [f for f in forms if f not in skipped]
    return Check(rs.name, rs.version, asked, shown, present, [str(x) for x in base], findings, claims,
                 whole, limit, skipped)


def _name(universe: list[Operand], index: int) -> str | None:
    return None if index < 0 else str(universe[index])


class _Tally:
    """Counterexamples where two answers differ: counted by kind, up to `limit` of each kind kept."""

    def __init__(self, limit: int):
        self.limit = limit
        self.different: list[dict] = []
        self.refused: list[dict] = []
        self.count = {DIFFERENT: 0, ONE_REFUSED: 0}

    def add(self, one: int, two: int, example) -> None:
        kind = ONE_REFUSED if one < 0 or two < 0 else DIFFERENT
        self.count[kind] += 1
        kept = self.different if kind == DIFFERENT else self.refused
        if len(kept) < self.limit:
            kept.append(example())

    def finding(self, prop: str, op: str, checked: int, other: str | None = None) -> Finding:
        examples = (self.different + self.refused)[: self.limit]
        return Finding(prop, op, checked, sum(self.count.values()), examples, other, kinds=dict(self.count))


DIFFERENT, ONE_REFUSED = "different_results", "one_refused"


def _commutative(op: str, rows, universe, limit: int) -> Finding:
    n = len(rows)
    tally = _Tally(limit)
    for x in range(n):
        for y in range(x + 1, n):
            if rows[x][y] != rows[y][x]:
                tally.add(rows[x][y], rows[y][x], lambda: {
                    "a": str(universe[x]), "b": str(universe[y]), "ab": _name(universe, rows[x][y]),
                    "ba": _name(universe, rows[y][x])})
    return tally.finding("commutative", op, n * (n - 1) // 2)


def _associative(op: str, rows, table: _Answers, universe, limit: int) -> Finding:
    """(a op b) op c against a op (b op c) for every triple, a row of c at a time: `left` is the row of
    a op b, `right` the row of a op x for each x = b op c (index -1, a refusal, reads the -1 kept last)."""
    n = len(rows)
    extra = sorted({r for row in rows for r in row if r >= n})  # results outside the operands
    for r in extra:
        for x in range(n):
            table.get(r, x)
            table.get(x, r)
    cells = table.cells
    refused_row = [-1] * n
    by_result = [*rows, *([cells[r, c] for c in range(n)] for r in extra), refused_row]  # [-1]: refused
    wide = [[*row, *(cells[a, r] for r in extra), -1] for a, row in enumerate(rows)]  # a op x, x any result
    if extra:  # the indices of results outside the operands, as positions in `by_result` and `wide`
        at = {r: n + i for i, r in enumerate(extra)}
        rows_b = [[at.get(x, x) for x in row] for row in rows]
    else:
        rows_b = rows
    tally = _Tally(limit)
    for a in range(n):
        of_a = wide[a].__getitem__
        for b in range(n):
            ab = rows_b[a][b]
            left = by_result[ab]
            right = list(map(of_a, rows_b[b]))
            if left == right:
                continue
            for c in range(n):
                if left[c] != right[c]:
                    bc = rows[b][c]
                    tally.add(left[c], right[c], lambda: {
                        "a": str(universe[a]), "b": str(universe[b]), "c": str(universe[c]),
                        "ab": _name(universe, rows[a][b]), "left": _name(universe, left[c]),
                        "bc": _name(universe, bc), "right": _name(universe, right[c])})
    return tally.finding("associative", op, n ** 3)


def _lossless(op: str, rows, universe, limit: int) -> Finding:
    n = len(rows)
    answered = [(x, y, rows[x][y]) for x in range(n) for y in range(n) if rows[x][y] >= 0]
    results = {universe[r].dtype for _, _, r in answered}
    if answered and {d.kind for d in results if d is not None} == {"bool"} and any(
            universe[x].dtype is not None and universe[x].dtype.kind != "bool" for x, _, _ in answered):
        return Finding("lossless", op, 0, 0, [], note=f"every result of {op} is bool: a verdict, not a common type")
    count, checked, examples = 0, 0, []
    seen = set()
    for x, y, r in answered:
        a, b, result = universe[x].dtype, universe[y].dtype, universe[r].dtype
        if a is None or b is None or result is None:
            continue  # a Python scalar has no dtype to hold
        key = (min(x, y), max(x, y), r)
        if key in seen:  # the same pair in the other order, with the same result
            continue
        seen.add(key)
        checked += 1
        lost = [(d, why) for d in dict.fromkeys((a, b)) if (why := fits(d, result)) is not None]
        if lost:
            count += 1
            if len(examples) < limit:
                examples.append({"a": str(universe[x]), "b": str(universe[y]), "result": str(universe[r]),
                                 "loses": [str(d) for d, _ in lost], "why": "; ".join(w for _, w in lost)})
    return Finding("lossless", op, checked, count, examples)


def _consistent(op: str, other: str, mine, theirs, universe, limit: int) -> Finding:
    n = len(mine)
    tally = _Tally(limit)
    for x in range(n):
        for y in range(n):
            if mine[x][y] != theirs[x][y]:
                tally.add(mine[x][y], theirs[x][y], lambda: {
                    "a": str(universe[x]), "b": str(universe[y]), op: _name(universe, mine[x][y]),
                    other: _name(universe, theirs[x][y])})
    return tally.finding("consistent", op, n * n, other)


def _judge(claims: dict[str, bool], findings: list[Finding]) -> list[Claim]:
    out = []
    for prop, claimed in claims.items():
        count = sum(f.count for f in findings if f.property == prop)
        out.append(Claim(prop, claimed, count == 0, count))
    return out
