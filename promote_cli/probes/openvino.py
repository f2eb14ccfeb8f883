"""Probe: ask OpenVINO's ConvertPromoteTypes-14 for every case the ruleset covers.

``opset14.convert_promote_types`` runs type inference when the node is built, so
building one node per case is enough: the output element type is the common type,
and a refused pair raises ``RuntimeError`` naming the failed check.

OpenVINO is imported inside the functions only, so importing this module never
fails when the package is absent.
"""

from __future__ import annotations

import itertools
import platform
import re

from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "openvino"
PACKAGE = "openvino"

#: the dtypes asked, in the recording's order: every OpenVINO element type that has a
#: canonical name, including the ones ConvertPromoteTypes rejects (f4e2m1, f8e8m0, nf4).
#: Their OpenVINO names (``ov.Type`` attributes, ``get_type_name()``) are the vocabulary's
#: (``native_names("openvino")``); a test checks that this lists every type OpenVINO
#: names.  OpenVINO's u2/u3/u6/string/dynamic are not asked about.
ASKED = ("bool", "u1", "u4", "u8", "u16", "u32", "u64", "i4", "i8", "i16", "i32", "i64", "f8e4m3", "f8e5m2",
         "bf16", "f16", "f32", "f64", "f4e2m1", "f8e8m0", "nf4")
_NAMES = native_names("openvino")
#: canonical dtype name -> OpenVINO element type name
TO_OPENVINO = {name: _NAMES[name] for name in ASKED if name in _NAMES}
FROM_OPENVINO = {v: k for k, v in TO_OPENVINO.items()}

#: u64_integer_promotion_target values asked for every pair.
TARGETS = ("f32", "f64", "i64")
#: further targets, asked only for the pairs that reach the attribute (u64 with a
#: signed integer).
EXTRA_TARGETS = ("u8", "bf16", "f16", "i32", "f8e8m0", "bool")

#: operand shapes: a dimensioned tensor and a rank-0 (scalar) tensor.
RANKS = {"nd": [2], "0d": []}

OP = "add"


def version() -> str | None:
    """The installed OpenVINO version (e.g. ``2026.4.1``), None when absent."""
    try:
        import openvino  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    full = getattr(openvino, "__version__", None) or openvino.get_version()
    # "2026.4.1-22982-e213a147257-releases/2026/4" -> "2026.4.1"
    return str(full).split("-", 1)[0]


def full_version() -> str | None:
    """The complete build string OpenVINO reports."""
    try:
        import openvino  # noqa: PLC0415
    except Exception:  # pragma: no cover
        return None
    return str(getattr(openvino, "__version__", None) or openvino.get_version())


_CHECK = re.compile(r"Check '(?P<cond>.*?)' failed at ")
_FRIENDLY = re.compile(r"with friendly_name '[^']*'(?::\n(?P<msg>.*))?", re.S)


def clean_error(text: str) -> str:
    """Reduce an OpenVINO validation error to the failed check and its message.

    OpenVINO's text carries source locations and generated node names that change
    from build to build; what stays is the check's condition and its message.
    """
    cond = _CHECK.search(text)
    friendly = _FRIENDLY.search(text)
    msg = (friendly.group("msg") or "").strip() if friendly else ""
    if cond:
        out = f"Check '{cond.group('cond')}' failed"
        return f"{out}: {msg}" if msg else out
    return " ".join(text.split())


def operand(dtype: str, rank: str) -> str:
    return f"0d:{dtype}" if rank == "0d" else dtype


def ask(a: str, b: str, rank_a: str = "nd", rank_b: str = "nd", *,
        promote_unsafe: bool = False, pytorch_scalar_promotion: bool = False,
        u64_integer_promotion_target: str = "f32") -> tuple[str | None, str | None]:
    """Build one ConvertPromoteTypes node; return ``(result, error)``."""
    import openvino as ov  # noqa: PLC0415
    import openvino.opset14 as ops  # noqa: PLC0415

    left = ops.parameter(RANKS[rank_a], getattr(ov.Type, TO_OPENVINO[a]))
    right = ops.parameter(RANKS[rank_b], getattr(ov.Type, TO_OPENVINO[b]))
    target = getattr(ov.Type, TO_OPENVINO[u64_integer_promotion_target])
    try:
        node = ops.convert_promote_types(
            left, right,
            promote_unsafe=promote_unsafe,
            pytorch_scalar_promotion=pytorch_scalar_promotion,
            u64_integer_promotion_target=target,
        )
    except RuntimeError as exc:
        return None, clean_error(str(exc))
    out = node.get_output_element_type(0)
    out1 = node.get_output_element_type(1)
    if out != out1:  # pragma: no cover - would be an OpenVINO bug
        return None, f"outputs disagree: {out} vs {out1}"
    name = out.get_type_name()
    if name not in FROM_OPENVINO:  # pragma: no cover
        return None, f"unmapped OpenVINO element type {name}"
    return FROM_OPENVINO[name], None


def _is_u64_signed(a: str, b: str) -> bool:
    signed = {"i4", "i8", "i16", "i32", "i64"}
    return (a == "u64" and b in signed) or (b == "u64" and a in signed)


def cases():
    """Every (a, b, rank_a, rank_b, attributes) the probe asks."""
    types = list(TO_OPENVINO)
    for a, b in itertools.product(types, types):
        targets = TARGETS + (EXTRA_TARGETS if _is_u64_signed(a, b) else ())
        for unsafe, pytorch, target in itertools.product(
                (False, True), (False, True), targets):
            for rank_a, rank_b in itertools.product(RANKS, RANKS):
                yield a, b, rank_a, rank_b, {
                    "promote_unsafe": unsafe,
                    "pytorch_scalar_promotion": pytorch,
                    "u64_integer_promotion_target": target,
                }


def record() -> dict:
    """Ask OpenVINO every case; return a recording (see docs/recordings.md)."""
    ver = version()
    if ver is None:
        raise RuntimeError("openvino is not importable; pip install openvino")
    out = []
    for a, b, rank_a, rank_b, attrs in cases():
        result, error = ask(a, b, rank_a, rank_b, **attrs)
        out.append([OP, operand(a, rank_a), operand(b, rank_b), attrs, result, error])
    return {
        "ruleset": FRAMEWORK,
        "package": PACKAGE,
        "version": ver,
        "build": full_version(),
        "probe": "promote_cli.probes.openvino",
        "python": platform.python_version(),
        "cases": out,
    }


def dump(recording: dict) -> str:
    """Serialise a recording with one case per line."""
    import json  # noqa: PLC0415

    head = {k: v for k, v in recording.items() if k != "cases"}
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
             + ', "cases": [']
    cases_ = recording["cases"]
    for i, case in enumerate(cases_):
        sep = "," if i < len(cases_) - 1 else ""
        lines.append("  " + json.dumps(case) + sep)
    lines.append("]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m promote_cli.probes.openvino > recording.json
    import sys

    sys.stdout.write(dump(record()))
