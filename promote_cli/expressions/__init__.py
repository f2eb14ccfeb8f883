"""`promote expr`: promotion through whole expressions (`x:i16 * (y:i8 + 1) / 2.0`).

    syntax.py     the expression language: tokens with positions, a bounded recursive-descent parser
    literals.py   literal kinds (1, 1L, 2.5, True, 1j) and Python's own arithmetic on Python scalars
    evaluate.py   every node through the oracle, as the rule file's [expressions] section says

Not to be confused with `oracle/expr.py`, the language rule files write their clauses in.
"""
