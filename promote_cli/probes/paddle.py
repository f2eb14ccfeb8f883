"""Probe: ask PaddlePaddle (CPU, dygraph) what dtype each binary op gives.

What is asked
    Every API of the type-promotion doc's scope table (as op names: ``add``,
    ``remainder``, ``bitwise_and``, ``where``, ``huber_loss``, ...) and every Python
    operator (``+ - * / // ** % == != < <= > >= & | ^``), for every dtype pair and
    every operand kind: tensor (shape ``[2]``) with tensor, 0-d tensors (``0d:``, shape
    ``[]``) with dimensioned and with 0-d tensors, and a Python scalar
    (``py:bool|int|float|complex``) on either side of a tensor or of a 0-d tensor.
    Python scalars have fixed values (``True``, ``3``, ``1.5``, ``1+2j``); Paddle's
    promotion does not look at values.

How the answer is read
    The op is run eagerly.  When it returns, the output's dtype is the answer.
    When it raises, the first line of Paddle's message (without the ``(at
    file:line)`` source location) is the refusal, with one exception: *decision
    without a CPU kernel*.  Paddle decides the dtype first (``GetPromoteDtype`` in
    ``phi/common/type_promotion.h``, or the scalar handling of the Python/C++
    tensor patches) and only then looks up a kernel; CPU builds have no kernel for
    some dtypes (uint16/32/64, float8, some ops on bf16/f16/bool).  That lookup
    fails with ``The kernel with key (CPU, ..., DTYPE) of kernel `NAME` is not
    registered``.  When ``NAME`` is the op's own kernel (or one of the few kernels
    the op's Python wrapper computes with, listed in ``KERNELS``), ``DTYPE`` is the
    dtype Paddle chose, and the probe reports it as the result (``bool`` for the
    comparison and logical ops, whose kernels are keyed by their input dtype).  A
    missing kernel anywhere else (a ``cast``, a ``full`` building an operand) is a
    refusal like any other error, and so is a missing kernel of the bitwise ops for
    two different dtypes (they do no promotion: their kernel is looked up for one
    operand's dtype and would fail on the other).  The recording's
    ``kernel_missing`` key counts, per op, the cases answered from a missing kernel.

Paddle is imported inside the functions only, so importing this module never fails
when the package is absent.
"""

from __future__ import annotations

import operator
import os
import platform
import re

from promote_cli.probes import cases as operand_cases
from promote_cli.probes.cases import pair_groups
from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "paddle"
PACKAGE = "paddlepaddle"

#: the dtypes asked, in the recording's order.  Their Paddle names (attributes of the
#: ``paddle`` module, as printed in messages and ``str(dtype)``) are the vocabulary's
#: (``native_names("paddle")``); a test checks that this lists every type Paddle names.
#: ``paddle.uint16`` is a real 16-bit unsigned type (the *string* "uint16" still means
#: bfloat16 in Paddle).
ASKED = ("bool", "u8", "i8", "i16", "i32", "i64", "u16", "u32", "u64", "f8e4m3", "f8e5m2", "bf16", "f16",
         "f32", "f64", "c64", "c128")
_NAMES = native_names("paddle")
#: canonical dtype name -> Paddle dtype name
TO_PADDLE = {name: _NAMES[name] for name in ASKED if name in _NAMES}
#: Paddle's dtype names -> canonical.
FROM_PADDLE = {v: k for k, v in TO_PADDLE.items()}

#: the Python scalar used for each ``py:KIND`` operand.
PY_VALUES = {"bool": True, "int": 3, "float": 1.5, "complex": 1 + 2j}

#: the APIs of the doc's scope table, in its order (huber_loss is listed twice there).
API_OPS = [
    "add", "subtract", "multiply", "divide", "floor_divide", "pow",
    "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal",
    "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor",
    "where", "fmax", "fmin", "logaddexp", "maximum", "minimum", "remainder",
    "huber_loss", "nextafter", "atan2", "poisson_nll_loss", "l1_loss", "mse_loss",
]

#: Python operators -> the ``operator`` function that applies them (Python then
#: calls the reflected method when the left operand is a Python scalar).
OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul,
    "/": operator.truediv, "//": operator.floordiv, "**": operator.pow,
    "%": operator.mod,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
}

#: ops whose result is bool whatever dtype they compute in.
BOOL_RESULT = {
    "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal",
    "logical_and", "logical_or", "logical_xor",
    "==", "!=", "<", "<=", ">", ">=",
}

