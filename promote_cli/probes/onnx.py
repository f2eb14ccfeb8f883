"""Probe: ONNX operators, as the `onnx` package's own type inference and ONNX Runtime's CPU provider see them.

ONNX has no implicit promotion: each operator's inputs name type variables (`T`, `T1`, ...) with a list of
allowed types per opset (`onnx.defs`), and one variable binds one type. The probe asks the package, never
its schema lists: for every operator of `OPS`, every opset of `OPSETS` and every tuple of data-operand types,
it builds a one-node model with `onnx.helper` (inputs of shape `SHAPE`, attributes of `ATTRS`, an `axis` input
of CumSum as an int64 constant: an axis is not an operand) and runs `onnx.shape_inference.infer_shapes` with
type checking in strict mode: the inferred output type is the answer, the error the refusal. With the option
`runtime = "onnxruntime"`, a model ONNX accepts is also loaded by an ONNX Runtime `InferenceSession` on the
CPU provider: the session refuses an operator and type it has no kernel for ("Could not find an
implementation"), and that refusal is the answer there. Sessions are only made, never run.

`record_ops(ruleset)` (also `record_for`, what `promote verify` calls) records one opset (`onnx@21`) as an op
recording (`probes/opcases.py`): ONNX has no answer without an operator, so there is no pair recording. The
packages are imported inside the functions only.

    python -m promote_cli.probes.onnx OUT.json onnx@21           # the op recording of one opset
"""

from __future__ import annotations

import re
import sys

from promote_cli.probes import opsweep
from promote_cli.probes.opsweep import CLIP
from promote_cli.vocab.dtypes import lookup

FRAMEWORK = "onnx"
PACKAGE = "onnx"

#: the opsets recorded, one ruleset each (`onnx@13` ...): the ones converters target, and the newest (onnx 1.23)
OPSETS = (13, 17, 19, 21, 28)

#: ONNX's element types (TensorProto.DataType names) -> canonical names; STRING has no canonical name
TYPES = {
    "BOOL": "bool", "INT2": "i2", "INT4": "i4", "INT8": "i8", "INT16": "i16", "INT32": "i32", "INT64": "i64",
    "UINT2": "u2", "UINT4": "u4", "UINT8": "u8", "UINT16": "u16", "UINT32": "u32", "UINT64": "u64",
    "FLOAT4E2M1": "f4e2m1", "FLOAT6E2M3": "f6e2m3", "FLOAT6E3M2": "f6e3m2", "FLOAT8E4M3FN": "f8e4m3",
    "FLOAT8E4M3FNUZ": "f8e4m3fnuz", "FLOAT8E5M2": "f8e5m2", "FLOAT8E5M2FNUZ": "f8e5m2fnuz", "FLOAT8E8M0": "f8e8m0",
    "BFLOAT16": "bf16", "FLOAT16": "f16", "FLOAT": "f32", "DOUBLE": "f64", "COMPLEX64": "c64", "COMPLEX128": "c128",
}
NOT_ASKED = {"STRING": "no canonical name (a string is no number)"}

#: operator -> number of data operands asked (variadic ones with two)
OPS = {
    **dict.fromkeys(["Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "And", "Or", "Xor", "BitwiseAnd",
                     "BitwiseOr", "BitwiseXor", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
                     "Max", "Min", "Sum", "Mean", "MatMul", "Concat"], 2),
    **dict.fromkeys(["Abs", "Neg", "Sign", "Sqrt", "Exp", "Log", "Sin", "Floor", "Ceil", "Round", "Reciprocal",
                     "IsNaN", "IsInf", "Not", "BitwiseNot", "ReduceSum", "ReduceProd", "ReduceMean", "ReduceMax",
                     "ReduceMin", "ArgMax", "ArgMin", "CumSum"], 1),
    "Where": "where", "Clip": "clip",
}
ALIASES: dict[str, str] = {}
#: ONNX has no operator symbols of its own (`+` is an alias of Add in the rule files)
OPERATORS: dict = {}
#: the opset an operator of `OPS` came in, where that is after the first recorded opset (`has_op` checks it
#: against onnx.defs while recording)
SINCE = {"BitwiseAnd": 18, "BitwiseOr": 18, "BitwiseXor": 18, "BitwiseNot": 18}
#: attributes an operator requires, and the ones asked instead of a default that no type could pass
ATTRS = {"BitShift": {"direction": "LEFT"}, "Concat": {"axis": 0}}
SHAPE = [2, 2]
#: ternary operators: the leading operands asked (Where's condition and x; Clip's x and low, low being x's type or
#: one of CLIP_LOWS), every last operand for each
WHERE_CONDITIONS = ("bool", "i8", "f32")
CLIP_LOWS = ("bool", "i64", "f32")


def version() -> str | None:
    try:
        import onnx
    except ImportError:
        return None
    return onnx.__version__


def opset_of(ruleset: str) -> int:
    """The opset a ruleset name asks (`onnx@21` -> 21; plain `onnx`: the newest recorded)."""
    _, _, ver = ruleset.partition("@")
    return int(ver) if ver else OPSETS[-1]


