"""Helpers shared by the test modules: loading a script from tools/, running the CLI in-process."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_tool(name: str):
    """Import tools/NAME.py as module NAME (registered first: dataclasses look their module up)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_cli(*args: str):
    """Run `promote ARGS` in-process: (exit code, stdout, stderr); an unexpected exception is raised."""
    from click.testing import CliRunner

    from promote_cli.cli import main

    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def spec_path(name: str) -> Path:
    """A spec page: in $PROMOTE_SPEC_DIR, `spec/`, or the shared spec directory beside the checkout."""
    import os

    dirs = [Path(p) for p in os.environ.get("PROMOTE_SPEC_DIR", "").split(os.pathsep) if p]
    dirs += [ROOT / "spec", ROOT.parent / "shared" / "spec"]
    for directory in dirs:
        if (directory / name).is_file():
            return directory / name
    return dirs[-1] / name
