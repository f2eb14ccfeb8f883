"""Answering a query from a compiled `Ruleset`.

    answer(ruleset, a, b, op, options) -> Answer
    answer_n(ruleset, operands, op, options) -> Answer     result_type(a, b, c, ...)

1. the op name picks an op group; the options are parsed against their declarations;
2. operand forms are normalised by the file's `[operands]` policy, dtypes outside
   `types` are refused;
3. the first `[[rules]]` clause whose condition holds gives a result (or refuses);
4. every matching `[[after]]` clause adjusts the result or refuses;
5. a refusal is explained: the engine re-asks with each option's hint values and says
   which one would give a result.
An `Engine` per (ruleset, option values) holds the memo of decisions; the evaluation environment is built
once per ruleset and shared by its engines.
"""

from __future__ import annotations

from promote_cli.errors import PromoteError, Refusal, RuleDefect, UsageError
from promote_cli.oracle.checked import function_table
from promote_cli.oracle.model import REFUSE, Clause, Lattice, Ruleset
from promote_cli.records import Record
from promote_cli.vocab import dtypes, operands
from promote_cli.vocab.values import fits as holds_value
from promote_cli.vocab.dtypes import DTYPES, DType
from promote_cli.vocab.operands import PYTHON, RANK0, TENSOR, WEAK, Operand


class Answer(Record):
    """One query's answer. `result` is the canonical result operand, None when refused."""

    framework: str
    version: str
    op: str
    a: str
    b: str
    options: dict
    result: str | None
    rule: str | None
    reason: str
    refusal: str | None = None
    hint: dict | None = None
    result_operand: Operand | None = None
    operands: tuple[str, ...] | None = None  # every operand of an N-ary answer (answer_n); None for a pair

    @property
    def refused(self) -> bool:
        return self.result is None

    def to_dict(self) -> dict:
        data = {"framework": self.framework, "op": self.op, "a": self.a, "b": self.b, "result": self.result}
        if self.operands is not None:
            data["operands"] = list(self.operands)
        if self.refusal is not None:
            data["error"] = self.refusal
        data["rule"] = self.rule
        if self.reason:
            data["reason"] = self.reason
        if self.hint:
            data["allowed_with"] = self.hint
        data["version"] = self.version
        data["options"] = self.options
        return data


class SetText(str):
    """A type set in a message: `{ints}` is "i8, i16, i32", `{ints:or}` "i8, i16 or i32", `{ints:and}` "... and"."""

    def __new__(cls, names):
        names = tuple(names)
        text = super().__new__(cls, ", ".join(names))
        text.names = names
        return text

    def __format__(self, spec: str) -> str:
        if spec in ("or", "and") and len(self.names) > 1:
            return f"{', '.join(self.names[:-1])} {spec} {self.names[-1]}"
        return str.__format__(self, "" if spec in ("or", "and") else spec)


class _Decided(Exception):
    """A clause refused; carries the rule name."""

    def __init__(self, message: str, rule: str | None):
        super().__init__(message)
        self.rule = rule


# ---- the functions rule expressions may call ----------------------------------------

def _dt(x) -> DType:
    if isinstance(x, DType):
        return x
    if isinstance(x, Operand):
        if x.dtype is None:
            raise Refusal(f"{x} is a Python scalar, which has no dtype until the framework gives it one")
        return x.dtype
    raise TypeError(f"expected a dtype or operand, got {x!r}")


def _kind(x) -> str:
    return x.kind if isinstance(x, (DType, Operand)) else _dt(x).kind


def _form(x) -> str:
    return x.form if isinstance(x, Operand) else TENSOR


def _int_range(x) -> tuple[int, int]:
    d = _dt(x)
    if d.kind == "bool":
        return 0, 1
    if d.kind not in ("signed", "unsigned"):
        raise Refusal(f"{d} is not an integer")
    return int(d.min), int(d.max)


def _signed_int(n: int) -> DType:
    found = dtypes.int_of(int(n), True)
    if found is None:
        raise Refusal(f"there is no {n}-bit signed integer type")
    return found


def _unsigned_int(n: int) -> DType:
    found = dtypes.int_of(int(n), False)
    if found is None:
        raise Refusal(f"there is no {n}-bit unsigned integer type")
    return found


def _complex_of(x) -> DType:
    d = _dt(x)
    if d.kind == "complex":
        return d
    for c in DTYPES.values():
        if c.kind == "complex" and c.bits == 2 * d.bits and d.kind == "float" and (c.exp_bits, c.man_bits) == (
                d.exp_bits, d.man_bits):
            return c
    raise Refusal(f"there is no complex type with {d} parts")


def _value(x):
    """The value an operand carries (`py:300` 300, `0d:f32=1.5` 1.5); a rule defect for one without."""
    if not isinstance(x, Operand) or x.value is None:
        raise TypeError(f"{x} has no value (ask has_value first)")
    return x.value


