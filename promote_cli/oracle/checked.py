"""A checked rule expression and the environment it is evaluated in.

`expr.py` parses and checks expressions (it needs `ast`); this module holds only what
answering needs once they are compiled, whether from a rule file or from the compiled
expressions kept in the per-user cache (`exprcache.py`), so that a query whose expressions are
cached never imports the parser.
"""

from __future__ import annotations

MAX_PRODUCT_BITS = 128    # `*` multiplies integers only, into at most this many bits
MAX_LABEL = 200           # how much of an expression's text names its code object
MAX_SOURCE = 200_000      # the longest checked source taken from the cache (lets inlined stay far below it)


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


def code_label(text: str) -> str:
    """The file name an expression's code object carries (shown only in a traceback)."""
    return f"<rule {text[:MAX_LABEL]}>"


def mul(x, y):
    """`x * y` of rule expressions: integers only, the product bounded (no string or sequence repetition)."""
    if type(x) is not int or type(y) is not int:
        raise TypeError(f"* multiplies integers, not {type(x).__name__} and {type(y).__name__}")
    if x and y and abs(x).bit_length() + abs(y).bit_length() > MAX_PRODUCT_BITS:
        raise OverflowError(f"product of {x} and {y} is too large")
    return x * y


#: names the compiler itself puts into expressions: `a * b` becomes `_mul(a, b)`, a lattice or map chosen
#: by an option `_pick(NAME, OPTION)`
INTERNAL_NAMES = frozenset({"_mul", "_pick"})


def function_table(**functions) -> dict:
    """The evaluation globals: the given functions and no builtins."""
    env: dict = {"__builtins__": {}, "_mul": mul}
    env.update(functions)
    return env


_CONSTANTS = (type(None), bool, int, float, str)


def from_source(text: str, source: str, names, allowed: frozenset[str]) -> Expr | None:
    """An expression compiled from checked source kept in the cache, or None when that source could not have
    come from `expr.compile_checked` for these names: it must compile as one expression whose every name (and
    attribute name) is in `allowed` or the compiler's own `INTERNAL_NAMES`, with plain constants only and no
    function of its own. So even a tampered entry touches no dunder attribute and calls nothing but the
    evaluation environment's functions (which has no builtins); what it computes with them is trusted as the
    user's own cache is (see tomlcache.py)."""
    if not (isinstance(text, str) and isinstance(source, str) and isinstance(names, list)
            and all(isinstance(n, str) for n in names) and len(source) <= MAX_SOURCE):
        return None
    names = frozenset(names)
    if not names <= allowed:
        return None
    try:
        code = compile(source, code_label(text), "eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not set(code.co_names) <= allowed | INTERNAL_NAMES or code.co_varnames or code.co_freevars:
        return None
    if not all(_plain(c) for c in code.co_consts):
        return None
    return Expr(text, code, names)


def _plain(value) -> bool:
    if type(value) in _CONSTANTS:
        return True
    return type(value) in (tuple, frozenset) and all(_plain(v) for v in value)

