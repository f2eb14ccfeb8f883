"""The suite's guard on skips (tests/skip_guard.py): only absent live frameworks and absent
spec pages that the repository does not hold may skip a test."""

from skip_guard import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401

import os  # noqa: E402
import tempfile  # noqa: E402

# The suite never reads or fills the user's cache of parsed TOML: a fresh directory per run (tests of the
# cache itself set their own).
os.environ["PROMOTE_CACHE_DIR"] = tempfile.mkdtemp(prefix="promote-test-cache-")
