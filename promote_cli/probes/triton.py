"""Probe: ask Triton's frontend what dtype each binary operator gives, per target, on a CPU.

What is asked
    Triton builds a kernel's MLIR in its frontend (``triton.language.semantic``) before any
    GPU is needed.  The probe builds what the JIT builds for ``z = x OP y``: an
    ``ir.builder`` carrying the options of a real target (``make_backend(GPUTarget(...))``
    and its ``parse_options``: the CUDA or HIP backend's supported fp8 types), a kernel
    function whose arguments make the operands, and the operator called as the code
    generator calls it (``CodeGenerator._operators``: the tensor's method, its reflected
    method when a literal stands on the left).  The operands are

    ``DTYPE``       a block tensor, ``tl.load(X + tl.arange(0, 4))`` of a ``*DTYPE`` argument
    ``0d:DTYPE``    a scalar kernel argument of that dtype (a runtime ``int`` argument is
                    ``0d:i32``, or ``0d:i64`` when its value does not fit i32; a ``float`` one
                    ``0d:f32``; a ``bool`` one ``0d:bool``)
    ``py:VALUE``    an in-kernel literal (``x + 1``, ``x + 1.5``): a ``tl.constexpr`` whose
                    dtype Triton reads from its value (``to_tensor_type``); ``py:int`` is ``1``,
                    ``py:float`` ``1.5``, ``py:bool`` ``True``

    ``record()`` asks ``+`` for every ordered dtype pair as tensors and 0-d arguments, and
    every dtype with every literal of `literals()` on either side, under each target of
    `TARGETS`; ``record_ops()`` (`promote_cli.probes.triton_ops`) asks every operator and
    function of `OPS` over the same operands.

How the answer is read
    The result tensor's dtype (a comparison's ``int1`` is ``bool``).  A refusal is the
    exception the frontend raised, ``ExceptionClass: first line``.  After building, MLIR's
    verifier runs on the module: where it rejects what the frontend built (``fp8e4b15``
    arithmetic, which Triton represents as ``i8`` in the IR), the answer is still the
    frontend's dtype and the recording's error field says ``IR invalid: `` with the
    verifier's message.

Triton is imported inside the functions only, so importing this module never fails when
the package is absent.

    python -m promote_cli.probes.triton OUT.json
"""

from __future__ import annotations

import contextlib
import itertools
import os
import platform
import tempfile

from promote_cli.vocab.dtypes import native_names

FRAMEWORK = "triton"
PACKAGE = "triton"

#: the targets asked: option value -> GPUTarget(backend, arch, warp size)
TARGETS = {"cuda:90": ("cuda", 90, 32), "cuda:80": ("cuda", 80, 32), "hip:gfx942": ("hip", "gfx942", 64)}

#: the dtypes asked, in the recording's order; their Triton names are the vocabulary's
TYPES = ("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
         "f8e4m3b15", "f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f16", "bf16", "f32", "f64")
TO_TRITON = {name: native_names("triton")[name] for name in TYPES}
FROM_TRITON = {v: k for k, v in TO_TRITON.items()}

#: the in-kernel literals of the value-independent kinds, operand -> value
KINDS = {"py:bool": True, "py:int": 1, "py:float": 1.5}
#: the literals whose value matters, operand -> value: those whose dtype differs from their kind's
#: (to_tensor_type: an int is int32, uint32, int64 or uint64 by its value, a float fp32 unless it is
#: finite and outside fp32's normal range) or that a dtype cannot hold
VALUES = {
    "py:0": 0, "py:-1": -1, "py:300": 300, "py:2147483648": 2 ** 31, "py:4294967296": 2 ** 32,
    "py:-2147483649": -2 ** 31 - 1, "py:9223372036854775808": 2 ** 63, "py:18446744073709551616": 2 ** 64,
    "py:1e+300": 1e300, "py:1e-300": 1e-300, "py:0.0": 0.0, "py:inf": float("inf"), "py:nan": float("nan"),
}
LITERALS = {**KINDS, **VALUES}
#: the value literals an op recording asks besides the kinds: a negative int, ints beyond int8 and int32, a
#: float beyond float32
OP_VALUES = ("py:-1", "py:300", "py:2147483648", "py:1e+300")

#: the operators (the code generator's table gives each its methods) and the tl functions asked
OPERATORS = ("+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^", "<<", ">>")
FUNCTIONS = ("tl.maximum", "tl.minimum", "tl.fdiv", "tl.div_rn")
OPS = OPERATORS + FUNCTIONS


