"""A pytest plugin (tests/conftest.py loads it): a test may skip for two reasons only, and a
module never skips whole.

1. a live test (marked `live`) whose framework is not installed: `require_framework()`;
2. a test that reads a spec page the repository does not hold, when it is absent:
   `outside_spec_page()` (spec/README.md lists those pages and says why).

Any other skip -- an importorskip of a dependency, an empty parametrization, a module-level
skip, a leftover "not written yet" -- is turned into a failure that quotes its reason, so
a fresh clone runs the same tests as CI apart from those two kinds.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from support import FRAMEWORK_ABSENT, SPEC_PAGE_ABSENT, load_tool

import promote_cli.probes


#: Libraries that are no probe's framework but whose own readers a live test checks outputs with.
READERS = {"safetensors"}


def live_packages() -> set[str]:
    """The frameworks a live test may need: the PACKAGE of every module in promote_cli.probes, and `READERS`."""
    packages = set(READERS)
    for info in pkgutil.iter_modules(promote_cli.probes.__path__):
        module = importlib.import_module(f"promote_cli.probes.{info.name}")
        if isinstance(getattr(module, "PACKAGE", None), str):
            packages.add(module.PACKAGE)
    return packages


def skip_reason(report) -> str:
    """The reason pytest recorded for a skipped report."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def disallowed(reason: str, live: bool) -> str | None:
    """Why a skip with this reason is not allowed, or None when it is."""
    if reason.startswith(FRAMEWORK_ABSENT):
        package = reason.removeprefix(FRAMEWORK_ABSENT).strip()
        if package not in live_packages():
            return f"{package!r} is not a framework a probe asks"
        return None if live else "only a test marked `live` may skip for an absent framework"
    if reason.startswith(SPEC_PAGE_ABSENT):
        page = reason.removeprefix(SPEC_PAGE_ABSENT).split(",")[0].strip()
        pages = load_tool("import_spec_tables").OUTSIDE_PAGES
        return None if page in pages else f"{page!r} is not a page kept outside the repository"
    return "neither an absent live framework nor an absent spec page kept outside the repository"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = skip_reason(report)
        why = disallowed(reason, item.get_closest_marker("live") is not None)
        if why is not None:
            report.outcome = "failed"
            report.longrepr = f"a test skipped for a reason the suite does not allow ({why}): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = (f"{collector.nodeid} skipped as a whole ({skip_reason(report)}): skip the tests "
                           "that need what is missing, one by one, so the others still run")
