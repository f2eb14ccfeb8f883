"""The syntax of `promote expr`: tokens with positions, and a recursive-descent parser.

    x:i16 * (y:i8 + 1) / 2.0        typed variables NAME:OPERAND, literals, operators
    where(c:bool, x:f32, 0)         calls of named ops

Python's precedence and associativity (lowest first): comparisons (not chained), `|`,
`^`, `&`, `+ -`, `* / // %`, unary `- +`, `**` (right-associative, binding tighter than
a unary operator on its left: `-2 ** 2` is `-(2 ** 2)`). The text is never given to
Python's own parser: this module reads it character by character, with bounds on its
length, nesting and size, and every error names its position (`ExpressionSyntaxError`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from promote_cli.errors import UsageError, one_line
from promote_cli.vocab import operators

MAX_CHARS = 4096      # an expression's length
MAX_DEPTH = 48        # nesting: parentheses, calls, unary operators, powers
MAX_CHAIN = 200       # depth of the tree, chains of operators included (a + b + c + ... nests to the left)
MAX_NODES = 1000      # operators, literals, variables and calls in all

UNARY = tuple(operators.UNARY)
COMPARISONS, LEVELS = operators.COMPARISONS, operators.SYNTAX_LEVELS
#: every token of punctuation, the longest first (`**` before `*`)
PUNCTUATION = tuple(sorted(operators.BINARY + operators.GROUP_ONLY, key=len, reverse=True)) + ("(", ")", ",")
#: characters an operand (the part after `NAME:`) may hold: dtype spellings, forms, `?`
OPERAND_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.?")
NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
NAME_CHARS = NAME_START | frozenset("0123456789")
DIGITS = frozenset("0123456789")


class ExpressionSyntaxError(UsageError):
    """A malformed expression: the message, the expression and the offending position.

    `str()` is one line (`malformed expression at column 8: expected an operand, found ')'`);
    `context_lines()` are the expression and a caret under the position, for a terminal.
    """

    def __init__(self, message: str, text: str, position: int, end: int | None = None,
                 what: str = "malformed expression"):
        self.message = message
        self.text = text
        self.position = max(0, min(position, len(text)))
        self.end = max(self.position + 1, end if end is not None else self.position + 1)
        super().__init__(f"{what} at column {self.position + 1}: {message}")

    def context_lines(self) -> list[str]:
        return caret_lines(self.text, self.position, self.end)


def _width(text: str) -> int:
    """Terminal columns of printable text: wide (East Asian) characters take two, combining ones none."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def caret_lines(text: str, start: int, end: int | None = None, limit: int = 100) -> list[str]:
    """Two lines: the expression (escaped as one line, cut to about `limit` columns around the
    position) and carets under characters start..end."""
    end = max(start + 1, end or start + 1)
    pieces = [one_line(ch) for ch in text]
    if start >= len(pieces):
        pieces.append(" ")
    first, last = 0, len(pieces)
    if _width("".join(pieces)) > limit:  # show a window around the position
        first = max(0, start - limit // 2)
        last = min(len(pieces), first + limit)
    shown = "".join(pieces[first:last])
    prefix = "..." if first > 0 else ""
    suffix = "..." if last < len(pieces) else ""
    lead = _width(prefix + "".join(pieces[first:start]))
    span = max(1, _width("".join(pieces[start:min(end, last)])))
    return ["  " + f"{prefix}{shown}{suffix}".rstrip(), "  " + " " * lead + "^" * span]


@dataclass
class Token:
    kind: str        # "number", "name", "var", "op", "end"
    text: str
    start: int
    end: int
    operand: str = ""           # var: the operand text after the colon
    operand_start: int = 0


@dataclass
class Node:
    """One node of the syntax tree. `span` is (start, end) in the text, end exclusive."""

    kind: str                   # "literal", "variable", "unary", "binary", "call"
    span: tuple[int, int]
    op: str = ""                # the operator or the called name
    children: list = field(default_factory=list)
    literal: str = ""           # literal: its text (`1`, `2.5`, `1L`, `True`, `1j`)
    name: str = ""              # variable: its name
    operand: str = ""           # variable: the declared operand text ("" for a later bare use)
    operand_span: tuple[int, int] = (0, 0)
    depth: int = 1

    def source(self, text: str) -> str:
        return text[self.span[0]:self.span[1]]


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t":
            i += 1
            continue
        start = i
        if ch in DIGITS or (ch == "." and i + 1 < n and text[i + 1] in DIGITS):
            i = _number_end(text, i)
            tokens.append(Token("number", text[start:i], start, i))
            continue
        if ch in NAME_START:
            while i < n and text[i] in NAME_CHARS:
                i += 1
            name_end = i
            if i < n and text[i] == ":":
                j = i + 1
                while j < n and text[j] in OPERAND_CHARS:
                    j += 1
                if j == i + 1:
                    raise ExpressionSyntaxError(f"expected a type after {text[start:i + 1]!r} (like x:i16, s:0d:f32, "
                                                "w:weak:f32)", text, i + 1)
                tokens.append(Token("var", text[start:j], start, j, text[i + 1:j], i + 1))
                i = j
            else:
                tokens.append(Token("name", text[start:name_end], start, name_end))
            continue
        for p in PUNCTUATION:
            if text.startswith(p, i):
                tokens.append(Token("op", p, i, i + len(p)))
                i += len(p)
                break
        else:
            if ch == "=":
                raise ExpressionSyntaxError("'=' is not an operator here (comparison is '==')", text, i)
            if ch == "!":
                raise ExpressionSyntaxError("'!' is not an operator here (use '!=')", text, i)
            shown = one_line(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
            raise ExpressionSyntaxError(f"unexpected character {shown!r}", text, i)
    tokens.append(Token("end", "", n, n))
    return tokens


def _number_end(text: str, i: int) -> int:
    """The end of the number starting at i: digits, an optional fraction and exponent, then an
    optional `j` (imaginary) or `L` (an R integer) suffix. A letter glued to it is an error."""
    n = len(text)
    start = i
    while i < n and text[i] in DIGITS:
        i += 1
    if i < n and text[i] == ".":
        i += 1
        while i < n and text[i] in DIGITS:
            i += 1
    if i < n and text[i] in "eE":
        j = i + 1
        if j < n and text[j] in "+-":
            j += 1
        if j < n and text[j] in DIGITS:
            while j < n and text[j] in DIGITS:
                j += 1
            i = j
        else:
            raise ExpressionSyntaxError("expected digits in the exponent", text, j)
    digits = text[start:i]
    integer = all(c in DIGITS for c in digits)
    if i < n and (text[i] in "jJ" or (text[i] == "L" and integer)):
        i += 1
    elif i < n and text[i] == "L":
        raise ExpressionSyntaxError("L follows an integer only (1L, an R integer)", text, i)
    elif integer and digits.startswith("0") and digits.strip("0"):  # Python reads 007j, R 007L, but no 007
        raise ExpressionSyntaxError("leading zeros are not allowed in an integer (as in Python)", text, start, i)
    if i < n and (text[i] in NAME_CHARS or text[i] == "."):
        raise ExpressionSyntaxError(f"malformed number {text[start:i + 1]!r}", text, start, i + 1)
    return i


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.nodes = 0
        self.declared: dict[str, Node] = {}

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def fail(self, message: str, tok: Token | None = None):
        tok = tok or self.tok
        raise ExpressionSyntaxError(message, self.text, tok.start, tok.end)

    def describe(self, tok: Token) -> str:
        return "the end of the expression" if tok.kind == "end" else repr(tok.text)

    def make(self, kind: str, span, **kw) -> Node:
        node = Node(kind, span, **kw)
        node.depth = 1 + max((c.depth for c in node.children), default=0)
        self.nodes += 1
        if node.depth > MAX_CHAIN:
            raise ExpressionSyntaxError(f"too long a chain of operators (more than {MAX_CHAIN} levels deep)",
                                        self.text, span[0], span[1])
        if self.nodes > MAX_NODES:
            raise ExpressionSyntaxError(f"too many operators and operands (more than {MAX_NODES})", self.text,
                                        span[0], span[1])
        return node

    def parse(self) -> Node:
        if self.tok.kind == "end":
            self.fail("the expression is empty")
        node = self.comparison(0)
        if self.tok.kind != "end":
            if self.tok.text == ")":
                self.fail("unmatched ')'")
            self.fail(f"expected an operator or the end, found {self.describe(self.tok)}")
        return node

    def comparison(self, depth: int) -> Node:
        left = self.level(0, depth)
        if self.tok.kind == "op" and self.tok.text in COMPARISONS:
            op = self.tok
            self.i += 1
            right = self.level(0, depth)
            left = self.make("binary", (left.span[0], right.span[1]), op=op.text, children=[left, right])
            if self.tok.kind == "op" and self.tok.text in COMPARISONS:
                self.fail("chained comparisons are not supported (Python reads a < b < c as a < b and b < c); "
                          "add parentheses")
        return left

    def level(self, index: int, depth: int) -> Node:
        if index == len(LEVELS):
            return self.unary(depth)
        left = self.level(index + 1, depth)
        while self.tok.kind == "op" and self.tok.text in LEVELS[index]:
            op = self.tok
            self.i += 1
            right = self.level(index + 1, depth)
            left = self.make("binary", (left.span[0], right.span[1]), op=op.text, children=[left, right])
        return left

    def unary(self, depth: int) -> Node:
        if self.tok.kind == "op" and self.tok.text in UNARY:
            op = self.tok
            self.i += 1
            self.guard(depth + 1, op)
            operand = self.unary(depth + 1)
            return self.make("unary", (op.start, operand.span[1]), op=op.text, children=[operand])
        return self.power(depth)

    def power(self, depth: int) -> Node:
        base = self.primary(depth)
        if self.tok.kind == "op" and self.tok.text == operators.POWER:
            op = self.tok
            self.i += 1
            self.guard(depth + 1, op)
            exponent = self.unary(depth + 1)  # 2 ** -1 is allowed, as in Python
            return self.make("binary", (base.span[0], exponent.span[1]), op="**", children=[base, exponent])
        return base

    def guard(self, depth: int, tok: Token):
        if depth > MAX_DEPTH:
            raise ExpressionSyntaxError(f"nested too deeply (more than {MAX_DEPTH} levels)", self.text, tok.start,
                                        tok.end)

    def primary(self, depth: int) -> Node:
        tok = self.tok
        if tok.kind == "number":
            self.i += 1
            return self.make("literal", (tok.start, tok.end), literal=tok.text)
        if tok.kind == "var":
            self.i += 1
            name = tok.text[:tok.operand_start - 1 - tok.start]
            node = self.make("variable", (tok.start, tok.end), name=name, operand=tok.operand,
                             operand_span=(tok.operand_start, tok.end))
            self.declare(node)
            return node
        if tok.kind == "name":
            self.i += 1
            if tok.text in ("True", "False"):
                return self.make("literal", (tok.start, tok.end), literal=tok.text)
            if self.tok.kind == "op" and self.tok.text == "(":
                return self.call(tok, depth)
            if tok.text not in self.declared:
                raise ExpressionSyntaxError(f"{tok.text!r} is not declared: give its type at its first use, "
                                            f"like {tok.text}:f32", self.text, tok.start, tok.end)
            return self.make("variable", (tok.start, tok.end), name=tok.text)
        if tok.kind == "op" and tok.text == "(":
            self.i += 1
            self.guard(depth + 1, tok)
            inner = self.comparison(depth + 1)
            if self.tok.kind != "op" or self.tok.text != ")":
                self.fail(f"expected ')' to close the '(' at column {tok.start + 1}, found {self.describe(self.tok)}")
            close = self.tok
            self.i += 1
            inner.span = (tok.start, close.end)  # the parenthesised sub-expression, as written
            return inner
        if tok.kind == "end":
            self.fail("the expression ends where an operand was expected")
        self.fail(f"expected an operand, found {self.describe(tok)}")

    def call(self, name: Token, depth: int) -> Node:
        self.i += 1  # "("
        self.guard(depth + 1, name)
        args: list[Node] = []
        if not (self.tok.kind == "op" and self.tok.text == ")"):
            while True:
                args.append(self.comparison(depth + 1))
                if self.tok.kind == "op" and self.tok.text == ",":
                    self.i += 1
                    continue
                break
        if self.tok.kind != "op" or self.tok.text != ")":
            self.fail(f"expected ',' or ')' in the call of {name.text}, found {self.describe(self.tok)}")
        close = self.tok
        self.i += 1
        return self.make("call", (name.start, close.end), op=name.text, children=args)

    def declare(self, node: Node):
        """The first use of a name declares it (its type is checked against later ones on evaluation)."""
        self.declared.setdefault(node.name, node)


def parse(text: str) -> Node:
    """The syntax tree of an expression; ExpressionSyntaxError (a UsageError) when it is malformed."""
    if not isinstance(text, str):
        raise UsageError(f"an expression is a string, not {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ExpressionSyntaxError(f"the expression is too long ({len(text)} characters; the limit is {MAX_CHARS})",
                                    text, MAX_CHARS)
    for index, ch in enumerate(text):
        if ch in "\n\r":
            raise ExpressionSyntaxError("an expression is one line", text, index)
    return _Parser(text).parse()
