"""JSON: one document per payload (one object per line for batch answers)."""

from __future__ import annotations

import json

from promote_cli.formats import Format, Records


def dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False)


def with_refusal(data: dict, refusal: str | None) -> dict:
    """`data` with `"refusal"` (the API's name) right after its `"error"` (the contract's key, kept): the same
    text for a refused question, null beside a null error."""
    out = {}
    for key, value in data.items():
        out[key] = value
        if key == "error":
            out["refusal"] = refusal
    return out


class Json(Format):
    name = "json"
    summarises = True

    #: where the lines of a batch that could not be answered are (the command's count on stderr points there)
    unanswered = 'the objects with an "error" and no "refusal"'

    def answer(self, ans) -> str:
        return dumps(with_refusal(ans.to_dict(), ans.refusal)) + "\n"

    def batch_line(self, line) -> str:
        """An answer as `answer` gives it; a line that is not a question: its operands as given (`a` and `b` the
        first two, null where missing) and the `error`, with no `refusal` (nothing was refused)."""
        if line.error is None:
            return dumps(with_refusal(line.answer.to_dict(), line.answer.refusal))
        parts = list(line.operands or ())
        return dumps({"framework": line.framework, "op": line.op, "a": parts[0] if parts else None,
                      "b": parts[1] if len(parts) > 1 else None, "operands": parts, "result": None,
                      "error": str(line.error), "version": line.version})

    def matrix(self, m) -> str:
        data = {"framework": m.framework, "version": m.version, "op": m.op, "types": m.types, "matrix": m.results(),
                "absent": m.absent}  # a null cell of an absent operand: not refused, the framework lacks it
        if m.options:
            data["options"] = m.options
        return dumps(data) + "\n"

    def diff(self, d) -> str:
        data = {"frameworks": list(d.frameworks), "op": d.op, "types": d.types, "differences": d.differences,
                "versions": dict(zip(d.frameworks, d.versions)), "summary": d.summary, "absent": d.absent}
        if d.options:
            data["options"] = d.options  # given once for every side that has them (-O)
        return dumps(data) + "\n"

    def records(self, r: Records) -> str:
        return dumps(r.data) + "\n"

    def port(self, p) -> str:
        return "".join(dumps(c.to_dict()) + "\n" for c in p.cases)

    def report(self, r, limit: int) -> str:
        return dumps({"framework": r.framework, "ruleset": r.ruleset, "against": r.source, "cases": r.cases,
                      "disagreements": [m.__dict__ for m in r.mismatches],
                      "checks": [{"check": label, "cases": n, "disagreements": bad} for label, n, bad in r.checks]}
                     ) + "\n"

    def validation(self, checks) -> str:
        return dumps([{"file": c.file, "valid": c.valid, "name": c.name, "version": c.version,
                       "problems": [p.to_dict() for p in c.problems]} for c in checks]) + "\n"

    def cast_outcome(self, outcome, failed_on: list[str]) -> str:
        if outcome.error is not None:
            return dumps({"input": outcome.input, "output": None, "error": outcome.error}) + "\n"
        data = outcome.report.as_dict()
        data["failed_on"] = failed_on
        return dumps(data) + "\n"

    def cast_summary(self, totals) -> str:
        return dumps({"summary": totals.as_dict()}) + "\n"

    def tensor_report(self, report) -> str:
        return dumps(report.as_dict()) + "\n"

    def checkpoint_summary(self, totals) -> str:
        return dumps({"summary": totals.as_dict()}) + "\n"

    def rescale_report(self, report) -> str:
        return dumps(report.as_dict()) + "\n"

    def expression(self, result, explain: bool) -> str:
        return dumps(with_refusal(result.to_dict(), result.refusal)) + "\n"

    def explanation(self, x) -> str:
        return dumps(with_refusal(x.to_dict(), x.refusal)) + "\n"

    def expectations(self, report) -> str:
        return dumps({"source": report.source, "checked": len(report.checked),
                      "mismatches": [{"line": e.line, "text": e.text, "expected": e.expected, "got": e.got,
                                      "reason": e.reason, "ruleset": e.ruleset} for e in report.mismatches]}) + "\n"

    def check(self, x) -> str:
        return dumps(x.to_dict()) + "\n"

    def order(self, o) -> str:
        return dumps(o.to_dict()) + "\n"


FORMAT = Json
