"""The output-format interface (promote_cli/formats): one module per format, one set of payload methods."""

from __future__ import annotations

import json

import pytest

import promote_cli
from promote_cli import UsageError
from promote_cli import formats
from support import run_cli


@pytest.mark.parametrize("name", formats.NAMES)
def test_each_format_module_names_itself(name):
    out = formats.get(name)
    assert isinstance(out, formats.Format) and out.name == name


def test_an_unknown_format_and_a_payload_without_a_shape_are_usage_errors():
    with pytest.raises(UsageError, match="unknown format 'yaml'"):
        formats.get("yaml")
    with pytest.raises(UsageError, match="--format csv has no form for a query answer"):
        formats.get("csv").answer(promote_cli.query("cann", "i8", "u8"))


@pytest.mark.parametrize("name", ["text", "json", "csv", "markdown", "rich"])
def test_listings_in_every_format(name):
    code, out, err = run_cli("frameworks", "--format", name, "--color", "never")
    assert code == 0 and err == "" and "cann@opbase" in out
    if name == "json":
        assert {r["ruleset"] for r in json.loads(out)} == {rs.key for rs in promote_cli.frameworks()}


def test_one_line_escapes_what_would_break_a_line():
    assert formats.one_line("a\nb\rc\x1b[2J\u2028d\te") == "a\\nb\\rc\\x1b[2J\\u2028d\\te"
    assert formats.one_line("plain text, ünïcode 字") == "plain text, ünïcode 字"


