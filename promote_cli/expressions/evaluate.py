"""Evaluating an expression in one framework: every node's result through the oracle.

Each node's result is an operand of the contract's grammar, and that operand, form
and all, is what its parent's query sees: a Python scalar (`py:int`, with its value
when literals made it), a weakly typed or ambiguous value (`weak:f32`), a rank-0 tensor
(`0d:f32`) or a tensor (`f32`). What the framework does with each operator is its rule
file's `[expressions]` section (docs/rules.md); this module holds no framework's
semantics, only the shape every framework shares:

- two Python scalars meet in Python (`literals.python_op`) before the framework sees them;
- otherwise the operator's `op` asks the ruleset for the pair (`engine.answer`), and the
  operator's `literal_range`, `refuse_if` and `result` take it from there;
- a result is weak when the ruleset's answer or the operator's `result` says so; its rank
  is the largest of its operands' (a tensor dominates, 0-d with 0-d stays 0-d, a call on
  Python scalars alone gives a rank-0 array); a weak variable (`w:weak:f32`) is a weakly
  typed tensor, as the expression probes make it (`probes/expression_frameworks.py`), so
  where its result is no longer weak it is a tensor (`w:weak:f32 + s:0d:f16` is `f16` in JAX).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promote_cli.errors import Refusal, UsageError
from promote_cli.expressions import literals, syntax
from promote_cli.oracle import engine
from promote_cli.oracle.model import ExprOperator, Ruleset
from promote_cli.vocab import operands, operators
from promote_cli.vocab.dtypes import DType
from promote_cli.vocab.operands import PYTHON, RANK0, TENSOR, WEAK, Operand

#: a Python scalar of unknown value (a `py:` variable) stands for one of these in Python's arithmetic
PYTHON_SAMPLES = {"bool": True, "int": 3, "float": 1.5, "complex": 1j}


@dataclass
class Step:
    """One evaluated node: its source text and span, its result operand, and what decided it."""

    kind: str                      # literal, variable, unary, binary, call
    op: str                        # the operator or called name ("" for literals and variables)
    source: str
    span: tuple[int, int]
    operand: str | None            # the result operand (None where the framework refused)
    rule: str
    reason: str = ""
    children: list = field(default_factory=list)
    error: str | None = None

    @property
    def dtype(self) -> str | None:
        if self.operand is None:
            return None
        return self.operand.split(":")[-1] if not self.operand.startswith("py:") else None

    @property
    def weak(self) -> bool:
        return self.operand is not None and self.operand.startswith("weak:")

    def walk(self):
        """Every step below and including this one, operands before the operator."""
        for child in self.children:
            yield from child.walk()
        yield self

    def to_dict(self) -> dict:
        data = {"source": self.source, "span": list(self.span), "kind": self.kind}
        if self.op:
            data["op"] = self.op
        data.update(operand=self.operand, dtype=self.dtype, weak=self.weak, rule=self.rule)
        if self.reason:
            data["reason"] = self.reason
        if self.error is not None:
            data["error"] = self.error
        if self.children:
            data["children"] = [c.to_dict() for c in self.children]
        return data


@dataclass
class ExprResult:
    """What `promote_cli.expr` answers: the result operand (None when refused), and the tree of steps."""

    framework: str
    version: str
    expression: str
    options: dict
    result: str | None
    tree: Step
    refusal: str | None = None
    refused_span: tuple[int, int] | None = None

    @property
    def refused(self) -> bool:
        return self.result is None

    @property
    def dtype(self) -> str | None:
        return self.tree.dtype if self.result is not None else None

    @property
    def weak(self) -> bool:
        return self.result is not None and self.tree.weak

    def steps(self) -> list[Step]:
        return list(self.tree.walk())

    def to_dict(self) -> dict:
        data = {"framework": self.framework, "version": self.version, "expression": self.expression,
                "result": self.result, "dtype": self.dtype, "weak": self.weak}
        if self.refusal is not None:
            data["error"] = self.refusal
            data["refused_span"] = list(self.refused_span) if self.refused_span else None
        data["options"] = self.options
        data["tree"] = self.tree.to_dict()
        return data


class _Refused(Exception):
    def __init__(self, message: str, step: Step):
        super().__init__(message)
        self.step = step


@dataclass
class _Value:
    operand: Operand          # the form the parent sees: py:KIND (py:VALUE when known), weak:DT, 0d:DT or DT
    rank: int | None          # None for a Python scalar

    @property
    def value(self):
        """A Python scalar's value where literals (or a `py:VALUE` variable) fixed it, else None."""
        return self.operand.value if self.operand.form == PYTHON else None


