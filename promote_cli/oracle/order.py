"""The order behind a rule system: `promote lattice`.

A ruleset that states its promotion as a lattice (`[lattices.NAME]`, e.g. JAX's, TensorFlow's)
is drawn as its Hasse diagram: the covering relation of the lattice's order (x -> y when y is
above x and nothing lies between), computed from the declared edges, which may hold redundant
ones. Weak nodes (`py:int`, `weak:i32`) are marked as such.

A ruleset stated as a table (or any op's answers, on request) has an order only implicitly:
a <= b when `a op b` gives b (in either operand order). Its reflexive and transitive closure
is the smallest preorder consistent with the answers; the answers are a lattice's joins only
if that closure is a partial order and every cell is the least upper bound of its two
operands there: an answered cell gives exactly the least upper bound, a refused cell has
none. Every cell that breaks this is listed with what the order would have given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promote_cli.errors import UsageError
from promote_cli.oracle.engine import parse_options
from promote_cli.oracle.matrix import matrix
from promote_cli.oracle.model import Ruleset, json_value, word


@dataclass
class Cell:
    """A cell of the answers that is not the least upper bound of its operands in the order."""

    a: str
    b: str
    result: str | None  # what the ruleset answers (None: refused)
    join: str | None  # what the order gives (None: no least upper bound)
    why: str

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "result": self.result, "join": self.join, "why": self.why}


@dataclass
class Order:
    """A partial order as its Hasse diagram (`edges`: (lower, upper) covering pairs), where it came from, and the
    cells of the answers that are not its joins (none: the answers are the joins of a lattice)."""

    framework: str
    version: str
    source: str  # "lattice NAME" (declared) or "answers" (derived from an op's answers)
    op: str | None  # the op whose answers were read (None for a declared lattice)
    options: dict  # the option values used, as JSON values (true/false, numbers, names)
    nodes: list[str]
    weak: dict[str, str]  # weak node -> the operand a result there is (`py:int` -> `weak:i32`)
    edges: list[tuple[str, str]]
    cells: list[Cell] = field(default_factory=list)
    lattice_name: str | None = None

    @property
    def key(self) -> str:
        return f"{self.framework}@{self.version}"

    @property
    def is_lattice(self) -> bool:
        return not self.cells

    def title(self) -> str:
        """`jax@0.10 lattice standard_x32 (x64=false)` or `cann@8.5 add: the order of its answers`."""
        what = f"lattice {self.lattice_name}" if self.lattice_name else f"{self.op}: the order of its answers"
        opts = ", ".join(f"{k}={word(v)}" for k, v in self.options.items())
        return f"{self.key} {what}" + (f" ({opts})" if opts else "")

    def to_dict(self) -> dict:
        return {"framework": self.framework, "version": self.version, "source": self.source, "op": self.op,
                "lattice_name": self.lattice_name, "options": self.options, "nodes": self.nodes, "weak": self.weak,
                "edges": [list(e) for e in self.edges], "lattice": self.is_lattice,
                "cells": [c.to_dict() for c in self.cells]}


def upper_sets(nodes: list[str], up: dict[str, set[str] | tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """Each node's set of nodes at or above it: the reflexive and transitive closure of `up` (cycles allowed)."""
    out: dict[str, frozenset[str]] = {}
    for start in nodes:
        seen, stack = {start}, [start]
        while stack:
            for nxt in up.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        out[start] = frozenset(seen)
    return out


def covering(nodes: list[str], upper: dict[str, frozenset[str]]) -> list[tuple[str, str]]:
    """The Hasse diagram of a partial order given by its upper sets: (x, y) with x < y and no z between."""
    edges = []
    for x in nodes:
        above = [y for y in nodes if y != x and y in upper[x] and x not in upper[y]]
        for y in above:
            if not any(z != y and y in upper[z] and z not in upper[y] for z in above):
                edges.append((x, y))
    return edges


def least_upper_bound(upper: dict[str, frozenset[str]], x: str, y: str) -> tuple[str | None, list[str]]:
    """(the least upper bound of x and y, or None; the minimal common upper bounds, when there is no least)."""
    common = upper[x] & upper[y]
    least = [c for c in common if common <= upper[c]]
    if len(least) == 1:
        return least[0], []
    minimal = sorted(c for c in common if not any(d != c and c in upper[d] and d not in upper[c] for d in common))
    return None, minimal


