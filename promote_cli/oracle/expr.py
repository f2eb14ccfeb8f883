"""Rule expressions: a small, whitelisted subset of Python expression syntax.

An expression is parsed once when its rule file loads; every name and function it uses
must be known then, so a typo is a load error naming the file and key, not a wrong
answer later. Evaluation is plain `eval` of the checked code object.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Compare, ast.Eq, ast.NotEq,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.IfExp, ast.Call, ast.Name,
    ast.Load, ast.Constant, ast.Tuple, ast.Set, ast.List,
)


class ExprError(ValueError):
    """An expression that is not allowed or names something unknown."""


class Expr:
    """A checked expression; call `.eval(namespace)`."""

    __slots__ = ("text", "code", "names")

    def __init__(self, text: str, code, names: frozenset[str]):
        self.text = text
        self.code = code
        self.names = names

    def eval(self, env: dict, local: dict):
        return eval(self.code, env, local)  # noqa: S307 - the code object was whitelisted in compile_expr

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"


def compile_expr(text: str, names: Iterable[str], functions: Iterable[str]) -> Expr:
    """Check `text` against the allowed syntax, `names` and `functions`; ExprError if it strays."""
    if not isinstance(text, str):
        raise ExprError(f"expected an expression string, got {type(text).__name__}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"syntax error in {text!r}: {exc.msg}") from None
    names, functions = set(names), set(functions)
    used = set()
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ExprError(f"{type(node).__name__} is not allowed in {text!r}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in functions:
                called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
                raise ExprError(f"unknown function {called!r} in {text!r}")
            if node.keywords:
                raise ExprError(f"keyword arguments are not allowed in {text!r}")
        elif isinstance(node, ast.Name) and node.id not in functions:
            if node.id not in names:
                raise ExprError(f"unknown name {node.id!r} in {text!r}")
            used.add(node.id)
    return Expr(text, compile(tree, f"<rule {text}>", "eval"), frozenset(used))


def function_table(**functions: Callable) -> dict[str, Callable]:
    """The evaluation globals: the given functions and no builtins."""
    env: dict = {"__builtins__": {}}
    env.update(functions)
    return env
