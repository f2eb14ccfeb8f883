"""Per framework, what evaluating an expression needs (promote_cli/probes/expressions.py).

For each framework: its option sets (each asked in a subprocess of its own), how a process
is set up for one, the value of a typed variable, the functions ``maximum``, ``minimum``
and ``where``, and how a result's form is read.  The dtypes, versions and error trimming
are its pair probe's (``promote_cli.probes.NAME``); nothing here names a dtype itself.

Frameworks are imported inside the methods only, so importing this module never fails
when one is absent.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod

from promote_cli.oracle import registry
from promote_cli.probes import array_api as array_api_probe
from promote_cli.probes import jax as jax_probe
from promote_cli.probes import mlx as mlx_probe
from promote_cli.probes import numpy as numpy_probe
from promote_cli.probes import paddle as paddle_probe
from promote_cli.probes import tensorflow as tensorflow_probe
from promote_cli.probes import tinygrad as tinygrad_probe
from promote_cli.probes import torch as torch_probe
from promote_cli.probes.dtype_names import canonical, first_line, np_dtype
from promote_cli.vocab.operands import PYTHON, RANK0, WEAK, Operand
from promote_cli.vocab.operators import CALLS

#: the values of a variable's elements (a rank >= 1 tensor, weakly typed ones too), of a rank-0
#: variable, and of a bool one: small and positive, so that no outcome depends on them (no
#: division by zero).
VALUES = (1, 2, 3)
RANK0_VALUE = 2
BOOL_VALUE = True


def _elements(operand: Operand) -> tuple[tuple, object]:
    """(shape, elements) of a variable: ``(3,)`` and 1, 2, 3 (all True for bool), or ``()`` and 2 (True)."""
    boolean = operand.dtype.name == "bool"
    if operand.form == RANK0:
        return (), BOOL_VALUE if boolean else RANK0_VALUE
    return (len(VALUES),), [BOOL_VALUE] * len(VALUES) if boolean else list(VALUES)


def _numpy_array(operand: Operand):
    """The NumPy array of a variable (ml_dtypes types included)."""
    import numpy as np  # noqa: PLC0415

    shape, elements = _elements(operand)
    return np.asarray(elements).astype(np_dtype(operand.dtype.name)).reshape(shape)


def _python_value(operand: Operand):
    """A ``py:KIND`` variable is the Python scalar the pair probes use for that kind."""
    from promote_cli.probes.dtype_names import PY_VALUES  # noqa: PLC0415

    return PY_VALUES[operand.pykind]


def _shaped_form(rank: int, dtype_name: str, weak: bool = False) -> str:
    if weak:
        return f"weak:{dtype_name}"
    return f"0d:{dtype_name}" if rank == 0 else dtype_name


class Framework(ABC):
    """The generic part: what every framework below defines, and defaults it may override."""

    name = ""
    package = ""
    probe = None
    weak = False                      # can a variable be weakly typed (``w:weak:f32``)?
    option_sets: tuple = ({},)

    @abstractmethod
    def types(self) -> set:
        """The canonical dtype names the framework has."""

    def version(self) -> str | None:
        return self.probe.version()

    def versions(self) -> dict:
        """Header keys beyond the package's version (companion packages)."""
        return {}

    def environment(self, options: dict) -> dict:
        """Environment variables a subprocess needs for `options` (read at import)."""
        return {}

    def setup(self, options: dict) -> None:
        """Set this process up for `options`, before anything is computed."""

    @abstractmethod
    def value(self, operand: Operand):
        """The framework's value of a typed variable (or the Python scalar of a ``py:`` one)."""

    @abstractmethod
    def namespace(self):
        """The module whose functions the expression's calls (``maximum``, ``where``, ...) are."""

    def functions(self) -> dict:
        """Each callable name of the syntax as the namespace's function of that name, looked up
        when called: a function the framework lacks is then that call's error, as in a script."""
        namespace = self.namespace()
        return {name: (lambda *args, _name=name: getattr(namespace, _name)(*args)) for name in CALLS}

    @abstractmethod
    def form(self, value) -> str | None:
        """The result's operand (``weak:f32``, ``0d:i8``, ``i16``), or None for a Python value."""

    def error(self, exc: BaseException) -> str:
        return self.probe.clean_error(exc)


