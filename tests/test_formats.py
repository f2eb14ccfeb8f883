"""The output-format interface (promote_cli/cli/formats): one module per format, one set of payload methods."""

from __future__ import annotations

import json

import pytest

import promote_cli
from promote_cli import UsageError
from promote_cli.cli import formats
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
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('promote_cli.cli.formats.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "['text']"
