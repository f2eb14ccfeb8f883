"""Expression recordings (tests/data/recordings/expr-*.json): their shape, their sync with
the corpus (promote_cli/probes/expressions.txt), and the translator that made them, run
here on NumPy (a dependency) against NumPy computed directly."""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from promote_cli.oracle import registry
from promote_cli.probes import expressions
from promote_cli.probes.expression_frameworks import FRAMEWORKS
from promote_cli.probes.expressions import ExpressionError, ask, parse
from promote_cli.vocab import operands

RECORDINGS = Path(__file__).parent / "data" / "recordings"
NAMES = sorted(FRAMEWORKS)


def _path(name: str) -> Path:
    return RECORDINGS / Path(expressions.recording_path(name)).name


def _load(name: str) -> dict:
    return json.loads(_path(name).read_text(encoding="utf-8"))


def test_every_expression_recording_is_a_framework_of_the_probe():
    assert {p.name for p in RECORDINGS.glob("expr-*.json")} == {_path(n).name for n in NAMES}


def test_a_versioned_ruleset_is_recorded_as_its_pair_recording_is_named():
    """array-api@2024.12's expressions beside its pairs (array-api-2024.12.json), asked under that version."""
    assert expressions.recording_path("array-api@2024.12") == "tests/data/recordings/expr-array-api-2024.12.json"
    assert (RECORDINGS / "array-api-2024.12.json").is_file()
    fw = FRAMEWORKS["array-api@2024.12"]
    assert fw.option_sets == ({},) and fw.versions() == {"api_version": "2024.12"}
    assert registry.load("array-api@2024.12").options["api_version"].default == "2024.12"
    assert {n for n in NAMES if n.startswith("array-api@")} == {
        f"array-api@{v}" for v in registry.load("array-api").options["api_version"].values}
    assert expressions.framework_of(registry.load("array-api@2022.12")) == "array-api@2022.12"
    assert expressions.framework_of(registry.load("jax")) == "jax"
    assert expressions.framework_of(registry.load("tosa")) is None


@pytest.mark.parametrize("name", NAMES)
def test_an_expression_recording_names_its_framework_versions_and_probe(name):
    data = _load(name)
    assert list(data)[: len(expressions.HEADER)] == list(expressions.HEADER)
    assert list(data)[-1] == "expressions"
    assert data["ruleset"] == name and registry.load(name).key in (name, f"{name}@{registry.load(name).version}")
    assert data["package"] == FRAMEWORKS[name].package
    assert data["probe"] == "promote_cli.probes.expressions"
    assert data["device"] == "cpu"
    for key in ("version", "python"):
        assert isinstance(data[key], str) and data[key][0].isdigit(), (key, data[key])
    # one case a line, as write_recording writes it
    lines = _path(name).read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(data["expressions"]) + 2


@pytest.mark.parametrize("name", NAMES)
def test_every_case_is_well_formed(name):
    """[expression, options, result, error]: a parsable expression, the ruleset's own options, and
    either a canonical operand or a one-line error."""
    rs = registry.load(name)
    for case in _load(name)["expressions"]:
        assert isinstance(case, list) and len(case) == 4, case
        text, options, result, error = case
        parse(text)
        assert isinstance(options, dict) and set(options) <= set(rs.options), case
        for key, value in options.items():
            choices = [str(c) for c in rs.options[key].values]  # a dtype option's values are dtypes
            assert (isinstance(value, bool) if rs.options[key].type == "bool" else value in choices), case
        assert (result is None) != (error is None), case
        if result is not None:
            assert str(operands.parse(result)) == result, case
        else:
            assert error.strip() == error and "\n" not in error and ": " in error, case


@pytest.mark.parametrize("name", NAMES)
def test_the_recording_holds_every_applicable_corpus_expression_under_each_option_set(name):
    """Re-recording would ask the same cases in the same order: the corpus and the recording agree."""
    cases = _load(name)["expressions"]
    asked = expressions.asked(name)
    assert len(asked) >= 50
    want = [(text, options) for options in FRAMEWORKS[name].option_sets for text in asked]
    assert [(c[0], c[1]) for c in cases] == want


