"""Rule expressions: a small, whitelisted subset of Python expression syntax.

An expression is parsed once when its rule file loads; every name and function it uses
must be known then, so a typo is a load error naming the file and key, not a wrong
answer later. Evaluation is plain `eval` of the checked code object.

Named sub-expressions (a rule file's `[let]`) are macros: `define_lets` checks them
once (unknown names, cycles, arity) and `compile_expr` inlines them, so a query pays
nothing for them. A let may take parameters: `"default_of(x)" = "i64 if is_int(x) else f32"`.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Compare, ast.Eq, ast.NotEq,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.IfExp, ast.Call, ast.Name,
    ast.Load, ast.Constant, ast.Tuple, ast.Set, ast.List,
)

#: functions whose first argument names an object of the rule file (a table, a lattice).
REFERENCE_FUNCTIONS = ("table", "join")


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


@dataclass
class Let:
    """A named sub-expression, its parameters, and its body with other lets already inlined."""

    name: str
    params: tuple[str, ...]
    text: str
    body: ast.expr


def parse(text: str) -> ast.expr:
    """The syntax tree of `text`, checked against the allowed node types (names are checked later)."""
    if not isinstance(text, str):
        raise ExprError(f"expected an expression string, got {type(text).__name__}")
    try:
        tree = ast.parse(" ".join(line.strip() for line in text.strip().splitlines()), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"syntax error in {text!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ExprError(f"{type(node).__name__} is not allowed in {text!r}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise ExprError(f"unknown function {ast.unparse(node.func)!r} in {text!r}")
            if node.keywords:
                raise ExprError(f"keyword arguments are not allowed in {text!r}")
    return tree.body


def let_signature(key: str) -> tuple[str, tuple[str, ...]]:
    """`name` or `name(x, y)` -> (name, params); ExprError when it is neither."""
    text = key.strip()
    name, paren, rest = text.partition("(")
    name = name.strip()
    params: tuple[str, ...] = ()
    if paren:
        if not rest.endswith(")"):
            raise ExprError(f"{key!r} is not NAME or NAME(PARAM, ...)")
        params = tuple(p.strip() for p in rest[:-1].split(",") if p.strip())
    for word in (name, *params):
        if not word.isidentifier():
            raise ExprError(f"{key!r} is not NAME or NAME(PARAM, ...)")
    if len(set(params)) != len(params):
        raise ExprError(f"{key!r} repeats a parameter")
    return name, params


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, ast.expr]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        found = self.mapping.get(node.id)
        return copy.deepcopy(found) if found is not None else node


class _Inline(ast.NodeTransformer):
    """Replaces uses of lets by their bodies (parameters bound to the call's arguments)."""

    def __init__(self, lets: dict[str, Let]):
        self.lets = lets
        self.used: set[str] = set()

    def visit_Name(self, node: ast.Name):
        let = self.lets.get(node.id)
        if let is None:
            return node
        if let.params:
            raise ExprError(f"{let.name} takes {len(let.params)} argument(s): write {let.name}({', '.join(let.params)})")
        self.used.add(let.name)
        return copy.deepcopy(let.body)

    def visit_Call(self, node: ast.Call):
        node.args = [self.visit(arg) for arg in node.args]
        let = self.lets.get(node.func.id)
        if let is None:
            return node
        if len(node.args) != len(let.params):
            raise ExprError(f"{let.name} takes {len(let.params)} argument(s), given {len(node.args)}")
        self.used.add(let.name)
        return _Substitute(dict(zip(let.params, node.args))).visit(copy.deepcopy(let.body))


def _referenced(tree: ast.AST, candidates) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in candidates:
            found.add(node.id)
        elif isinstance(node, ast.Call) and node.func.id in candidates:
            found.add(node.func.id)
    return found


def define_lets(raw: dict[str, str], names: Iterable[str], functions: Iterable[str],
                check_call: Callable[[str, ast.Call], None] | None = None) -> dict[str, Let]:
    """Check and expand a `[let]` table; ExprError naming the let that strays."""
    names, functions = set(names), set(functions)
    parsed: dict[str, tuple[tuple[str, ...], str, ast.expr]] = {}
    for key, text in raw.items():
        name, params = let_signature(key)
        if name in parsed:
            raise ExprError(f"let {name!r} is defined twice")
        if name in names or name in functions:
            raise ExprError(f"let {name!r} would hide a name the rules already know")
        try:
            parsed[name] = (params, text, parse(text))
        except ExprError as exc:
            raise ExprError(f"let {name!r}: {exc}") from None
    done: dict[str, Let] = {}

    def resolve(name: str, stack: tuple[str, ...]):
        if name in done:
            return
        if name in stack:
            raise ExprError(f"let {stack[0]!r} refers to itself: {' -> '.join(stack + (name,))}")
        params, text, tree = parsed[name]
        for dep in sorted(_referenced(tree, parsed)):
            resolve(dep, stack + (name,))
        try:
            body = _Inline(done).visit(copy.deepcopy(tree))
            _check_names(body, text, names | set(params), functions | set(), check_call)
        except ExprError as exc:
            raise ExprError(f"let {name!r}: {exc}") from None
        done[name] = Let(name, params, text, body)

    for name in parsed:
        resolve(name, ())
    return done


def _check_names(tree: ast.AST, text: str, names: set[str], functions: set[str],
                 check_call: Callable[[str, ast.Call], None] | None) -> set[str]:
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if node.func.id not in functions:
                raise ExprError(f"unknown function {node.func.id!r} in {text!r}")
            if check_call is not None:
                check_call(text, node)
        elif isinstance(node, ast.Name) and node.id not in functions:
            if node.id not in names:
                raise ExprError(f"unknown name {node.id!r} in {text!r}")
            used.add(node.id)
    return used


def compile_expr(text: str, names: Iterable[str], functions: Iterable[str], lets: dict[str, Let] | None = None,
                 check_call: Callable[[str, ast.Call], None] | None = None,
                 rewrite: Callable[[ast.expr], ast.expr] | None = None) -> Expr:
    """Check `text` against the allowed syntax, `names` and `functions` (lets inlined); ExprError if it strays.

    `check_call(text, call)` may reject a call (a table name that does not exist);
    `rewrite(tree)` may transform the checked tree before it is compiled.
    """
    tree = parse(text)
    inline = None
    if lets:
        inline = _Inline(lets)
        tree = inline.visit(tree)
    try:
        used = _check_names(tree, text, set(names), set(functions), check_call)
    except ExprError as exc:
        if inline is not None and inline.used:
            raise ExprError(f"{exc} (with let {', '.join(sorted(inline.used))} inlined)") from None
        raise
    if rewrite is not None:
        tree = rewrite(tree)
    code = compile(ast.fix_missing_locations(ast.Expression(tree)), f"<rule {text}>", "eval")
    return Expr(text, code, frozenset(used))


def function_table(**functions: Callable) -> dict[str, Callable]:
    """The evaluation globals: the given functions and no builtins."""
    env: dict = {"__builtins__": {}}
    env.update(functions)
    return env