class NumPy(Framework):
    name, package, probe = "numpy", numpy_probe.PACKAGE, numpy_probe

    def types(self):
        return set(numpy_probe.TYPES)

    def versions(self):
        import ml_dtypes  # noqa: PLC0415

        return {"ml_dtypes": str(ml_dtypes.__version__)}

    def value(self, operand):
        return _python_value(operand) if operand.form == PYTHON else _numpy_array(operand)

    def namespace(self):
        import numpy  # noqa: PLC0415

        return numpy

    def form(self, value):
        import numpy as np  # noqa: PLC0415

        if isinstance(value, (np.ndarray, np.generic)):
            return _shaped_form(np.ndim(value), canonical(value.dtype))
        return None

    def error(self, exc):
        return first_line(exc)


class JAX(Framework):
    """``x64`` (``JAX_ENABLE_X64``, read at start-up) and ``numpy_dtype_promotion``."""

    name, package, probe = "jax", jax_probe.PACKAGE, jax_probe
    weak = True
    option_sets = tuple({"x64": x64, "numpy_dtype_promotion": mode} for x64 in (False, True) for mode in jax_probe.MODES)

    def types(self):
        return set(jax_probe.TYPES)

    def versions(self):
        import jaxlib  # noqa: PLC0415
        import ml_dtypes  # noqa: PLC0415

        return {"jaxlib": str(jaxlib.__version__), "ml_dtypes": str(ml_dtypes.__version__)}

    def environment(self, options):
        return {"JAX_ENABLE_X64": "1" if options["x64"] else "0", "JAX_PLATFORMS": "cpu"}

    def setup(self, options):
        import jax  # noqa: PLC0415

        jax.config.update("jax_platforms", "cpu")
        if bool(jax.config.jax_enable_x64) != options["x64"]:
            raise RuntimeError(f"JAX_ENABLE_X64 is not {options['x64']} in this process")
        jax.config.update("jax_numpy_dtype_promotion", options["numpy_dtype_promotion"])

    def value(self, operand):
        """A JAX array of the variable's NumPy array (what ``jnp.asarray`` makes of it: with
        x64 off, a 64-bit one becomes 32-bit); ``weak:`` marks it weakly typed."""
        import jax.numpy as jnp  # noqa: PLC0415
        from jax._src.lax import lax  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        array = jnp.asarray(_numpy_array(operand))
        if operand.form == WEAK:
            array = lax._convert_element_type(array, array.dtype, weak_type=True)
        return array

    def namespace(self):
        import jax.numpy as jnp  # noqa: PLC0415

        return jnp

    def form(self, value):
        import jax  # noqa: PLC0415

        if isinstance(value, jax.Array):
            return _shaped_form(value.ndim, canonical(value.dtype), bool(getattr(value, "weak_type", False)))
        return None


class Torch(Framework):
    name, package, probe = "torch", torch_probe.PACKAGE, torch_probe

    def types(self):
        return set(torch_probe.TO_TORCH)

    def setup(self, options):
        import torch  # noqa: PLC0415

        torch.set_default_dtype(torch.float32)

    def value(self, operand):
        import torch  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        shape, elements = _elements(operand)
        dtype = getattr(torch, torch_probe.TO_TORCH[operand.dtype.name])
        return torch.tensor(elements).to(dtype).reshape(shape)

    def namespace(self):
        import torch  # noqa: PLC0415

        return torch

    def form(self, value):
        import torch  # noqa: PLC0415

        if isinstance(value, torch.Tensor):
            name = str(value.dtype)
            return _shaped_form(value.dim(), torch_probe.FROM_TORCH.get(name, name))
        return None


