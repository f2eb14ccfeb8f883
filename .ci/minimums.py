"""Print a pip constraints file pinning each runtime dependency to the lowest version
pyproject.toml allows (`name>=X` becomes `name==X`), so that CI tests what is declared.

    python .ci/minimums.py [pyproject.toml] > constraints.txt
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: the dependencies whose minimum versions CI installs
PINNED = ("click", "rich", "numpy", "ml_dtypes")


def minimums(pyproject: Path) -> dict[str, str]:
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    found = {}
    for dep in deps:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)\s*(;.*)?", dep)
        if m and m.group(1) in PINNED:
            found[m.group(1)] = m.group(2)
    missing = [name for name in PINNED if name not in found]
    if missing:
        raise SystemExit(f"pyproject.toml declares no 'NAME>=VERSION' minimum for {', '.join(missing)}")
    return found


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "pyproject.toml"
    for name, version in minimums(path).items():
        print(f"{name}=={version}")
