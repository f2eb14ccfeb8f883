"""The registry finds rule files without `pathlib` (a query does not import it) and spells their paths as
`pathlib` does, so messages and `rule_files()` are what they were."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from promote_cli.oracle import registry


@pytest.mark.parametrize("text", ["/a/b", "/a/b/", "a//b", "./rules", ".", "a/./b/../c", "//net/x", "///x", "a",
                                  "rules/"])
def test_a_directory_is_spelled_as_pathlib_spells_it(text):
    assert registry._spelled(text) == str(PurePosixPath(text))


def _by_pathlib(dirs: list[Path]) -> dict[str, Path]:
    found = {}
    for directory in dirs:
        if directory.is_dir():
            for path in sorted(directory.glob("*.toml")):
                if not path.name.startswith(("_", ".")):
                    found.setdefault(path.stem, path)
    return found


def test_rule_files_are_the_ones_pathlib_finds(tmp_path, monkeypatch):
    extra = tmp_path / "more"
    extra.mkdir()
    for name in ("cann.toml", "zeta@1.toml", "_draft.toml", ".hidden.toml", "notes.txt", "Upper.toml"):
        (extra / name).write_text("name = 'x'\n")
    (extra / "dir.toml").mkdir()
    monkeypatch.setenv("PROMOTE_RULES_PATH", f"{extra}/{'::' + str(tmp_path)}")  # an empty entry is skipped
    expected = _by_pathlib([Path(str(extra)), tmp_path, registry.builtin_dir()])
    assert registry.rule_files() == expected
    assert registry.rule_files()["cann"] == extra / "cann.toml"  # the PROMOTE_RULES_PATH file first
    assert registry.shadowed()["cann"] == [registry.builtin_dir() / "cann.toml"]
    assert registry.builtin_dir() == Path(registry.__file__).resolve().parent.parent / "rules" or (
        registry.builtin_dir() == Path(registry.__file__).resolve().parent.parent.parent / "rules")


@pytest.mark.parametrize("entry, what", [("missing", "does not exist"), ("file.toml", "is not a directory")])
def test_an_entry_that_is_no_directory_is_a_usage_error_naming_it(tmp_path, monkeypatch, entry, what):
    """A misspelt PROMOTE_RULES_PATH entry would hide its rule files without a word: refused, naming the entry."""
    from click.testing import CliRunner

    from promote_cli.cli import main
    from promote_cli.errors import UsageError

    (tmp_path / "file.toml").write_text("name = 'x'\n")
    monkeypatch.setenv("PROMOTE_RULES_PATH", f"{tmp_path}:{tmp_path / entry}")
    with pytest.raises(UsageError, match=f"PROMOTE_RULES_PATH: '{tmp_path / entry}' {what}"):
        registry.rule_files()
    for args in (["query", "i8", "u8", "-f", "cann"], ["frameworks"], ["table", "-f", "cann"]):
        r = CliRunner().invoke(main, args)
        assert (r.exit_code, r.stdout) == (2, "") and r.stderr.count("\n") == 1, (args, r.stderr)
        assert f"PROMOTE_RULES_PATH: '{tmp_path / entry}' {what}" in r.stderr
