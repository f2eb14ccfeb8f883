"""CI installs the lowest versions pyproject.toml allows (.ci/minimums.py); the declared
bounds are those versions, and this environment satisfies them."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _minimums_tool():
    spec = importlib.util.spec_from_file_location("ci_minimums", ROOT / ".ci" / "minimums.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:3] if p.isdigit())


def test_minimums_are_read_from_pyproject():
    found = _minimums_tool().minimums(ROOT / "pyproject.toml")
    assert set(found) == {"click", "rich", "numpy", "ml_dtypes"}
    assert _version(found["numpy"]) >= (2,)          # NumPy 1.x casts bf16 -> f32 to zeros (NEP 50)
    assert _version(found["ml_dtypes"]) >= (0, 5)    # float8_e4m3, float6, int2: ml_dtypes 0.5
    for name, low in found.items():
        assert _version(importlib.metadata.version(name)) >= _version(low), name


def test_a_dependency_without_a_lower_bound_is_an_error(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\ndependencies = ["click>=8.2", "rich", "numpy>=2", "ml_dtypes>=0.5"]\n',
                    encoding="utf-8")
    with pytest.raises(SystemExit, match="rich"):
        _minimums_tool().minimums(path)
