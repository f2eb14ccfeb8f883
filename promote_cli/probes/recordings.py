"""Comparing a ruleset with a recording, or with a live framework through its probe."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from promote_cli.errors import PromoteError, RuleDefect, UsageError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer, answer_n


@dataclass
class Mismatch:
    op: str
    a: str
    b: str
    options: dict
    expected: str | None
    got: str | None
    expected_error: str | None
    got_error: str | None

    def line(self) -> str:
        opts = " ".join(f"-O {k}={json.dumps(v).strip(chr(34))}" for k, v in self.options.items())
        want = self.expected if self.expected is not None else f"refusal ({self.expected_error})"
        got = self.got if self.got is not None else f"refusal ({self.got_error})"
        return f"{self.a} {self.op} {self.b} {opts}".rstrip() + f": framework gives {want}, ruleset gives {got}"


def load_recording(path: str | Path) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable recording: {exc}") from None
    if not isinstance(data, dict) or "cases" not in data or "ruleset" not in data:
        raise UsageError(f"{path}: not a recording (needs 'ruleset' and 'cases')")
    return data


def compare(recording: dict, ruleset: str | None = None) -> tuple[int, list[Mismatch]]:
    """(cases checked, mismatches) of a recording against its ruleset (or the one named)."""
    rs = registry.load(ruleset or recording["ruleset"])
    mismatches = []
    for case in recording["cases"]:
        op, a, b, options, expected, error = case
        try:
            ans = answer(rs, a, b, op, options)
            got, got_error = ans.result, ans.refusal
        except PromoteError as exc:
            got, got_error = None, str(exc)
        if got != expected:
            mismatches.append(Mismatch(op, a, b, options, expected, got, error, got_error))
    return len(recording["cases"]), mismatches


def compare_nary(recording: dict, ruleset: str | None = None) -> tuple[int, list[Mismatch]]:
    """(cases checked, mismatches) of a recording's N-operand cases (its ``nary`` list:
    ``[op, [a, b, c, ...], null, options, result, error]``) against its ruleset's N-ary
    answer (``[nary]``: a fold of pair answers or a join)."""
    rs = registry.load(ruleset or recording["ruleset"])
    mismatches = []
    cases = recording.get("nary", [])
    for op, operands, _, options, expected, error in cases:
        try:
            ans = answer_n(rs, operands, op, options)
            got, got_error = ans.result, ans.refusal
        except RuleDefect:  # a rule that fails is a defect of the file, never a disagreement
            raise
        except PromoteError as exc:
            got, got_error = None, str(exc)
        if got != expected:
            mismatches.append(Mismatch(op, ", ".join(operands), "", options, expected, got, error, got_error))
    return len(cases), mismatches


def probe_module(ruleset: str):
    """The probe module of a ruleset (its `probe` key); UsageError when it has none."""
    rs = registry.load(ruleset)
    if not rs.probe:
        raise UsageError(f"{rs.key} has no probe: its rules come from {rs.source or 'its documentation'}")
    return importlib.import_module(f"promote_cli.probes.{rs.probe}")


@dataclass
class Report:
    """What `promote verify` found: the ruleset's cases, and any checks of the probe's own."""

    framework: str
    source: str
    recording: dict
    cases: int
    mismatches: list[Mismatch]
    checks: list[tuple[str, int, list[str]]]

    @property
    def agrees(self) -> bool:
        return not self.mismatches and not any(bad for _, _, bad in self.checks)


def run(framework: str, recording: str | None = None) -> Report:
    """Compare a ruleset with a saved recording or, without one, with the live framework through its probe."""
    if recording:
        data, checks = load_recording(recording), []
    else:
        probe = probe_module(framework)
        if probe.version() is None:
            raise UsageError(f"{probe.PACKAGE} is not installed here: pip install {probe.PACKAGE} "
                             "(or compare with a saved file: --recording FILE)")
        record_for = getattr(probe, "record_for", None)  # a probe that asks per ruleset version
        data = record_for(framework) if record_for else probe.record()
        checks = list(getattr(probe, "extra_checks", lambda: [])())
    total, mismatches = compare(data, framework)
    return Report(framework, f"{data.get('package')} {data.get('version')}", data, total, mismatches, checks)
