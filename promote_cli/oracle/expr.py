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
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from promote_cli.oracle.checked import MAX_PRODUCT_BITS, Expr, ExprError, code_label, function_table  # noqa: F401
from promote_cli.oracle.checked import mul as _mul  # noqa: F401

_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Compare, ast.Eq, ast.NotEq,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.IfExp, ast.Call, ast.Name,
    ast.Load, ast.Constant, ast.Tuple, ast.Set, ast.List,
)

#: functions whose first argument names an object of the rule file: which kind of object.
REFERENCE_FUNCTIONS = {"table": "table", "refuses": "table", "join": "lattice", "mapped": "map"}


@dataclass
class Let:
    """A named sub-expression: its parameters, its checked body (other lets already inlined),
    and the names the body reads besides its parameters."""

    name: str
    params: tuple[str, ...]
    text: str
    body: ast.expr
    names: frozenset[str]


# Bounds that keep a hostile rule file from costing time or memory: checked at load, so that a query
# never runs anything larger.  The shipped files stay far below them (no expression over 120
# characters, a few dozen nodes).
MAX_CHARS = 2000          # an expression's text
MAX_DEPTH = 60            # nesting of its syntax tree
MAX_NODES = 5000          # nodes after every let is inlined
MAX_INT = 1 << 64         # an integer literal's magnitude
MAX_STR = 200             # a string literal's length


def _short(text: str) -> str:
    return repr(text) if len(text) <= 80 else repr(text[:77] + "...")