def _fits(x, t) -> bool:
    """Whether x carries a value that type t holds (values.held: an integer in range, a real within a float's
    finite range or a NaN or infinity it has, ...); false for an operand without a value."""
    return isinstance(x, Operand) and x.value is not None and holds_value(x.value, _dt(t))


_PY_KINDS = {"bool": "bool", "signed": "int", "unsigned": "int", "float": "float", "complex": "complex"}


def _python_scalar(x) -> Operand:
    """The Python scalar of x's kind (`py(i64)` is `py:int`): what an op gives back for a Python scalar."""
    if isinstance(x, Operand) and x.form == PYTHON:
        return x
    return Operand(PYTHON, None, _PY_KINDS[_dt(x).kind])


def _real_of(x) -> DType:
    d = _dt(x)
    if d.kind != "complex":
        return d
    return next(f for f in DTYPES.values() if f.kind == "float" and f.bits * 2 == d.bits
                and (f.exp_bits, f.man_bits) == (d.exp_bits, d.man_bits))


def _lookups(rs: Ruleset, trace: list | None):
    """The rule functions `table(NAME, x, y)` and `join(NAME, x, y)` of ruleset `rs`; with a `trace` list, each
    look-up is also appended to it (`promote explain`'s steps)."""

    def table(name: str, x, y):
        t = rs.tables[name]
        row = _key(x, t.rows)
        col = _key(y, t.columns)
        cell = t.cells.get((row, col)) if row is not None and col is not None else None
        if trace is not None:
            trace.append(("table", name, row, col, None if cell is REFUSE else cell))
        if cell is None or cell is REFUSE:
            raise Refusal(t.reasons.get((row, col), t.reason).format(a=x, b=y, table=name))
        return cell

    def join(name: str, x, y):
        lat = rs.lattices[name]
        kx, ky = _node(lat, x), _node(lat, y)
        least = lat.joins.get((kx, ky)) if kx is not None and ky is not None else None
        if trace is not None:
            trace.append(("lattice", name, kx, ky, least))
        if least is None:
            raise Refusal(lat.reason.format(a=x, b=y))
        return lat.weak.get(least) or lat.nodes[least]

    return table, join


def _environment(rs: Ruleset) -> dict:
    """The evaluation globals of one ruleset: functions, dtype names, constants."""
    ints = sorted((d for d in rs.types if d.kind in ("signed", "unsigned")), key=lambda d: (d.bits, d.kind))
    floats = sorted((d for d in rs.types if d.kind == "float" and d.exp_bits), key=lambda d: (d.bits, -d.man_bits))

    def smallest_int(x, y) -> DType:
        lo = min(_int_range(x)[0], _int_range(y)[0])
        hi = max(_int_range(x)[1], _int_range(y)[1])
        signed_wanted = lo < 0
        fits = [d for d in ints if d.min <= lo and d.max >= hi]
        if not fits:
            raise Refusal(f"no integer type of {rs.key} holds both {x} and {y}")
        width = fits[0].bits
        same = [d for d in fits if d.bits == width]
        return next((d for d in same if (d.kind == "signed") == signed_wanted), same[0])

    def smallest_float(x, y) -> DType:
        e = max(_dt(x).exp_bits, _dt(y).exp_bits)
        m = max(_dt(x).man_bits, _dt(y).man_bits)
        for d in floats:
            if d.exp_bits >= e and d.man_bits >= m:
                return d
        raise Refusal(f"no floating-point type of {rs.key} holds both {x} and {y}")

    table, join = _lookups(rs, None)

    def refuses(name: str, x, y) -> bool:
        try:
            table(name, x, y)
        except Refusal:
            return True
        return False

    choices = {name: x.pick for name, x in [*rs.lattices.items(), *rs.maps.items()] if x.option is not None}

    def pick(name: str, value) -> str:
        return choices[name][value]

    def mapped(name: str, x):
        d = x if isinstance(x, DType) else x.dtype
        to = rs.maps[name].pairs.get(d.name) if d is not None else None
        if to is None:
            return x
        return Operand(x.form, to) if isinstance(x, Operand) else to

    kind_priority = {d.kind: d.priority for d in DTYPES.values()}

    def priority(x) -> int:
        if isinstance(x, Operand) and x.dtype is None:
            return kind_priority[x.kind]
        return _dt(x).priority

    env = function_table(
        is_bool=lambda x: _kind(x) == "bool",
        is_int=lambda x: _kind(x) in ("signed", "unsigned"),
        is_signed=lambda x: _kind(x) == "signed",
        is_unsigned=lambda x: _kind(x) == "unsigned",
        is_float=lambda x: _kind(x) == "float",
        is_complex=lambda x: _kind(x) == "complex",
        kind=_kind,
        priority=priority,
        is_tensor=lambda x: _form(x) == TENSOR,
        is_rank0=lambda x: _form(x) == RANK0,
        is_python=lambda x: _form(x) == PYTHON,
        is_weak=lambda x: _form(x) == WEAK,
        has_value=lambda x: isinstance(x, Operand) and x.value is not None,
        value=_value,
        fits=_fits,
        dtype=_dt,
        bits=lambda x: _dt(x).bits,
        exp_bits=lambda x: _dt(x).exp_bits,
        man_bits=lambda x: _dt(x).man_bits,
        signed_int=_signed_int,
        unsigned_int=_unsigned_int,
        smallest_int=smallest_int,
        smallest_float=smallest_float,
        complex_of=_complex_of,
        real_of=_real_of,
        weak=lambda x: Operand(WEAK, _dt(x)),
        py=_python_scalar,
        strong=lambda x: Operand(TENSOR, _dt(x)),
        table=table,
        refuses=refuses,
        join=join,
        _pick=pick,
        mapped=mapped,
        max=max, min=min, abs=abs,
    )
    env.update(DTYPES)
    env.update(true=True, false=False)
    env.update({name: frozenset(members) for name, members in rs.sets.items()})
    env.update({name: frozenset(groups) for name, groups in rs.op_lists.items()})
    return env