def declared(rs: Ruleset, name: str | None = None, options: dict | None = None) -> Order:
    """The Hasse diagram of a lattice of the file (`name`, or the first lattice no other one picks), the option
    values choosing among lattices; UsageError for a ruleset without lattices or an unknown name."""
    values = parse_options(rs, options)
    if not rs.lattices:
        raise UsageError(f"{rs.key} states no lattice (its order comes from its answers: leave out --lattice)")
    if name is None:
        picked = {t for lat in rs.lattices.values() for t in lat.pick.values()}
        name = next(n for n in rs.lattices if n not in picked)
    if name not in rs.lattices:
        raise UsageError(f"{rs.key} has no lattice {name!r} (lattices: {', '.join(rs.lattices)})")
    lat, shown = rs.lattices[name], {}
    if lat.option is not None:
        shown[lat.option] = json_value(values[lat.option])
        lat = rs.lattices[lat.pick[values[lat.option]]]
    nodes = list(lat.edges)
    upper = {n: frozenset(lat.upper[n]) for n in nodes}
    weak = {n: str(op) for n, op in lat.weak.items()}
    return Order(rs.name, rs.version, f"lattice {lat.name}", None, shown, nodes, weak, covering(nodes, upper),
                 lattice_name=lat.name)


def derived(rs: Ruleset, op: str = "add", options: dict | None = None, types: list[str] | None = None,
            ask=None) -> Order:
    """The smallest order consistent with `op`'s answers over `types` (default the ruleset's), and every cell that
    is not the least upper bound of its operands in it. `ask` answers an op group's op, as `matrix` takes it."""
    m = matrix(rs, types, op, options, ask=ask)
    nodes, results = m.types, m.results()
    up: dict[str, set[str]] = {n: set() for n in nodes}
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            if results[i][j] == b:
                up[a].add(b)  # a op b = b: a <= b
            elif results[i][j] == a:
                up[b].add(a)
    upper = upper_sets(nodes, up)
    cells = []
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            got = results[i][j]
            join, minimal = least_upper_bound(upper, a, b)
            if got == join and not (got is None and minimal):
                continue
            cells.append(Cell(a, b, got, join, _why(a, b, got, join, minimal, set(nodes))))
    return Order(rs.name, rs.version, "answers", m.op, dict(m.options), nodes, {}, covering(nodes, upper), cells)


SHOWN_BOUNDS = 4  # a reason names at most this many minimal upper bounds


def _why(a: str, b: str, got: str | None, join: str | None, minimal: list[str], nodes: set[str]) -> str:
    more = len(minimal) - SHOWN_BOUNDS
    minimal = minimal[:SHOWN_BOUNDS] + ([f"{more} more"] if more > 0 else [])
    if got is not None and got not in nodes:
        return f"gives {got}, which is not one of the operands' types"
    if got is None and join is None:
        return f"refused; {a} and {b} have common upper bounds but no least one ({' and '.join(minimal)})"
    if got is None:
        return f"refused, but {join} is the least upper bound of {a} and {b}"
    if join is not None:
        return f"gives {got}, but the least upper bound of {a} and {b} is {join}"
    if len(minimal) > 1:
        return f"gives {got}, but {a} and {b} have no least upper bound ({' and '.join(minimal)} are each minimal)"
    return f"gives {got}, but {got} is not above both {a} and {b}"


def order(rs: Ruleset, op: str = "add", options: dict | None = None, *, lattice: str | None = None,
          answers: bool | None = None, types: list[str] | None = None, ask=None) -> Order:
    """A ruleset's order: its declared lattice when it has one (and `answers` is not true), else the order of
    `op`'s answers (`answers=True` forces that for a lattice-shaped ruleset too; `ask` answers an op group's op)."""
    if answers is None:
        answers = not rs.lattices and lattice is None
    if answers:
        if lattice is not None:
            raise UsageError("a declared lattice (--lattice) and the order of the answers (--answers) exclude "
                             "each other")
        return derived(rs, op, options, types, ask)
    if types is not None:
        raise UsageError("--types goes with the order of the answers, not a declared lattice")
    return declared(rs, lattice, options)
