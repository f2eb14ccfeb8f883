"""A bounded parser for the Python literals of a `.npy` header.

A `.npy` header is the repr of a dict: `{'descr': '<f4', 'fortran_order': False,
'shape': (3, 4), }`. NumPy reads it with `ast.literal_eval`, which recurses once per
nesting level (100,000 nested brackets or minus signs exhaust the interpreter's stack)
and accepts far more than headers hold. This parser takes only what a header can hold:
dicts, lists and tuples (at most `MAX_DEPTH` deep and `MAX_ITEMS` long), plain quoted
strings without escapes or control characters, integers with at most one sign (and Python 2's `L` suffix),
`True`, `False` and `None`. It runs in time linear in its input and raises
`LiteralError` (a ValueError) for anything else.
"""

from __future__ import annotations

MAX_DEPTH = 8
MAX_ITEMS = 1024
MAX_DIGITS = 40

_SPACE = " \t\r\n"
_DIGITS = "0123456789"
_WORD_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_NAMES = {"True": True, "False": False, "None": None}


class LiteralError(ValueError):
    """The text is not a literal this parser takes; the message says where."""


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, what: str):
        raise LiteralError(f"{what} at offset {self.pos}")

    def skip(self) -> None:
        t, n, i = self.text, len(self.text), self.pos
        while i < n and t[i] in _SPACE:
            i += 1
        self.pos = i

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, depth: int):
        self.skip()
        c = self.peek()
        if c in ("{", "[", "("):
            if depth >= MAX_DEPTH:
                self.fail(f"nested deeper than {MAX_DEPTH}")
            return self.container(c, depth + 1)
        if c in ("'", '"'):
            return self.string(c)
        if c and (c in _DIGITS or c in "+-"):
            return self.integer()
        if c and c in _WORD_START:
            return self.name()
        self.fail("expected a value" if c else "unexpected end")

    def container(self, opener: str, depth: int):
        closer = {"{": "}", "[": "]", "(": ")"}[opener]
        self.pos += 1
        items: list = []
        keys: list = []
        commas = 0
        while True:
            self.skip()
            if self.peek() == closer:
                self.pos += 1
                break
            if len(items) >= MAX_ITEMS:
                self.fail(f"more than {MAX_ITEMS} items")
            if opener == "{":
                key = self.value(depth)
                self.skip()
                if self.peek() != ":":
                    self.fail("expected ':'")
                self.pos += 1
                try:
                    hash(key)
                except TypeError:
                    self.fail("unhashable dict key")
                keys.append(key)
            items.append(self.value(depth))
            self.skip()
            c = self.peek()
            if c == ",":
                self.pos += 1
                commas += 1
            elif c == closer:
                self.pos += 1
                break
            else:
                self.fail(f"expected ',' or {closer!r}")
        if opener == "{":
            d = {}
            for k, v in zip(keys, items):
                if k in d:
                    self.fail(f"duplicate key {k!r}")
                d[k] = v
            return d
        if opener == "[":
            return items
        if len(items) == 1 and commas == 0:  # (x) is x, (x,) a tuple
            return items[0]
        return tuple(items)

    def string(self, quote: str) -> str:
        t = self.text
        end = t.find(quote, self.pos + 1)
        if end < 0:
            self.fail("unterminated string")
        s = t[self.pos + 1 : end]
        if "\\" in s or any(c < " " or c == "\x7f" for c in s):
            self.fail("escapes and control characters in strings are not taken")
        self.pos = end + 1
        return s

    def integer(self) -> int:
        t, i = self.text, self.pos
        sign = 1
        if t[i] in "+-":
            sign = -1 if t[i] == "-" else 1
            i += 1
            while i < len(t) and t[i] in _SPACE:
                i += 1
        j = i
        while j < len(t) and t[j] in _DIGITS:
            j += 1
        if j == i:
            self.pos = i
            self.fail("expected digits")
        digits = t[i:j]
        if len(digits) > MAX_DIGITS:
            self.pos = i
            self.fail(f"integer longer than {MAX_DIGITS} digits")
        if len(digits) > 1 and digits[0] == "0":
            self.pos = i
            self.fail("integer with a leading zero")
        if j < len(t) and t[j] in "lL":  # Python 2 long, as old numpy wrote it
            j += 1
        if j < len(t) and (t[j] in _WORD_START or t[j] in ".eEjJ"):
            self.pos = j
            self.fail("not an integer")
        self.pos = j
        return sign * int(digits)

    def name(self):
        t, i = self.text, self.pos
        j = i
        while j < len(t) and (t[j] in _WORD_START or t[j] in _DIGITS):
            j += 1
        word = t[i:j]
        if word not in _NAMES:
            self.fail(f"unknown name {word[:20]!r}")
        self.pos = j
        return _NAMES[word]


def parse(text: str):
    """The literal `text` holds (surrounding white space allowed), or LiteralError."""
    p = _Parser(text)
    v = p.value(0)
    p.skip()
    if p.pos != len(text):
        p.fail("unexpected text after the value")
    return v