@pytest.mark.parametrize("name", NAMES)
def test_each_recording_has_answers_and_errors(name):
    cases = _load(name)["expressions"]
    results = [c for c in cases if c[2] is not None]
    assert len(results) >= 50 and len(results) < len(cases)


def _nodes(text: str):
    return list(ast.walk(parse(text).tree))


def test_the_corpus_covers_the_syntax():
    """Every operator and named op, literals of each kind on both sides, every variable form."""
    corpus = expressions.corpus()
    assert len(corpus) == len(set(corpus)) >= 100
    nodes = [n for text in corpus for n in _nodes(text)]
    ops = {type(n.op) for n in nodes if isinstance(n, (ast.BinOp, ast.UnaryOp))}
    ops |= {type(n.ops[0]) for n in nodes if isinstance(n, ast.Compare)}
    assert ops == set(expressions.BINARY) | set(expressions.UNARY) | set(expressions.COMPARE)
    assert {n.func.id for n in nodes if isinstance(n, ast.Call)} == set(expressions.CALLS)
    assert {type(n.value) for n in nodes if isinstance(n, ast.Constant)} == {bool, int, float, complex}
    for side in ("left", "right"):
        assert any(isinstance(getattr(n, side), ast.Constant) and type(getattr(n, side).value) is float
                   for n in nodes if isinstance(n, ast.BinOp)), side
    forms = {op.form for text in corpus for op in parse(text).variables.values()}
    assert forms == {operands.TENSOR, operands.RANK0, operands.WEAK, operands.PYTHON}


def test_only_frameworks_with_weak_values_are_asked_weak_variables():
    weak = [t for t in expressions.corpus() if any(o.form == operands.WEAK for o in parse(t).variables.values())]
    assert weak
    for name, fw in FRAMEWORKS.items():
        assert all(t in expressions.asked(name) for t in weak) == fw.weak
        assert not any(t in expressions.asked(name) for t in weak) or fw.weak


# --------------------------------------------------------------------------- the translator

@pytest.mark.parametrize("text, why", [
    ("x:i8 < y:i8 < z:i8", "chained comparison"),
    ("x:i8 + y", "y is used before its type is given"),
    ("x:i8 + x:i16", "x is i8, then i16"),
    ("x:i8 + 1L", "anvil's"),
    ("sum(x:i8)", "only maximum, minimum, where can be called"),
    ("maximum(x:i8)", "maximum takes 2 arguments, got 1"),
    ("where(c:bool, x:i8, y=x)", "positional arguments"),
    ("x:i8.real", "Attribute is not part of the expression syntax"),
    ("x:i8[0]", "Subscript is not part of the expression syntax"),
    ("__import__('os')", "only maximum, minimum, where can be called"),
    ("'a' + x:i8", "Constant is not part of the expression syntax"),
    ("x:i8 @ y:i8", "MatMult is not part"),
    ("x:i8 is y:i8", "Is is not part"),
    ("~x:i8", "Invert is not part"),
    ("x:q8 + 1", "unknown dtype 'q8'"),
    ("x:i8 +", "not an expression"),
])
def test_a_malformed_expression_is_one_line_naming_the_problem(text, why):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert why in str(info.value) and "\n" not in str(info.value)


def test_typed_variables_are_declared_once_and_named_later():
    expr = parse("x:i16 * (y:0d:f32 + w:weak:f16) / x + p:py:int")
    assert {k: str(v) for k, v in expr.variables.items()} == {"x": "i16", "y": "0d:f32", "w": "weak:f16",
                                                               "p": "py:int"}
    assert parse("x:int16 + x:i16").variables["x"].dtype.name == "i16"  # aliases are the same type


NUMPY = FRAMEWORKS["numpy"]