#: kernels whose missing-kernel error names the dtype the op decided on.
KERNELS = {
    "add": {"add"}, "subtract": {"subtract"}, "multiply": {"multiply"},
    "divide": {"divide"}, "floor_divide": {"floor_divide"},
    "pow": {"elementwise_pow", "pow"},
    "equal": {"equal"}, "not_equal": {"not_equal"}, "less_than": {"less_than"},
    "less_equal": {"less_equal"}, "greater_than": {"greater_than"},
    "greater_equal": {"greater_equal"},
    "logical_and": {"logical_and"}, "logical_or": {"logical_or"},
    "logical_xor": {"logical_xor"},
    "bitwise_and": {"bitwise_and"}, "bitwise_or": {"bitwise_or"},
    "bitwise_xor": {"bitwise_xor"},
    "where": {"where"}, "fmax": {"fmax"}, "fmin": {"fmin"},
    "logaddexp": {"subtract", "abs", "scale"}, "maximum": {"maximum"}, "minimum": {"minimum"},
    "remainder": {"remainder"}, "huber_loss": {"huber_loss"},
    "nextafter": {"nextafter"}, "atan2": {"atan2"},
    "poisson_nll_loss": set(), "l1_loss": {"subtract", "abs"},
    "mse_loss": {"subtract", "square"},
    "+": {"add", "scale"}, "-": {"subtract", "scale"}, "*": {"multiply", "scale"},
    "/": {"divide", "scale"}, "//": {"floor_divide"},
    "**": {"elementwise_pow", "pow"}, "%": {"remainder"},
    "==": {"equal"}, "!=": {"not_equal"},
    # a Python scalar first runs the reflected comparison: ``3 < t`` is ``t > 3``
    "<": {"less_than", "greater_than"}, "<=": {"less_equal", "greater_equal"},
    ">": {"greater_than", "less_than"}, ">=": {"greater_equal", "less_equal"},
    "&": {"bitwise_and"}, "|": {"bitwise_or"}, "^": {"bitwise_xor"},
}

OPS = API_OPS + list(OPERATORS)

#: ops that do no type promotion: a kernel looked up for mixed dtypes is keyed by one
#: operand's dtype and fails on the other, so a missing kernel decides nothing.
NO_PROMOTION = {"bitwise_and", "bitwise_or", "bitwise_xor", "&", "|", "^"}


def _same_dtype(a: str, b: str) -> bool:
    if a.startswith("py:") or b.startswith("py:"):
        return True
    return a.split(":")[-1] == b.split(":")[-1]


#: ops whose Python wrapper broadcasts its operands to one shape before the op runs.
BROADCAST_FIRST = {"where", "atan2"}

_KERNEL = re.compile(
    r"The kernel with key \([^,]+, [^,]+, (?P<dtype>\w+)\) of kernel `(?P<kernel>\w+)` "
    r"is not registered")
_LOCATION = re.compile(r"\s*\(at [^()]*:\d+\)\s*$")
_PREFIX = re.compile(r"^\(\w+\) ")
_SENTENCE = re.compile(r"\.\s+(?=[A-Z])")


def version() -> str | None:
    """The installed Paddle version (e.g. ``3.3.1``), None when absent."""
    os.environ.setdefault("GLOG_minloglevel", "3")
    try:
        import paddle  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(paddle.__version__)


def clean_error(exc: BaseException) -> str:
    """Paddle's message, trimmed to its first sentence.

    The first non-empty line, without the ``(at file:line)`` source location and the
    ``(ErrorClass)`` prefix, cut after its first sentence: the later sentences repeat
    the operand dtypes (``But got different data type x: int64, y: float32.``) or
    list the dtypes a kernel has, which the case already says or does not need.
    """
    text = str(exc).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not set(line) <= set("-"):
            text = line
            break
    text = _LOCATION.sub("", text)
    text = _PREFIX.sub("", " ".join(text.split()))
    m = _SENTENCE.search(text)
    if m:
        text = text[: m.start() + 1]
    return text or type(exc).__name__


def _api(name: str):
    import paddle  # noqa: PLC0415
    import paddle.nn.functional as F  # noqa: PLC0415, N812

    if name == "where":
        def where(x, y):
            cond = paddle.to_tensor([True, False])
            return paddle.where(cond, x, y)
        return where
    if name == "huber_loss":
        return lambda x, y: F.smooth_l1_loss(x, y, reduction="none")
    if name in ("poisson_nll_loss", "l1_loss", "mse_loss"):
        fn = getattr(F, name)
        return lambda x, y: fn(x, y, reduction="none")
    return getattr(paddle, name)


def _setup():
    os.environ.setdefault("GLOG_minloglevel", "3")
    os.environ.setdefault("FLAGS_call_stack_level", "0")
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import paddle  # noqa: PLC0415

    paddle.disable_static()
    paddle.set_device("cpu")
    return paddle