class Paddle(Framework):
    name, package, probe = "paddle", paddle_probe.PACKAGE, paddle_probe

    def types(self):
        return set(paddle_probe.TO_PADDLE)

    def setup(self, options):
        paddle_probe._setup()

    def value(self, operand):
        import numpy as np  # noqa: PLC0415
        import paddle  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        shape, elements = _elements(operand)
        base = paddle.to_tensor(np.asarray(elements, dtype=np.int32).reshape(shape))
        return paddle.cast(base, getattr(paddle, paddle_probe.TO_PADDLE[operand.dtype.name]))

    def namespace(self):
        import paddle  # noqa: PLC0415

        return paddle

    def form(self, value):
        import paddle  # noqa: PLC0415

        if isinstance(value, paddle.Tensor):
            return _shaped_form(value.ndim, paddle_probe._dtype_name(value.dtype))
        return None


class TensorFlow(Framework):
    """``dtype_conversion_mode`` (``off``: plain TensorFlow; otherwise NumPy behaviour on,
    ``tnp.experimental_enable_numpy_behavior(prefer_float32=..., dtype_conversion_mode=MODE)``),
    each with ``prefer_float32`` false, and the two modes that make WeakTensors (``safe``,
    ``all``) with it true too (how a Python float is read); the named ops are
    ``tf.experimental.numpy``'s."""

    name, package, probe = "tensorflow", tensorflow_probe.PACKAGE, tensorflow_probe
    weak = True
    option_sets = (*({"dtype_conversion_mode": mode, "prefer_float32": False} for mode in tensorflow_probe.MODES),
                   *({"dtype_conversion_mode": mode, "prefer_float32": True} for mode in ("safe", "all")))

    def types(self):
        return set(tensorflow_probe.TO_TF)

    def environment(self, options):
        return {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def setup(self, options):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf  # noqa: PLC0415
        import tensorflow.experimental.numpy as tnp  # noqa: PLC0415

        tf.get_logger().setLevel("ERROR")
        mode, prefer = options["dtype_conversion_mode"], options["prefer_float32"]
        if mode != "off" or prefer:
            tnp.experimental_enable_numpy_behavior(prefer_float32=prefer, dtype_conversion_mode=mode)

    def value(self, operand):
        import tensorflow as tf  # noqa: PLC0415
        from tensorflow.python.framework import weak_tensor  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        # from a NumPy array: TensorFlow has no fill or cast kernel for some of its dtypes
        tensor = tf.constant(_numpy_array(operand).astype(
            tf.as_dtype(tensorflow_probe.TO_TF[operand.dtype.name]).as_numpy_dtype))
        if operand.form == WEAK:
            return weak_tensor.WeakTensor.from_tensor(tensor)
        return tensor

    def namespace(self):
        import tensorflow.experimental.numpy as tnp  # noqa: PLC0415

        return tnp

    def form(self, value):
        import tensorflow as tf  # noqa: PLC0415
        from tensorflow.python.framework import weak_tensor  # noqa: PLC0415

        if isinstance(value, (tf.Tensor, weak_tensor.WeakTensor)):
            name = tf.as_dtype(value.dtype).name
            return _shaped_form(value.shape.rank, tensorflow_probe.FROM_TF.get(name, name),
                                isinstance(value, weak_tensor.WeakTensor))
        return None


class ArrayAPI(Framework):
    """array-api-strict under one standard version (``set_array_api_strict_flags(api_version=...)``,
    set in the subprocess before anything is computed): one framework per version, named as its
    ruleset (``array-api@2024.12``), whose defaults are that version's, so its option set is ``{}``.
    The named ops are array-api-strict's own (``maximum`` and ``minimum`` from 2023.12)."""

    package, probe = array_api_probe.PACKAGE, array_api_probe

    def __init__(self, api_version: str):
        self.api_version = api_version
        self.name = f"{array_api_probe.FRAMEWORK}@{api_version}"

    def types(self):
        return set(array_api_probe.TYPES)

    def versions(self):
        return {"api_version": self.api_version}

    def setup(self, options):
        import warnings  # noqa: PLC0415

        import array_api_strict as xp  # noqa: PLC0415

        if self.api_version not in array_api_probe.api_versions():
            raise RuntimeError(f"array-api-strict {xp.__version__} does not support api_version={self.api_version}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xp.set_array_api_strict_flags(api_version=self.api_version)

    def value(self, operand):
        import array_api_strict as xp  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        return xp.asarray(_numpy_array(operand))

    def namespace(self):
        import array_api_strict as xp  # noqa: PLC0415

        return xp

    def form(self, value):
        import array_api_strict as xp  # noqa: PLC0415

        if isinstance(value, xp._array_object.Array):
            return _shaped_form(value.ndim, canonical(str(value.dtype).rpartition(".")[2]))
        return None

    def error(self, exc):
        return first_line(exc)


class MLX(Framework):
    """``mlx.core`` arrays on the CPU; a result is evaluated, so a kernel's failure is its error."""

    name, package, probe = "mlx", mlx_probe.PACKAGE, mlx_probe

    def types(self):
        return set(mlx_probe.TO_MLX)

    def setup(self, options):
        import mlx.core as mx  # noqa: PLC0415

        mx.set_default_device(mx.cpu)

    def value(self, operand):
        import mlx.core as mx  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        shape, elements = _elements(operand)
        return mx.array(elements, dtype=getattr(mx, mlx_probe.TO_MLX[operand.dtype.name])).reshape(shape)

    def namespace(self):
        import mlx.core as mx  # noqa: PLC0415

        return mx

    def form(self, value):
        import mlx.core as mx  # noqa: PLC0415

        if isinstance(value, mx.array):
            mx.eval(value)
            return _shaped_form(value.ndim, mlx_probe.dtype_name(value.dtype))


class TinyGrad(Framework):
    """tinygrad on its emulator (``DEV=PYTHON``): dtypes are decided while the graph is built, nothing is
    realised.  Its defaults are the environment variables ``DEFAULT_INT`` and ``DEFAULT_FLOAT`` (the pair
    probes set them with ``Context``).  Its calls are Tensor methods (``x.maximum(y)``, ``c.where(x, y)``):
    with a Python scalar first they fail as they would in a script.  Its weak Tensors are those a Python
    scalar makes (``Tensor(3)``), of no dtype of their own: weak variables are not asked."""

    name, package, probe = tinygrad_probe.FRAMEWORK, tinygrad_probe.PACKAGE, tinygrad_probe
    option_sets = tuple(tinygrad_probe.OPTIONS)

    def types(self):
        return set(tinygrad_probe.ASKED)

    def environment(self, options):
        return {"DEV": os.environ.get("DEV", tinygrad_probe.DEVICE),
                "DEFAULT_INT": tinygrad_probe.DEFAULT_INTS[options["default_int"]],
                "DEFAULT_FLOAT": tinygrad_probe.DEFAULT_FLOATS[options["default_float"]]}

    def setup(self, options):
        self.options = options

    def value(self, operand):
        from tinygrad import Tensor  # noqa: PLC0415

        if operand.form == PYTHON:
            return _python_value(operand)
        shape, _ = _elements(operand)
        return Tensor.empty(*shape, dtype=tinygrad_probe.dtype_of(operand.dtype.name))

    def namespace(self):
        from tinygrad import Tensor  # noqa: PLC0415

        return Tensor

    def form(self, value):
        from tinygrad import Tensor, dtypes  # noqa: PLC0415

        if isinstance(value, Tensor):
            name = tinygrad_probe.name_of(value.dtype, self.options)
            return _shaped_form(len(value.shape), name.rpartition(":")[2], value.dtype in dtypes.weaks)
        return None

    def error(self, exc):
        return first_line(exc)


#: the standard versions the array API rulesets name (their api_version option): one framework each
ARRAY_API_VERSIONS = tuple(registry.load(array_api_probe.FRAMEWORK).options["api_version"].values)

#: framework name (its ruleset) -> what evaluating an expression in it needs
FRAMEWORKS = {fw.name: fw for fw in (NumPy(), JAX(), Torch(), Paddle(), TensorFlow(), MLX(), TinyGrad(),
                                     *(ArrayAPI(v) for v in ARRAY_API_VERSIONS))}
