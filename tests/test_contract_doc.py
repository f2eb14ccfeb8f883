"""docs/contract.md stays complete and true: its dtype names are the vocabulary's, every command has
its section, the report keys it lists are the keys the commands print; the README sends readers there
and says how to use the environment its first command makes."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from promote_cli.cli import COMMANDS
from promote_cli.vocab.dtypes import DTYPES
from support import ROOT, run_cli

CONTRACT = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_dtype_table_is_the_vocabulary_by_kind():
    rows = dict(re.findall(r"^\| (bool|signed|unsigned|float|complex) \| (.+) \|$", CONTRACT, re.M))
    by_kind = defaultdict(list)
    for name, d in DTYPES.items():
        by_kind[d.kind].append(name)
    assert {kind: re.findall(r"`([^`]+)`", names) for kind, names in rows.items()} == dict(by_kind)


def test_every_command_has_its_section():
    sections = re.findall(r"^### (.+)$", CONTRACT, re.M)
    named = {name for section in sections for name in re.findall(r"`promote ([a-z-]+)", section)}
    assert set(COMMANDS) <= named, f"commands without a section in docs/contract.md: {set(COMMANDS) - named}"
    assert sections[-1] == "Commands added later"


def _listed_keys(command: str) -> list[str]:
    section = CONTRACT.split(f"### `promote {command} ", 1)[1].split("\n### ", 1)[0]
    listed = re.search(r"one\s+JSON\s+object\s+\(([^)]*)\)", section).group(1)
    return re.findall(r"`([a-z_0-9]+)`", listed)


def test_the_report_keys_listed_are_the_keys_printed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("w.npy", np.arange(6, dtype=np.float32))
    np.save("acc.npy", np.arange(6, dtype=np.int32))
    code, out, _ = run_cli("cast", "w.npy", "--to", "f16", "--format", "json")
    assert code == 0 and list(json.loads(out)) == _listed_keys("cast")
    code, out, _ = run_cli("rescale", "acc.npy", "--to", "i8", "--scale", "0.5", "--format", "json")
    assert code == 0 and list(json.loads(out)) == _listed_keys("rescale")


def test_the_readme_links_the_contract_and_says_how_to_activate_the_environment():
    assert "docs/contract.md" in README
    first = re.search(r"```sh\n(.*?)```", README, re.S).group(1).strip()
    assert first.startswith("python3 -m venv .venv && ")  # the set-up command makes .venv ...
    activate = re.search(r"^source (\S+)$", README, re.M).group(1)
    assert activate == ".venv/bin/activate"
    # ... and a virtual environment made that way has the script the README sources (this one does)
    assert sys.prefix != sys.base_prefix and (Path(sys.prefix) / "bin" / "activate").is_file()