_PY_NODE = {"bool": "py:bool", "signed": "py:int", "unsigned": "py:int", "float": "py:float", "complex": "py:complex"}


def _node(lat: Lattice, x) -> str | None:
    """The node of lattice `lat` that operand x stands at (memoised per lattice).

    Its own spelling (`weak:i32`, `py:int`, `0d:i8`) when that is a node; a weak operand
    stands at the Python scalar node of its kind (`weak:i16` at `py:int`, as JAX's weak
    types do) when the lattice has one; otherwise at its dtype (`py:bool` at `bool`). A value
    is not looked at: `py:300` stands where `py:int` does.
    """
    if isinstance(x, Operand):
        x = x.without_value()
    text = str(x)
    hit = lat.lookup.get(text, False)
    if hit is not False:
        return hit
    node = None
    if text in lat.nodes:
        node = text
    elif isinstance(x, Operand):
        if x.form == WEAK and _PY_NODE.get(x.kind) in lat.nodes:
            node = _PY_NODE[x.kind]
        elif x.dtype is not None and x.dtype.name in lat.nodes:
            node = x.dtype.name
        elif x.form == PYTHON and x.pykind == "bool" and "bool" in lat.nodes:
            node = "bool"
    elif isinstance(x, DType) and x.name in lat.nodes:
        node = x.name
    lat.lookup[text] = node
    return node


def _key(x, keys) -> str | None:
    """The table/lattice key for x: its own spelling (without a value), else its plain dtype."""
    if isinstance(x, Operand):
        x = x.without_value()
    text = str(x)
    if text in keys:
        return text
    if isinstance(x, Operand) and x.dtype is not None and x.dtype.name in keys:
        return x.dtype.name
    return None


# ---- answering --------------------------------------------------------------------

def resolve_op(rs: Ruleset, op: str) -> str:
    """The op group of an op name; UsageError naming the valid ones."""
    if rs.ops is None:
        return op
    group = rs.op_index.get(op)
    if group is None:
        import difflib

        if rs.op_names:  # the framework's ops by name: the closest of them all
            close = difflib.get_close_matches(op, [*rs.op_names, *rs.op_index], n=4, cutoff=0.5)
            hint = f"; closest: {', '.join(close)}" if close else f"; `promote ops -f {rs.name}` lists them"
            raise UsageError(f"{rs.key} has no op {op!r}{hint}")
        close = difflib.get_close_matches(op, list(rs.op_index), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"{rs.key} has no op {op!r}{hint}; ops: {', '.join(rs.op_index)}")
    return group


def parse_options(rs: Ruleset, given: dict | None) -> dict:
    """Typed option values (defaults filled in); UsageError for unknown names or bad values."""
    values = {name: opt.default for name, opt in rs.options.items()}
    for name, value in (given or {}).items():
        opt = rs.options.get(name)
        if opt is None:
            valid = ", ".join(rs.options) or "none"
            raise UsageError(f"{rs.key} has no option {name!r} (options: {valid})")
        values[name] = opt.parse(value)
    return values


def normalise(rs: Ruleset, x: Operand | str) -> Operand:
    """Apply the file's operand policy; UsageError for a form it refuses, Refusal for foreign dtypes."""
    if isinstance(x, str):
        x = operands.parse(x)
    policy = rs.operands
    if x.form == RANK0 and policy.rank0 == "tensor":
        x = x.with_form(TENSOR)
    elif x.form == WEAK:
        if policy.weak == "refuse":
            raise UsageError(policy.refuse_message or f"{rs.key} has no rules for weak operands like {x}")
        if policy.weak == "tensor":
            x = x.with_form(TENSOR)
    elif x.form == PYTHON:
        if isinstance(policy.python, dict):
            mapped = policy.python.get(x.pykind)
            if mapped is None:
                raise UsageError(f"{rs.key} has no Python {x.pykind} scalars")
            x = mapped
        elif policy.python == "refuse":
            raise UsageError(policy.refuse_message or f"{rs.key} has no rules for Python scalars like {x}")
    if x.dtype is not None and x.dtype not in rs.type_set:
        raise Refusal(rs.unsupported_type.format(dtype=x.dtype))
    return x