def version() -> str | None:
    """The installed Triton version, None when Triton is absent."""
    try:
        import triton  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return str(triton.__version__)


class Target:
    """One target's frontend: its backend, options and an MLIR context with the dialects loaded."""

    def __init__(self, name: str):
        from triton._C.libtriton import ir  # noqa: PLC0415
        from triton.backends.compiler import GPUTarget  # noqa: PLC0415
        from triton.compiler.compiler import make_backend  # noqa: PLC0415

        self.name = name
        self.backend = make_backend(GPUTarget(*TARGETS[name]))
        self.options = self.backend.parse_options({})
        self.codegen_fns = self.backend.get_codegen_implementation(self.options)
        self.module_map = self.backend.get_module_map()
        self.context = ir.context()
        ir.load_dialects(self.context)
        self.backend.load_dialects(self.context)

    def builder(self):
        """A builder as the code generator makes one (CodeGenerator.__init__)."""
        from triton._C.libtriton import ir  # noqa: PLC0415

        builder = ir.builder(self.context)
        builder.options = self.options
        builder.codegen_fns = self.codegen_fns
        builder.module_map = self.module_map
        return builder


def _dtype(name: str):
    import triton.language as tl  # noqa: PLC0415

    return tl.dtype(TO_TRITON[name])


def _apply(op: str, x, y, semantic):
    """`x OP y` as the code generator applies it: the tensor owns the operator (a literal on the left runs
    the reflected method); a tl function is called with both."""
    import triton.language as tl  # noqa: PLC0415
    from triton.compiler.code_generator import CodeGenerator  # noqa: PLC0415

    if op in FUNCTIONS:
        return getattr(tl, op[3:])(x, y, _semantic=semantic)
    forward, reflected, _ = next(v for v in CodeGenerator._operators.values() if v[2] == op)
    if isinstance(x, tl.tensor):
        return getattr(x, forward)(y, _semantic=semantic)
    return getattr(y, reflected)(x, _semantic=semantic)


@contextlib.contextmanager
def _stderr_to(sink):
    """File descriptor 2 (where MLIR writes its diagnostics) sent to the file `sink` while inside."""
    saved = os.dup(2)
    os.dup2(sink.fileno(), 2)
    try:
        yield sink
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _verify(module) -> str | None:
    """None when MLIR's verifier accepts the module, else its first diagnostic."""
    with tempfile.TemporaryFile() as sink:
        with _stderr_to(sink):
            ok = module.verify()
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    if ok:
        return None
    lines = [line.split("error: ", 1)[-1].strip() for line in text.splitlines() if "error" in line]
    return lines[0] if lines else "the verifier rejects the module"


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).strip().splitlines()[:1]).strip()
    return f"{type(exc).__name__}: {' '.join(text.split())}" if text else type(exc).__name__


def ask(target: Target, op: str, operands: list[str]) -> tuple[str | None, str | None]:
    """``(result operand, None)``, ``(None, refusal)`` or, where MLIR's verifier rejects what the frontend
    built, ``(result operand, "IR invalid: ...")`` for one case; the result is ``0d:DTYPE`` where no operand
    is a block."""
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a literal shift count wider than the type warns (check_bit_width)
        return _ask(target, op, operands)


def _ask(target: Target, op: str, operands: list[str]) -> tuple[str | None, str | None]:
    import triton.language as tl  # noqa: PLC0415
    from triton.language.semantic import TritonSemantic  # noqa: PLC0415

    builder = target.builder()
    semantic = TritonSemantic(builder)
    module = builder.create_module()
    try:
        arg_types = [tl.pointer_type(_dtype(o)) if ":" not in o else _dtype(o[3:])
                     for o in operands if not o.startswith("py:")]
        fn_type = builder.get_function_ty([t.to_ir(builder) for t in arg_types], [])
        fn = builder.get_or_insert_function(module, "kernel", fn_type, "public", False)
        module.push_back(fn)
        builder.set_insertion_point_to_start(fn.add_entry_block())
        values, n = [], 0
        for operand in operands:
            if operand.startswith("py:"):
                values.append(tl.constexpr(LITERALS[operand]))
                continue
            value = tl.tensor(fn.args(n), arg_types[n])
            n += 1
            if ":" not in operand:  # a block: tl.load(X + tl.arange(0, 4))
                value = tl.load(value.__add__(tl.arange(0, 4, _semantic=semantic), _semantic=semantic),
                                _semantic=semantic)
            values.append(value)
        result = _apply(op, *values, semantic)
        builder.ret([])
    except Exception as exc:  # noqa: BLE001 - every frontend error is an answer
        return None, _first_line(exc)
    name = FROM_TRITON.get(result.dtype.name, result.dtype.name)
    invalid = _verify(module)
    return (name if result.type.is_block() else f"0d:{name}"), (None if invalid is None else f"IR invalid: {invalid}")


