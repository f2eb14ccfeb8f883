"""Probe: what dtype each TensorFlow op gives (CPU, eager), in every mode the pair probe
records (`promote_cli.probes.tensorflow`).

What is asked
    Each name of `OPS`, called as a user calls it: the operators on tensors (``a + b``,
    ``-a``, ``a @ b``; a Python scalar on the left runs the reflected method; ``<<`` and
    ``>>`` are not asked, ``tf.Tensor`` defines neither in any mode; ``+a`` is, NumPy
    behaviour defines it), the ``tf.*`` functions by their full path (``tf.math.add``;
    the shorter name of the same function, ``tf.add``, is in `ALIASES`) and the
    ``tf.experimental.numpy`` ones (``tnp.add``), with their default arguments
    (reductions over every element), except where a function needs one more argument:
    ``tf.concat`` takes ``axis=0``, both ``tensordot`` take ``axes=1``; ``tf.concat``,
    ``tf.stack``, ``tnp.concatenate`` and ``tnp.stack`` take the list ``[a, b]``.
    Tensors have shape ``[2]`` and hold ones, built from a NumPy
    array as the pair probe builds them (TensorFlow has no fill kernel for some of its
    dtypes); the linear algebra ops (`LINALG`) take ``[2, 2]`` tensors, since
    ``tf.linalg.matmul`` needs rank 2.  Python scalars are
    `promote_cli.probes.dtype_names.PY_VALUES`.

    Modes: the pair probe's, each (dtype conversion mode, prefer_float32) in a subprocess
    of its own (the mode is process-global).  With ``prefer_float32`` true only the cases
    with a Python scalar are asked: the option says how one is read (`asked`).

    The axis (`AXIS`) has every dtype as a tensor of shape ``[2]`` and the Python scalars;
    no 0-d tensors, which would double the recording's width for nothing:
    ``--rank0`` (`rank0_differences`) asks every unary op on each dtype as a 0-d tensor
    and ``+``, ``*``, ``==``, ``tf.math.add``, ``tf.math.maximum``, ``tf.math.equal``,
    ``tnp.add``, ``tnp.true_divide`` and ``tnp.where`` with a 0-d tensor in each place of
    every case, in every dtype conversion mode (and ``legacy`` with ``prefer_float32``),
    against the same case with shaped tensors.  A 0-d operand changed no dtype; it only
    makes ``tf.math.cumsum``, ``tf.math.cumprod`` (``Expected scan axis in the range
    [0, 0)``), ``tf.math.argmax`` and ``tf.math.argmin`` (``Expected dimension in the
    range [0, 0)``) refuse, as their default axis 0 does not exist.  Ops of Python
    scalars only: as `opsweep` asks them (an operator's or a function of several
    operands' are Python's, not asked; ``tf.math.sqrt(1.5)`` is asked).

How the answer is read
    The result's dtype as an operand (``0d:i64`` for a 0-d tensor; ``weak:i32`` for a
    WeakTensor, whatever its rank), or the refusal: ``ExceptionClass: message`` with the
    message as the pair probe cleans it (`promote_cli.probes.tensorflow.clean_error`).
    A missing kernel is a refusal like any other.

    python -m promote_cli.probes.tensorflow_ops OUT.json [RULESET]
    python -m promote_cli.probes.tensorflow_ops --rank0
"""

from __future__ import annotations

import json
import operator
import subprocess
import sys

from promote_cli.probes import opsweep
from promote_cli.probes.cases import SCALARS
from promote_cli.probes.dtype_names import PY_VALUES
from promote_cli.probes.opcases import Recorder, write_op_recording
from promote_cli.probes.tensorflow import FRAMEWORK, MODES, PACKAGE, TO_TF, clean_error, version

#: the operators, as written (``-x``: the unary one) -> the ``operator`` function that applies them.
OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "@": operator.matmul,
    "-x": operator.neg, "+x": operator.pos, "~x": operator.invert,
}

_TF_BINARY = ["tf.math.add", "tf.math.subtract", "tf.math.multiply", "tf.math.divide", "tf.math.truediv",
              "tf.math.floordiv", "tf.math.floormod", "tf.math.mod", "tf.math.pow",
              "tf.math.maximum", "tf.math.minimum",
              "tf.math.logical_and", "tf.math.logical_or", "tf.math.logical_xor",
              "tf.bitwise.bitwise_and", "tf.bitwise.bitwise_or", "tf.bitwise.bitwise_xor",
              "tf.bitwise.left_shift", "tf.bitwise.right_shift",
              "tf.math.equal", "tf.math.not_equal", "tf.math.less", "tf.math.less_equal",
              "tf.math.greater", "tf.math.greater_equal"]