class Engine:
    """Answering for one ruleset under one assignment of its options (`engine(rs, values)` makes or finds it).

    It owns the memo of decisions (`key` is its one key), the evaluation environment of the ruleset's rule
    expressions, the set texts its messages format and the `[nary]` ranks; the last three are built once per
    ruleset and shared by its engines. `decide` is the one way a pair is decided; given a `trace` list it
    decides afresh (no memo) and appends what the rules consulted to that list alone: nothing of the trace
    lives in the shared state, so a decision nested in a traced one is neither traced nor disturbed.
    """

    __slots__ = ("rs", "values", "env", "set_text", "ranks", "memo")

    def __init__(self, rs: Ruleset, values: dict, sibling: Engine | None = None):
        self.rs, self.values, self.memo = rs, values, {}
        if sibling is not None:
            self.env, self.set_text, self.ranks = sibling.env, sibling.set_text, sibling.ranks
        else:
            self.env = _environment(rs)
            self.set_text = {name: SetText(d.name for d in members) for name, members in rs.sets.items()}
            self.ranks = {spelling: i for i, spelling in enumerate(rs.nary.order)}

    @staticmethod
    def key(op: str, a: Operand, b: Operand, after: bool, skip_after: frozenset) -> tuple:
        """The memo's key of a decision (the options are the engine's own)."""
        return op, str(a), str(b), after, skip_after

    def local(self, group: str, op: str) -> dict:
        """The names a rule sees besides the environment: the options, the op group and the op as written."""
        local = dict(self.values)
        local["op"] = group
        local["_op_name"] = op
        return local

    def decide(self, op: str, a: Operand, b: Operand, after: bool = True, skip_after: frozenset = frozenset(),
               trace: list | None = None):
        """(result, rule, reason, refusal) for normalised operands; messages see `{op}` as the user wrote it.
        `after=False`: the `[[rules]]` clause's result, without the `[[after]]` clauses; `skip_after`: those
        clauses left out. With `trace` (a list), decided afresh and every table cell, lattice join and
        `[[after]]` change appended to it, as `("table" | "lattice" | "after", name, x, y, value)`."""
        if trace is not None:
            return self._decide(op, a, b, after, skip_after, trace)
        key = self.key(op, a, b, after, skip_after)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._decide(op, a, b, after, skip_after, None)
        return hit

    def _decide(self, op: str, a: Operand, b: Operand, after: bool, skip_after: frozenset, trace: list | None):
        rs = self.rs
        env = self.env
        if trace is not None:
            env = dict(env)
            env["table"], env["join"] = _lookups(rs, trace)
        local = self.local(resolve_op(rs, op), op)
        try:
            result, rule, reason = None, None, ""
            for clause in rs.rules:
                outcome = self._try(clause, env, local, a, b, None)
                if outcome is not None:
                    result, reason = outcome
                    rule = clause.name
                    break
            else:
                raise _Decided(f"no rule of {rs.key} decides {a} {op} {b}", None)
            if after:
                result, rule, reason = self.after(env, local, a, b, result, rule, reason, skip_after, trace)
            return result, rule, reason, None
        except _Decided as exc:
            return None, exc.rule, str(exc), str(exc)

    def after(self, env: dict, local: dict, a: Operand, b: Operand, result, rule, reason,
              skip: frozenset = frozenset(), trace: list | None = None):
        """Every matching `[[after]]` clause (but those named in `skip`) adjusts `result` (or raises _Decided)."""
        for clause in self.rs.after:
            if clause.name in skip:
                continue
            outcome = self._try(clause, env, local, a, b, result)
            if outcome is not None:
                if trace is not None:
                    trace.append(("after", clause.name, str(result), None, str(outcome[0])))
                result = outcome[0]
                if outcome[1]:
                    reason = f"{reason}; {outcome[1]}" if reason else outcome[1]
                rule = f"{rule}, {clause.name}"
        return result, rule, reason

    def _try(self, clause: Clause, env: dict, local: dict, a: Operand, b: Operand, result):
        """The clause's (result, reason) if its condition holds, else None; raises _Decided on refusal."""
        if clause.ops is not None and local["op"] not in clause.ops:
            return None
        rs = self.rs
        orders = ((a, b), (b, a)) if clause.symmetric and str(a) != str(b) else ((a, b),)
        for x, y in orders:
            local["a"], local["b"] = x, y
            if result is not None:
                local["result"] = result
            try:
                if clause.cond is not None and not clause.cond.eval(env, local):
                    continue
                fields = {**self.set_text, **local, "a": x, "b": y, "result": result,
                          "op": local["_op_name"], "op_group": local["op"]}
                if clause.refuse is not None:
                    raise _Decided(clause.refuse.format(**fields), clause.name)
                value = _as_operand(clause.result.eval(env, local))
                if clause.weak is not None:
                    local["result"] = value
                    value = Operand(WEAK if clause.weak.eval(env, local) else TENSOR, _dt(value))
                if value.dtype not in rs.type_set:
                    raise RuleDefect(f"{rs.path}: rule {clause.name!r} gives {value} for ({x}, {y}), "
                                     f"which is not one of the file's types")
                fields["result"] = value
                return value, clause.reason.format(**fields) if clause.reason else ""
            except Refusal as exc:
                raise _Decided(str(exc), clause.name) from None
            except (PromoteError, _Decided):
                raise
            except Exception as exc:  # a rule that does not fit these operands: a defect of the file
                raise RuleDefect(f"{rs.path}: rule {clause.name!r} fails on ({x}, {y}): {exc}") from None
        return None

    def formula(self, expr, where: str, **names):
        """A compiled rule expression evaluated with the engine's options and `names` (a, b, result, ...).

        A Refusal it raises passes through; any other failure is a RuleDefect naming the file and `where`."""
        local = dict(self.values)
        local.update(names)
        local.setdefault("op", None)
        try:
            return expr.eval(self.env, local)
        except PromoteError:
            raise
        except Exception as exc:
            shown = ", ".join(f"{k}={v}" for k, v in names.items())
            raise RuleDefect(f"{self.rs.path}: {where} fails on ({shown}): {exc}") from None

    def hint(self, decide) -> dict | None:
        """The first single option change under which `decide(engine)` (a decision's result) is not None:
        {option, value, result}."""
        rs = self.rs
        for name, opt in rs.options.items():
            for candidate in opt.hint:
                if candidate == self.values[name]:
                    continue
                got = decide(engine(rs, {**self.values, name: candidate}))
                if got is not None:
                    return {"option": name, "value": opt.show(candidate), "result": str(got)}
        return None


