"""Probe: ask JAX (CPU) what dtype each case gives, per ``x64`` and promotion mode.

What is asked
    Every ordered pair of JAX's dtypes (all that have a canonical name: bool, int2/4/8..64,
    uint1/2/4/8..64, every float8, fp6, fp4, bf16, f16, f32, f64, c64, c128), weakly typed
    arrays (``weak:DTYPE``, see WEAK: ``lax._convert_element_type(x, dtype, weak_type=True)``,
    what ``jnp.asarray(1) * x``-style code makes) and Python scalars
    (``py:bool|int|float|complex``), for three ops:

    ``add``            ``x + y`` on arrays of shape ``(2,)`` (and a 0-d array with one of
                       shape ``(2,)``: JAX does not tell them apart); the result
                       is read with ``jax.eval_shape``, which runs JAX's own promotion
                       without compiling a kernel, and reports ``weak:DTYPE`` when the
                       result's aval is weakly typed;
    ``promote_types``  ``jnp.promote_types(a, b)`` on dtypes; a Python scalar is its
                       type (``int``, ``float``, ``complex``, ``bool``), which JAX treats
                       as weak;
    ``result_type``    ``jnp.result_type(x, y)`` on the same values as ``add`` (it
                       returns a dtype, never a weak flag), and on triples (the
                       recording's ``nary`` list).

    Each case is asked under every combination of the options ``x64`` (``false``, JAX's
    default, and ``true``: ``JAX_ENABLE_X64``, which JAX reads once at start-up, so each
    value runs in its own subprocess) and ``numpy_dtype_promotion`` (``standard`` and
    ``strict``, ``jax.numpy_dtype_promotion(...)``).

How the answer is read
    The result's dtype, or the exception's first sentence (and the one naming the type
    family that refuses implicit promotion).  Each operand's dtype is what
    ``jax.device_put`` makes of a NumPy array of it, checked: with x64 off, JAX makes a
    32-bit array of a 64-bit NumPy array (that is the op's input, and the recording
    says what JAX then does); any other difference (a sub-byte type confused with
    another) stops the probe.  The op itself runs under ``jax.eval_shape`` on
    ``ShapeDtypeStruct`` values of those dtypes (weakly typed for ``weak:``): JAX's
    promotion, without compiling a kernel, and for every dtype, even those XLA's CPU
    runtime cannot hold (fp6: the recording's ``abstract_only``).

JAX is imported inside the functions only, so importing this module never fails when
the package is absent.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import re
import subprocess
import sys

from promote_cli.probes import cases as operand_cases
from promote_cli.probes.cases import ask_every
from promote_cli.probes.dtype_names import CANONICAL, PY_VALUES, canonical, first_line, np_dtype

FRAMEWORK = "jax"
PACKAGE = "jax"

#: every JAX dtype with a canonical name (ml_dtypes' int1 has none), canonical names.
TYPES = [c for n, c in CANONICAL.items() if n not in ("complex32",)]
SCALARS = [f"py:{k}" for k in PY_VALUES]
#: the weakly typed operands: JAX's own weak types (i32/i64, f32/f64, c64/c128, what Python
#: scalars become) and a sample of the others (a weak array keeps any dtype it is given).
WEAK = [f"weak:{t}" for t in ("bool", "i4", "i8", "i16", "i32", "i64", "u1", "u8", "u32", "f8e5m2", "bf16", "f16",
                              "f32", "f64", "c64", "c128")]
OPERANDS = TYPES + WEAK + SCALARS
PY_TYPES = {"bool": bool, "int": int, "float": float, "complex": complex}

OPS = ("add", "promote_types", "result_type")
MODES = ("standard", "strict")

#: the operands of the N-ary result_type cases: every ordered triple of these.
TRIPLE_OPERANDS = ["bool", "u8", "i8", "u32", "i32", "bf16", "f16", "f32", "c64", "i4",
                   "weak:i32", "weak:f32", "py:int", "py:float"]


def version() -> str | None:
    """The installed JAX version, None when JAX is absent."""
    try:
        import jax  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(jax.__version__)


#: dtypes that JAX's CPU runtime cannot hold (``device_put`` fails): their cases are
#: answered by JAX's promotion on abstract values alone.  Filled in while recording.
ABSTRACT_ONLY: set[str] = set()


def make_operand(text: str):
    """The abstract JAX value of an operand (a Python scalar stays itself).

    The dtype is the one ``jax.device_put`` gives a NumPy array of the operand's dtype
    (checked: only x64 narrowing may change it); the value is a ``ShapeDtypeStruct``,
    weakly typed for ``weak:``, so that no kernel is compiled and every dtype, even one
    XLA cannot lower, goes through JAX's promotion.
    """
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    if text.startswith("py:"):
        return operand_cases.python_scalar(text, PY_VALUES)
    form, _, name = text.partition("=")[0].rpartition(":")  # an array's value (0d:i64=300) is not traced
    want = np_dtype(name)
    shape = () if form == "0d" else (2,)
    try:
        got = jax.device_put(np.ones(shape, want)).dtype
    except Exception:  # noqa: BLE001 - XLA has no such type on this device
        ABSTRACT_ONLY.add(name)
        got = want
    if got != want:
        narrowed = (not jax.config.jax_enable_x64 and want.itemsize == 2 * got.itemsize
                    and want.kind == got.kind)
        if not narrowed:
            raise RuntimeError(f"asked JAX for a {want} array, got {got}")
    return jax.ShapeDtypeStruct(shape, got, weak_type=form == "weak")


def _promote_arg(text: str):
    return PY_TYPES[text[3:]] if text.startswith("py:") else np_dtype(text)


_SENTENCE = re.compile(r"(?<=\.)\s+(?=[A-Z])")


def clean_error(exc: BaseException) -> str:
    """JAX's message: its first sentence, and the sentence naming the type family that
    refuses implicit promotion ("... 8-bit floats do not support implicit promotion.")."""
    sentences = _SENTENCE.split(first_line(exc))
    kept = [sentences[0]] + [s for s in sentences[1:] if s.startswith("To avoid unintended promotion")]
    return " ".join(kept)


def ask(op: str, operands: list[str]) -> tuple[str | None, str | None]:
    """``(result, None)`` or ``(None, message)`` for one case in the current mode."""
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415

    values = [make_operand(t) for t in operands]
    arrays = [i for i, v in enumerate(values) if hasattr(v, "dtype")]
    if op == "add" and not arrays:
        return None, "no array operand: Python computes this, not JAX"
    found = []

    def call(*xs):
        full = list(values)
        for i, x in zip(arrays, xs):
            full[i] = x
        if op == "result_type":
            found.append(jnp.result_type(*full))
            return xs[0]
        out = full[0]
        for x in full[1:]:
            out = out + x
        return out

    try:
        if op == "promote_types":
            return canonical(jnp.promote_types(*(_promote_arg(t) for t in operands))), None
        if not arrays:
            return canonical(jnp.result_type(*values)), None
        out = jax.eval_shape(call, *(values[i] for i in arrays))
    except Exception as exc:  # noqa: BLE001 - every JAX error is an answer
        return None, clean_error(exc)
    if op == "result_type":
        return canonical(found[0]), None
    name = canonical(out.dtype)
    return (f"weak:{name}" if out.weak_type else name), None


def pair_cases():
    """Every (op, a, b) asked in each mode."""
    for a, b in itertools.product(OPERANDS, OPERANDS):
        if not (a.startswith("weak:") or b.startswith("weak:")):
            yield "promote_types", a, b
        if a.startswith("py:") and b.startswith("py:"):
            yield "result_type", a, b
            continue
        yield "add", a, b
        yield "result_type", a, b
    for a, b in itertools.product(TYPES, TYPES):
        yield "add", f"0d:{a}", b


def record_mode() -> list:
    """Every case in this process's x64 setting, under both promotion modes."""
    import warnings  # noqa: PLC0415

    import jax  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    jax.config.update("jax_platforms", "cpu")
    x64 = bool(jax.config.jax_enable_x64)
    cases, nary = [], []
    for mode in MODES:
        options = {"x64": x64, "numpy_dtype_promotion": mode}
        with jax.numpy_dtype_promotion(mode):
            mode_cases, mode_nary = ask_every(ask, pair_cases(), TRIPLE_OPERANDS, options)
        cases += mode_cases
        nary += mode_nary
    return cases, nary