def literals(values=tuple(VALUES)) -> list[str]:
    """The literals asked: the kinds, and `values` where the contract's operand grammar has value operands
    (``py:300``)."""
    from promote_cli.errors import UsageError  # noqa: PLC0415
    from promote_cli.vocab import operands  # noqa: PLC0415

    try:
        operands.parse(next(iter(VALUES)))
    except UsageError:
        return list(KINDS)
    return [*KINDS, *values]


def operand_pairs():
    """The pairs ``+`` is asked for: dtype pairs as blocks and 0-d arguments, and each dtype with each literal
    on either side."""
    forms = ("{}", "0d:{}")
    for a, b in itertools.product(TYPES, TYPES):
        for fa, fb in itertools.product(forms, forms):
            yield fa.format(a), fb.format(b)
    for t, literal in itertools.product(TYPES, literals()):
        for form in forms:
            yield form.format(t), literal
            yield literal, form.format(t)


#: the dtypes and operand forms the code generator itself is asked (`extra_checks`): a sample, as compiling a
#: kernel takes about 10 ms
JIT_TYPES = ("bool", "u32", "i64", "f8e4m3b15", "bf16", "f64")


def _kernel_source(n: int, op: str, operands: list[str]) -> str:
    """A @triton.jit kernel computing `op` of `operands` (pointer arguments loaded as blocks, scalar arguments,
    literals written in the source) that prints the result's dtype while it compiles."""
    params, names = [], []
    for i, operand in enumerate(operands):
        if operand.startswith("py:"):
            names.append(repr(LITERALS[operand]))
            continue
        params.append(f"A{i}")
        names.append(f"tl.load(A{i} + tl.arange(0, 4))" if ":" not in operand else f"A{i}")
    x, y = names
    expression = f"{op}({x}, {y})" if op in FUNCTIONS else f"({x}) {op} ({y})"
    return (f"@triton.jit\ndef kernel_{n}({', '.join(params)}):\n"
            f"    z = {expression}\n    tl.static_print(z.dtype)\n")


def jit_cases():
    """Each (op, operands) of the sample asked of the code generator."""
    for op in OPS:
        for a, b in itertools.product(JIT_TYPES, JIT_TYPES):
            yield op, [a, b] if op != "+" else [f"0d:{a}", b]
        for t, literal in itertools.product(JIT_TYPES, KINDS):
            yield op, [t, literal]
            yield op, [literal, t]


def _signature_name(dtype: str) -> str:
    """A dtype as a kernel signature names it (the JIT's mangle_type: int8 is i8, uint8 u8)."""
    return TO_TRITON[dtype].replace("uint", "u").replace("int", "i")