_TF_REDUCTIONS = ["tf.math.reduce_sum", "tf.math.reduce_prod", "tf.math.reduce_mean", "tf.math.cumsum",
                  "tf.math.cumprod", "tf.math.reduce_max", "tf.math.reduce_min", "tf.math.argmax",
                  "tf.math.argmin", "tf.math.reduce_std", "tf.math.reduce_variance", "tf.math.reduce_all",
                  "tf.math.reduce_any"]
_TF_UNARY = ["tf.math.abs", "tf.math.negative", "tf.math.sign", "tf.math.sqrt", "tf.math.exp", "tf.math.log",
             "tf.math.sin", "tf.math.floor", "tf.math.ceil", "tf.math.round", "tf.math.square",
             "tf.math.reciprocal", "tf.math.is_nan", "tf.math.is_finite", "tf.math.real", "tf.math.imag",
             "tf.math.conj", "tf.math.logical_not", "tf.bitwise.invert"]
_TF_LINALG = ["tf.linalg.matmul", "tf.linalg.tensordot"]
_TF_ARRAY = {"tf.concat": 2, "tf.stack": 2, "tf.where": opsweep.WHERE, "tf.clip_by_value": opsweep.CLIP}

_TNP_BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
               "power", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
               "bitwise_and", "bitwise_or", "bitwise_xor",
               "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
_TNP_REDUCTIONS = ["sum", "prod", "mean", "cumsum", "cumprod", "max", "min", "amax", "amin", "argmax", "argmin",
                   "std", "var", "all", "any"]
_TNP_UNARY = ["abs", "absolute", "negative", "positive", "sign", "sqrt", "exp", "log", "sin", "floor", "ceil",
              "round", "square", "reciprocal", "isnan", "isfinite", "real", "imag", "conj", "conjugate",
              "logical_not", "bitwise_not"]
_TNP_LINALG = ["matmul", "dot", "vdot", "inner", "tensordot"]
_TNP_ARRAY = {"concatenate": 2, "stack": 2, "where": opsweep.WHERE, "clip": opsweep.CLIP}


def _tnp(names) -> list[str]:
    return [f"tnp.{name}" for name in names]


#: the ops whose tensors have shape ``[2, 2]``
LINALG = frozenset(["@", *_TF_LINALG, *_tnp(_TNP_LINALG)])

#: every name asked, in the recording's order -> its arity (`leading`).
OPS: dict[str, int | str] = {
    **{op: (1 if op.endswith("x") else 2) for op in OPERATORS},
    **dict.fromkeys(_TF_BINARY, 2), **dict.fromkeys(_TF_REDUCTIONS, 1), **dict.fromkeys(_TF_UNARY, 1),
    **dict.fromkeys(_TF_LINALG, 2), **_TF_ARRAY,
    **dict.fromkeys(_tnp(_TNP_BINARY), 2), **dict.fromkeys(_tnp(_TNP_REDUCTIONS), 1),
    **dict.fromkeys(_tnp(_TNP_UNARY), 1), **dict.fromkeys(_tnp(_TNP_LINALG), 2),
    **{f"tnp.{op}": arity for op, arity in _TNP_ARRAY.items()},
}

#: the shorter names of the functions of `OPS` (each the same Python object as the name it
#: maps to, which is recorded); `check_aliases` checks them against the installed TensorFlow.
ALIASES = {
    **{f"tf.{name}": f"tf.math.{name}" for name in (
        "add", "subtract", "multiply", "divide", "truediv", "pow", "maximum", "minimum", "logical_and",
        "logical_or", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
        "reduce_sum", "reduce_prod", "reduce_mean", "cumsum", "reduce_max", "reduce_min", "argmax", "argmin",
        "reduce_all", "reduce_any", "abs", "negative", "sign", "sqrt", "exp", "sin", "floor", "round",
        "square", "logical_not")},
    "tf.math.mod": "tf.math.floormod",
    "tf.matmul": "tf.linalg.matmul", "tf.tensordot": "tf.linalg.tensordot",
}

#: the operands of the recording's axis: a tensor of every dtype, the Python scalars (no 0-d tensors)
AXIS = [*TO_TF, *SCALARS]

#: the conditions ``where`` is asked with: a bool tensor and an integer one.
WHERE_CONDITIONS = ["bool", "i8"]

#: the binary ops `rank0_differences` asks (``tnp.where`` with a 0-d condition, x or y too)
RANK0_SAMPLE = ["+", "*", "==", "tf.math.add", "tf.math.maximum", "tf.math.equal", "tnp.add", "tnp.true_divide",
                "tnp.where"]