#: JAX's weak scalar types -> the operands that stand for them.
WEAK_NODES = {"int": "py:int", "float": "py:float", "complex": "py:complex"}


def lattices() -> dict:
    """JAX's promotion lattices (``_type_promotion_lattice``), in canonical names: each
    node and its immediate successors; the weak int/float/complex nodes are
    ``py:int``/``py:float``/``py:complex``.  Types without a canonical name (int1) are
    left out, with their edges."""
    from jax._src import dtypes  # noqa: PLC0415

    def name(node) -> str | None:
        if isinstance(node, type):
            return WEAK_NODES[node.__name__]
        text = canonical(node)
        return text if text in TYPES else None

    out = {}
    for key, strict, x64 in (("x32", False, False), ("x64", False, True), ("strict", True, True)):
        edges = {}
        for node, succ in dtypes._type_promotion_lattice(strict, x64).items():
            if name(node) is not None:
                edges[name(node)] = [name(s) for s in succ if name(s) is not None]
        out[key] = edges
    return out


def _in_mode(x64: bool, flag: str) -> dict:
    """What `python -m promote_cli.probes.jax FLAG` printed (JSON) under that x64 value."""
    env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-m", "promote_cli.probes.jax", flag],
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the JAX probe (x64={x64}) failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


#: the ops the value recording asks
VALUE_OPS = ("add", "result_type")