def engine(rs: Ruleset, values: dict) -> Engine:
    """The engine of ruleset `rs` under typed option `values` (every option's, as `parse_options` gives them)."""
    key = tuple(values.items())
    found = rs.engines.get(key)
    if found is None:
        found = rs.engines[key] = Engine(rs, values, next(iter(rs.engines.values()), None))
    return found


# ---- values: a Python int that does not fit ------------------------------------------

def expression_key(name: str, field: str | None = None, expr=None) -> str:
    """An operator's key in the rule file (`expressions.operators."/".result`), with the expression."""
    key = f'expressions.operators."{name}"' if not name.isidentifier() else f"expressions.operators.{name}"
    if field is not None:
        key = f"{key}.{field}"
    return f"{key} = {expr.text}" if expr is not None else key


def expression_operator(rs: Ruleset, op: str):
    """The `[expressions]` operator that a query's op is (`+` for `add`: the first whose op is in the same op
    group), or None."""
    if rs.expressions is None:
        return None
    found = rs.expressions.operators.get(op)
    if found is not None and found.op is not None:
        return found
    group = resolve_op(rs, op)
    return next((spec for spec in rs.expressions.operators.values()
                 if spec.op is not None and resolve_op(rs, spec.op) == group), None)


def python_int_value(x) -> int | None:
    """The value of a Python int operand that carries one, else None."""
    return x.value if isinstance(x, Operand) and x.form == PYTHON and x.pykind == "int" else None


def literal_refusal(rs: Ruleset, values: dict, spec, given: list, promoted: Operand) -> tuple[str, str] | None:
    """(message, the key that refuses) when a Python int among the `given` operands does not fit the dtype the
    operator's `literal_range` names for the `promoted` result (NEP 50's OverflowError), else None. The check of
    `promote expr`'s literals and of value operands (`py:300`) alike."""
    if spec is None or spec.literal_range is None or all(python_int_value(x) is None for x in given):
        return None
    a, b = given[0], given[-1]
    names = {"a": a, "b": b, "a_value": python_int_value(a) or 0, "b_value": python_int_value(b) or 0}
    bound = engine(rs, values).formula(spec.literal_range, expression_key(spec.name, "literal_range"),
                                       result=promoted, **names)
    d = _dt(bound)
    if d.kind not in ("signed", "unsigned"):
        return None
    low = -int(d.max) if d.kind == "unsigned" and rs.expressions.unsigned_wrap else int(d.min)
    for x in given:
        v = python_int_value(x)
        if v is not None and not low <= v <= int(d.max):
            native = dtypes.native_names(rs.name).get(d.name, d.name)
            return (rs.expressions.literal_range_message.format(value=v, dtype=native),
                    expression_key(spec.name, "literal_range", spec.literal_range))
    return None


def value_refusal(rs: Ruleset, values: dict, op: str, given: list, result: Operand | None):
    """`literal_refusal` for a query's op (its `[expressions]` operator); None without a result."""
    if result is None:
        return None
    return literal_refusal(rs, values, expression_operator(rs, op), given, result)


