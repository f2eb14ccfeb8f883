"""Comparing a ruleset with a recording, or with a live framework through its probe.

A recording is checked before use (`check_recording`): a malformed one is a one-line usage
error naming what is wrong, and one made for another framework is refused.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from promote_cli.errors import PromoteError, RuleDefect, UsageError
from promote_cli.oracle import registry
from promote_cli.oracle.engine import answer, answer_n

CASE_SHAPE = "[op, a, b, options, result, error]"
NARY_SHAPE = "[op, [a, b, c, ...], null, options, result, error]"
EXPR_SHAPE = "[expression, options, result, error]"


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


def _brief(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_recording(path: str | Path) -> dict:
    """A recording file, checked before use: UsageError (one line) naming what is malformed. An op recording
    (``kind: "ops"``) or value recording (``kind: "values"``) is checked as `probes/opcases.py` says."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise UsageError(f"{path}: not a readable recording: {reason}") from None
    if isinstance(data, dict) and data.get("kind") in ("ops", "values"):
        from promote_cli.probes.opcases import check_op_recording

        check_op_recording(data, str(path))
        if not isinstance(data.get("ruleset"), str) or not data["ruleset"].strip():
            raise UsageError(f"{path}: ruleset: expected a framework name, got {_brief(data.get('ruleset'))}")
    else:
        check_recording(data, str(path))
    return data


def check_recording(data, where: str) -> None:
    """UsageError unless `data` has the shape of a recording: `ruleset` (a name), optional `package` and
    `version` strings, `cases`, a list of [op, a, b, options, result, error], and optionally `nary`, a list
    of [op, [a, b, c, ...], null, options, result, error]; or, for an expression recording (docs/recordings.md,
    "Expression recordings"), `expressions`, a list of [expression, options, result, error], instead of `cases`."""
    if not isinstance(data, dict):
        raise UsageError(f"{where}: not a recording: expected a JSON object, got {type(data).__name__}")
    missing = [k for k in ("ruleset", "cases") if k not in data and not (k == "cases" and "expressions" in data)]
    if missing:
        raise UsageError(f"{where}: not a recording (needs 'ruleset' and 'cases', or 'expressions' for an "
                         f"expression recording; missing {', '.join(missing)})")
    if not isinstance(data["ruleset"], str) or not data["ruleset"].strip():
        raise UsageError(f"{where}: ruleset: expected a framework name, got {_brief(data['ruleset'])}")
    for key in ("package", "version"):
        if key in data and not isinstance(data[key], (str, type(None))):
            raise UsageError(f"{where}: {key}: expected a string, got {_brief(data[key])}")
    _check_expressions(data, where)
    cases = data.get("cases", [])
    if not isinstance(cases, list):
        raise UsageError(f"{where}: cases: expected a list of {CASE_SHAPE}, got {type(cases).__name__}")
    for index, case in enumerate(cases):
        if not isinstance(case, list) or len(case) != 6:
            raise UsageError(f"{where}: cases[{index}]: expected {CASE_SHAPE}, got {_brief(case)}")
        op, a, b, options, result, error = case
        for field, value in (("op", op), ("a", a), ("b", b)):
            if not isinstance(value, str):
                raise UsageError(f"{where}: cases[{index}]: {field} must be a string, got {_brief(value)}")
        _check_answer(where, f"cases[{index}]", options, result, error)
    nary = data.get("nary", [])
    if not isinstance(nary, list):
        raise UsageError(f"{where}: nary: expected a list of {NARY_SHAPE}, got {type(nary).__name__}")
    for index, case in enumerate(nary):
        if not isinstance(case, list) or len(case) != 6:
            raise UsageError(f"{where}: nary[{index}]: expected {NARY_SHAPE}, got {_brief(case)}")
        op, operand_list, _, options, result, error = case
        if not isinstance(op, str):
            raise UsageError(f"{where}: nary[{index}]: op must be a string, got {_brief(op)}")
        if (not isinstance(operand_list, list) or len(operand_list) < 2
                or not all(isinstance(x, str) for x in operand_list)):
            raise UsageError(f"{where}: nary[{index}]: expected a list of two or more operands, "
                             f"got {_brief(operand_list)}")
        _check_answer(where, f"nary[{index}]", options, result, error)


