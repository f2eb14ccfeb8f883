"""The promotion oracle: rule files in, answers out.

    expr      the rule-expression language (a checked subset of Python expressions)
    model     the compiled form of a rule file (plain data)
    loader    TOML -> validated, compiled `Ruleset`
    registry  finding rule files, `NAME@VERSION`, caching
    engine    answering one query from a `Ruleset`
    matrix    whole matrices and the differences of rulesets
"""