def answer(rs: Ruleset, a, b, op: str = "add", options: dict | None = None,
           skip_after: frozenset = frozenset(), check_values: bool = True) -> Answer:
    """The answer of ruleset `rs` for `a op b` with `options` (names -> values); `skip_after` names
    `[[after]]` clauses left out (an expression's operator whose kernel is not the op's). A Python int operand
    with a value out of the range the op's `[expressions]` operator allows refuses (`literal_refusal`) unless
    `check_values` is false (`promote expr` checks its own operator's range)."""
    resolve_op(rs, op)
    values = parse_options(rs, options)
    a_in = a if isinstance(a, Operand) else operands.parse(a)
    b_in = b if isinstance(b, Operand) else operands.parse(b)
    shown = {k: v.name if isinstance(v, DType) else v for k, v in values.items()}
    base = dict(framework=rs.name, version=rs.version, op=op, a=str(a_in), b=str(b_in), options=shown)
    try:
        na, nb = normalise(rs, a_in), normalise(rs, b_in)
    except Refusal as exc:
        return Answer(**base, result=None, rule="types", reason=str(exc), refusal=str(exc))
    eng = engine(rs, values)
    result, rule, reason, refusal = eng.decide(op, na, nb, skip_after=skip_after)
    refused = value_refusal(rs, values, op, [a_in, b_in], result) if check_values else None
    if refused is not None:
        result, refusal, rule = None, refused[0], f"{rule}; {refused[1]}"
        reason = refusal
    hint = None
    if result is None and not skip_after:
        hint = eng.hint(lambda other: other.decide(op, na, nb)[0])
    return Answer(**base, result=str(result) if result is not None else None, rule=rule, reason=reason,
                  refusal=refusal, hint=hint, result_operand=result)


def _as_operand(value) -> Operand:
    """A rule's result as an operand: a dtype is a tensor, a rank-0 result a tensor; a result has no value."""
    if isinstance(value, DType):
        return Operand(TENSOR, value)
    if isinstance(value, Operand):
        return value.with_form(TENSOR) if value.form == RANK0 else value.without_value()
    raise TypeError(f"a rule result must be a dtype or operand, got {value!r}")


def formula(rs: Ruleset, expr, values: dict, where: str, **names):
    """A compiled rule expression of `rs` evaluated with typed option `values` and `names` (a, b, result, ...).

    A Refusal it raises passes through; any other failure is a RuleDefect naming the file and `where`."""
    return engine(rs, values).formula(expr, where, **names)


# ---- N operands -------------------------------------------------------------------

def answer_n(rs: Ruleset, operand_list, op: str = "add", options: dict | None = None) -> Answer:
    """The answer for N operands (`result_type(a, b, c, ...)`), as the file's `[nary]` says.

    `fold` (the default): ((a op b) op c) ..., each step a whole pair answer whose result
    operand (weak or not) is the next step's left operand; the first refusal refuses the whole.
    `join`: the operands combined at once, each intermediate result keeping its form (a weak
    one stays weak), then the `[[after]]` clauses once on the end result: on a `lattice`, one
    least upper bound of every operand's node; without one, the `[[rules]]` clauses pairwise.
    `sequence`: a common-type reduction in which the operand that `knows` the other answers
    (see `_Sequence`). `grouped`: a fold within each form's group, then the groups' results
    combined from the weakest up (see `_grouped`). With `strong_first`, Python scalars and weak operands are first moved
    after the others.
    Two operands give what `answer` gives. The answer's `operands` lists them all; `a` and
    `b` are the first two.
    """
    parsed = [x if isinstance(x, Operand) else operands.parse(x) for x in operand_list]
    if not parsed:
        raise UsageError("result_type needs at least one operand")
    if len(parsed) == 2:
        out = answer(rs, parsed[0], parsed[1], op, options)
        out.operands = (out.a, out.b)
        return out
    resolve_op(rs, op)
    values = parse_options(rs, options)
    shown = {k: v.name if isinstance(v, DType) else v for k, v in values.items()}
    names = tuple(str(x) for x in parsed)
    base = dict(framework=rs.name, version=rs.version, op=op, a=names[0], b=names[1] if len(names) > 1 else "",
                options=shown, operands=names)
    try:
        normal = [normalise(rs, x) for x in parsed]
    except Refusal as exc:
        return Answer(**base, result=None, rule="types", reason=str(exc), refusal=str(exc))
    eng = engine(rs, values)
    result, rule, reason, refusal = _decide_n(eng, op, normal)
    refused = value_refusal(rs, values, op, parsed, result)
    if refused is not None:
        result, refusal, rule = None, refused[0], f"{rule}; {refused[1]}"
        reason = refusal
    hint = None
    if result is None:
        hint = eng.hint(lambda other: _decide_n(other, op, normal)[0])
    return Answer(**base, result=str(result) if result is not None else None, rule=rule, reason=reason,
                  refusal=refusal, hint=hint, result_operand=result)