def _check_expressions(data: dict, where: str) -> None:
    """An expression recording's `expressions`: each [expression, options, result, error]."""
    cases = data.get("expressions", [])
    if not isinstance(cases, list):
        raise UsageError(f"{where}: expressions: expected a list of {EXPR_SHAPE}, got {type(cases).__name__}")
    for index, case in enumerate(cases):
        if not isinstance(case, list) or len(case) != 4 or not isinstance(case[0], str):
            raise UsageError(f"{where}: expressions[{index}]: expected {EXPR_SHAPE}, got {_brief(case)}")
        _check_answer(where, f"expressions[{index}]", *case[1:])


def _check_answer(where: str, key: str, options, result, error) -> None:
    """A case's options (an object of plain values), result and error (strings or null)."""
    if not isinstance(options, dict):
        raise UsageError(f"{where}: {key}: options must be an object, got {_brief(options)}")
    if any(isinstance(v, (dict, list)) or v is None for v in options.values()):
        raise UsageError(f"{where}: {key}: option values must be strings, numbers or booleans, "
                         f"got {_brief(options)}")
    for field, value in (("result", result), ("error", error)):
        if not isinstance(value, (str, type(None))):
            raise UsageError(f"{where}: {key}: {field} must be a string or null, got {_brief(value)}")


def same_framework(recording: dict, framework: str, where: str) -> None:
    """UsageError when a recording was made for another framework than the ruleset it is compared with
    (any version of the same framework may be compared: that is how a new release is checked)."""
    rs = registry.load(framework)
    recorded = recording["ruleset"].strip().partition("@")[0]
    if recorded != rs.name:
        raise UsageError(f"{where} records {recording['ruleset']!r}, not {rs.key}: compare it with -f {recorded}")


def _pair_answer(rs, op: str, a: str, b: str, options: dict):
    """The pair answer of `op`: the promotion rules' for an op of `[ops]`, the op group's for an op only a group
    names (MLX's ``mx.add``: a function whose Python scalars the framework converts, recorded beside ``+``)."""
    if rs.op_index.get(op) is None and rs.op_names.get(op) is not None:
        from promote_cli.expressions import ops  # noqa: PLC0415 - only such cases need it

        return ops.answer(rs, op, [a, b], options, hint=False)
    return answer(rs, a, b, op, options)


def compare(recording: dict, ruleset: str | None = None) -> tuple[int, list[Mismatch]]:
    """(cases checked, mismatches) of a recording against its ruleset (or the one named).

    A case the ruleset cannot be asked (an unknown op, option or operand) is a mismatch with its reason;
    a rule that fails on a case (`RuleDefect`) is raised, never counted as a disagreement."""
    rs = registry.load(ruleset or recording["ruleset"])
    mismatches = []
    for case in recording.get("cases", []):
        op, a, b, options, expected, error = case
        try:
            ans = _pair_answer(rs, op, a, b, options)
            got, got_error = ans.result, ans.refusal
        except RuleDefect:
            raise
        except PromoteError as exc:
            got, got_error = None, str(exc)
        if got != expected:
            mismatches.append(Mismatch(op, a, b, options, expected, got, error, got_error))
    return len(recording.get("cases", [])), mismatches


def compare_expressions(recording: dict, ruleset: str | None = None) -> tuple[int, list[str]]:
    """(cases checked, disagreement lines) of a recording's whole expressions (``expressions``:
    ``[expression, options, result, error]``) against `promote expr`: the same result operand, form
    included, or a refusal where the framework raised; a usage error (an operator, literal or type
    the rules lack) agrees with nothing.  UsageError when the ruleset has no ``[expressions]``
    rules; a rule that fails (`RuleDefect`) is raised, never counted."""
    from promote_cli.expressions import ops  # noqa: PLC0415 - only expression recordings need these
    from promote_cli.expressions.evaluate import evaluate  # noqa: PLC0415

    rs = registry.load(ruleset or recording["ruleset"])
    if rs.expressions is None:
        raise UsageError(f"{rs.key} has no [expressions] rules to compare whole expressions with")
    bad = []
    cases = recording.get("expressions", [])
    for text, options, expected, error in cases:
        opts = " ".join(f"-O {k}={json.dumps(v).strip(chr(34))}" for k, v in options.items())
        want = expected if expected is not None else f"an error ({error})"
        try:
            ans = evaluate(rs, text, options, ops.answer)
        except RuleDefect:
            raise
        except PromoteError as exc:  # the rules cannot even evaluate it
            bad.append(f"{text} {opts}".rstrip() + f": framework gives {want}, promote expr cannot evaluate it ({exc})")
            continue
        if ans.result != expected:
            said = ans.result if ans.result is not None else f"a refusal ({ans.refusal})"
            bad.append(f"{text} {opts}".rstrip() + f": framework gives {want}, promote expr gives {said}")
    return len(cases), bad