def _np_live(fn):
    """NumPy's own answer for a computation, read the way the recordings read it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001
            return None, type(exc).__name__, str(exc)
    if type(out) in (bool, int, float, complex):
        return f"py:{type(out).__name__}", None, None
    prefix = "0d:" if np.ndim(out) == 0 else ""
    return prefix + {v: k for k, v in _CANONICAL.items()}.get(out.dtype.name, out.dtype.name), None, None


_CANONICAL = {"i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64", "f16": "float16",
              "f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128", "bool": "bool",
              "bf16": "bfloat16"}


def _arr(name, rank0=False):
    dtype = ml_dtypes.bfloat16 if name == "bf16" else np.dtype(_CANONICAL[name])
    return np.array(2 if rank0 else [1, 2, 3]).astype(dtype)


LIVE = [
    ("x:i16 * (y:i8 + 1) / 2.0", lambda: _arr("i16") * (_arr("i8") + 1) / 2.0),
    ("s:0d:i64 * 3", lambda: _arr("i64", True) * 3),
    ("s:0d:f32 + t:0d:i64", lambda: _arr("f32", True) + _arr("i64", True)),
    ("x:u8 + s:0d:i16", lambda: _arr("u8") + _arr("i16", True)),
    ("x:i8 + 300", lambda: _arr("i8") + 300),
    ("3 - x:u8", lambda: 3 - _arr("u8")),
    ("x:bf16 + 1.5", lambda: _arr("bf16") + 1.5),
    ("where(b:bool, x:u8, -1)", lambda: np.where(np.ones(3, bool), _arr("u8"), -1)),
    ("maximum(x:i8, y:u8) // 2", lambda: np.maximum(_arr("i8"), _arr("u8")) // 2),
    ("(x:f32 > 1.5) * y:i16", lambda: (_arr("f32") > 1.5) * _arr("i16")),
    ("x:f32 & y:f32", lambda: _arr("f32") & _arr("f32")),
    ("-s:0d:f16", lambda: -_arr("f16", True)),
    ("1 + 2.5", lambda: 1 + 2.5),
    ("True & False", lambda: True & False),
]


@pytest.mark.parametrize("text, compute", LIVE, ids=[t for t, _ in LIVE])
def test_the_translator_gives_numpys_own_answer(text, compute):
    """The translator (parse, NumPy values, operators, np.maximum/np.where) against the same
    computation written out in NumPy, both run now."""
    result, error = ask(NUMPY, parse(text))
    want, exc_type, message = _np_live(compute)
    if want is not None:
        assert (result, error) == (want, None)
    else:
        assert result is None and error.startswith(f"{exc_type}: ") and message.startswith(error.split(": ", 1)[1][:40])


def test_numpy_scalars_are_0d_and_python_scalars_are_py():
    assert NUMPY.form(np.float64(1.5)) == "0d:f64" and expressions.python_form(np.float64(1.5)) is None
    assert NUMPY.form(np.array(1, np.int8)) == "0d:i8" and NUMPY.form(np.ones(3, np.uint8)) == "u8"
    assert [expressions.python_form(v) for v in (True, 1, 1.5, 1j)] == ["py:bool", "py:int", "py:float",
                                                                        "py:complex"]


def test_the_numpy_recording_is_what_the_translator_answers_with_the_recorded_numpy():
    """Re-evaluating every recorded NumPy case here gives the recording (with the recorded
    NumPy and ml_dtypes; another version may answer otherwise, and is then asked nothing)."""
    data = _load("numpy")
    if (np.__version__, ml_dtypes.__version__) != (data["version"], data["ml_dtypes"]):
        return
    assert expressions.worker("numpy", {}) == data["expressions"]


# --------------------------------------------------------------------------- the framework pages

DOCS = Path(__file__).resolve().parents[1] / "docs" / "frameworks"
_ROW = re.compile(r"^\| `(?P<expr>[^`]+)` \| (?:`-O (?P<opt>[^`]+)`)? \| (?:`(?P<result>[^`]+)`|error `(?P<error>\w+)`) \|$")


def _doc_rows(name: str) -> tuple[str, list]:
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    section = text.split("\n## Whole expressions\n", 1)[1].split("\n## ", 1)[0]
    rows = [_ROW.match(line) for line in section.splitlines() if line.startswith("| `")]
    assert all(rows), [line for line in section.splitlines() if line.startswith("| `") and not _ROW.match(line)]
    return section, rows


#: the framework pages (docs/frameworks/PAGE.md) and the recordings each quotes: a versioned
#: ruleset's recordings (array-api@2021.12 ... @2025.12) share its framework's page
PAGES: dict[str, list[str]] = {}
for _name in NAMES:
    PAGES.setdefault(_name.partition("@")[0], []).append(_name)


def _effective(name: str, options: dict) -> dict:
    """A case's options with the ruleset's defaults filled in (array-api@2022.12's {} is api_version=2022.12)."""
    defaults = {k: str(o.default) if o.type == "dtype" else o.default for k, o in registry.load(name).options.items()}
    return {**defaults, **options}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_framework_page_quotes_its_expression_recording_truly(page):
    """docs/frameworks/PAGE.md, "Whole expressions": the case count of each of its recordings and
    every row of its table (a row's options over the page's ruleset's defaults)."""
    section, rows = _doc_rows(page)
    cases = []
    for name in PAGES[page]:
        recorded = _load(name)["expressions"]
        assert f"`{expressions.recording_path(name)}` holds {len(recorded)} cases" in " ".join(section.split()), name
        cases += [(c[0], _effective(name, c[1]), *c[2:]) for c in recorded]
    assert len(rows) >= 5
    for row in rows:
        options = _effective(page, {})
        if row["opt"]:
            for opt in row["opt"].split(" -O "):
                key, _, value = opt.partition("=")
                options[key] = {"true": True, "false": False}.get(value, value)
        hits = [c for c in cases if c[0] == row["expr"] and c[1] == options]
        assert len(hits) == 1, row.group(0)
        _, _, result, error = hits[0]
        if row["result"]:
            assert result == row["result"], (row.group(0), result, error)
        else:
            assert result is None and error.startswith(row["error"] + ": "), (row.group(0), error)


# --------------------------------------------------------------------------- promote verify

def _verify(*args):
    from click.testing import CliRunner

    from promote_cli.cli import main

    return CliRunner().invoke(main, ["verify", *args])


def test_verify_compares_a_saved_expression_recording_as_a_check_of_its_own():
    r = _verify("-f", "jax", "--recording", str(RECORDINGS / "expr-jax.json"))
    n = len(_load("jax")["expressions"])
    assert r.exit_code == 0, r.output
    assert f"whole expressions: {n} of {n} cases agree" in r.stdout


def test_verify_names_an_expression_the_ruleset_answers_otherwise(tmp_path):
    data = _load("jax")
    index = next(i for i, c in enumerate(data["expressions"]) if c[0] == "x:i8 * 2.5" and c[2] == "weak:f32")
    data["expressions"][index][2] = "f64"
    path = tmp_path / "expr-jax.json"
    path.write_text(json.dumps(data))
    r = _verify("-f", "jax", "--recording", str(path))
    assert r.exit_code == 1
    assert ("x:i8 * 2.5 -O x64=false -O numpy_dtype_promotion=standard: framework gives f64, "
            "promote expr gives weak:f32") in r.stdout
    assert not promote_cli_verify("jax", str(path)).agrees


def promote_cli_verify(*args):
    import promote_cli

    return promote_cli.verify(*args)


@pytest.mark.parametrize("text, needle", [
    ('{"ruleset": "jax", "expressions": {}}', "expressions: expected a list of [expression, options, result, error]"),
    ('{"ruleset": "jax", "expressions": [5]}', "expressions[0]: expected [expression, options, result, error]"),
    ('{"ruleset": "jax", "expressions": [["x:i8 + 1", {}, "i8"]]}', "expressions[0]: expected"),
    ('{"ruleset": "jax", "expressions": [["x:i8 + 1", [], "i8", null]]}', "expressions[0]: options must be an object"),
    ('{"ruleset": "jax", "expressions": [["x:i8 + 1", {}, 8, null]]}', "expressions[0]: result must be a string"),
    ('{"ruleset": "jax"}', "missing cases"),
])
def test_a_malformed_expression_recording_is_one_line(tmp_path, text, needle):
    path = tmp_path / "rec.json"
    path.write_text(text)
    r = _verify("-f", "jax", "--recording", str(path))
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and needle in r.stderr, r.stderr


def test_an_expression_recording_needs_a_ruleset_with_expression_rules(tmp_path, monkeypatch):
    (tmp_path / "plain.toml").write_text('schema = 1\nname = "plain"\nversion = "1"\ndescription = "no expressions"\n'
                                        'source = "tests"\ntypes = ["i8"]\n[[rules]]\nname = "same"\nresult = "a"\n')
    path = tmp_path / "expr-plain.json"
    path.write_text('{"ruleset": "plain", "expressions": [["x:i8 + y:i8", {}, "i8", null]]}')
    monkeypatch.setenv("PROMOTE_RULES_PATH", str(tmp_path))
    registry.clear_cache()
    try:
        r = _verify("-f", "plain", "--recording", str(path))
    finally:
        registry.clear_cache()
    assert r.exit_code == 2 and "plain@1 has no [expressions] rules" in r.stderr, r.stderr


def test_live_verify_asks_the_expressions_too(monkeypatch):
    """`promote verify -f jax` with JAX installed re-asks the pairs and the whole expressions: here the
    probes answer with the committed recordings, one expression changed, and the report names it."""
    from promote_cli.probes import jax as jax_probe
    from promote_cli.probes import jax_ops

    pairs = json.loads((RECORDINGS / "jax-0.10.json").read_text(encoding="utf-8"))
    data = _load("jax")
    data["expressions"][0][2] = "u8"
    asked = []
    monkeypatch.setattr(jax_probe, "version", lambda: pairs["version"])
    monkeypatch.setattr(jax_probe, "record", lambda: pairs)
    op_recording = json.loads((RECORDINGS / "ops-jax.json").read_text(encoding="utf-8"))
    op_recording["rows"] = [row for row in op_recording["rows"] if row[0] == "sum"]   # the op groups are asked too
    monkeypatch.setattr(jax_ops, "record_ops", lambda name: op_recording)
    values = json.loads((RECORDINGS / "values" / "jax.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(jax_probe, "record_values", lambda name: values)   # the value cases are asked too
    monkeypatch.setattr(expressions, "record", lambda name: asked.append(name) or data)
    report = promote_cli_verify("jax")
    assert asked == ["jax"] and not report.mismatches
    [(n, bad)] = [(n, bad) for label, n, bad in report.checks if label == "whole expressions"]
    assert n == len(data["expressions"])
    assert bad == [(f"{data['expressions'][0][0]} -O x64=false -O numpy_dtype_promotion=standard: "
                    f"framework gives u8, promote expr gives i8")]


def test_the_translator_knows_every_operator_of_the_syntax_and_no_other():
    from promote_cli.vocab import operators

    handled = set(expressions.BINARY) | set(expressions.UNARY) | set(expressions.COMPARE)
    assert set(expressions.SPELLINGS) == handled
    assert sorted(expressions.SPELLINGS.values()) == sorted(operators.BINARY + tuple(operators.UNARY.values()))
    assert expressions.CALLS is operators.CALLS


def test_an_expression_the_rules_cannot_evaluate_agrees_with_nothing(tmp_path):
    """A recorded error is matched by a refusal only: a usage error of `promote expr` (here a
    malformed expression) is a disagreement, named as such."""
    from promote_cli.probes.recordings import compare_expressions

    data = {"ruleset": "jax", "expressions": [["x:i8 +", {}, None, "SyntaxError: invalid syntax"],
                                              ["x:i8 + 300", {}, "i8", None]]}
    n, bad = compare_expressions(data)
    assert n == 2 and len(bad) == 1
    assert bad[0].startswith("x:i8 +: framework gives an error (SyntaxError: invalid syntax), "
                             "promote expr cannot evaluate it (")


def test_live_verify_asks_expressions_only_of_frameworks_the_expression_probe_evaluates(monkeypatch):
    from promote_cli.probes import recordings

    monkeypatch.setattr(expressions, "record", lambda name: pytest.fail(f"asked {name}"))
    assert recordings._live_expressions("openvino") is None and recordings._live_expressions("tosa") is None


# --------------------------------------------------------------------------- array-api-strict, per standard version

def test_live_verify_of_a_versioned_ruleset_asks_that_versions_expressions(monkeypatch):
    """`promote verify -f array-api@2024.12` re-asks its pairs and its own version's expressions
    (the probes answer with the committed recordings here, one expression changed)."""
    from promote_cli.probes import array_api as array_api_probe
    from promote_cli.probes import array_api_ops

    pairs = json.loads((RECORDINGS / "array-api-2024.12.json").read_text(encoding="utf-8"))
    op_recording = json.loads((RECORDINGS / "ops-array-api-2024.12.json").read_text(encoding="utf-8"))
    op_recording["rows"] = [row for row in op_recording["rows"] if row[0] == "sum"]   # the op groups are asked too
    monkeypatch.setattr(array_api_ops, "record_ops", lambda name: op_recording)
    data = _load("array-api@2024.12")
    index = next(i for i, c in enumerate(data["expressions"]) if c[0] == "1 < x:i32")
    data["expressions"][index][2] = "i32"
    asked = []
    monkeypatch.setattr(array_api_probe, "version", lambda: pairs["version"])
    monkeypatch.setattr(array_api_probe, "record_for", lambda name: pairs)
    values = json.loads((RECORDINGS / "values" / "array-api-2024.12.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(array_api_probe, "record_values", lambda name: values)   # the value cases are asked too
    monkeypatch.setattr(expressions, "record", lambda name: asked.append(name) or data)
    report = promote_cli_verify("array-api@2024.12")
    assert asked == ["array-api@2024.12"] and not report.mismatches
    [(n, bad)] = [(n, bad) for label, n, bad in report.checks if label == "whole expressions"]
    assert n == len(data["expressions"]) == 129
    assert bad == ["1 < x:i32: framework gives i32, promote expr gives bool"]


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("array-api@")])
def test_each_array_api_recording_agrees_with_its_version_and_with_the_option(name):
    """The versions extend one file: -f array-api@V and -O api_version=V give every recorded answer alike."""
    import promote_cli

    version = name.partition("@")[2]
    data = _load(name)
    assert data["api_version"] == version
    for text, options, result, _ in data["expressions"]:
        assert options == {}
        by_name = promote_cli.expr(text, name).result
        by_option = promote_cli.expr(text, "array-api", {"api_version": version}).result
        assert by_name == by_option == result, (text, by_name, by_option, result)


def test_the_array_api_versions_differ_on_the_named_ops_only():
    """What the recordings show: maximum/minimum from 2023.12, Python scalars in them and in where from 2024.12."""
    versions = [n for n in NAMES if n.startswith("array-api@")]
    answers = {n: {c[0]: c[2] for c in _load(n)["expressions"]} for n in versions}
    differing = {text for text in answers[versions[0]] if len({answers[n][text] for n in versions}) > 1}
    assert differing and all(t.startswith(("maximum", "minimum", "where")) for t in differing), differing
    assert answers["array-api@2022.12"]["maximum(x:i8, y:u8)"] is None
    assert answers["array-api@2023.12"]["maximum(x:i8, y:u8)"] == "i16"
    assert answers["array-api@2023.12"]["where(x:i16 > 1, x, 0)"] is None
    assert answers["array-api@2024.12"]["where(x:i16 > 1, x, 0)"] == "i16"


@pytest.mark.live
@pytest.mark.parametrize("name", ["array-api@2021.12", "array-api@2025.12"])
def test_the_array_api_recording_is_what_array_api_strict_answers_now(name):
    """Re-asking array-api-strict (with the recorded version) gives the recording, case for case."""
    from support import require_framework

    from promote_cli.probes import array_api as array_api_probe

    require_framework(array_api_probe)
    data = _load(name)
    if array_api_probe.version() != data["version"]:
        return
    assert expressions.record(name)["expressions"] == data["expressions"]
