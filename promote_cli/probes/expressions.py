"""Probe: evaluate whole expressions in a real framework and record the result's dtype and form.

What is asked
    Every expression of the corpus (``expressions.txt`` beside this module) that applies to
    the framework, in the shared expression syntax (docs/recordings.md, "Expression
    recordings"): typed variables ``x:i16`` (a tensor of shape ``(3,)``), ``s:0d:f32`` (a
    rank-0 tensor) and ``w:weak:f32`` (a weakly typed tensor of shape ``(3,)``, where the
    framework has them), Python literals, the binary operators ``+ - * / // ** % == != <
    <= > >= & | ^``, unary ``-`` and ``+``, parentheses, and the calls ``maximum(a, b)``, ``minimum(a, b)`` and
    ``where(c, a, b)``.  Each framework is asked under each of its option sets
    (``expression_frameworks.py``), every set in a subprocess of its own: JAX's ``x64`` and
    TensorFlow's conversion mode are process-global.

How an expression is evaluated
    Nothing is answered from a table.  The typed variables are replaced by plain names
    (``x:i16`` -> ``x``), and what is left is parsed with Python's ``ast`` and walked with a
    whitelist of node types: a literal stays the Python value, a variable is the
    framework's tensor, an operator is Python's ``operator`` function (so a literal on the
    left runs the framework's reflected method, as in user code), a call is the
    framework's own function (``np.maximum``, ``torch.where``, ...).  Variable values are
    small and positive (``1, 2, 3``; ``2`` for a rank-0 one; ``True`` for bool), so that no
    outcome depends on them; an outcome may depend on a literal (NEP 50's ``x:i8 + 300``).

How the answer is read
    The result's form and dtype in the contract's operand grammar: ``weak:DTYPE`` for a
    weakly typed value, ``0d:DTYPE`` for a rank-0 one (NumPy scalars included), ``DTYPE``
    for a tensor of rank >= 1, ``py:KIND`` for a plain Python scalar.  When evaluating
    raises, the error is one line: the exception's type name and its message as the
    framework's pair probe trims it; when the framework cannot make a variable's value
    (PyTorch fills no int4 tensor), the message ends ``(making x:i4)``.

Usage: ``python -m promote_cli.probes.expressions FRAMEWORK [OUT]`` writes
``tests/data/recordings/expr-FRAMEWORK.json`` (or OUT).
"""

from __future__ import annotations

import ast
import json
import operator
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from promote_cli.probes.expression_frameworks import FRAMEWORKS
from promote_cli.vocab import operands
from promote_cli.vocab.operands import Operand
from promote_cli.vocab.operators import CALLS

#: the corpus: one expression a line, asked of every framework that has its variables' types.
CORPUS = Path(__file__).with_name("expressions.txt")

#: the keys of an expression recording's header, in the order they are written.
HEADER = ("ruleset", "package", "version", "probe", "python", "device")

#: Python's AST node of each operator of the syntax (vocab/operators.py names them), and the
#: function Python applies for it.
SPELLINGS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**", ast.Mod: "%",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.USub: "-x", ast.UAdd: "+x",
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}
BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}

_TYPED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)[ \t]*:[ \t]*((?:(?:0d|weak|py)[ \t]*:[ \t]*)?[A-Za-z_]\w*\??)")
_ANVIL_INT = re.compile(r"(?<![\w.])\d+[lL](?!\w)")


class ExpressionError(ValueError):
    """A malformed expression (not a framework's answer)."""


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its text, its variables (name -> operand) and its Python AST."""

    text: str
    variables: dict
    tree: ast.Expression


def parse(text: str) -> Expression:
    """Parse the shared syntax: ExpressionError (one line) when it is malformed."""
    if _ANVIL_INT.search(text):
        raise ExpressionError(f"{text}: an integer literal with L is anvil's; no framework probe reads it")
    variables: dict[str, Operand] = {}

    def declare(m: re.Match) -> str:
        name, spelled = m.group(1), re.sub(r"[ \t]", "", m.group(2))
        try:
            operand = operands.parse(spelled)
        except Exception as exc:  # noqa: BLE001 - the vocabulary's UsageError, one line
            raise ExpressionError(f"{text}: {name}:{spelled}: {exc}") from None
        if name in variables and str(variables[name]) != str(operand):
            raise ExpressionError(f"{text}: {name} is {variables[name]}, then {operand}")
        if name in CALLS or name in ("True", "False"):
            raise ExpressionError(f"{text}: {name} cannot be a variable")
        variables[name] = operand
        return name

    plain = _TYPED.sub(declare, text)
    try:
        tree = ast.parse(plain.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{text}: not an expression ({exc.msg})") from None
    _check(tree.body, text, variables)
    return Expression(text, variables, tree)


def _check(node: ast.AST, text: str, variables: dict) -> None:
    """ExpressionError unless every node is one the syntax has."""
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        _check(node.left, text, variables)
        _check(node.right, text, variables)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        _check(node.operand, text, variables)
    elif isinstance(node, ast.Compare):
        if len(node.ops) != 1:
            raise ExpressionError(f"{text}: a chained comparison (Python would read it as 'and')")
        if type(node.ops[0]) not in COMPARE:
            raise ExpressionError(f"{text}: {type(node.ops[0]).__name__} is not part of the expression syntax")
        _check(node.left, text, variables)
        _check(node.comparators[0], text, variables)
    elif isinstance(node, ast.Call):
        name = getattr(node.func, "id", None)
        if name not in CALLS or not isinstance(node.func, ast.Name) or node.keywords:
            raise ExpressionError(f"{text}: only {', '.join(CALLS)} can be called, with positional arguments")
        if len(node.args) != CALLS[name]:
            raise ExpressionError(f"{text}: {name} takes {CALLS[name]} arguments, got {len(node.args)}")
        for arg in node.args:
            _check(arg, text, variables)
    elif isinstance(node, ast.Name):
        if node.id not in variables:
            raise ExpressionError(f"{text}: {node.id} is used before its type is given ({node.id}:DTYPE)")
    elif isinstance(node, ast.Constant) and type(node.value) in (bool, int, float, complex):
        pass
    else:
        what = type(getattr(node, "op", node)).__name__
        raise ExpressionError(f"{text}: {what} is not part of the expression syntax")


def evaluate(expr: Expression, values: dict, functions: dict):
    """The value of `expr`, its variables bound to `values` and its calls to `functions`."""

    def walk(node):
        if isinstance(node, ast.BinOp):
            return BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp):
            return UNARY[type(node.op)](walk(node.operand))
        if isinstance(node, ast.Compare):
            return COMPARE[type(node.ops[0])](walk(node.left), walk(node.comparators[0]))
        if isinstance(node, ast.Call):
            return functions[node.func.id](*(walk(a) for a in node.args))
        if isinstance(node, ast.Name):
            return values[node.id]
        return node.value

    return walk(expr.tree.body)


def python_form(value) -> str | None:
    """``py:KIND`` for a plain Python scalar, None for anything else."""
    kind = {bool: "bool", int: "int", float: "float", complex: "complex"}.get(type(value))
    return f"py:{kind}" if kind else None


# --------------------------------------------------------------------------- the corpus

def corpus(path: Path = CORPUS) -> list[str]:
    """The corpus's expressions, in order (``#`` starts a comment); ExpressionError for a malformed one."""
    entries = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = raw.split("#", 1)[0].strip()
        if text:
            try:
                parse(text)
            except ExpressionError as exc:
                raise ExpressionError(f"{path.name}:{number}: {exc}") from None
            entries.append(text)
    return entries