def _shape(operand: Operand, rank: int | None) -> Operand:
    """The operand a result of `rank` is: weak stays weak, else rank 0 is `0d:`, higher a tensor."""
    if operand.form in (WEAK, PYTHON):
        return operand
    return operand.with_form(RANK0 if rank == 0 else TENSOR)


class _Evaluator:
    def __init__(self, rs: Ruleset, text: str, options: dict | None, op_answer=None, bound: dict | None = None):
        if rs.expressions is None:
            raise UsageError(f"{rs.key} has no [expressions] rules: its rule file does not say how its "
                             f"operators evaluate (docs/rules.md, \"Expressions\", lists the frameworks that do)")
        self.rs = rs
        self.rules = rs.expressions
        self.text = text
        self.options = options or {}
        self.values = engine.parse_options(rs, self.options)
        self.variables: dict[str, tuple[Operand, syntax.Node]] = {}
        self.op_answer = op_answer  # (ruleset, op, operands, options) -> Answer: an op group's op (`ops.answer`)
        self.bound = bound or {}    # variable name -> the operand it is, value and all (declared without the value)

    def caret_error(self, message: str, span) -> syntax.ExpressionSyntaxError:
        return syntax.ExpressionSyntaxError(message, self.text, span[0], span[1], what="expression")

    def operator(self, name: str, node: syntax.Node) -> ExprOperator:
        spec = self.rules.operators.get(name)
        if spec is None:
            have = " ".join(self.rules.operators) or "none"
            shown = "unary " + name[0] if name in operators.UNARY.values() else name
            raise self.caret_error(f"{self.rs.key} has no rule for {shown} in expressions (it has: {have})",
                                   (node.span[0], node.span[1]) if node.kind != "binary" else self.op_span(node))
        return spec

    def op_span(self, node: syntax.Node) -> tuple[int, int]:
        """The operator's own characters between a binary node's operands."""
        left, right = node.children
        gap = self.text[left.span[1]:right.span[0]]
        at = gap.find(node.op)
        if at < 0:
            return node.span
        start = left.span[1] + at
        return start, start + len(node.op)

    def source(self, node: syntax.Node) -> str:
        return node.source(self.text)

    # ---- nodes --------------------------------------------------------------------

    def eval(self, node: syntax.Node) -> tuple[_Value, Step]:
        return getattr(self, f"eval_{node.kind}")(node)

    def eval_literal(self, node: syntax.Node):
        kind = literals.kind_of(node.literal)
        operand = self.rules.literals.get(kind)
        if operand is None:
            kinds = ", ".join(self.rules.literals) or "none"
            raise self.caret_error(f"{self.rs.key} has no {kind} literals like {node.literal} (its literals: {kinds})",
                                   node.span)
        self.check_operand(operand, node.span)
        if operand.form == PYTHON:
            value = _Value(Operand(PYTHON, None, operand.pykind, literals.value_of(node.literal)), None)
        else:
            value = _Value(operand, 0)
        step = Step("literal", "", self.source(node), node.span, str(value.operand),
                    f"expressions.literals.{kind} = {operand}")
        return value, step

    def eval_variable(self, node: syntax.Node):
        known = self.variables.get(node.name)
        if node.operand:
            try:
                operand = operands.parse(node.operand)
            except UsageError as exc:
                raise self.caret_error(str(exc), node.operand_span) from None
            given = self.bound.get(node.name)
            if given is not None and str(given.without_value()) == str(operand):
                operand = given
            if known is not None and str(known[0]) != str(operand):
                first = known[1]
                raise self.caret_error(f"{node.name} is declared {known[0]} at column {first.span[0] + 1}; a later use "
                                       f"may repeat that type or give the bare name", node.span)
            if known is None:
                self.check_operand(operand, node.operand_span)
                self.variables[node.name] = (operand, node)
        else:
            operand = known[0]
        rank = None if operand.form == PYTHON else 0 if operand.form == RANK0 else 1  # weak: a tensor
        step = Step("variable", "", self.source(node), node.span, str(operand), "declared")
        return _Value(operand, rank), step

    def check_operand(self, operand: Operand, span):
        """The framework takes this operand at all (its form policy and its types)."""
        try:
            engine.normalise(self.rs, operand)
        except UsageError as exc:
            raise self.caret_error(str(exc), span) from None
        except Refusal as exc:
            raise self.caret_error(str(exc), span) from None

    def eval_unary(self, node: syntax.Node):
        spec_name = operators.UNARY[node.op]
        inner, child = self.eval(node.children[0])
        step = Step("unary", node.op, self.source(node), node.span, None, "", children=[child])
        if inner.operand.form == PYTHON:
            value = literals.python_unary(node.op, inner.value if inner.value is not None
                                          else PYTHON_SAMPLES[inner.operand.pykind])
            result = _python_result(value, inner.value is not None)
            step.operand, step.rule = str(result.without_value()), "Python's arithmetic"
            return _Value(result, None), step
        spec = self.operator(spec_name, node)
        x = inner.operand
        self.refuse_if(spec, step, a=x, b=x, result=x, a_value=0, b_value=0)
        result = self.result(spec, step, x, a=x, b=x, a_value=0, b_value=0)
        step.rule = _where(spec_name, "result", spec.result) if spec.result else _where(spec_name)
        result = _shape(result, inner.rank)
        step.operand = str(result)
        return _Value(result, inner.rank), step

    def eval_binary(self, node: syntax.Node):
        (x, cx), (y, cy) = self.eval(node.children[0]), self.eval(node.children[1])
        step = Step("binary", node.op, self.source(node), node.span, None, "", children=[cx, cy])
        if x.operand.form == PYTHON and y.operand.form == PYTHON:
            return self.python(node.op, x, y, step)
        if node.op not in self.rules.operators and self.group_op(node.op):
            return self.group(node.op, [x, y], step)
        spec = self.operator(node.op, node)
        return self.promote(spec, [x, y], x, y, step)

    def eval_call(self, node: syntax.Node):
        arity = operators.CALLS.get(node.op)
        if (arity is None or node.op not in self.rules.operators) and self.group_op(node.op):
            return self.group_call(node)
        if arity is None:
            ops = f"; ops: `promote ops -f {self.rs.name}`" if self.rs.op_names else ""
            raise self.caret_error(f"unknown function {node.op!r} (functions: {', '.join(operators.CALLS)}{ops})",
                                   (node.span[0], node.span[0] + len(node.op)))
        if len(node.children) != arity:
            raise self.caret_error(f"{node.op} takes {arity} arguments, not {len(node.children)}", node.span)
        spec = self.operator(node.op, node)
        evaluated = [self.eval(child) for child in node.children]
        step = Step("call", node.op, self.source(node), node.span, None, "", children=[c for _, c in evaluated])
        args = [v for v, _ in evaluated]
        if node.op == "where":
            cond = args[0]
            if spec.condition is not None and not engine.formula(
                    self.rs, spec.condition, self.values, _where("where", "condition"), cond=cond.operand):
                message = spec.condition_refuse.format(cond=cond.operand, op="where")
                raise _Refused(message, step)
            return self.promote(spec, args, args[1], args[2], step)
        return self.promote(spec, args, args[0], args[1], step)

    # ---- op groups (`[opgroups]`): a call of an op by its name, `@` -----------------------------

    def group_op(self, name: str) -> bool:
        return self.op_answer is not None and name in self.rs.op_names

    def group_call(self, node: syntax.Node):
        group = self.rs.opgroups[self.rs.op_names[node.op]]
        if len(node.children) != group.arity:
            raise self.caret_error(f"{node.op} takes {group.arity} argument{'s' * (group.arity != 1)}, not "
                                   f"{len(node.children)}", node.span)
        evaluated = [self.eval(child) for child in node.children]
        step = Step("call", node.op, self.source(node), node.span, None, "", children=[c for _, c in evaluated])
        return self.group(node.op, [v for v, _ in evaluated], step)

    def group(self, op: str, args: list[_Value], step: Step):
        """An op group's op over the evaluated operands (their forms as the ops see them)."""
        got = self.op_answer(self.rs, op, [v.operand for v in args], self.options)
        step.rule, step.reason = got.rule or "", got.reason
        if got.result is None:
            raise _Refused(got.refusal, step)
        result = got.result_operand
        step.operand = str(result)
        rank = None if result.form == PYTHON else 0 if result.form == RANK0 else 1
        return _Value(result, rank), step

    # ---- the pieces ----------------------------------------------------------------

    def python(self, op: str, x: _Value, y: _Value, step: Step):
        """Two Python scalars: Python computes the result; the framework never sees it."""
        known = x.value is not None and y.value is not None
        xv = x.value if x.value is not None else PYTHON_SAMPLES[x.operand.pykind]
        yv = y.value if y.value is not None else PYTHON_SAMPLES[y.operand.pykind]
        try:
            value = literals.python_op(op, xv, yv)
        except literals.PythonError as exc:
            step.rule = "Python's arithmetic"
            raise _Refused(str(exc), step) from None
        result = _python_result(value, known)
        step.operand, step.rule = str(result.without_value()), "Python's arithmetic"
        step.reason = "two Python scalars meet in Python before the framework sees them"
        return _Value(result, None), step

    def promote(self, spec: ExprOperator, args: list[_Value], x: _Value, y: _Value, step: Step):
        a, b = x.operand, y.operand
        names = {"a": a, "b": b, "a_value": _known(x), "b_value": _known(y)}
        both = a.form == PYTHON and b.form == PYTHON
        formula = spec.both_python if both and spec.both_python is not None else spec.promotion
        if formula is spec.promotion and spec.promotion_if is not None and not engine.formula(
                self.rs, spec.promotion_if, self.values, _where(spec.name, "promotion_if"), **names):
            formula = None
        if formula is not None:
            where = _where(spec.name, "both_python" if formula is spec.both_python else "promotion")
            rule = _where(spec.name, "both_python" if formula is spec.both_python else "promotion", formula)
            try:
                promoted = _operand(engine.formula(self.rs, formula, self.values, where, **names))
            except Refusal as exc:
                step.rule = rule
                raise _Refused(str(exc), step) from None
        else:
            answer = engine.answer(self.rs, a, b, spec.op, self.options, spec.skip_after, check_values=False)
            rule = f"{self.rs.key} {self.asked_as(spec)}: {answer.rule}"
            if answer.result is None:
                step.rule, step.reason = rule, answer.refusal
                raise _Refused(answer.refusal, step)
            promoted = answer.result_operand
            step.reason = answer.reason
        if promoted.form == PYTHON:
            step.rule = rule
            raise _Refused(f"{self.rs.key} gives no array type for {a} {spec.op} {b}", step)
        refused = engine.literal_refusal(self.rs, self.values, spec, [a, b], promoted)
        if refused is not None:
            step.rule = f"{rule}; {refused[1]}"
            raise _Refused(refused[0], step)
        self.refuse_if(spec, step, rule=rule, result=promoted, **names)
        result = self.result(spec, step, promoted, **names)
        ranks = [v.rank for v in args if v.rank is not None]
        rank = max(ranks) if ranks else 0
        result = _shape(result, rank)
        step.operand = str(result)
        step.rule = rule + (f"; {_where(spec.name, 'result', spec.result)}" if spec.result else "")
        return _Value(result, rank), step

    def asked_as(self, spec: ExprOperator) -> str:
        """The operator as the rule file asks it: `+`, or `* (promoted as +)` when it is promoted as another op."""
        index = self.rs.op_index if self.rs.ops is not None else {}
        if spec.op == spec.name or index.get(spec.name, spec.name) == index.get(spec.op, spec.op):
            return spec.name
        return f"{spec.name} (promoted as {spec.op})"

    def refuse_if(self, spec: ExprOperator, step: Step, rule: str = "", **names):
        if spec.refuse_if is None:
            return
        where = _where(spec.name, "refuse_if")
        if engine.formula(self.rs, spec.refuse_if, self.values, where, **names):
            shown = _where(spec.name, "refuse_if", spec.refuse_if)
            step.rule = f"{rule}; {shown}" if rule else shown
            fields = {**engine.engine(self.rs, self.values).set_text, **self.values, **names, "op": spec.name,
                      "op_group": spec.op}
            raise _Refused(spec.refuse.format(**fields), step)

    def result(self, spec: ExprOperator, step: Step, promoted: Operand, **names) -> Operand:
        if spec.result is None:
            return promoted
        where = _where(spec.name, "result")
        value = engine.formula(self.rs, spec.result, self.values, where, result=promoted, **names)
        if isinstance(value, DType):  # a dtype keeps the promotion's form: weak stays weak
            value = promoted.with_form(promoted.form) if promoted.dtype is value else Operand(
                WEAK if promoted.form == WEAK else TENSOR, value)
        if not isinstance(value, Operand) or value.dtype is None:
            raise UsageError(f"{self.rs.path}: {where} gives {value!r}, not a dtype or a weak/strong operand")
        if value.dtype not in self.rs.type_set:
            raise UsageError(f"{self.rs.path}: {where} gives {value}, which is not one of the file's types")
        return value


