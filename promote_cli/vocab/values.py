"""The values an operand may carry: `py:300`, `py:1.5`, `py:nan`, `py:True`, `py:1+1j`, `0d:i64=300`.

A value is written as a Python literal (a sign allowed; `nan` and `inf` too) and parsed here by
Python's own number constructors on a short, checked text (never `eval`): `bool`, `int`, `float`
or `complex`. `show` prints it back canonically (Python's `repr`, a complex without its
parentheses), so `show(parse(show(v))) == show(v)`. `held(dtype, v)` is the value a dtype holds
for `v` (a bool or integer type only integers in its range, a float type a real number within its
finite range or the NaN and infinities it has, a complex type numbers whose parts are so), or the
reason it holds none. Nothing here imports anything.
"""

from __future__ import annotations

from promote_cli.errors import UsageError

MAX_LITERAL = 64  # characters: a longer literal is refused, not parsed
_SPECIAL = ("nan", "inf")
#: the literals spelled as words (any case)
WORDS = ("true", "false", *_SPECIAL)
_NUMBER_CHARS = frozenset("0123456789._e+-")
_COMPLEX_CHARS = _NUMBER_CHARS | frozenset("jnaif")

EXAMPLES = "py:300, py:-1, py:1.5, py:1e+300, py:nan, py:-inf, py:True, py:1j, py:1+1j"


def parse(text: str, where: str):
    """The Python scalar a literal spells (`where` names the operand in the one-line UsageError)."""
    t = text.strip()
    if not t:
        raise UsageError(f"{where} needs a value (e.g. {EXAMPLES})")
    if len(t) > MAX_LITERAL:
        raise UsageError(f"{where}: a value is at most {MAX_LITERAL} characters long, not {len(t)}")
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        value = _number(low)
    except (ValueError, OverflowError):
        value = None
    if value is None:
        raise UsageError(f"{where}: {t} is not a Python literal (write one such as {EXAMPLES})")
    if "inf" not in low and not all(abs(part) != float("inf") for part in _parts(value)):
        raise UsageError(f"{where}: {t} is beyond a Python float's range (py:inf is infinity)")
    return value


def _number(low: str):
    """An int, float or complex from a lower-case literal; None when it is none of them."""
    if low.startswith("(") and low.endswith(")") and low.endswith("j)"):
        low = low[1:-1]
    if low.endswith("j"):
        spelled = any(c.isdigit() for c in low) or any(s in low for s in _SPECIAL)
        return complex(low) if spelled and set(low) <= _COMPLEX_CHARS else None
    body = low.lstrip("+-")
    if len(low) - len(body) > 1:
        return None
    if body in _SPECIAL:
        return float(low)
    if body[:2] in ("0x", "0o", "0b"):
        return int(low, 0)
    if not set(body) <= _NUMBER_CHARS or body[:1] in ("_", "e") or not any(c.isdigit() for c in body):
        return None
    if "." in body or "e" in body:
        return float(low)
    return int(low, 0)


def _parts(value) -> tuple:
    return (value.real, value.imag) if isinstance(value, complex) else (value,)


def show(value) -> str:
    """The canonical text of a value: `True`, `300`, `1.5`, `1e+300`, `nan`, `-inf`, `1j`, `1+1j`."""
    if isinstance(value, complex):
        return repr(value).strip("()")
    return repr(value)


def held(dtype, value):
    """(the value as `dtype` holds it, None), or (None, why it cannot)."""
    kind = dtype.kind
    if kind == "bool":
        if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
            return bool(value), None
        return None, "bool holds True or False"
    if kind in ("signed", "unsigned"):
        if type(value) not in (bool, int):
            return None, f"{dtype} holds integers"
        if not int(dtype.min) <= value <= int(dtype.max):
            return None, f"{dtype} holds {int(dtype.min)} to {int(dtype.max)}"
        return int(value), None
    if isinstance(value, complex) and kind != "complex":
        return None, f"{dtype} holds real numbers"
    parts = _parts(complex(value) if kind == "complex" else float(value))
    for part in parts:
        if part != part and not dtype.has_nan:
            return None, f"{dtype} has no NaN"
        if part in (float("inf"), float("-inf")) and not dtype.has_inf:
            return None, f"{dtype} has no infinity"
        low = -dtype.max if kind == "complex" else dtype.min
        if part == part and abs(part) != float("inf") and not low <= part <= dtype.max:
            return None, f"{dtype} holds {show(float(low))} to {show(float(dtype.max))}"
    return (complex(*parts) if kind == "complex" else parts[0]), None


def fits(value, dtype) -> bool:
    """Whether `dtype` holds `value` (see `held`)."""
    return held(dtype, value)[1] is None
