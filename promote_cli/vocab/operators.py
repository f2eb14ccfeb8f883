"""The operators and literal kinds of the expression syntax (`promote expr`), named once for
the parser (`expressions/syntax.py`), the rule files' `[expressions]` section
(`oracle/loader.py`) and the evaluator.

An operator's name in a rule file is its spelling (`"+"`, `"<="`), `-x`/`+x` for the unary
ones, or the called name.
"""

from __future__ import annotations

#: binary operators by precedence level, lowest first (Python's), comparisons below them all
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
LEVELS = (("|",), ("^",), ("&",), ("+", "-"), ("*", "/", "//", "%"))
POWER = "**"
BINARY = tuple(op for level in LEVELS for op in level) + (POWER,) + COMPARISONS
#: operators the syntax reads that only an op group answers (`[opgroups]`, docs/ops.md): matrix multiplication,
#: at the level of `*` as in Python
GROUP_ONLY = ("@",)
SYNTAX_LEVELS = LEVELS[:-1] + (LEVELS[-1] + GROUP_ONLY,)
#: the unary operators, as a rule file names them
UNARY = {"-": "-x", "+": "+x"}
#: the named ops that may be called, and how many arguments each takes
CALLS = {"maximum": 2, "minimum": 2, "where": 3}
#: every name an `[expressions.operators]` entry may have
OPERATOR_NAMES = BINARY + tuple(UNARY.values()) + tuple(CALLS)
#: literal kinds: True/False, 1, 1L (an R integer), 2.5, 1j
LITERAL_KINDS = ("bool", "int", "long", "float", "complex")