def axis() -> list[str]:
    """Every ONNX element type with a canonical name that this `onnx` has, in TensorProto's order."""
    from onnx import TensorProto

    return [TYPES[name] for name in TensorProto.DataType.keys() if name in TYPES]


def _model(op: str, operands: list[str], opset: int):
    from onnx import TensorProto, TypeProto, helper

    code = {canonical: getattr(TensorProto, name) for name, canonical in TYPES.items() if hasattr(TensorProto, name)}
    inputs = [helper.make_tensor_value_info(f"x{i}", code[t], SHAPE) for i, t in enumerate(operands)]
    names = [f"x{i}" for i in range(len(operands))]
    inits = []
    if op == "CumSum":   # the axis is an input, not an operand: an int64 constant
        inits.append(helper.make_tensor("axis", TensorProto.INT64, [], [0]))
        names.append("axis")
    node = helper.make_node(op, names, ["y"], **ATTRS.get(op, {}))
    graph = helper.make_graph([node], op, inputs, [helper.make_value_info("y", TypeProto())], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)   # what ONNX Runtime reads
    return model


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r" in node \([^)]*\)", "", text)
    return f"{type(exc).__name__}: {text}"[:300].rstrip()


def ask(op: str, operands: list[str], opset: int, runtime: str) -> tuple[str | None, str | None]:
    """(result operand, None) or (None, refusal) for one operator over tensors of these types."""
    import onnx
    from onnx import helper

    model = _model(op, operands, opset)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as exc:  # noqa: BLE001 - every refusal is recorded, whatever its class
        return None, _first_line(exc)
    out = inferred.graph.output[0].type.tensor_type
    if not out.elem_type:
        return None, "ONNX infers no output type"
    name = helper.tensor_dtype_to_string(out.elem_type).removeprefix("TensorProto.")
    result = TYPES.get(name)
    if result is None:
        return None, f"the inferred output type {name} has no canonical name"
    form = "0d:" if out.HasField("shape") and len(out.shape.dim) == 0 else ""
    if runtime == "onnxruntime":
        import onnxruntime

        try:
            onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001
            return None, _first_line(exc)
    return form + result, None


def ops_for(ruleset: str) -> dict[str, int]:
    """The operators of `OPS` that the ruleset's opset has."""
    opset = opset_of(ruleset)
    return {op: arity for op, arity in OPS.items() if SINCE.get(op, 0) <= opset}


def leading(arity, types: list[str], where_conditions) -> list[list[str]]:
    """The leading operands of each row, as `opsweep.leading` gives them, but Clip's (x, low): low is x's own
    type or one of `CLIP_LOWS` (a mixed Clip is refused whatever the third type; ONNX has no Python scalars)."""
    if arity == CLIP:
        return [[x, low] for x in types for low in dict.fromkeys([x, *CLIP_LOWS])]
    return opsweep.leading(arity, types, where_conditions)


def asked(op: str, operands: list[str], options: dict) -> bool:
    """Every case of the recording is asked: ONNX has no Python scalars to leave out."""
    return True


def has_op(op: str, opset: int) -> bool:
    """Whether the opset has the operator (BitwiseAnd came in opset 18: onnx@13 does not know it)."""
    from onnx import defs

    try:
        defs.get_schema(op, opset, "")
    except defs.SchemaError:
        return False
    return True


def runtime_version() -> str | None:
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime.__version__


def record_ops(ruleset: str = "onnx@21") -> dict:
    """The op recording of one opset: every operator of `OPS` over the axis, in both runtimes."""
    from promote_cli.probes.opcases import Recorder

    opset = opset_of(ruleset)
    types = axis()
    rec = Recorder(types)
    runtimes = ["none"] + (["onnxruntime"] if runtime_version() else [])
    for op, arity in ops_for(ruleset).items():
        if has_op(op, opset) != (SINCE.get(op, 0) <= opset):
            raise AssertionError(f"onnx {version()}: {op} in opset {opset} is not as SINCE says")
        for runtime in runtimes:
            def asker(op, operands, runtime=runtime):
                return ask(op, operands, opset, runtime)

            for lead in leading(arity, types, WHERE_CONDITIONS):
                rec.row(op, {"runtime": runtime}, lead, asker)
    head = {"ruleset": f"onnx@{opset}", "package": PACKAGE, "version": version(), "probe": "promote_cli.probes.onnx",
            "onnxruntime": runtime_version(), "opset": opset, "not_asked": NOT_ASKED, "aliases": ALIASES}
    return rec.recording(head)


def record_for(ruleset: str) -> dict:
    """What `promote verify -f onnx@OPSET` compares: the op recording of that opset."""
    return record_ops(ruleset)


def record() -> dict:
    return record_for(f"onnx@{OPSETS[-1]}")


def _check_names() -> None:
    for canonical in TYPES.values():
        lookup(canonical)


def extra_checks() -> list:
    """`promote verify -f onnx` beyond the ruleset: `promote cast --semantics onnx` against the live library."""
    from promote_cli.probes.cast_semantics import live_check

    return [live_check("onnx")]


if __name__ == "__main__":
    from promote_cli.probes.opcases import write_op_recording

    _check_names()
    write_op_recording(record_ops(sys.argv[2] if len(sys.argv) > 2 else f"onnx@{OPSETS[-1]}"), sys.argv[1])
