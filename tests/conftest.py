"""The suite's guard on skips (tests/skip_guard.py): only absent live frameworks and absent
spec pages that the repository does not hold may skip a test."""

from skip_guard import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401