def _decide_n(eng: Engine, op: str, normal: list[Operand]):
    """(result, rule, reason, refusal) for N normalised operands."""
    rs = eng.rs
    nary = rs.nary
    if nary.strong_first:  # the others first, then Python scalars and weak operands, each in their order
        normal = [x for x in normal if x.form not in (PYTHON, WEAK)] + [x for x in normal if x.form in (PYTHON, WEAK)]
    if nary.method == "sequence":
        return _Sequence(eng, op).run(normal)
    if nary.method == "join":
        return _join(eng, op, normal)
    if nary.method == "grouped":
        return _grouped(eng, op, normal)
    if len(normal) == 1:
        if normal[0].dtype is None:
            raise UsageError(f"{normal[0]} alone has no dtype in {rs.key}")
        return normal[0], "one operand", "a single operand is its own result", None
    acc, rules, reasons = normal[0], [], []
    for x in normal[1:]:
        result, rule, reason, refusal = eng.decide(op, acc, x)
        if result is None:
            return None, rule, f"{acc} {op} {x}: {reason}", f"{acc} {op} {x}: {refusal}"
        rules.append(rule)
        reasons.append(f"{acc} {op} {x} -> {result}")
        acc = _as_next(rs, result)
    return acc, "; ".join(rules), "folded left: " + ", ".join(reasons), None


def _as_next(rs: Ruleset, result: Operand) -> Operand:
    """A step's result as the next step's operand: as the file sees an operand."""
    try:
        return normalise(rs, result)
    except (UsageError, Refusal):
        return result


def _join(eng: Engine, op: str, normal: list[Operand]):
    """`join`: one bound of all operands (a lattice's, or the `[[rules]]` clauses' applied pairwise,
    intermediate results keeping their form), then the `[[after]]` clauses once, seeing the end
    result as `result` and the first and last operands as `a` and `b`."""
    rs = eng.rs
    if rs.nary.lattice is not None:
        found = _lattice_bound(eng, normal)
        if found[0] is None:
            return found
        acc, rule, reason = found
    else:
        acc, rules = normal[0], []
        for x in normal[1:] or normal:  # one operand: its bound with itself
            result, step_rule, step_reason, refusal = eng.decide(op, acc, x, after=False)
            if result is None:
                return None, step_rule, f"{acc} {op} {x}: {step_reason}", f"{acc} {op} {x}: {refusal}"
            rules.append(step_rule)
            acc = _as_next(rs, result)
        rule = "; ".join(rules)
        reason = f"the bound of {len(normal)} operands by the rules, weak ones kept weak"
    try:
        acc, rule, reason = eng.after(eng.env, eng.local(resolve_op(rs, op), op), normal[0], normal[-1], acc, rule,
                                      reason)
    except _Decided as exc:
        return None, f"{rule}, {exc.rule}", str(exc), str(exc)
    return acc, rule, reason, None


def _lattice_bound(eng: Engine, normal: list[Operand]):
    """(bound, rule, reason), or (None, rule, reason, refusal): the least upper bound on the `[nary]` lattice."""
    rs, values = eng.rs, eng.values
    lat = rs.lattices[rs.nary.lattice]
    if lat.option is not None:
        lat = rs.lattices[lat.pick[values[lat.option]]]
    if rs.nary.map is not None:
        chosen = rs.maps[rs.nary.map]
        pairs = rs.maps[chosen.pick[values[chosen.option]]].pairs if chosen.option else chosen.pairs
        normal = [Operand(x.form, pairs[x.dtype.name]) if x.dtype is not None and x.dtype.name in pairs else x
                  for x in normal]
    least = _node(lat, normal[0])
    for index, x in enumerate(normal[1:], 1):
        node = _node(lat, x)
        least = lat.joins.get((least, node)) if least is not None and node is not None else None
        if least is None:
            message = lat.reason.format(a=", ".join(map(str, normal[:index])), b=x)
            return None, f"lattice {lat.name}", message, message
    if least is None:
        message = lat.reason.format(a=normal[0], b=normal[0])
        return None, f"lattice {lat.name}", message, message
    result = _as_operand(lat.weak.get(least) or lat.nodes[least])
    return result, f"lattice {lat.name}", f"the least upper bound of {len(normal)} operands"


def _grouped(eng: Engine, op: str, normal: list[Operand]):
    """`grouped` (PyTorch's ResultTypeState, aten/src/ATen/native/TypeProperties.cpp): a left fold of
    the pair answers within each group of operands of one form; then, from the weakest group up,
    a group's result (in its form) with the combined result of the weaker ones (in the form of
    the group just below it)."""
    rs = eng.rs
    forms = rs.nary.groups
    stray = next((x for x in normal if x.form not in forms), None)
    if stray is not None:
        raise UsageError(f"{rs.key} answers N operands by their form ({', '.join(forms)}), and {stray} has none of them")

    combined, rules, reasons = None, [], []
    for form in reversed(forms):
        members = [x for x in normal if x.form == form]
        if not members:
            continue
        acc = members[0]
        for x in [*members[1:], *([combined] if combined is not None else [])]:
            result, rule, reason, refusal = eng.decide(op, acc, x)
            if result is None:
                return None, rule, f"{acc} {op} {x}: {reason}", f"{acc} {op} {x}: {refusal}"
            rules.append(rule)
            reasons.append(f"{acc} {op} {x} -> {result}")
            acc = result.with_form(form) if result.dtype is not None else result
        combined = acc
    result = _as_operand(combined.with_form(TENSOR)) if combined.form == RANK0 else combined
    if len(normal) == 1 or not rules:
        return result, "one operand" if len(normal) == 1 else "one form", "a group's operands, folded", None
    return result, "; ".join(rules), "by form, weakest first: " + ", ".join(reasons), None