def values_mode() -> list:
    """Every value case in this process's x64 setting, under both promotion modes: [options, op, a, b, result,
    error] each."""
    import warnings  # noqa: PLC0415

    import jax  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    jax.config.update("jax_platforms", "cpu")
    x64 = bool(jax.config.jax_enable_x64)
    out = []
    for mode in MODES:
        options = {"x64": x64, "numpy_dtype_promotion": mode}
        with jax.numpy_dtype_promotion(mode):
            for op in VALUE_OPS:
                for t in TYPES:
                    for v in operand_cases.values_for(TYPES):
                        for pair in ([t, v], [v, t]):
                            out.append([options, op, *pair, *ask(op, pair)])
    return out


def record_values(ruleset: str | None = None) -> dict:
    """Every dtype's array with every value operand (`cases.VALUES`), both orders, under each x64 value (a
    subprocess each) and promotion mode: a value recording."""
    answers = {}
    for x64 in (False, True):
        for options, op, a, b, result, error in _in_mode(x64, "--values"):
            answers[json.dumps(options, sort_keys=True), op, a, b] = (result, error)
    head = {"ruleset": FRAMEWORK, "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.jax",
            "python": platform.python_version(), "device": "cpu"}
    options = [{"x64": x64, "numpy_dtype_promotion": mode} for x64 in (False, True) for mode in MODES]
    return operand_cases.record_values(
        lambda opts: lambda op, pair: answers[json.dumps(opts, sort_keys=True), op, *pair], TYPES, head, options,
        VALUE_OPS)


def record() -> dict:
    """Ask every case under each x64 value (a subprocess each); return a recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("jax is not importable; pip install jax")
    cases, nary, abstract = [], [], set()
    for x64 in (False, True):
        answered = _in_mode(x64, "--mode")
        cases += answered["cases"]
        nary += answered["nary"]
        abstract.update(answered["abstract_only"])
    import jaxlib  # noqa: PLC0415
    import ml_dtypes  # noqa: PLC0415

    return {
        "ruleset": FRAMEWORK,
        "package": PACKAGE,
        "version": ver,
        "jaxlib": str(jaxlib.__version__),
        "ml_dtypes": str(ml_dtypes.__version__),
        "probe": "promote_cli.probes.jax",
        "python": platform.python_version(),
        "device": "cpu",
        "abstract_only": sorted(abstract),
        "lattices": lattices(),
        "nary": nary,
        "cases": cases,
    }


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    if sys.argv[1:] == ["--mode"]:
        pairs, triples = record_mode()
        json.dump({"cases": pairs, "nary": triples, "abstract_only": sorted(ABSTRACT_ONLY)}, sys.stdout)
    elif sys.argv[1:] == ["--values"]:
        json.dump(values_mode(), sys.stdout)
    elif sys.argv[1:2] == ["--record-values"]:
        from promote_cli.probes.opcases import write_op_recording

        write_op_recording(record_values(), sys.argv[2] if len(sys.argv) > 2 else "tests/data/recordings/values/jax.json")
    else:
        from promote_cli.probes import write_recording

        write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/jax-0.10.json")
