"""What a new user meets first, with the installed program: `promote` alone prints the help on stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_promote_alone_prints_the_help_on_stdout(tmp_path):
    exe = Path(sys.executable).parent / "promote"
    assert exe.exists(), "the promote program is not installed (pip install the project first)"
    r = subprocess.run([str(exe)], cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: promote [OPTIONS] COMMAND [ARGS]...\n")
    assert "Commands:" in r.stdout and len(r.stdout.splitlines()) > 10