def compare_ops(recording: dict, ruleset: str | None = None) -> tuple[int, list[str]]:
    """(cases checked, disagreement lines) of an op recording (``kind: "ops"``, `probes/opcases.py`) against the
    ruleset's op groups, case by case (`opcases.cases`): the same result operand, form included (``0d:i64``), or
    a refusal where the framework raised. An op the ruleset's groups lack disagrees with each of its cases, and
    so does an alias the recording names (``aliases``: alias -> op) that is not an alias or op of the same
    group; a rule that fails (`RuleDefect`) is raised, never counted. A value recording (``kind: "values"``) is
    compared with what `promote query` answers (an op group's op, else the rules' pair answer)."""
    from promote_cli.expressions import ops  # noqa: PLC0415 - only op recordings need it
    from promote_cli.probes.opcases import cases

    rs = registry.load(ruleset or recording["ruleset"])
    queried = recording.get("kind") == "values"
    bad, n = [], 0
    for alias, target in (recording.get("aliases") or {}).items():
        n += 1
        if rs.op_names.get(alias) is None or rs.op_names.get(alias) != rs.op_names.get(target):
            bad.append(f"alias {alias} of {target}: the ruleset's op groups do not have it as {target}'s")
    for op, operand_list, options, expected, error in cases(recording):
        n += 1
        try:
            if queried and not rs.by_group(op, len(operand_list)):
                ans = answer(rs, *operand_list, op, options)
                got, got_error = ans.result, ans.refusal
            else:
                ans = ops.answer(rs, op, operand_list, options, hint=False)
                got, got_error = (str(ans.result_operand) if ans.result is not None else None), ans.refusal
        except RuleDefect:
            raise
        except PromoteError as exc:
            got, got_error = None, f"it cannot be asked: {exc}"
        if got != expected:
            opts = " ".join(f"-O {k}={json.dumps(v).strip(chr(34))}" for k, v in options.items())
            want = expected if expected is not None else f"a refusal ({error})"
            said = got if got is not None else f"a refusal ({got_error})"
            bad.append(f"{op}({', '.join(operand_list)}) {opts}".rstrip()
                       + f": framework gives {want}, ruleset gives {said}")
    return n, bad


def compare_nary(recording: dict, ruleset: str | None = None) -> tuple[int, list[Mismatch]]:
    """(cases checked, mismatches) of a recording's N-operand cases (its ``nary`` list:
    ``[op, [a, b, c, ...], null, options, result, error]``) against its ruleset's N-ary
    answer (as its ``[nary]`` method says: a fold, a join or a common-type sequence)."""
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
    """The probe module of a ruleset (its `probe` key); UsageError when it has none or it is not a probe."""
    rs = registry.load(ruleset)
    if not rs.probe:
        raise UsageError(f"{rs.key} has no probe: its rules come from {rs.source or 'its documentation'}")
    name = f"promote_cli.probes.{rs.probe}"
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        if exc.name == name:
            raise UsageError(f"{rs.path}: probe: there is no probe module {rs.probe!r} in promote_cli.probes") from None
        raise UsageError(f"{rs.path}: probe: module {rs.probe!r} does not load: {exc}") from None
    missing = [attr for attr in ("version", "record") if not callable(getattr(module, attr, None))]
    if missing:
        raise UsageError(f"{rs.path}: probe: module {rs.probe!r} is not a probe (it has no "
                         f"{' or '.join(m + '()' for m in missing)})")
    return module


def _live_expressions(framework: str) -> tuple[str, int, list[str]] | None:
    """The check of whole expressions asked live (promote_cli/probes/expressions.py), for a framework
    the expression probe evaluates and whose ruleset has ``[expressions]`` rules; None otherwise."""
    from promote_cli.probes import expressions  # noqa: PLC0415

    rs = registry.load(framework)
    name = expressions.framework_of(rs)
    if rs.expressions is None or name is None:
        return None
    data = expressions.record(name)
    check_recording(data, "what promote_cli.probes.expressions recorded")
    n, bad = compare_expressions(data, framework)
    return "whole expressions", n, bad