_LISTED = {"tf.concat", "tf.stack", "tnp.concatenate", "tnp.stack"}


def options_dicts() -> list[dict]:
    """The options of each run, in the recording's order (the pair probe's modes)."""
    return [{"dtype_conversion_mode": mode, "prefer_float32": prefer} for mode in MODES for prefer in (False, True)]


def asked(op: str, operands: list[str], options: dict) -> bool:
    """Whether a case is asked: not when its operands are Python scalars only in an operator
    or a function of several operands (Python's arithmetic; ``tf.math.sqrt(1.5)`` is
    TensorFlow's answer), and under ``prefer_float32`` only with a Python scalar."""
    scalars = [o.startswith("py:") for o in operands]
    if all(scalars) and (op in OPERATORS or OPS[op] != 1):
        return False
    return any(scalars) or not options["prefer_float32"]


def resolve(name: str, tf, tnp):
    """The Python object `name` (an operator or a dotted ``tf.``/``tnp.`` path) stands for."""
    if name in OPERATORS:
        return OPERATORS[name]
    root, *path = name.split(".")
    obj = {"tf": tf, "tnp": tnp}[root]
    for part in path:
        obj = getattr(obj, part)
    return obj


def calling(op: str, fn):
    """How `op`'s function `fn` is called on the operands (see the module's docstring)."""
    if op == "tf.concat":
        return lambda a, b: fn([a, b], axis=0)
    if op in _LISTED:
        return lambda a, b: fn([a, b])
    if op.endswith("tensordot"):
        return lambda a, b: fn(a, b, axes=1)
    return fn


def check_aliases(tf, tnp, names=OPS) -> None:
    """Raise unless each alias is the object its canonical name is, and no two other names of
    `names` (operators aside) are one object."""
    for name, canonical in ALIASES.items():
        if resolve(name, tf, tnp) is not resolve(canonical, tf, tnp):
            raise AssertionError(f"{name} is not {canonical}")
    seen: dict = {}
    for name in names:
        if name in ALIASES or name in OPERATORS:
            continue
        obj = resolve(name, tf, tnp)
        if id(obj) in seen:
            raise AssertionError(f"{name} is {seen[id(obj)]}: list it in ALIASES")
        seen[id(obj)] = name


def _start(options: dict):
    """Import TensorFlow in this process, set the options' mode; (tf, tnp, asker)."""
    import os  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    warnings.filterwarnings("ignore")
    import numpy as np  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415
    import tensorflow.experimental.numpy as tnp  # noqa: PLC0415
    from tensorflow.python.framework import weak_tensor  # noqa: PLC0415

    tf.get_logger().setLevel("ERROR")
    mode, prefer = options["dtype_conversion_mode"], options["prefer_float32"]
    if mode != "off" or prefer:
        tnp.experimental_enable_numpy_behavior(prefer_float32=prefer, dtype_conversion_mode=mode)
    from_tf = {tf.as_dtype(name): canonical for canonical, name in TO_TF.items()}

    def dtype_name(dtype) -> str:
        dtype = tf.as_dtype(dtype)
        return from_tf.get(dtype, dtype.name)

    def make(text: str, shape: list[int]):
        if text.startswith("py:"):
            return PY_VALUES[text[3:]]
        if text.startswith("0d:"):
            shape, text = [], text[3:]
        return tf.constant(np.ones(shape, tf.as_dtype(TO_TF[text]).as_numpy_dtype))

    functions: dict = {}
    values: dict = {}

    def ask(op: str, operands: list[str]) -> list:
        """``[result, error]`` of `op` on `operands`."""
        if op not in functions:
            functions[op] = calling(op, resolve(op, tf, tnp))
        shape = [2, 2] if op in LINALG else [2]
        args = []
        for o in operands:
            key = (o, len(shape))
            if key not in values:
                values[key] = make(o, shape)
            args.append(values[key])
        try:
            out = functions[op](*args)
        except Exception as exc:  # noqa: BLE001 - every TensorFlow error is an answer
            return [None, opsweep.refusal(exc, clean_error(exc))]
        if isinstance(out, weak_tensor.WeakTensor):
            return [f"weak:{dtype_name(out.dtype)}", None]
        return list(opsweep.result_operand(out, dtype_name))

    return tf, tnp, ask


