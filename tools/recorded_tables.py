"""Write the recorded tables and lattices of the NumPy, JAX, array API, PyTorch and TensorFlow rule files.

A rule file's data (a promotion table, a lattice) sits between two marker lines

    # BEGIN generated table NAME (tools/recorded_tables.py)
    ...
    # END generated table NAME

(``lattice`` instead of ``table`` for a lattice), and everything outside the markers
is left as it is.  A table cell is what the recording gives for the table's op and
the operands of its row and column (``x`` where the framework refused), written weak
where one of the table's ``weak_from`` ops gave it weak; a lattice is the one the probe
read from the framework (the recording's ``lattices``), or, for a `JoinLattice`, the
Hasse diagram of the joins the recording holds for every pair of its nodes (checked to
be a lattice's).  No cell is typed by hand.

    python tools/recorded_tables.py            # rewrite every block in place
    python tools/recorded_tables.py --check    # exit 1 when a rule file is not what it would write
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "tests" / "data" / "recordings"
TOOL = "tools/recorded_tables.py"
REFUSAL = "x"


@dataclass
class Table:
    """Cell (row, column) is what `op` gave for (row, column) in the recording, with `options`."""

    name: str
    op: str
    rows: list[str] | str  # operands, or the name of a type set of the rule file ("types": its types)
    columns: list[str] | str
    comment: list[str]
    reason: str | dict  # the text, or {"message": NAME}: the rule file's [messages] NAME, written there once
    commutative: bool = False
    options: dict = field(default_factory=dict)
    weak_from: list[str] = field(default_factory=list)  # a cell is weak:DTYPE where one of these ops gave it weak


@dataclass
class Lattice:
    """The recording's lattice `key` (``recording["lattices"][key]``), written as edges (or,
    with `base`, as that lattice's edges), with the dtype of each weak node: what
    ``result_type`` gives for two Python scalars of its kind under `options`."""

    name: str
    key: str
    comment: list[str]
    reason: str
    options: dict = field(default_factory=dict)
    base: str | None = None


@dataclass
class JoinLattice:
    """A lattice written from recorded joins: `op` with `options` over every pair of `nodes`
    (a join weak where one of `weak_from` gave it weak), as each node's immediate successors.
    The tool checks that every join is the least upper bound of the order the joins define
    (x <= y when join(x, y) = y); the engine computes the joins back from the edges."""

    name: str
    op: str
    nodes: list[str]
    comment: list[str]
    reason: str
    options: dict = field(default_factory=dict)
    weak_from: list[str] = field(default_factory=list)


@dataclass
class RuleFile:
    rules: Path
    recording: Path
    blocks: list  # Table | Lattice


SCALARS = ["py:bool", "py:int", "py:float", "py:complex"]

def _numpy_tables(comments: dict[str, list[str]]) -> list[Table]:
    """NumPy's recorded tables, each with its rule file's comment: np.promote_types, the add ufunc's loop on two
    arrays, and an ml_dtypes array with a Python scalar under + and np.result_type."""
    return [
        Table("promote", "promote_types", "types", "types", commutative=True, comment=comments["promote"],
              reason={"message": "no_common_dtype"}),
        Table("ufunc_add", "add", "types", "types", comment=comments["ufunc_add"],
              reason="ufunc 'add' did not contain a loop with signature matching types ({a}, {b})"),
        Table("scalar_add", "add", "ml_dtypes", SCALARS, comment=comments["scalar_add"],
              reason="ufunc 'add' has no loop for {a} with {b}"),
        Table("scalar_result_type", "result_type", "ml_dtypes", SCALARS, comment=comments["scalar_result_type"],
              reason={"message": "no_common_dtype"}),
    ]


FILES = [
    RuleFile(ROOT / "rules" / "numpy.toml", RECORDINGS / "numpy-2.4.json", _numpy_tables({
        "promote": ["np.promote_types(a, b), which np.result_type of two arrays also gives: NumPy's",
                    "__common_dtype__ of the two DTypes, with ml_dtypes' registered promotions."],
        "ufunc_add": ["a + b on two arrays: the add ufunc's loop.  Where both are NumPy's own types this",
                      "is the promote table; with an ml_dtypes type the ufunc's legacy type resolver",
                      "picks the first registered loop both inputs cast to safely, which need not",
                      "be symmetric and may exist where promote_types refuses."],
        "scalar_add": ["an ml_dtypes array + a Python scalar (1, 1.5, 1+2j): the legacy type resolver",
                       "again, which sees the scalar's value (NumPy's own types follow NEP 50, as rules)."],
        "scalar_result_type": ["np.result_type(an ml_dtypes array, a Python scalar): NumPy's abstract Python",
                               "DTypes try float16 then float64 for a float, complex64 then complex128 for a",
                               "complex, uint8, int8 then int64 for an int (NumPy's own types: NEP 50, as rules)."],
    })),
    RuleFile(ROOT / "rules" / "numpy@1.26.toml", RECORDINGS / "numpy-1.26.json", _numpy_tables({
        "promote": ["np.promote_types(a, b) in NumPy 1.26 with ml_dtypes 0.5.4's registered promotions,",
                    "which two arrays (or two scalars) promote by."],
        "ufunc_add": ["a + b on two arrays: the add ufunc's loop (with an ml_dtypes type, the first",
                      "registered loop both inputs cast to safely)."],
        "scalar_add": ["an ml_dtypes array + a Python scalar (1, 1.5, 1+2j): the add ufunc's linear search",
                       "over its loops, each scalar cast by its value (ufunc_type_resolution.c)."],
        "scalar_result_type": ["np.result_type(an ml_dtypes array or scalar, a Python scalar): the abstract Python",
                               "DType's fallbacks (uint8, int8, int64 for an int; float16, float64; complex64, complex128)."],
    })),
    RuleFile(ROOT / "rules" / "array-api@2025.12.toml", RECORDINGS / "array-api-2025.12.json", [
        Table("promotion", "result_type", "types", "types", commutative=True,
              comment=["The standard's promotion table (array_api_strict._dtypes._promotion_table):",
                       "result_type of two arrays; an absent pair is a refusal."],
              reason="{a} and {b} cannot be type promoted together"),
    ]),
]


#: JAX's TypePromotionError messages, in short: the standard lattice refuses only pairs with
#: a type of the families that do not promote implicitly; the strict one every other pair.
STANDARD_REASON = ("{a} and {b} have no available implicit dtype promotion path: 8-, 6- and 4-bit floats and "
                   "1-, 2- and 4-bit integers do not support implicit promotion (cast explicitly, e.g. x.astype('float32'))")
STRICT_REASON = ("{a} and {b} have no available implicit dtype promotion path when jax_numpy_dtype_promotion=strict; "
                 "cast explicitly or set jax_numpy_dtype_promotion=standard")


def _jax_lattices() -> list:
    out = []
    for mode in ("standard", "strict"):
        for x64 in (False, True):
            name = f"{mode}_{'x64' if x64 else 'x32'}"
            key = "strict" if mode == "strict" else ("x64" if x64 else "x32")
            base = f"{mode}_x32" if x64 else None
            lead = (f"the {base} lattice with x64's weak dtypes and its own edges, where they differ." if base else
                    f"jax._src.dtypes._type_promotion_lattice(strict={mode == 'strict'}, x64={x64}): each type and its")
            comment = [lead, *([] if base else ["immediate successors; py:int, py:float, py:complex are JAX's weak int, "
                                                "float", "and complex nodes, weak = their dtype (the default int, float "
                                                "and complex)."])]
            reason = (STRICT_REASON if mode == "strict" else STANDARD_REASON)
            out.append(Lattice(name, key, comment, reason, {"x64": x64, "numpy_dtype_promotion": mode}, base))
    return out


FILES.append(RuleFile(ROOT / "rules" / "jax.toml", RECORDINGS / "jax-0.10.json", _jax_lattices()))


def _recorded_types(recording: Path, op: str) -> list[str]:
    """The dtypes a recording asked `op` about, in the order it asked them."""
    seen: dict[str, None] = {}
    for case in json.loads(recording.read_text(encoding="utf-8"))["cases"]:
        if case[0] == op and isinstance(case[1], str) and ":" not in case[1]:
            seen.setdefault(case[1], None)
    return list(seen)


def _torch() -> RuleFile:
    recording = RECORDINGS / "torch-2.13.json"
    types = _recorded_types(recording, "promote_types")
    return RuleFile(ROOT / "rules" / "torch.toml", recording, [
        Table("promote", "promote_types", types, types, commutative=True,
              comment=["torch.promote_types over every dtype PyTorch has a name for: its promotion lookup",
                       "(c10/core/ScalarType.cpp) with the float8, barebones-unsigned and sub-byte checks",
                       "in front of it.  x: PyTorch refuses the pair (the rules below say why)."],
              reason="torch.promote_types refuses {a} with {b}"),
    ])


TF_WEAK = ["weak:i32", "weak:i64", "weak:f32", "weak:f64", "weak:c128"]
#: the nodes of TensorFlow's lattice: its public dtypes and its WeakTensors.
TF_LATTICE = ["bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
              "bf16", "f16", "f32", "f64", "c64", "c128"] + TF_WEAK


def _tensorflow() -> RuleFile:
    recording = RECORDINGS / "tensorflow-2.21.json"
    types = _recorded_types(recording, "tnp.result_type")

    def mode(name: str, prefer_float32: bool = False) -> dict:
        return {"dtype_conversion_mode": name, "prefer_float32": prefer_float32}

    everything = types + TF_WEAK + SCALARS
    return RuleFile(ROOT / "rules" / "tensorflow.toml", recording, [
        Table("numpy", "tnp.result_type", types + SCALARS, types + SCALARS, options=mode("legacy"),
              commutative=True,
              comment=["tnp.result_type in legacy mode (and with NumPy behaviour off): NumPy's own promotion",
                       "(numpy.result_type over the ml_dtypes types), Python scalars as NumPy 2 treats them."],
              reason={"message": "numpy_refuses"}),
        Table("numpy_prefer_float32", "tnp.result_type", SCALARS, types + SCALARS,
              options=mode("legacy", True),
              comment=["The Python-scalar rows of the numpy table with prefer_float32=true: a Python float",
                       "is a float32, a Python complex a complex64."],
              reason={"message": "numpy_refuses"}),
        Table("safe", "tnp.result_type", everything, everything, options=mode("safe"), commutative=True,
              weak_from=["add", "tf.add"],
              comment=["dtype_conversion_mode=safe: TensorFlow's auto dtype conversion lattice without the",
                       "conversions that may lose precision (flexible_dtypes.py).  weak:X is a WeakTensor;",
                       "a Python int is weak i32, a float weak f32, a complex weak c128; x: refused."],
              reason="In promotion mode PromoMode.SAFE, implicit dtype promotion between {a} and {b} is disallowed"),
        JoinLattice("all", "tnp.result_type", TF_LATTICE, options=mode("all"), weak_from=["add", "tf.add"],
                    comment=["dtype_conversion_mode=all: TensorFlow's auto dtype conversion lattice (flexible_dtypes.py),",
                             "written from the joins recorded for every pair of its nodes.  weak:X is a WeakTensor",
                             "(TensorFlow's i32*, i64*, f32*, f64*, c128*); a Python bool stands at bool, an int at",
                             "weak:i32, a float at weak:f32, a complex at weak:c128."],
                    reason="TensorFlow's dtype conversion lattice has no {a} or {b}"),
    ])


FILES += [_torch(), _tensorflow()]


def load_recording(path: Path) -> tuple[dict, dict]:
    """((op, a, b, options) -> result or None, the recording's other keys)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    answers = {}
    for op, a, b, options, result, _error in data["cases"]:
        if isinstance(a, list):
            continue
        answers[op, a, b, json.dumps(options, sort_keys=True)] = result
    return answers, data


def _q(text: str) -> str:
    return json.dumps(text)


def _key(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else _q(text)


def _aligned(keys: list[str], values: list[list[str]], key_width: int) -> list[str]:
    widths = [max(len(v[i]) for v in values) for i in range(len(values[0]))]
    out = []
    for key, row in zip(keys, values):
        padded = [v + "," + " " * (w - len(v)) for v, w in zip(row[:-1], widths[:-1])]
        out.append(f"{key:<{key_width}} = [" + " ".join(padded + [row[-1]]) + "]")
    return out


def operands(spec: list[str] | str, rules: Path) -> list[str]:
    """A table axis: its operands, or the dtypes of a type set of the rule file (``types``: all)."""
    if isinstance(spec, list):
        return spec
    from promote_cli.oracle.loader import read_toml, type_set  # noqa: PLC0415

    raw = read_toml(rules)
    if spec == "types":
        return [d.name for d in type_set({**raw, "sets": {**raw.get("sets", {}), "_types": raw["types"]}},
                                         "_types", str(rules))]
    return [d.name for d in type_set(raw, spec, str(rules))]


def _cell(answers: dict, op: str, row: str, col: str, opts: str, weak_from: list[str]) -> str:
    """One recorded answer as a cell: the result, weak where a `weak_from` op gave it weak, or the refusal marker."""
    key = (op, row, col, opts)
    if key not in answers:
        raise SystemExit(f"{TOOL}: the recording has no case {key}")
    cell = answers[key] if answers[key] is not None else REFUSAL
    if any(answers.get((w, row, col, opts)) == f"weak:{cell}" for w in weak_from):
        cell = f"weak:{cell}"
    return cell


def _reason(reason: str | dict) -> str:
    """A reason as the rule file writes it: the text, or `{ message = "NAME" }` (the file's [messages] NAME)."""
    if isinstance(reason, dict):
        return "{ message = " + _q(reason["message"]) + " }"
    return _q(reason)


def render_table(table: Table, answers: dict, rules: Path) -> str:
    opts = json.dumps(table.options, sort_keys=True)
    rows, columns = operands(table.rows, rules), operands(table.columns, rules)
    table = replace(table, rows=rows, columns=columns)
    cells = {(row, col): _cell(answers, table.op, row, col, opts, table.weak_from)
             for row in table.rows for col in table.columns}
    head = [_q(c) for c in table.columns]
    body = [[_q(cells[row, c]) for c in table.columns] for row in table.rows]
    keys = ["columns"] + [_key(r) for r in table.rows]
    width = max(len(k) for k in keys)
    lines = _aligned(keys, [head] + body, width)
    out = [f"[tables.{table.name}]"] + [f"# {c}" for c in table.comment]
    if table.commutative:
        out.append("commutative = true")
    out.append(f"reason = {_reason(table.reason)}")
    out.append(lines[0])
    out.append(f"[tables.{table.name}.rows]")
    out += lines[1:]
    return "\n".join(out)


WEAK_NODES = ("py:int", "py:float", "py:complex")


def render_lattice(lattice: Lattice, data: dict, answers: dict, blocks: list) -> str:
    """A recorded lattice's block; with a `base`, only what differs from the base lattice: its weak dtypes, its
    reason when it has another, and the edges of the nodes whose successors differ (the loader's patch)."""
    edges = _recorded_lattice(data, lattice.key)
    opts = json.dumps(lattice.options, sort_keys=True)
    weak = {}
    for node in WEAK_NODES:
        key = ("result_type", node, node, opts)
        if answers.get(key) is None:
            raise SystemExit(f"{TOOL}: the recording has no answer for {key}")
        weak[node] = answers[key]
    base = next((b for b in blocks if isinstance(b, Lattice) and b.name == lattice.base), None)
    if lattice.base and base is None:
        raise SystemExit(f"{TOOL}: lattice {lattice.name}: no block writes its base {lattice.base!r}")
    out = [f"[lattices.{lattice.name}]"] + [f"# {c}" for c in lattice.comment]
    if base is not None:
        out.append(f"base = {_q(base.name)}")
        below = _recorded_lattice(data, base.key)
        gone = [node for node in below if node not in edges]
        if gone:
            raise SystemExit(f"{TOOL}: lattice {lattice.name} lacks {gone[0]} of its base {base.name}")
        edges = {node: succ for node, succ in edges.items() if below.get(node) != succ}
    out.append("weak = { " + ", ".join(f"{_q(n)} = {_q(d)}" for n, d in weak.items()) + " }")
    if base is None or lattice.reason != base.reason:
        out.append(f"reason = {_q(lattice.reason)}")
    if not edges:
        return "\n".join(out)
    out.append(f"[lattices.{lattice.name}.edges]")
    width = max(len(_key(n)) for n in edges)
    out += [f"{_key(node):<{width}} = [" + ", ".join(_q(s) for s in succ) + "]" for node, succ in edges.items()]
    return "\n".join(out)


def _recorded_lattice(data: dict, key: str) -> dict:
    edges = data.get("lattices", {}).get(key)
    if edges is None:
        raise SystemExit(f"{TOOL}: the recording has no lattice {key!r}")
    return edges


def hasse(lattice: JoinLattice, answers: dict) -> dict[str, list[str]]:
    """Each node's immediate successors; SystemExit when the recorded joins are not a lattice's."""
    opts = json.dumps(lattice.options, sort_keys=True)
    nodes = lattice.nodes
    join = {(x, y): _cell(answers, lattice.op, x, y, opts, lattice.weak_from) for x in nodes for y in nodes}

    def le(x: str, y: str) -> bool:
        return join[x, y] == y

    for (x, y), z in join.items():
        uppers = [u for u in nodes if le(x, u) and le(y, u)]
        least = [u for u in uppers if all(le(u, v) for v in uppers)]
        if least != [z]:
            raise SystemExit(f"{TOOL}: lattice {lattice.name}: the join of {x} and {y} is {z}, "
                             f"not the least upper bound ({least or 'none'})")
    edges = {}
    for x in nodes:
        above = [y for y in nodes if y != x and le(x, y)]
        edges[x] = [y for y in above if not any(z != y and le(z, y) for z in above)]
    return edges


def render_join_lattice(lattice: JoinLattice, answers: dict) -> str:
    edges = hasse(lattice, answers)
    width = max(len(_key(n)) for n in lattice.nodes)
    out = [f"[lattices.{lattice.name}]"] + [f"# {c}" for c in lattice.comment]
    out.append(f"reason = {_q(lattice.reason)}")
    out.append(f"[lattices.{lattice.name}.edges]")
    out += [f"{_key(n):<{width}} = [" + ", ".join(_q(e) for e in edges[n]) + "]" for n in lattice.nodes]
    return "\n".join(out)


_BLOCK = re.compile(r"^# BEGIN generated (?P<kind>table|lattice) (?P<name>\S+) \(.*?\)\n(?P<body>.*?)"
                    r"^# END generated (?P=kind) (?P=name)$", re.M | re.S)


def rewrite(text: str, spec: RuleFile, answers: dict, data: dict, rules: Path | None = None) -> str:
    """`text` with every generated block written anew; SystemExit when blocks are missing or unknown."""
    by_name = {b.name: b for b in spec.blocks}
    found = [m.group("name") for m in _BLOCK.finditer(text)]
    unknown = sorted(set(found) - set(by_name))
    missing = sorted(set(by_name) - set(found))
    doubled = sorted({n for n in found if found.count(n) > 1})
    if unknown or missing or doubled:
        raise SystemExit(f"{TOOL}: {spec.rules.name}: generated blocks: unknown {unknown}, missing {missing}, "
                         f"repeated {doubled}")

    def block(m: re.Match) -> str:
        item = by_name[m.group("name")]
        kind = "table" if isinstance(item, Table) else "lattice"
        if isinstance(item, JoinLattice):
            body = render_join_lattice(item, answers)
        elif isinstance(item, Lattice):
            body = render_lattice(item, data, answers, spec.blocks)
        else:
            body = render_table(item, answers, rules or spec.rules)
        return f"# BEGIN generated {kind} {item.name} ({TOOL})\n{body}\n# END generated {kind} {item.name}"

    return _BLOCK.sub(block, text)


def check(spec: RuleFile, rules: Path | None = None) -> list[str]:
    """The generated blocks of a rule file that differ from what the tool writes (empty: up to date)."""
    path = rules or spec.rules
    text = path.read_text(encoding="utf-8")
    answers, data = load_recording(spec.recording)
    new = rewrite(text, spec, answers, data, path)
    if new == text:
        return []
    old_blocks = {m.group("name"): m.group(0) for m in _BLOCK.finditer(text)}
    return [m.group("name") for m in _BLOCK.finditer(new) if old_blocks.get(m.group("name")) != m.group(0)]


def write(spec: RuleFile, rules: Path | None = None) -> bool:
    path = rules or spec.rules
    text = path.read_text(encoding="utf-8")
    answers, data = load_recording(spec.recording)
    new = rewrite(text, spec, answers, data, path)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a rule file is stale")
    parser.add_argument("files", nargs="*", help="rule files to handle (default: all)")
    args = parser.parse_args(argv)
    chosen = [f for f in FILES if not args.files or f.rules.name in {Path(p).name for p in args.files}]
    status = 0
    for spec in chosen:
        if args.check:
            stale = check(spec)
            if stale:
                print(f"{spec.rules}: stale generated blocks: {', '.join(stale)} (run python {TOOL})",
                      file=sys.stderr)
                status = 1
        elif write(spec):
            print(f"wrote {spec.rules}")
    return status


if __name__ == "__main__":
    sys.exit(main())
