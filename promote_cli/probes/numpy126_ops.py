"""Probe: what dtype NumPy 1.26's binary operators and functions give, over the types ml_dtypes 0.5.4 has
(`promote_cli.probes.numpy126.TYPES`), asked as `promote_cli.probes.numpy_ops` asks NumPy 2: every operator
(``a + b``; a Python scalar on the left runs the reflected method) and every other binary ufunc by its NumPy
name (``fmod``, ``maximum``, ``logical_and``, ...: `OPS`); the ufunc an operator calls (``np.add``) is asked
through the operator, keeping the recording small.  The values are the NumPy 2 probe's (ones; 1, 1.5, 1+2j for Python
scalars): the value cases are the pair recording's.

    python -m promote_cli.probes.numpy126_ops OUT.json
"""

from __future__ import annotations

from promote_cli.probes import numpy_ops
from promote_cli.probes.numpy126 import FRAMEWORK, INSTALL, PACKAGE, TYPES, version
from promote_cli.probes.numpy_ops import WHERE_CONDITIONS
from promote_cli.probes.opsweep import OPERATORS

__all__ = ["FRAMEWORK", "PACKAGE", "INSTALL", "WHERE_CONDITIONS", "OPERATORS", "OPS", "ALIASES", "record_ops"]

#: the ufunc each operator calls on arrays (``a + b`` is ``np.add(a, b)``): asked as the operator
CALLED = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "power",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
#: NumPy 2.0's array API names of ufuncs NumPy 1 has under their own names only
NUMPY2_NAMES = ("pow", "bitwise_left_shift", "bitwise_right_shift")

#: the binary operators (not ``@``: matmul's vectors are numpy_ops') and the binary ufuncs no operator calls
OPS = {name: 2 for name in [*(op for op in OPERATORS if not op.endswith("x") and op != "@"), *numpy_ops.BINARY]
       if name not in NUMPY2_NAMES + CALLED}

#: the names of `OPS` that are another's function object, asked under that one (none: the aliases are called)
ALIASES = {name: other for name, other in numpy_ops.ALIASES.items() if name in OPS}


def record_ops(ruleset: str = FRAMEWORK) -> dict:
    """Ask every op of `OPS` over `TYPES`: an op recording."""
    if version() is None:
        raise RuntimeError(f"numpy 1.x and ml_dtypes are not importable; pip install {INSTALL}")
    return numpy_ops.record_ops(ruleset, TYPES, OPS, "promote_cli.probes.numpy126_ops")


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    from promote_cli.probes.opcases import write_op_recording

    write_op_recording(record_ops(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/ops-numpy-1.26.json")
