"""Literals of an expression, and Python's own arithmetic on them.

A literal's *kind* is what its spelling says: `True`/`False` bool, `1` int, `1L` long (an R
integer, anvil's `1L`), `2.5`/`1e3` float, `1j` complex. What a kind *is* in a framework
(a Python scalar `py:int`, an ambiguous R literal `weak:i32`) is rule-file data
(`[expressions] literals`). Two Python scalars meet in Python before any framework sees
them: `python_op` computes that with Python's rules (1 / 2 is 0.5, True + True is 2),
bounded so that no expression can take long or overflow memory.
"""

from __future__ import annotations

import operator

#: Python's type of each literal kind that Python itself has
PY_KIND = {bool: "bool", int: "int", float: "float", complex: "complex"}
MAX_INT_BITS = 4096   # a Python int computed from literals: larger is refused, not computed


class PythonError(Exception):
    """Python itself raises for these literals (ZeroDivisionError, TypeError, OverflowError)."""


def kind_of(text: str) -> str:
    """The kind of a literal's spelling (the tokenizer made sure it is one)."""
    if text in ("True", "False"):
        return "bool"
    last = text[-1]
    if last in "jJ":
        return "complex"
    if last == "L":
        return "long"
    if any(c in text for c in ".eE"):
        return "float"
    return "int"


def value_of(text: str):
    """The Python value of a literal (an R `1L` is the integer 1)."""
    kind = kind_of(text)
    if kind == "bool":
        return text == "True"
    if kind == "complex":
        return complex(0, float(text[:-1]))
    if kind == "long":
        return int(text[:-1])
    if kind == "float":
        return float(text)
    return int(text)


def py_kind(value) -> str:
    return PY_KIND[type(value)]


_BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "@": operator.matmul,
}


def _bits(x) -> int:
    return abs(int(x)).bit_length() if isinstance(x, (bool, int)) else 0


def python_op(op: str, x, y):
    """`x op y` as Python computes it; PythonError where Python raises."""
    if op == "**" and isinstance(x, int) and isinstance(y, int) and not isinstance(y, bool):
        if y > 0 and abs(x) > 1 and _bits(x) * y > MAX_INT_BITS:
            raise PythonError(f"OverflowError: {x} ** {y} has more than {MAX_INT_BITS} bits")
    if op == "*" and isinstance(x, int) and isinstance(y, int) and _bits(x) + _bits(y) > MAX_INT_BITS:
        raise PythonError(f"OverflowError: the product has more than {MAX_INT_BITS} bits")
    try:
        out = _BINARY[op](x, y)
    except ZeroDivisionError as exc:
        raise PythonError(f"ZeroDivisionError: {exc}") from None
    except (TypeError, OverflowError, ValueError) as exc:
        raise PythonError(f"{type(exc).__name__}: {exc}") from None
    if isinstance(out, int) and _bits(out) > MAX_INT_BITS:
        raise PythonError(f"OverflowError: the result has more than {MAX_INT_BITS} bits")
    return out


def python_unary(op: str, x):
    """`-x` or `+x` as Python computes it (-True is -1)."""
    return -x if op == "-" else +x
