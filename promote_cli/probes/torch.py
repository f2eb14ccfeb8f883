"""Probe: ask PyTorch (CPU) what dtype each binary case gives.

What is asked
    ``add`` (the ``+`` operator, ``a + b``; a Python scalar on the left runs
    ``Tensor.__radd__``), ``result_type`` (``torch.result_type(a, b)``) and
    ``promote_types`` (``torch.promote_types`` of two dtypes), for every dtype PyTorch
    has a canonical name for (``TO_TORCH``) and, for ``add`` and ``result_type``, every
    operand category PyTorch distinguishes: a dimensioned tensor (shape ``[2]``), a 0-d
    tensor (``0d:``, shape ``[]``) and a Python scalar (``py:bool|int|float|complex``,
    fixed values ``True``, ``3``, ``1.5``, ``1+2j``: PyTorch's promotion does not look
    at values).  ``promote_types`` is asked for dtype pairs only; two Python scalars
    only for ``result_type`` (``3 + 1.5`` is Python's arithmetic, not PyTorch's).

How the answer is read
    When the call returns, the output's dtype is the answer.  When it raises, the
    answer is a refusal whose text is ``KIND: MESSAGE``: MESSAGE is the first line of
    PyTorch's message without its source location, and KIND says where PyTorch
    stopped:

    ``promotion refused``   the type promotion itself raised (``Promotion for Float8
                            Types is not supported``, ``Unknown Complex ScalarType``)
    ``internal assert``     an internal assertion failed inside PyTorch (the sub-byte
                            integer types have no entry in the promotion lookup)
    ``kernel missing``      promotion succeeded but no CPU kernel exists for the dtype
                            it chose (``"add_stub" not implemented for 'UInt16'``)
    ``error``               anything else

    The recording's ``refusals`` key counts the cases of each kind per op.

Dtypes without a canonical name (``int1``, ``int3``, ``int5``..``int7``, ``uint3``,
``uint5``..``uint7``, the quantized and ``bits`` types) are listed in ``UNNAMED`` and not
asked.  PyTorch is imported inside the functions only, so importing this module never
fails when the package is absent.
"""

from __future__ import annotations

import itertools
import operator
import platform
import re

from promote_cli.probes import cases as operand_cases
from promote_cli.probes.cases import pair_groups
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "torch"
PACKAGE = "torch"

#: the dtypes asked, in the recording's order.  Their torch names are the vocabulary's
#: (``native_names("torch")``); a test checks that this lists every type torch names.
ASKED = ("bool", "i2", "i4", "i8", "i16", "i32", "i64", "u1", "u2", "u4", "u8", "u16", "u32", "u64",
         "f4e2m1", "f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e8m0", "bf16", "f16", "f32", "f64",
         "c32", "c64", "c128")

#: canonical dtype name -> attribute of the ``torch`` module, for the asked types the
#: vocabulary of this installation names (the recording only holds operands the ruleset
#: can parse).
_NAMES = native_names("torch")
TO_TORCH = {name: _NAMES[name] for name in ASKED if name in _NAMES}
FROM_TORCH = {f"torch.{attr}": name for name, attr in TO_TORCH.items()}

#: PyTorch dtypes with no canonical name: not asked (see the ruleset's notes).
UNNAMED = ["int1", "int3", "int5", "int6", "int7", "uint3", "uint5", "uint6", "uint7",
           "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
           "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"]

#: the Python scalar used for each ``py:KIND`` operand.
PY_VALUES = {"bool": True, "int": 3, "float": 1.5, "complex": 1 + 2j}

OPS = ["add", "result_type", "promote_types"]

#: the operands of the three-operand cases: every triple of them is asked as
#: torch.addcmul(a, b, c), which computes in the result type of all three inputs at once
#: (torch.result_type itself takes two).  Dtypes with an addcmul kernel only.
TRIPLE_OPERANDS = ["u8", "i8", "i32", "f16", "f32", "0d:u8", "0d:i8", "0d:i64", "0d:f16", "0d:f64", "0d:c64"]

_LOCATION = re.compile(r'\s+at "[^"]*":\d+')
_REPORT = re.compile(r",? please report a bug to PyTorch\..*$")


def version() -> str | None:
    """The installed PyTorch version without its local build tag (``2.13.0``), None when absent."""
    try:
        import torch  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(torch.__version__).split("+", 1)[0]


def refusal_kind(message: str, promoted: bool) -> str:
    """Where PyTorch stopped, from its message (and whether promotion alone succeeded)."""
    if "INTERNAL ASSERT FAILED" in message:
        return "internal assert"
    if "not implemented for" in message and promoted:
        return "kernel missing"
    if "Promotion for" in message or "promote" in message.lower() or "ScalarType" in message:
        return "promotion refused"
    return "error"


def clean_error(exc: BaseException) -> str:
    """PyTorch's message: its first line, without the source location and the bug-report plea."""
    text = str(exc).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "") or type(exc).__name__
    line = _LOCATION.sub("", line)
    line = _REPORT.sub("", line).strip()
    return line