_UNKNOWN = object()  # a common-type function that does not answer for the other operand


class _Sequence:
    """NumPy's common-type reduction (numpy/_core/src/multiarray/common_dtype.c,
    `PyArray_PromoteDTypeSequence` and `reduce_dtypes_to_most_knowledgeable`), over this
    file's pair answers.

    `one(x, y)` is x's own common-type function asked about y: x itself for the same
    operand; nothing (`_UNKNOWN`) unless the file's `knows` holds for (x, y); x itself
    where `keeps` holds; else the pair answer, nothing where that refuses. `both(x, y)`
    asks x, then y (NumPy's `PyArray_CommonDType`).
    """

    def __init__(self, eng: Engine, op: str):
        self.eng, self.rs, self.op = eng, eng.rs, op
        self.env = eng.env
        self.local = eng.local(resolve_op(eng.rs, op), op)
        self.ranks = eng.ranks
        self.local["rank"] = self.rank

    def rank(self, x) -> int:
        found = self.ranks.get(str(x))
        if found is None and isinstance(x, Operand) and x.has_value:
            found = self.ranks.get(str(x.without_value()))
        if found is None and isinstance(x, Operand) and x.dtype is not None:
            found = self.ranks.get(x.dtype.name)
        if found is None:
            raise RuleDefect(f"{self.rs.path}: [nary] order does not list {x}")
        return found

    def pair(self, x: Operand, y: Operand):
        return self.eng.decide(self.op, x, y)

    def holds(self, name: str, x: Operand, y: Operand) -> bool:
        self.local["a"], self.local["b"] = x, y
        try:
            return bool(getattr(self.rs.nary, name).eval(self.env, self.local))
        except PromoteError:
            raise
        except Exception as exc:  # an expression that does not fit these operands: a defect of the file
            raise RuleDefect(f"{self.rs.path}: [nary] {name} fails on ({x}, {y}): {exc}") from None

    def one(self, x: Operand, y: Operand):
        if str(x) == str(y):
            return x
        if not self.holds("knows", x, y):
            return _UNKNOWN
        if self.rs.nary.keeps is not None and self.holds("keeps", x, y):
            return x
        result = self.pair(x, y)[0]
        return _UNKNOWN if result is None else _as_next(self.rs, result)

    def both(self, x: Operand, y: Operand):
        found = self.one(x, y)
        return self.one(y, x) if found is _UNKNOWN else found

    def most_knowledgeable(self, ops: list, length: int):
        """`reduce_dtypes_to_most_knowledgeable`: pairs the first half with the second half
        reversed, moves the one that knows more forward, drops (None) an operand that cannot
        change the result; recursive on the first half. Returns the last pair's common type."""
        half = length // 2
        found = _UNKNOWN
        for low in range(half):
            high = length - 1 - low
            found = ops[low] if str(ops[low]) == str(ops[high]) else self.one(ops[low], ops[high])
            if found is _UNKNOWN:
                ops[low], ops[high] = ops[high], ops[low]
            elif str(found) == str(ops[low]):
                ops[high] = None
        if length == 2:
            return found
        return self.most_knowledgeable(ops, length - half)

    def refusal(self, x: Operand, y: Operand, why: str):
        hit = self.pair(x, y)
        message = hit[3] if hit[0] is None else f"{y} {why} {x}"
        return None, hit[1] or "sequence", message, message

    def run(self, normal: list[Operand]):
        ops = list(normal)
        if len(ops) == 1:
            result = ops[0]
        else:
            found = self.most_knowledgeable(ops, len(ops))
            main = ops[0]
            result, start = (None, 1) if found is _UNKNOWN else (found, 2)
            for x in ops[start:]:
                if x is None:
                    continue
                promotion = self.one(main, x)
                if promotion is _UNKNOWN:
                    return self.refusal(main, x, "has no common type known to")
                if result is None:
                    result = promotion
                    continue
                common = self.both(result, promotion)
                if common is _UNKNOWN:
                    return self.refusal(result, promotion, "has no common type with")
                result = common
        reason = f"the common type of {len(normal)} operand{'s' if len(normal) > 1 else ''}, reduced at once"
        if result.dtype is None:  # a Python scalar's type: the type the file gives two of them
            hit = self.pair(result, result)
            if hit[0] is None:
                return None, hit[1], hit[2], hit[3]
            result, reason = hit[0], f"{reason}; {result} alone: {hit[2]}" if hit[2] else reason
        return result, "sequence", reason, None