def _source(text) -> str:
    if not isinstance(text, str):
        raise ExprError(f"expected an expression string, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ExprError(f"expression of {len(text)} characters (at most {MAX_CHARS}): {_short(text)}")
    return " ".join(line.strip() for line in text.strip().splitlines())


def parse(text: str) -> ast.expr:
    """The syntax tree of `text` (lines joined); ExprError on a syntax error (Python's syntax warnings too: `1if`
    is no expression a rule file means) or a tree too deep."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", SyntaxWarning)
            tree = ast.parse(_source(text), mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"syntax error in {_short(text)} at column {exc.offset or 0}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ExprError(f"{_short(text)} is nested too deeply") from None
    _check_size(tree, text)
    return tree


def _check_size(tree: ast.AST, text: str) -> None:
    """Depth, node count and literal sizes within the bounds above (iteratively: no recursion)."""
    stack, nodes = [(tree, 1)], 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH:
            raise ExprError(f"{_short(text)} is nested too deeply (more than {MAX_DEPTH} levels)")
        if nodes > MAX_NODES:
            raise ExprError(f"{_short(text)} is too large (more than {MAX_NODES} terms with its lets inlined)")
        if type(node) is ast.Constant:
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
                raise ExprError(f"integer literal too large in {_short(text)} (at most 2**64)")
            if isinstance(value, str) and len(value) > MAX_STR:
                raise ExprError(f"string literal too long in {_short(text)} (at most {MAX_STR} characters)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _CheckedArithmetic(ast.NodeTransformer):
    """`a * b` -> `_mul(a, b)`, so that a product is checked when it is computed."""

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        if type(node.op) is ast.Mult:
            call = ast.Call(ast.Name("_mul", ast.Load()), [node.left, node.right], [])
            return ast.copy_location(call, node)
        return node


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


def _clone(node, names: dict[str, ast.expr] | None = None):
    """A copy of a checked tree (much faster than copy.deepcopy), Name nodes in `names` replaced."""
    if isinstance(node, list):
        return [_clone(n, names) for n in node]
    if not isinstance(node, ast.AST):
        return node
    if names and isinstance(node, ast.Name) and node.id in names:
        return _clone(names[node.id])
    new = node.__class__()
    for name in node._fields:
        setattr(new, name, _clone(getattr(node, name), names))
    for name in node._attributes:
        setattr(new, name, getattr(node, name, 0))
    return new


_ALLOWED = frozenset(_NODES)


class _Compiler:
    """One recursive pass over a parsed expression: checks node types, names and calls,
    inlines lets, and lets `check_call` vet (and `rewrite_call` replace) calls of the file's
    functions. Records the names read in `used` and the lets inlined in `inlined`."""

    def __init__(self, text: str, names, functions, lets, check_call, rewrite_call, params=()):
        self.text, self.names, self.functions, self.lets = text, names, functions, lets or {}
        self.check_call, self.rewrite_call, self.params = check_call, rewrite_call, params
        self.used: set[str] = set()
        self.inlined: set[str] = set()

    def unknown_name(self, name: str, via: str | None = None):
        where = f" (with let {via} inlined)" if via else ""
        raise ExprError(f"unknown name {name!r} in {self.text!r}{where}")

    def inline(self, let: Let, args=None):
        stray = next((n for n in sorted(let.names) if n not in self.names), None)
        if stray is not None:
            self.unknown_name(stray, let.name)
        self.inlined.add(let.name)
        self.used |= let.names
        return _clone(let.body, dict(zip(let.params, args)) if args is not None else None)

    def visit(self, node):
        kind = type(node)
        if kind not in _ALLOWED:
            raise ExprError(f"{kind.__name__} is not allowed in {self.text!r}")
        if kind is ast.Name:
            name = node.id
            if name in self.params:
                return node
            let = self.lets.get(name)
            if let is not None:
                if let.params:
                    raise ExprError(f"{name} takes {len(let.params)} argument(s): "
                                    f"write {name}({', '.join(let.params)})")
                return self.inline(let)
            if name not in self.names and name not in self.functions:
                self.unknown_name(name)
            self.used.add(name)
            return node
        if kind is ast.Call:
            func = node.func
            if type(func) is not ast.Name:
                raise ExprError(f"unknown function {ast.unparse(func)!r} in {self.text!r}")
            if node.keywords:
                raise ExprError(f"keyword arguments are not allowed in {self.text!r}")
            node.args = [self.visit(arg) for arg in node.args]
            let = self.lets.get(func.id)
            if let is not None:
                if len(node.args) != len(let.params):
                    raise ExprError(f"{let.name} takes {len(let.params)} argument(s), given {len(node.args)}")
                return self.inline(let, node.args)
            if func.id not in self.functions:
                raise ExprError(f"unknown function {func.id!r} in {self.text!r}")
            if self.check_call is not None:
                self.check_call(self.text, node)
            return self.rewrite_call(node) if self.rewrite_call is not None else node
        for name in node._fields:
            value = getattr(node, name)
            if isinstance(value, list):
                setattr(node, name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node


def _referenced(tree: ast.AST, candidates) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in candidates:
            found.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in candidates:
            found.add(node.func.id)
    return found


def define_lets(raw: dict[str, str], names: Iterable[str], functions: Iterable[str],
                check_call: Callable[[str, ast.Call], None] | None = None,
                rewrite_call: Callable[[ast.Call], ast.expr] | None = None) -> dict[str, Let]:
    """Check and expand a `[let]` table; ExprError naming the let that strays."""
    names, functions = frozenset(names), frozenset(functions)
    parsed: dict[str, tuple[tuple[str, ...], str, ast.expr]] = {}
    for key, text in raw.items():
        name, params = let_signature(key)
        if name in parsed:
            raise ExprError(f"let {name!r} is defined twice")
        for word in (name, *params):
            if word in names or word in functions:
                raise ExprError(f"let {key.strip()!r}: {word!r} would hide a name the rules already know")
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
        compiler = _Compiler(text, names, functions, done, check_call, rewrite_call, frozenset(params))
        try:
            body = compiler.visit(tree)
        except ExprError as exc:
            raise ExprError(f"let {name!r}: {exc}") from None
        done[name] = Let(name, params, text, body, frozenset(compiler.used))

    for name in parsed:
        resolve(name, ())
    return done


def compile_expr(text: str, names: Iterable[str], functions: Iterable[str], lets: dict[str, Let] | None = None,
                 check_call: Callable[[str, ast.Call], None] | None = None,
                 rewrite_call: Callable[[ast.Call], ast.expr] | None = None) -> Expr:
    """Check `text` against the allowed syntax, `names` and `functions` (lets inlined); ExprError if it strays.

    `check_call(text, call)` may reject a call (a table name that does not exist);
    `rewrite_call(call)` may replace a checked call before the expression is compiled.
    """
    return compile_checked(text, names, functions, lets, check_call, rewrite_call)[0]


def compile_checked(text: str, names: Iterable[str], functions: Iterable[str], lets: dict[str, Let] | None = None,
                    check_call: Callable[[str, ast.Call], None] | None = None,
                    rewrite_call: Callable[[ast.Call], ast.expr] | None = None) -> tuple[Expr, str]:
    """`compile_expr`, and the checked expression as source text (lets inlined, products checked), which
    compiles to the same code: what the cache of compiled expressions keeps."""
    compiler = _Compiler(text, names, functions, lets, check_call, rewrite_call)
    tree = compiler.visit(parse(text))
    _check_size(tree, text)  # again, with the lets inlined
    tree = ast.fix_missing_locations(_CheckedArithmetic().visit(tree))
    code = compile(ast.Expression(tree), code_label(text), "eval")
    return Expr(text, code, frozenset(compiler.used)), ast.unparse(tree)