_where = engine.expression_key


def _known(v: _Value):
    """A Python scalar's value where literals fixed it; 0 otherwise (what `a_value`/`b_value` read)."""
    return v.value if v.value is not None else 0


def _python_result(value, known: bool) -> Operand:
    """A Python scalar computed in Python: with its value where the operands' values were known (the value flows
    to the parent's operators; a result is shown without it, as every result is)."""
    return Operand(PYTHON, None, None, value) if known else Operand(PYTHON, None, literals.py_kind(value))


def _operand(value) -> Operand:
    return Operand(TENSOR, value) if isinstance(value, DType) else value


def evaluate(rs: Ruleset, text: str, options: dict | None = None, op_answer=None,
             bound: dict | None = None) -> ExprResult:
    """Parse and evaluate `text` in ruleset `rs`: an ExprResult (refusals are results; malformed
    expressions, unknown types and operators a framework lacks raise UsageError). With `op_answer`
    (`expressions.ops.answer`), calls of the ruleset's op groups' ops and `@` are answered by their groups.
    `bound` gives variables declared in `text` without a value the operand with its value (`x:0d:i64` is
    `0d:i64=300`)."""
    tree = syntax.parse(text)
    ev = _Evaluator(rs, text, options, op_answer, bound)
    shown = {k: v.name if isinstance(v, DType) else v for k, v in ev.values.items()}
    try:
        value, step = ev.eval(tree)
    except _Refused as exc:
        message = f"{rs.key} refuses {exc.step.source} (columns {exc.step.span[0] + 1}-{exc.step.span[1]}): {exc}"
        exc.step.error = str(exc)
        return ExprResult(rs.name, rs.version, text, shown, None, _partial(exc.step, tree, text), message,
                          exc.step.span)
    return ExprResult(rs.name, rs.version, text, shown, str(value.operand.without_value()), step)


def _partial(step: Step, tree: syntax.Node, text: str) -> Step:
    """The refused step (with what was evaluated below it), inside the nodes above it, unevaluated."""
    def build(node: syntax.Node) -> Step:
        if node.span == step.span and node.kind == step.kind:
            return step
        inside = [child for child in node.children if child.span[0] <= step.span[0] and step.span[1] <= child.span[1]]
        children = [build(inside[0])] if inside else []
        return Step(node.kind, node.op, node.source(text), node.span, None, "not evaluated", children=children)

    return build(tree)