def make_operand(text: str):
    """Build the Paddle value for an operand string (``i8``, ``0d:f16``, ``py:int``; ``py:300`` that Python int,
    ``0d:i64=300`` a 0-d tensor holding it)."""
    import paddle  # noqa: PLC0415

    if text.startswith("py:"):
        return operand_cases.python_scalar(text, PY_VALUES)
    shape = [2]
    if text.startswith("0d:"):
        value = operand_cases.rank0_value(text)
        shape, text = [], text[3:].partition("=")[0]
        if value is not None:
            return paddle.to_tensor(value, dtype=getattr(paddle, TO_PADDLE[text]))
    base = paddle.ones(shape, dtype="int32")
    return paddle.cast(base, getattr(paddle, TO_PADDLE[text]))


def _dtype_name(dtype) -> str:
    name = str(dtype).replace("paddle.", "")
    return FROM_PADDLE.get(name, name)


def ask(op: str, a: str, b: str, _cache: dict | None = None) -> tuple[str | None, str | None]:
    """Run ``a OP b`` once; return ``(result dtype, None)`` or ``(None, error)``."""
    result, error, _ = ask_detail(op, a, b, _cache)
    return result, error


def ask_detail(op: str, a: str, b: str,
               _cache: dict | None = None) -> tuple[str | None, str | None, str]:
    """Like `ask`, plus how the answer was read: ``ran``, ``kernel`` or ``refused``.

    ``kernel``: the op's kernel for the chosen dtype is missing on CPU and the answer
    is the dtype the missing kernel was looked up for.  For ``where`` and ``atan2``,
    whose Python wrappers broadcast a 0-d operand (``expand``) before the op decides,
    a missing ``expand`` kernel is answered by asking the op with the broadcast
    operand, which is what the op itself receives.
    """
    fn = OPERATORS.get(op) or _api(op)
    cache = _cache if _cache is not None else {}
    x = cache[a] if a in cache else make_operand(a)
    y = cache[b] if b in cache else make_operand(b)
    try:
        out = fn(x, y)
    except Exception as exc:  # noqa: BLE001 - every Paddle error is an answer
        msg = clean_error(exc)
        m = _KERNEL.search(msg)
        decides = op not in NO_PROMOTION or _same_dtype(a, b)
        if m and decides and m.group("kernel") in KERNELS.get(op, ()) | {"full"}:
            dtype = FROM_PADDLE.get(m.group("dtype"))
            if dtype is not None:
                return ("bool" if op in BOOL_RESULT else dtype), None, "kernel"
        if m and m.group("kernel") == "expand" and op in BROADCAST_FIRST:
            wide_a = a[3:] if a.startswith("0d:") else a
            wide_b = b[3:] if b.startswith("0d:") else b
            if (wide_a, wide_b) != (a, b):
                result, error, how = ask_detail(op, wide_a, wide_b, _cache)
                return result, error, how
        return None, msg, "refused"
    if isinstance(out, (tuple, list)):
        out = out[0]
    if not hasattr(out, "dtype"):
        return None, f"returned {type(out).__name__}, not a tensor", "refused"
    return _dtype_name(out.dtype), None, "ran"


def operand_pairs():
    """Every (a, b) operand pair asked for each op."""
    for pairs in pair_groups(TO_PADDLE, [f"py:{k}" for k in PY_VALUES]):
        yield from pairs


def record(ops: list[str] | None = None) -> dict:
    """Ask every case; return a recording (see docs/recordings.md)."""
    _setup()
    cache: dict = {}
    pairs = list(operand_pairs())
    for a, b in pairs:
        for text in (a, b):
            if text not in cache:
                cache[text] = make_operand(text)
    cases = []
    missing: dict[str, int] = {}
    for op in ops or OPS:
        for a, b in pairs:
            result, error, how = ask_detail(op, a, b, cache)
            if how == "kernel":
                missing[op] = missing.get(op, 0) + 1
            cases.append([op, a, b, {}, result, error])
    return {
        "ruleset": FRAMEWORK,
        "package": PACKAGE,
        "version": version(),
        "probe": "promote_cli.probes.paddle",
        "python": platform.python_version(),
        "device": "cpu",
        "kernel_missing": missing,
        "cases": cases,
    }


#: the ops the value recording asks (paddle.add takes no Python scalar; the operator does), and the dtypes
VALUE_OPS = ("+", "add")
VALUE_TYPES = list(TO_PADDLE)


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's tensor with every value operand (`cases.VALUES`), both orders: a value recording."""
    _setup()
    head = {"ruleset": FRAMEWORK, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.paddle",
            "python": platform.python_version(), "device": "cpu"}
    return operand_cases.record_values(lambda options: lambda op, pair: ask(op, *pair), VALUE_TYPES, head,
                                       ops=VALUE_OPS)


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    if sys.argv[1:2] == ["--values"]:
        from promote_cli.probes.opcases import write_op_recording

        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values/paddle.json")
        sys.exit(0)

    from promote_cli.probes import write_recording

    write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/paddle-3.3.json")
