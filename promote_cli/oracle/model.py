"""The compiled form of a rule file: what `loader` builds and `engine` reads.

Plain data only: nothing here reads files or answers queries, so the loader and the
engine both import this module and never each other.
"""

from __future__ import annotations

from promote_cli.errors import UsageError
from promote_cli.oracle.checked import Expr
from promote_cli.records import Record, factory
from promote_cli.vocab import dtypes
from promote_cli.vocab.dtypes import DType
from promote_cli.vocab.operands import Operand

TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


class Refuse:
    """The refusal marker in a table cell."""

    def __repr__(self) -> str:
        return "REFUSE"


REFUSE = Refuse()


class Table(Record):
    name: str
    columns: tuple[str, ...]
    rows: dict[str, tuple[Operand | Refuse, ...]]
    commutative: bool
    reason: str
    marker: str
    cells: dict[tuple[str, str], Operand | Refuse] = factory(dict)
    reasons: dict[tuple[str, str], str] = factory(dict)  # a refused cell's own reason


class Lattice(Record):
    """A promotion lattice (`edges` to immediate successors), or a choice of lattices by an option's value.

    `joins` holds the least upper bound of every pair of nodes, computed on load (a pair
    with none is absent). `weak` maps each weak node (`py:int`, `weak:i32`) to the
    operand a result at that node is (`weak:i32`). `lookup` memoises which node an
    operand stands at.
    """

    name: str
    edges: dict[str, tuple[str, ...]]
    reason: str
    upper: dict[str, frozenset[str]] = factory(dict)
    nodes: dict[str, Operand] = factory(dict)
    weak: dict[str, Operand] = factory(dict)
    joins: dict[tuple[str, str], str] = factory(dict)
    lookup: dict[str, str | None] = factory(dict)
    option: str | None = None          # a choice: the option whose value picks ...
    pick: dict = factory(dict)  # ... the lattice of this file named here


class TypeMap(Record):
    """A dtype -> dtype map (`mapped(name, x)`; dtypes it does not list map to themselves),
    or a choice of maps by an option's value."""

    name: str
    pairs: dict[str, DType]
    option: str | None = None
    pick: dict = factory(dict)


class NAry(Record):
    """How `result_type(a, b, c, ...)` is answered (the file's `[nary]`; docs/rules.md, "N operands").

    `fold`: pairwise from the left, each step a whole pair answer. `join`: the operands
    combined at once, each intermediate result keeping its form, the `[[after]]` clauses
    applied once to the end result; on a `lattice` (one least upper bound) or, without
    one, through the file's `[[rules]]`. `sequence`: a common-type reduction over all
    operands in which the operand that `knows` the other answers each pair (NumPy's
    PromoteDTypeSequence). `grouped`: a left fold within each group of operands of one
    form (`groups`, the strongest first), then the groups' results combined from the
    weakest up. `strong_first`: Python scalars and weak operands move after the others
    (order otherwise kept) before any method runs. `when`: where the method answers (an
    expression over the op and the options); elsewhere the default fold.
    """

    method: str = "fold"
    lattice: str | None = None
    map: str | None = None   # join on a lattice: a type map applied to every operand first
    strong_first: bool = False
    order: tuple[str, ...] = ()     # sequence: rank(x) is x's index here
    knows: Expr | None = None       # sequence: a's common-type function answers for b
    keeps: Expr | None = None       # sequence: ... and answers a itself
    groups: tuple[str, ...] = ()    # grouped: operand forms, the strongest first
    when: Expr | None = None        # where the method answers; elsewhere the default fold


class Option(Record):
    name: str
    type: str
    default: object
    values: tuple
    hint: tuple
    doc: str

    def parse(self, value) -> object:
        """A user's value (string or Python value) as the typed value rules see; UsageError if invalid."""
        text = str(value).strip()
        if self.type == "bool":
            if isinstance(value, bool):
                return value
            if text.lower() in TRUE_WORDS:
                return True
            if text.lower() in FALSE_WORDS:
                return False
            raise UsageError(f"option {self.name} takes true or false, not {text!r}")
        if self.type == "int":
            try:
                return int(text)
            except ValueError:
                raise UsageError(f"option {self.name} takes an integer, not {text!r}") from None
        if self.type == "dtype":
            found = value if isinstance(value, DType) else dtypes.find(text)
            allowed = self.values or tuple(dtypes.DTYPES.values())
            if found is None or found not in allowed:
                raise UsageError(f"option {self.name} takes a dtype ({', '.join(d.name for d in allowed)}), "
                                 f"not {text!r}")
            return found
        if text not in self.values:
            raise UsageError(f"option {self.name} takes one of {', '.join(self.values)}, not {text!r}")
        return text

    def words(self) -> tuple[str, ...]:
        """The values a user can give, as typed (`true`/`false`, each choice, each dtype's canonical name);
        none for an integer option."""
        if self.type == "bool":
            return ("true", "false")
        if self.type == "int":
            return ()
        if self.type == "dtype":
            return tuple(d.name for d in (self.values or tuple(dtypes.DTYPES.values())))
        return tuple(str(v) for v in self.values)

    def show(self, value) -> str:
        return word(value)