def make_operand(text: str):
    """The PyTorch value for an operand string (``i8``, ``0d:f16``, ``py:int``; ``py:300`` that Python int,
    ``0d:i64=300`` a 0-d tensor holding it)."""
    import torch  # noqa: PLC0415

    if text.startswith("py:"):
        return operand_cases.python_scalar(text, PY_VALUES)
    shape: tuple = (2,)
    if text.startswith("0d:"):
        value = operand_cases.rank0_value(text)
        shape, text = (), text[3:].partition("=")[0]
        if value is not None:
            return torch.tensor(value, dtype=getattr(torch, TO_TORCH[text]))
    return torch.empty(shape, dtype=getattr(torch, TO_TORCH[text]))


def _dtype(text: str):
    import torch  # noqa: PLC0415

    return getattr(torch, TO_TORCH[text])


def _name(dtype) -> str:
    text = str(dtype)
    return FROM_TORCH.get(text, text)


def _call(op: str, x, y):
    import torch  # noqa: PLC0415

    if op == "add":
        return operator.add(x, y).dtype
    if op == "result_type":
        return torch.result_type(x, y)
    if op == "promote_types":
        return torch.promote_types(x, y)
    raise ValueError(f"unknown op {op!r}")


def ask(op: str, a: str, b: str, _cache: dict | None = None) -> tuple[str | None, str | None]:
    """Ask ``a OP b`` once; ``(result, None)`` or ``(None, "KIND: MESSAGE")``."""
    import warnings  # noqa: PLC0415

    cache = _cache if _cache is not None else {}
    if op == "promote_types":
        x, y = _dtype(a), _dtype(b)
    else:
        x = cache[a] if a in cache else make_operand(a)
        y = cache[b] if b in cache else make_operand(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _name(_call(op, x, y)), None
        except Exception as exc:  # noqa: BLE001 - every PyTorch error is an answer
            message = clean_error(exc)
            promoted = False
            if op == "add":
                try:
                    _call("result_type", x, y)
                    promoted = True
                except Exception:  # noqa: BLE001
                    promoted = False
            return None, f"{refusal_kind(message, promoted)}: {message}"


def operand_pairs(op: str):
    """Every (a, b) pair asked for `op`."""
    types = list(TO_TORCH)
    if op == "promote_types":
        yield from itertools.product(types, types)
        return
    scalars = [f"py:{k}" for k in PY_VALUES]
    for pairs in pair_groups(types, scalars):
        yield from pairs
    if op == "result_type":
        yield from itertools.product(scalars, scalars)


def ask_triple(a: str, b: str, c: str) -> tuple[str | None, str | None]:
    """The dtype of torch.addcmul(a, b, c); ``(result, None)`` or ``(None, "KIND: MESSAGE")``."""
    import torch  # noqa: PLC0415

    try:
        return _name(torch.addcmul(make_operand(a), make_operand(b), make_operand(c)).dtype), None
    except Exception as exc:  # noqa: BLE001
        message = clean_error(exc)
        return None, f"{refusal_kind(message, False)}: {message}"


def triples():
    """The N-operand cases: ``[op, [a, b, c], None, options, result, error]``, op result_type."""
    for t in itertools.product(TRIPLE_OPERANDS, repeat=3):
        yield ["result_type", list(t), None, {}, *ask_triple(*t)]


def record(ops: list[str] | None = None) -> dict:
    """Ask every case; return a recording (see docs/recordings.md)."""
    import warnings  # noqa: PLC0415

    import torch  # noqa: PLC0415

    warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")
    torch.set_default_dtype(torch.float32)
    cache: dict = {}
    cases = []
    refusals: dict[str, dict[str, int]] = {}
    for op in ops or OPS:
        for a, b in operand_pairs(op):
            result, error = ask(op, a, b, cache)
            if error is not None:
                kind = error.split(":", 1)[0]
                counts = refusals.setdefault(op, {})
                counts[kind] = counts.get(kind, 0) + 1
            cases.append([op, a, b, {}, result, error])
    return {
        "ruleset": FRAMEWORK,
        "package": PACKAGE,
        "version": version(),
        "build": str(torch.__version__),
        "probe": "promote_cli.probes.torch",
        "python": platform.python_version(),
        "device": "cpu",
        "default_dtype": "f32",
        "not_asked": [f"torch.{n}" for n in UNNAMED] + [n for n in ASKED if n not in TO_TORCH],
        "refusals": refusals,
        # three operands at once, read off torch.addcmul (see TRIPLE_OPERANDS)
        "nary": list(triples()),
        "cases": cases,
    }


#: the ops the value recording asks, and the dtypes (each a tensor of shape (2,))
VALUE_OPS = ("add", "result_type")
VALUE_TYPES = list(TO_TORCH)


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's tensor with every value operand (`cases.VALUES`), both orders: a value recording."""
    import torch  # noqa: PLC0415

    torch.set_default_dtype(torch.float32)
    head = {"ruleset": FRAMEWORK, "package": PACKAGE, "version": version(), "build": str(torch.__version__),
            "probe": "promote_cli.probes.torch", "python": platform.python_version(), "device": "cpu"}
    return operand_cases.record_values(lambda options: lambda op, pair: ask(op, *pair), VALUE_TYPES, head,
                                       ops=VALUE_OPS)


def extra_checks() -> list:
    """`promote verify -f torch` beyond the ruleset: `promote cast --semantics torch` against the live library."""
    from promote_cli.probes.cast_semantics import live_check

    return [live_check("torch")]


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    if sys.argv[1:2] == ["--values"]:
        from promote_cli.probes.opcases import write_op_recording

        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values/torch.json")
        sys.exit(0)

    from promote_cli.probes import write_recording

    write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/torch-2.13.json")