def ask_jit(target: Target, cases: list) -> list[tuple[str | None, str]]:
    """What the real code generator gives each (op, operands) case: ``(result dtype, how it ended)``, where
    it ends ``compiled``, ``refused`` (the frontend raised: no dtype) or ``invalid`` (the frontend gave the
    dtype, then ast_to_ttir's module.verify() failed: "RuntimeError: error encountered during parsing").
    The kernels are written to one module, imported, and each compiled to its MLIR (``ASTSource.make_ir``,
    the first stage of ``triton.compile``) for the target."""
    import importlib.util  # noqa: PLC0415
    import io  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    from triton._C.libtriton import ir  # noqa: PLC0415
    from triton.compiler import ASTSource  # noqa: PLC0415

    text = "import triton\nimport triton.language as tl\n\n" + "\n".join(
        _kernel_source(n, op, operands) for n, (op, operands) in enumerate(cases))
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "triton_probe_kernels.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        spec = importlib.util.spec_from_file_location("triton_probe_kernels", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        answers = []
        for n, (op, operands) in enumerate(cases):
            signature = {f"A{i}": ("*" if ":" not in o else "") + _signature_name(o.removeprefix("0d:"))
                         for i, o in enumerate(operands) if not o.startswith("py:")}
            source = ASTSource(getattr(module, f"kernel_{n}"), signature, {})
            context = ir.context()
            ir.load_dialects(context)
            target.backend.load_dialects(context)
            printed, ending = io.StringIO(), "compiled"
            try:
                with (contextlib.redirect_stdout(printed), warnings.catch_warnings(), tempfile.TemporaryFile() as sink,
                      _stderr_to(sink)):
                    warnings.simplefilter("ignore")
                    source.make_ir(target.backend.target, target.options, target.codegen_fns, target.module_map,
                                   context)
            except Exception as exc:  # noqa: BLE001 - a CompilationError is the frontend's refusal
                ending = "invalid" if "error encountered during parsing" in str(exc) else "refused"
            words = printed.getvalue().split()  # static_print's dtype first (then the module, when invalid)
            name = words[0] if words and ending != "refused" else None
            answers.append((FROM_TRITON.get(name, name), ending))
    return answers


def extra_checks() -> list:
    """The probe's mirror of the code generator (`ask`) against the code generator itself: a sample of every
    op, compiled as @triton.jit kernels for cuda:90 (`jit_cases`), must give the same dtypes, the same
    refusals, and a failed verification where the mirror found the IR invalid."""
    target = Target("cuda:90")
    cases = list(jit_cases())
    bad = []
    for (op, operands), (got, ending) in zip(cases, ask_jit(target, cases)):
        result, error = ask(target, op, operands)
        mine = "refused" if result is None else "invalid" if error else "compiled"
        if (result and result.removeprefix("0d:"), mine) != (got, ending):
            bad.append(f"{operands[0]} {op} {operands[1]}: the kernel gives {got} ({ending}), "
                       f"the probe's builder {result} ({mine}{': ' + error if error else ''})")
    return [("the code generator (a sample of @triton.jit kernels, cuda:90)", len(cases), bad)]


#: runtime kernel arguments whose specialisation `arguments` records
ARGUMENTS = (1, 2, 0, -1, 2 ** 31, -2 ** 31 - 1, 2 ** 63, 1.5, 1e300, True)


def arguments() -> dict[str, str]:
    """What a launch makes of a Python scalar passed as a kernel argument, as an operand: the JIT specialises it
    (native_specialize_impl, the key of its kernel cache): an int is an i32, i64 or u64 scalar argument, a 0-d
    tensor inside the kernel, except 1, which becomes a tl.constexpr, a literal; a float an fp32 argument."""
    from triton._C.libtriton import native_specialize_impl  # noqa: PLC0415
    from triton.backends.compiler import BaseBackend  # noqa: PLC0415

    names = {_signature_name(name): name for name in TYPES} | {"u1": "bool"}  # int1 is also spelled u1
    shown = {}
    for value in ARGUMENTS:
        kind = native_specialize_impl(BaseBackend, value, False, True, True)[0]
        shown[repr(value)] = f"py:{value!r}" if kind == "constexpr" else f"0d:{names.get(kind, kind)}"
    return shown


def head(package_version: str) -> dict:
    """A recording's header: what was asked with what, and what a launch makes of scalar arguments."""
    return {"ruleset": FRAMEWORK, "package": PACKAGE, "version": package_version,
            "probe": "promote_cli.probes.triton", "python": platform.python_version(),
            "targets": {name: "GPUTarget({!r}, {!r}, {})".format(*spec) for name, spec in TARGETS.items()},
            "arguments": arguments()}


def record() -> dict:
    """Ask every case of `operand_pairs` for ``+`` under every target; return a recording."""
    ver = version()
    if ver is None:
        raise RuntimeError("triton is not importable; pip install triton")
    cases = []
    for name in TARGETS:
        target, options = Target(name), {"target": name}
        for a, b in operand_pairs():
            result, error = ask(target, "+", [a, b])
            cases.append(["+", a, b, options, result and result.removeprefix("0d:"), error])
    return {**head(ver), "cases": cases}


if __name__ == "__main__":  # pragma: no cover - used to refresh the recording
    import sys

    from promote_cli.probes import write_recording

    write_recording(record(), sys.argv[1] if len(sys.argv) > 1 else "tests/data/recordings/triton-3.9.json")
