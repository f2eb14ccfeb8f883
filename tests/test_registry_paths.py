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
    monkeypatch.setenv("PROMOTE_RULES_PATH", f"{extra}/{':' + str(tmp_path / 'missing')}")
    expected = _by_pathlib([Path(str(extra)), tmp_path / "missing", registry.builtin_dir()])
    assert registry.rule_files() == expected
    assert registry.rule_files()["cann"] == extra / "cann.toml"  # the PROMOTE_RULES_PATH file first
    assert registry.shadowed()["cann"] == [registry.builtin_dir() / "cann.toml"]
    assert registry.builtin_dir() == Path(registry.__file__).resolve().parent.parent / "rules" or (
        registry.builtin_dir() == Path(registry.__file__).resolve().parent.parent.parent / "rules")
