"""Probe: what dtype each jax.numpy op gives, per ``x64`` and promotion mode, over the
operands `opsweep` asks.

What is asked
    Each name of `OPS` (NumPy's names: jax.numpy has every one, as its own function),
    called as a user calls it: the operators on arrays (``a + b``, ``-a``, ``a @ b``; a
    Python scalar on the left runs the reflected method), the ``jax.numpy`` functions with
    their default arguments (reductions over every element), ``tensordot`` with
    ``axes=1``, ``concatenate``, ``concat`` and ``stack`` on the list ``[a, b]``
    (`promote_cli.probes.numpy_ops.calling`).  Arrays have shape ``(2,)`` (``0d:``: shape
    ``()``), of the dtype the pair probe gives them (`promote_cli.probes.jax.make_operand`:
    without x64, JAX makes a 32-bit array of a 64-bit one, and the recording says what
    JAX then does); linear algebra (``matmul``, ``@``, ``dot``, ``vdot``, ``vecdot``,
    ``tensordot``) takes two vectors of shape ``(2,)``.  Python scalars are
    `promote_cli.probes.dtype_names.PY_VALUES`.

    The leading operands of a binary row and clip's ``x`` are the dimensioned arrays and
    the Python scalars, not the 0-d arrays (`leading`): the 0-d arrays stand on the other
    side of every binary op (the row's cells), as the other two operands of ``where`` and
    ``clip``, and alone in the unary rows.  JAX does not tell a 0-d array from another in
    promotion; asking them as leading operands too would double the recording.

    Each case is asked under every combination of the options the pair probe records:
    ``x64`` (read once at start-up, so each value runs in its own subprocess) and
    ``numpy_dtype_promotion`` (``standard`` and ``strict``).

How the answer is read
    A row's ops run under one ``jax.eval_shape`` (JAX traces each op exactly as under
    ``jit``; no kernel is compiled, so the fp6 types, which XLA's CPU runtime cannot hold,
    are answered too: the header's ``abstract_only``), with ``jax.disable_jit()``: the body
    of each jax.numpy function that JAX wraps in ``jit`` is traced in the row's trace
    (`row_asker`).  The result's dtype as an operand:
    ``0d:i32`` when it has no dimensions, ``weak:f32`` when JAX marks it weakly typed
    (what an op of Python scalars and weak values gives; the contract's ``weak:`` has no
    rank).  A refusal is ``ExceptionClass: JAX's first sentence`` (and the one naming the
    type family that refuses implicit promotion), its dtypes in sorted order (`clean_error`).

JAX is imported inside the functions only, so importing this module never fails when
the package is absent.

    python -m promote_cli.probes.jax_ops OUT.json [RULESET]
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys

from promote_cli.probes import opsweep
from promote_cli.probes.dtype_names import canonical
from promote_cli.probes import jax as pair_probe
from promote_cli.probes.jax import ABSTRACT_ONLY, MODES, PACKAGE, TYPES, make_operand, version
from promote_cli.probes.numpy_ops import OPERATORS, OPS, WHERE_CONDITIONS, calling, check_distinct, named_result
from promote_cli.probes.opcases import Recorder, write_op_recording

FRAMEWORK = "jax"

__all__ = ["ALIASES", "FRAMEWORK", "OPS", "PACKAGE", "WHERE_CONDITIONS", "record_ops", "version"]

#: no two names of `OPS` are one jax.numpy function (``jnp.abs`` is not ``jnp.absolute``,
#: ``jnp.pow`` not ``jnp.power``): `record_mode` checks it against the installed JAX.
ALIASES: dict[str, str] = {}


def named(op: str):
    """The operator's function or jax.numpy's object of that name."""
    import jax.numpy as jnp  # noqa: PLC0415

    return OPERATORS[op] if op in OPERATORS else getattr(jnp, op)


def leading(arity, axis: list[str], where_conditions) -> list[list[str]]:
    """`opsweep.leading`, without the rows whose first operand is a 0-d array (binary ops
    and clip; see the module's docstring)."""
    rows = opsweep.leading(arity, axis, where_conditions)
    if arity in (2, opsweep.CLIP):
        return [lead for lead in rows if not lead[0].startswith("0d:")]
    return rows


_INPUT_DTYPES = re.compile(r"(?<=Input dtypes )\([^()]*\)")


def clean_error(exc: BaseException) -> str:
    """JAX's message as the pair probe keeps it (`promote_cli.probes.jax.clean_error`), with
    the dtypes of "Input dtypes (...)" in sorted order: JAX lists them from a set of dtypes,
    whose order changes from one process to the next (a dtype's hash does)."""
    def ordered(match: re.Match) -> str:
        try:
            return repr(tuple(sorted(ast.literal_eval(match.group(0)))))
        except (ValueError, SyntaxError, TypeError):
            return match.group(0)

    return _INPUT_DTYPES.sub(ordered, pair_probe.clean_error(exc))


def _read(value) -> tuple[str | None, str | None]:
    """The operand form of an abstract result (a ``ShapeDtypeStruct``)."""
    result, error = named_result(*opsweep.result_operand(value, canonical))
    if result is not None and getattr(value, "weak_type", False):
        return f"weak:{result.rpartition(':')[2]}", None
    return result, error


def row_asker(inline: bool = True):
    """``ask(op, operands, axis) -> (result, error)`` for the current mode: the first case of
    a row (an op and its leading operands) answers the whole row, every last operand of
    `axis`, under one ``jax.eval_shape``; the other cases of the row are read from it.
    `inline`: under ``jax.disable_jit()``, which runs the body of each jax.numpy function
    that JAX wraps in ``jit`` in the row's trace rather than tracing it apart (the same
    promotion and the same errors, in half the time; tests/test_jax_ops.py compares)."""
    import warnings  # noqa: PLC0415

    import jax  # noqa: PLC0415

    values: dict = {}
    rows: dict = {}

    def value(text: str):
        return values[text] if text in values else values.setdefault(text, make_operand(text))

    def answer_row(op: str, lead: tuple, axis: list[str]) -> dict:
        fn = calling(op, named(op))
        asked = [x for x in axis if not all(o.startswith("py:") for o in [*lead, x])]
        names = list(dict.fromkeys([*lead, *asked]))
        arrays = [n for n in names if not n.startswith("py:")]
        answers: dict = {}

        def traced(*xs):
            given = {**{n: value(n) for n in names}, **dict(zip(arrays, xs))}
            out = {}
            for x in asked:
                try:
                    got = fn(*(given[o] for o in [*lead, x]))
                except Exception as exc:  # noqa: BLE001 - every JAX error is an answer
                    answers[x] = None, opsweep.refusal(exc, clean_error(exc))
                    continue
                if isinstance(got, (tuple, list)) and got:
                    got = got[0]
                if isinstance(got, jax.Array):
                    out[x] = got
                else:  # a Python value or another object: read as it is
                    answers[x] = named_result(*opsweep.result_operand(got, canonical))
            return out

        with warnings.catch_warnings(), jax.disable_jit(inline):
            warnings.simplefilter("ignore")
            shapes = jax.eval_shape(traced, *(value(n) for n in arrays))
        return {**answers, **{x: _read(s) for x, s in shapes.items()}}

    def ask(op: str, operands: list[str], axis: list[str]):
        key = (op, tuple(operands[:-1]))
        if key not in rows:
            rows.clear()
            rows[key] = answer_row(op, key[1], axis)
        return rows[key][operands[-1]]

    return ask


def asked(op: str, operands: list[str], options: dict | None = None) -> bool:
    """Whether the recording asks a case: every case with an array among its operands (Python scalars alone
    are not asked, of any op: JAX's answer for them is a weak type of its own, left to `promote expr`)."""
    return not all(o.startswith("py:") for o in operands)


def record_mode() -> dict:
    """Every row in this process's x64 setting, under both promotion modes: an op recording."""
    import jax  # noqa: PLC0415

    jax.config.update("jax_platforms", "cpu")
    check_distinct(named, ALIASES, OPS, "jnp")
    x64 = bool(jax.config.jax_enable_x64)
    recorder = Recorder(opsweep.axis(TYPES))
    ask = row_asker()

    def answer(op: str, operands: list[str]):
        return ask(op, operands, recorder.axis) if asked(op, operands) else None

    for mode in MODES:
        options = {"x64": x64, "numpy_dtype_promotion": mode}
        with jax.numpy_dtype_promotion(mode):
            for op, arity in OPS.items():
                for lead in leading(arity, recorder.axis, WHERE_CONDITIONS):
                    recorder.row(op, options, lead, answer)
                print(f"x64={x64} {mode} {op}", file=sys.stderr, flush=True)
    return {**recorder.recording({}), "abstract_only": sorted(ABSTRACT_ONLY)}


def _replay(recorder: Recorder, parts: list[dict]) -> None:
    """Add the rows of `parts` (op recordings of one axis) to `recorder`, op by op in `OPS`'
    order and each op's rows under each options dict in turn."""
    def decode(part: dict, cell):
        if cell is None:
            return None
        return (None, part["messages"][cell]) if isinstance(cell, int) else (cell, None)

    order = list(OPS)
    rows = [(order.index(r[0]), n, part["options"][r[1]], r, part) for n, part in enumerate(parts)
            for r in part["rows"]]
    for _, _, options, (op, _, lead, cells), part in sorted(rows, key=lambda r: (r[0], r[1], MODES.index(
            r[2]["numpy_dtype_promotion"]))):
        answers = dict(zip(part["axis"], cells))
        recorder.row(op, options, lead, lambda _op, operands: decode(part, answers[operands[-1]]))


def record_parts() -> list[dict]:
    """The op recordings of each x64 value, from a subprocess each (both at once)."""
    procs = []
    for x64 in (False, True):
        env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", JAX_PLATFORMS="cpu")
        procs.append(subprocess.Popen([sys.executable, "-m", "promote_cli.probes.jax_ops", "--mode"], env=env,
                                      stdout=subprocess.PIPE, text=True))
    parts = []
    for x64, proc in zip((False, True), procs):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"the JAX op probe (x64={x64}) failed (exit status {proc.returncode})")
        parts.append(json.loads(out))
    return parts


def record_ops(ruleset: str = FRAMEWORK, parts: list[dict] | None = None) -> dict:
    """Ask every op of `OPS` under each x64 value and promotion mode (or take the
    `record_mode` answers `parts`, one per x64 value); an op recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("jax is not importable; pip install jax")
    parts = record_parts() if parts is None else parts
    recorder = Recorder(opsweep.axis(TYPES))
    _replay(recorder, parts)
    import jaxlib  # noqa: PLC0415
    import ml_dtypes  # noqa: PLC0415

    return recorder.recording({
        "ruleset": ruleset, "package": PACKAGE, "version": ver, "jaxlib": str(jaxlib.__version__),
        "ml_dtypes": str(ml_dtypes.__version__), "probe": "promote_cli.probes.jax_ops", "device": "cpu",
        "abstract_only": sorted({t for part in parts for t in part["abstract_only"]}), "aliases": ALIASES,
    })


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    if sys.argv[1:] == ["--mode"]:
        json.dump(record_mode(), sys.stdout)
    else:
        write_op_recording(record_ops(*sys.argv[2:3]), sys.argv[1] if len(sys.argv) > 1
                           else "tests/data/recordings/ops-jax.json")