def applies(text: str, framework: str) -> bool:
    """Whether a framework is asked an expression: every variable's dtype is one the framework
    has, and a weakly typed variable is asked only where the framework can make one."""
    fw = FRAMEWORKS[framework]
    for operand in parse(text).variables.values():
        if operand.form == operands.WEAK and not fw.weak:
            return False
        if operand.dtype is not None and operand.dtype.name not in fw.types():
            return False
    return True


def asked(framework: str) -> list[str]:
    """The expressions a framework is asked, in corpus order."""
    return [text for text in corpus() if applies(text, framework)]


# --------------------------------------------------------------------------- asking

def ask(framework, expr: Expression) -> tuple[str | None, str | None]:
    """``(result, None)`` or ``(None, "Type: message")`` for one expression, in this process."""
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = {}
        for name, op in expr.variables.items():
            try:
                values[name] = framework.value(op)
            except Exception as exc:  # noqa: BLE001 - a framework that cannot make the variable says so
                return None, f"{type(exc).__name__}: {framework.error(exc)} (making {name}:{op})"
        try:
            out = evaluate(expr, values, framework.functions())
        except Exception as exc:  # noqa: BLE001 - every framework error is an answer
            return None, f"{type(exc).__name__}: {framework.error(exc)}"
        form = python_form(out) or framework.form(out)
    if form is None:
        return None, f"the expression gave a {type(out).__name__}, not a value of the framework"
    return form, None


def worker(name: str, options: dict) -> list:
    """Every applicable expression under one option set, in this process (set up for it first)."""
    framework = FRAMEWORKS[name]
    framework.setup(options)
    return [[text, options, *ask(framework, parse(text))] for text in asked(name)]


def record(name: str) -> dict:
    """Ask every applicable expression under each option set (a subprocess each); a recording."""
    framework = FRAMEWORKS[name]
    if framework.version() is None:
        raise RuntimeError(f"{framework.package} is not importable here; pip install {framework.package}")
    cases = []
    for options in framework.option_sets:
        # a fixed hash seed: some messages list a set's members (JAX's "Input dtypes (...)")
        env = dict(os.environ, PYTHONHASHSEED="0", **framework.environment(options))
        proc = subprocess.run([sys.executable, "-m", "promote_cli.probes.expressions", "--worker", name,
                               json.dumps(options)], env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"the {name} expression worker ({options}) failed: {tail}")
        cases += json.loads(proc.stdout)
    return {
        "ruleset": name,
        "package": framework.package,
        "version": framework.version(),
        "probe": "promote_cli.probes.expressions",
        "python": platform.python_version(),
        "device": "cpu",
        **framework.versions(),
        "expressions": cases,
    }


def recording_path(name: str) -> str:
    """Where a framework's recording lives: ``expr-jax.json``; a versioned ruleset's as its pair
    recording is named (``expr-array-api-2024.12.json``)."""
    return f"tests/data/recordings/expr-{name.replace('@', '-')}.json"


def framework_of(ruleset) -> str | None:
    """The expression probe's framework for a loaded ruleset: the one named as the ruleset with its
    version (``array-api@2024.12``), else as the ruleset (``jax``); None when the probe has none."""
    return next((name for name in (ruleset.key, ruleset.name) if name in FRAMEWORKS), None)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recordings
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        json.dump(worker(sys.argv[2], json.loads(sys.argv[3])), sys.stdout)
    else:
        from promote_cli.probes import write_recording

        write_recording(record(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else recording_path(sys.argv[1]))