def test_the_query_path_loads_only_the_format_it_uses():
    import subprocess
    import sys

    code = ("import sys\nfrom promote_cli.cli import main\n"
            "try:\n    main(['query', 'i8', 'u8', '-f', 'cann'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('promote_cli.formats.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "['text']"


def test_file_reports_render_through_the_formats_with_their_paths_on_one_line(tmp_path):
    import numpy as np

    odd = tmp_path / "a\nb.npy"
    np.save(odd, np.arange(-3, 5, dtype=np.int32))
    rescaled = promote_cli.rescale_file(odd, tmp_path / "r.npy", "i8", 1 << 30, 31)
    text = formats.get("text").rescale_report(rescaled)
    assert text.endswith("saturated (0 low, 0 high)\n") and text.count("\n") == 1 and "a\\nb.npy" in text
    assert json.loads(formats.get("json").rescale_report(rescaled))["input"] == str(odd)
    plan = promote_cli.plan_cast([odd], "f32")
    (outcome,) = list(promote_cli.run_cast(plan))
    text = formats.get("text").cast_outcome(outcome, [])
    assert text.count("\n") == 2 and "a\\nb.npy -> " in text and ": i32 -> f32 (tosa), 8 elements (8)\n  8 exact\n" in text
    data = json.loads(formats.get("json").cast_outcome(outcome, ["inexact"]))
    assert data["input"] == str(odd) and data["failed_on"] == ["inexact"]
    for name in ("csv", "markdown"):
        with pytest.raises(UsageError, match="has no form for a (rescale|cast) report"):
            formats.get(name).rescale_report(rescaled)
        with pytest.raises(UsageError, match="has no form for a cast report"):
            formats.get(name).cast_outcome(outcome, [])


#: what each command prints through the format interface (the `Format` methods it calls)
PAYLOADS = {"query": {"answer", "batch_line"}, "table": {"matrix", "diff", "records"}, "expr": {"expression"},
            "explain": {"explanation"}, "expect": {"expectations"}, "check": {"check"}, "lattice": {"order"},
            "cast": {"cast_outcome", "cast_summary"}, "rescale": {"rescale_report", "records"}, "verify": {"report"},
            "validate": {"validation"}, "frameworks": {"records"}, "dtypes": {"records"},
            "ops": {"records"}, "port": {"port", "records"}}
#: formats a command offers through options of their own rather than --format (`table --svg FILE`)
OWN_FLAGS = {"table": {"svg", "html"}}


def _shapes(name: str) -> set[str]:
    cls = type(formats.get(name))
    return {m for m in vars(formats.Format) if not m.startswith("_") and callable(getattr(formats.Format, m))
            and getattr(cls, m) is not getattr(formats.Format, m)}


def test_every_command_offers_each_format_that_has_a_shape_for_what_it_prints():
    """Consistency between commands: a command's --format choice is exactly the formats that render one of
    its payloads, so two commands that print the same kind of thing offer the same formats."""
    from promote_cli.cli import COMMANDS, main

    assert set(PAYLOADS) == set(COMMANDS)
    for command, payloads in PAYLOADS.items():
        cmd = main.get_command(None, command)
        fmt = next(p for p in cmd.params if p.name == "fmt")
        wanted = {n for n in formats.NAMES if _shapes(n) & payloads} - OWN_FLAGS.get(command, set())
        assert set(fmt.type.choices) == wanted, command
        takes_color = any(p.name == "color" for p in cmd.params)
        assert takes_color == ("rich" in wanted), command  # --color wherever rich is offered


@pytest.mark.parametrize("args", [["frameworks"], ["frameworks", "-v"], ["dtypes"], ["rescale", "--list"],
                                  ["table", "--cast"]])
def test_rich_listings_cut_no_cell_at_80_columns(args):
    code, out, _ = run_cli(*args, "--format", "rich", "--color", "never")
    assert code == 0 and out and "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("width", [80, 120])
def test_rich_listings_keep_every_cell_whole_at_the_terminal_width(monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = run_cli("dtypes", "--format", "rich", "--color", "never")
    records = json.loads(run_cli("dtypes", "--format", "json")[1])
    assert code == 0 and max(len(line) for line in out.splitlines()) <= width and "…" not in out
    words = set(out.split())
    for rec in records:
        exact = [str(rec["max"])] if isinstance(rec["max"], int) else []  # integer limits, every digit
        assert {rec["name"], *exact, *rec["aliases"]} <= words, rec["name"]
    code, out, _ = run_cli("frameworks", "--format", "rich", "--color", "never")
    assert max(len(line) for line in out.splitlines()) <= width
    assert {x.key for x in promote_cli.frameworks()} <= set(out.split())


def test_listings_default_to_rich_where_colour_is_wanted_and_text_otherwise():
    for command in ("frameworks", "dtypes"):
        rich = run_cli(command, "--color", "always")[1]
        assert "\x1b[" in rich  # rich, coloured (on a terminal, `auto` means this)
        assert run_cli(command)[1] == run_cli(command, "--format", "text")[1]  # piped: text
        assert "\x1b[" not in run_cli(command, "--color", "never")[1]


@pytest.mark.parametrize("name", ["text", "markdown", "rich"])
def test_frameworks_verbose_shows_options_operators_and_notes_in_every_listing_format(name):
    rs = promote_cli.load("openvino")
    plain = run_cli("frameworks", "-f", "openvino", "--format", name, "--color", "never")[1]
    code, out, err = run_cli("frameworks", "-v", "-f", "openvino", "--format", name, "--color", "never")
    assert code == 0 and err == ""
    flat = " ".join(out.split())  # rich wraps long notes: compare words, not lines
    for key in rs.options:
        assert f"-O {key}=" in out and f"-O {key}=" not in plain
    assert "promote expr: + - *" in out and "promote expr" not in plain
    for note in rs.notes:
        assert " ".join(note.split()) in flat


def test_frameworks_json_carries_what_verbose_shows():
    (record,) = json.loads(run_cli("frameworks", "-v", "-f", "openvino", "--format", "json")[1])
    assert record["options"]["promote_unsafe"] is False and record["notes"] and record["expressions"]["operators"]


@pytest.mark.parametrize("k, n, noun, verb, said", [
    (1, 1, "cell", "agree", "the 1 cell agrees"),
    (0, 1, "case", "agree", "the 1 case does not agree"),
    (1, 1, "pair", "depend on the operands' order", "the 1 pair depends on the operands' order"),
    (1, 1, "result", "cannot hold every value", "the 1 result cannot hold every value"),
    (1, 4, "cell", "differ", "1 of 4 cells differ"),
    (3, 3, "expectation", "hold", "3 of 3 expectations hold"),
])
def test_a_tally_is_english_for_a_count_of_one(k, n, noun, verb, said):
    from promote_cli.formats import tally

    assert tally(k, n, noun, verb) == said