def _live_ops(framework: str) -> tuple[str, int, list[str]] | None:
    """The check of the framework's ops asked live: its probe's ops module (``promote_cli.probes.PROBE_ops``)
    `record_ops(ruleset)`, compared with the ruleset's op groups; None where the ruleset declares none or no
    such module exists."""
    rs = registry.load(framework)
    if not rs.opgroups:
        return None
    try:
        module = importlib.import_module(f"promote_cli.probes.{rs.probe}_ops")
    except ModuleNotFoundError as exc:
        if exc.name == f"promote_cli.probes.{rs.probe}_ops":
            return None
        raise
    return _live_check("ops", getattr(module, "record_ops", None), framework, module.__name__)


def _live_values(probe, framework: str) -> tuple[str, int, list[str]] | None:
    """The check of value operands asked live (the probe's `record_values(ruleset)`, `cases.record_values`),
    compared with what `promote query` answers; None for a probe without one."""
    return _live_check("values", getattr(probe, "record_values", None), framework, probe.__name__)


def _live_check(label: str, record, framework: str, module: str) -> tuple[str, int, list[str]] | None:
    """(label, cases, disagreements) of the op or value recording `record(framework)` makes; None without one."""
    if not callable(record):
        return None
    from promote_cli.probes.opcases import check_op_recording

    data = record(framework)
    check_op_recording(data, f"what {module} recorded")
    n, bad = compare_ops(data, framework)
    return label, n, bad


@dataclass
class Report:
    """What `promote verify` found: the ruleset's cases, and any checks of the probe's own."""

    framework: str
    source: str
    recording: dict
    cases: int
    mismatches: list[Mismatch]
    checks: list[tuple[str, int, list[str]]]
    ruleset: str = ""  # the ruleset compared, as NAME@VERSION

    @property
    def agrees(self) -> bool:
        return not self.mismatches and not any(bad for _, _, bad in self.checks)


def run(framework: str, recording: str | None = None) -> Report:
    """Compare a ruleset with a saved recording or, without one, with the live framework through its probe."""
    if recording:
        data, checks = load_recording(recording), []
        same_framework(data, framework, str(recording))
    else:
        probe = probe_module(framework)
        if probe.version() is None:  # a probe of one version says which (`INSTALL`: what pip installs)
            package = getattr(probe, "PACKAGE", probe.__name__)
            wanted = getattr(probe, "INSTALL", package)
            what = package if wanted == package else f"{framework} asks {wanted}, which"
            raise UsageError(f"{what} is not installed here: pip install {wanted} "
                             "(or compare with a saved file: --recording FILE)")
        record_for = getattr(probe, "record_for", None)  # a probe that asks per ruleset version
        data = record_for(framework) if record_for else probe.record()
        if data.get("kind") == "ops":   # a probe whose framework answers only by op (ONNX): an op recording
            from promote_cli.probes.opcases import check_op_recording

            check_op_recording(data, f"what {probe.__name__} recorded")
        else:
            check_recording(data, f"what {probe.__name__} recorded")
        checks = list(getattr(probe, "extra_checks", lambda: [])())
        expressions = _live_expressions(framework)
        if expressions is not None:
            checks.insert(0, expressions)
        live_ops = _live_ops(framework)
        if live_ops is not None:
            checks.insert(0, live_ops)
        live_values = _live_values(probe, framework)
        if live_values is not None:
            checks.insert(0, live_values)
    if data.get("kind") in ("ops", "values"):  # a saved op or value recording: its cases are the whole comparison
        n, bad = compare_ops(data, framework)
        return Report(framework, f"{data.get('package')} {data.get('version')}", data, 0, [],
                      [(data["kind"], n, bad), *checks], registry.load(framework).key)
    total, mismatches = compare(data, framework)
    if data.get("nary"):  # N-operand cases: a check of their own, beside the pairs
        n, bad = compare_nary(data, framework)
        checks.insert(0, ("N-operand cases", n, [m.line() for m in bad]))
    if "expressions" in data:  # a saved expression recording
        n, bad = compare_expressions(data, framework)
        checks.insert(0, ("whole expressions", n, bad))
    return Report(framework, f"{data.get('package')} {data.get('version')}", data, total, mismatches, checks,
                  registry.load(framework).key)