def json_value(value):
    """An option's value as JSON: a dtype by its canonical name, anything else (bool, int, str) as it is."""
    return value.name if isinstance(value, DType) else value


def word(value) -> str:
    """An option's value as a user types it after `-O KEY=`: `true`/`false`, a dtype's name, a number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "name", value))


class Clause(Record):
    name: str
    ops: frozenset[str] | None
    cond: Expr | None
    symmetric: bool
    result: Expr | None
    refuse: str | None
    weak: Expr | None
    reason: str


class OperandPolicy(Record):
    rank0: str = "tensor"
    weak: str = "tensor"
    python: str | dict[str, Operand] = "refuse"
    refuse_message: str = ""


class ExprOperator(Record):
    """How one operator or named op of `promote expr` evaluates (`[expressions.operators."+"]`).

    `op` is the ruleset op whose pair answer promotes the operands (None for a unary operator:
    the operand is its own promotion); `refuse_if`/`refuse` refuse a promoted pair; `result`
    turns the promotion into the node's result (comparisons give bool, true division a float);
    `literal_range`: the dtype a Python integer literal must fit (NEP 50: the promoted type);
    `promotion`: an expression that promotes the pair instead of `op`'s answer;
    `condition` (where): what the first argument must be.
    """

    name: str
    op: str | None
    result: Expr | None = None
    refuse_if: Expr | None = None
    refuse: str = ""
    literal_range: Expr | None = None
    condition: Expr | None = None
    condition_refuse: str = ""
    doc: str = ""
    promotion: Expr | None = None
    both_python: Expr | None = None
    promotion_if: Expr | None = None          # promotion applies only where this holds (else `op`)
    skip_after: frozenset = frozenset()       # `op`'s [[after]] clauses that are not this operator's


class ExpressionRules(Record):
    """A file's `[expressions]`: what its literals are and how each operator evaluates (docs/rules.md)."""

    literals: dict[str, Operand]
    operators: dict[str, ExprOperator]
    literal_range_message: str = "Python integer {value} out of bounds for {dtype}"
    doc: str = ""
    unsigned_wrap: bool = False   # an unsigned type takes -max..max (c10::overflows), not 0..max


class OpGroup(Record):
    """One `[opgroups.NAME]`: ops of the framework answered alike (docs/ops.md).

    The starting result is `operator`'s answer (an `[expressions.operators]` block, as `promote expr` gives it),
    `promote`'s (an op of the promotion rules) or `via`'s (another group's op), over the operands `args` names, or
    the first operand;
    then `refuse_if`/`refuse` may refuse and `result` gives the op's dtype; `rank` (or `zero_if`) its form.
    """

    name: str
    doc: str
    source: str
    arity: int
    ops: tuple[str, ...]
    aliases: dict[str, str] = factory(dict)   # alias -> op of this group
    operator: str | None = None
    promote: str | None = None
    args: tuple = ()                          # what `promote`/`via` combines: operand indices, or expressions
    refuse_if: Expr | None = None
    refuse: str = ""
    result: Expr | None = None
    rank: str = "keep"                        # keep | zero | tensor
    via: str | None = None                    # another group's op that gives the starting result
    zero_if: Expr | None = None               # 0-d where it holds (a contraction of two vectors), else as `rank` says


class Ruleset(Record):
    name: str
    version: str
    path: str
    description: str
    source: str
    follows: str
    default: bool
    types: tuple[DType, ...]
    unsupported_type: str
    notes: tuple[str, ...]
    probe: str | None
    operands: OperandPolicy
    options: dict[str, Option]
    ops: dict[str, tuple[str, ...]] | None
    tables: dict[str, Table]
    lattices: dict[str, Lattice]
    rules: list[Clause]
    after: list[Clause]
    op_index: dict[str, str] = factory(dict)
    schema: int = 1
    sets: dict[str, tuple[DType, ...]] = factory(dict)
    op_lists: dict[str, tuple[str, ...]] = factory(dict)
    nary: NAry = factory(NAry)
    type_set: frozenset = factory(frozenset)
    maps: dict[str, TypeMap] = factory(dict)
    expressions: ExpressionRules | None = None
    opgroups: dict[str, OpGroup] = factory(dict)  # `[opgroups]`: the framework's ops by their own names
    op_names: dict[str, str] = factory(dict)  # every op and alias of `opgroups` -> its group
    claims: dict[str, bool] = factory(dict)  # `[claims]`: property -> what the file says of it
    engines: dict = factory(dict)  # option values -> the `oracle.engine.Engine` answering under them

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    def by_group(self, op: str, count: int | None = None) -> bool:
        """Whether a query of `op` (over `count` operands) is answered by its op group: every op group's op, the
        framework's function of that name, as its recording has it; but an op the promotion rules also list in
        `[ops]` (`add`) asked with another number of operands than its group takes keeps the rules' N-operand
        answer (`promote query A B C`)."""
        if op not in self.op_names:
            return False
        return count is None or op not in self.op_index or count == self.opgroups[self.op_names[op]].arity