def _worker(options: dict) -> list:
    """Every row of one options dict, asked in this process: ``[op, leading, cells]``, a cell
    ``[result, error]`` or null (not asked)."""
    tf, tnp, ask = _start(options)
    check_aliases(tf, tnp)
    rows = []
    for op, arity in OPS.items():
        if op in ALIASES:
            continue
        for lead in opsweep.leading(arity, AXIS, WHERE_CONDITIONS):
            cells = [ask(op, [*lead, x]) if asked(op, [*lead, x], options) else None for x in AXIS]
            rows.append([op, lead, cells])
    return rows


def _rank0_worker(options: dict) -> list:
    """The cases where a 0-d operand in place of a shaped one changes the result's dtype or
    whether the op refuses, ``[op, shaped operands, 0-d operands, answer, answer]``: of every
    unary op, and of the binary ops of `RANK0_SAMPLE` with a 0-d operand in each place."""
    _, _, ask = _start(options)

    def kind(answer):
        result, _ = answer
        return "refused" if result is None else result.removeprefix("0d:")

    cases = [(op, [t]) for op, arity in OPS.items() if arity == 1 and op not in ALIASES for t in TO_TF]
    for op in RANK0_SAMPLE:
        first = [[c] for c in WHERE_CONDITIONS] if OPS[op] == opsweep.WHERE else [[]]
        cases += [(op, [*c, a, b]) for c in first for a in AXIS for b in AXIS]
    differences = []
    for op, operands in cases:
        if not asked(op, operands, options):
            continue
        want = ask(op, operands)
        for n, o in enumerate(operands):
            if not o.startswith("py:"):
                zero = [*operands[:n], f"0d:{o}", *operands[n + 1:]]
                got = ask(op, zero)
                if kind(got) != kind(want):
                    differences.append([op, operands, zero, want, got])
    return differences


def _ask_worker(options: dict, asking: list) -> list:
    """``[result, error]`` of each ``[op, operands]`` of `asking`, asked in this process (the
    aliases checked first)."""
    tf, tnp, ask = _start(options)
    check_aliases(tf, tnp)
    return [ask(op, operands) for op, operands in asking]


def _run_worker(flag: str, options: dict, payload=None):
    proc = subprocess.run([sys.executable, "-m", "promote_cli.probes.tensorflow_ops", flag, json.dumps(options)],
                          input=json.dumps(payload), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the TensorFlow worker for {options} failed: {tail}")
    return json.loads(proc.stdout)


def ask_again(options: dict, asking: list) -> list[tuple[str | None, str | None]]:
    """What the installed TensorFlow answers now to each ``(op, operands)`` under `options`."""
    return [tuple(answer) for answer in _run_worker("--ask", options, [list(case) for case in asking])]


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` (aliases once, under their canonical name) under every options
    dict, one subprocess each; an op recording, its rows op by op."""
    ver = version()
    if ver is None:
        raise RuntimeError("tensorflow is not installed; pip install tensorflow-cpu")
    from importlib.metadata import version as dist_version  # noqa: PLC0415

    runs = [(options, _run_worker("--worker", options)) for options in options_dicts()]
    recorder = Recorder(AXIS)
    by_op: dict = {}
    for options, rows in runs:
        for op, lead, cells in rows:
            by_op.setdefault(op, []).append((options, lead, cells))
    for op, rows in by_op.items():
        for options, lead, cells in rows:
            answers = iter(cells)
            recorder.row(op, options, lead, lambda _op, _operands, answers=answers: next(answers))
    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": ver, "numpy": dist_version("numpy"),
        "ml_dtypes": dist_version("ml_dtypes"), "probe": "promote_cli.probes.tensorflow_ops", "device": "cpu",
        "aliases": ALIASES,
    })


def rank0_differences() -> list:
    """`_rank0_worker` in every dtype conversion mode, and ``legacy`` with ``prefer_float32``."""
    runs = [o for o in options_dicts() if not o["prefer_float32"] or o["dtype_conversion_mode"] == "legacy"]
    return [[options, *d] for options in runs for d in _run_worker("--rank0-worker", options)]


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        json.dump(_worker(json.loads(sys.argv[2])), sys.stdout)
    elif len(sys.argv) == 3 and sys.argv[1] == "--rank0-worker":
        json.dump(_rank0_worker(json.loads(sys.argv[2])), sys.stdout)
    elif len(sys.argv) == 3 and sys.argv[1] == "--ask":
        json.dump(_ask_worker(json.loads(sys.argv[2]), json.load(sys.stdin)), sys.stdout)
    elif sys.argv[1:] == ["--rank0"]:
        found = rank0_differences()
        print("\n".join(json.dumps(d) for d in found) or "a 0-d operand changed no answer")
    else:
        write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                           else "tests/data/recordings/ops-tensorflow.json")
