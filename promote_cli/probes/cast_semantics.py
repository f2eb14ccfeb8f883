"""Probe: how other libraries cast, recorded bit for bit (the truth behind `promote cast --semantics`).

The inputs are the TOSA CAST probe's (`promote_cli.probes.tosa.cast_inputs`): every bit pattern of the
16-bit floats, and for f32 specials, every output format's boundaries, exact ties with their neighbours,
integer-range edges and seeded random values. Each library casts them to every destination of `PAIRS`:

* ``ml_dtypes``: ``numpy.ndarray.astype`` with ml_dtypes' types (numpy and ml_dtypes installed);
* ``torch``: ``torch.Tensor.to(dtype)`` on CPU;
* ``onnx``: ONNX Runtime's CPU ``Cast`` (opset 21), once with ``saturate=1`` (the default) and, for fp8
  destinations, once with ``saturate=0`` (stored as ``<dst>:nosat``).

Out-of-range float -> integer follows the x86 conversion instructions in these libraries (C casts that the
language leaves undefined): the recording holds what this machine's CPU gave.

``python -m promote_cli.probes.cast_semantics LIBRARY DIR`` writes ``DIR/<src>.npz`` (``input``: the input
bit patterns; ``<dst>``: the outputs' bit patterns, floats as unsigned integers, integers as themselves)
and ``DIR/manifest.json``. The libraries are imported inside the functions only.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

#: the libraries a recording exists for
LIBRARIES = ("ml_dtypes", "torch", "onnx")

#: the conversions recorded: source -> destinations
SOURCES = ("f32", "f16", "bf16", "i8", "i16", "i32", "i64")
DESTINATIONS = ("f8e4m3", "f8e5m2", "bf16", "f16", "f32", "i8", "u8", "i16", "i32", "i64")
FP8 = ("f8e4m3", "f8e5m2")


def pairs() -> list[tuple[str, str]]:
    return [(s, d) for s in SOURCES for d in DESTINATIONS if s != d]


def _bits_dtype(t: str):
    """The numpy dtype a recording stores type `t`'s values in."""
    import numpy as np

    from promote_cli.vocab.dtypes import DTYPES

    d = DTYPES[t]
    if d.is_integer:
        return np.dtype(f"{'i' if d.kind == 'signed' else 'u'}{d.bits // 8}")
    return np.dtype(f"u{d.bits // 8}")


# --------------------------------------------------------------------------- the libraries


def _ml_dtypes(bits, src: str, dst: str, saturate: bool):
    from promote_cli.vocab.numpy_types import numpy_dtype

    import numpy as np

    with np.errstate(all="ignore"):
        y = bits.view(numpy_dtype(src)).astype(numpy_dtype(dst))
    return y.view(_bits_dtype(dst))


def _torch(bits, src: str, dst: str, saturate: bool):
    import numpy as np
    import torch

    types = {"f8e4m3": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2, "bf16": torch.bfloat16,
             "f16": torch.float16, "f32": torch.float32, "i8": torch.int8, "u8": torch.uint8,
             "i16": torch.int16, "i32": torch.int32, "i64": torch.int64}
    signed = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    n = bits.dtype.itemsize
    x = torch.from_numpy(bits.view(f"i{n}").copy()).view(types[src])
    y = x.to(types[dst])
    if dst in ("f8e4m3", "f8e5m2", "bf16", "f16", "f32"):
        m = _bits_dtype(dst).itemsize
        return y.view(signed[m]).numpy().view(_bits_dtype(dst)).copy()
    return y.numpy().copy()


def _onnx_session(src: str, dst: str, saturate: bool | None):
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper

    types = {"f8e4m3": T.FLOAT8E4M3FN, "f8e5m2": T.FLOAT8E5M2, "bf16": T.BFLOAT16, "f16": T.FLOAT16,
             "f32": T.FLOAT, "i8": T.INT8, "u8": T.UINT8, "i16": T.INT16, "i32": T.INT32, "i64": T.INT64}
    attrs = {} if saturate is None else {"saturate": int(saturate)}
    node = helper.make_node("Cast", ["x"], ["y"], to=types[dst], **attrs)
    graph = helper.make_graph([node], "cast", [helper.make_tensor_value_info("x", types[src], [None])],
                              [helper.make_tensor_value_info("y", types[dst], [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess, types


def _onnx(bits, src: str, dst: str, saturate: bool):
    """ONNX Runtime's Cast, through bound buffers (its numpy bridge has no bf16)."""
    import numpy as np
    import onnxruntime as ort

    sess, types = _onnx_session(src, dst, saturate if dst in FP8 else None)
    out = np.zeros(bits.shape, _bits_dtype(dst))
    b = sess.io_binding()
    b.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.ascontiguousarray(bits), types[src]))
    b.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_numpy_with_onnx_type(out, types[dst]))
    sess.run_with_iobinding(b)
    return out


RUN = {"ml_dtypes": _ml_dtypes, "torch": _torch, "onnx": _onnx}
#: the package whose version a recording names
PACKAGES = {"ml_dtypes": "ml_dtypes", "torch": "torch", "onnx": "onnxruntime"}


def version(library: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(PACKAGES[library])
    except metadata.PackageNotFoundError:
        return None


def outputs(library: str, src: str, bits) -> dict:
    """{array name: output bit patterns} of one library for one source's inputs."""
    arrays = {}
    for s, dst in pairs():
        if s != src:
            continue
        arrays[dst] = RUN[library](bits, src, dst, True)
        if library == "onnx" and dst in FP8:
            arrays[f"{dst}:nosat"] = RUN[library](bits, src, dst, False)
    return arrays


# --------------------------------------------------------------------------- recording


def record(library: str, directory) -> dict:
    """Record one library into `directory`; returns the manifest."""
    import numpy as np

    from promote_cli.probes.tosa import cast_inputs

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "library": library, "version": version(library), "probe": __name__,
        "python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
        "format": "one <src>.npz per source type: 'input' holds the input bit patterns (floats as unsigned "
                  "ints); '<dst>' the library's output bit patterns (floats as unsigned ints, integers as "
                  "themselves); ONNX Runtime's fp8 outputs with saturate=0 as '<dst>:nosat'",
        "sources": {},
    }
    for src in SOURCES:
        x = cast_inputs(src).view(_bits_dtype(src))
        arrays = {"input": x, **outputs(library, src, x)}
        np.savez_compressed(out_dir / f"{src}.npz", **arrays)
        manifest["sources"][src] = {"file": f"{src}.npz", "count": int(x.size),
                                    "outputs": [k for k in arrays if k != "input"]}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def load(directory) -> tuple[dict, dict]:
    """(manifest, {src: npz}) of a recording written by `record`."""
    import numpy as np

    d = Path(directory)
    manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    return manifest, {src: np.load(d / info["file"]) for src, info in manifest["sources"].items()}


def live_check(library: str) -> tuple[str, int, list[str]]:
    """`promote verify`'s check of `--semantics library`: the live library against
    `promote_cli.numerics.semantics.library_cast` on the recorded inputs, bit for bit (no check, said so in the
    title, where the library is not installed)."""
    import numpy as np

    from promote_cli.numerics.semantics import library_cast
    from promote_cli.probes.tosa import cast_inputs
    from promote_cli.vocab.numpy_types import numpy_dtype

    title = f"cast --semantics {library} vs {PACKAGES[library]} {version(library)}"
    if version(library) is None or (library == "ml_dtypes" and _missing("numpy")):
        return f"{title}: not installed, not checked", 0, []
    bad, n = [], 0
    for src in SOURCES:
        x = cast_inputs(src).view(_bits_dtype(src))
        for key, live in outputs(library, src, x).items():
            n += 1
            dst, _, nosat = key.partition(":")
            ours = library_cast(x.view(numpy_dtype(src)), src, dst, library, saturate=not nosat).view(live.dtype)
            differ = ours != live
            if differ.any():
                i = np.flatnonzero(differ)[:3]
                bad.append(f"{src} -> {key}: {int(differ.sum())} of {x.size} differ, e.g. input bits "
                           f"{[hex(int(b)) for b in x[i]]}: {library} {live[i].tolist()}, promote {ours[i].tolist()}")
    return f"{title} ({n} conversions)", n, bad


def _missing(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


def main(argv: list[str] | None = None) -> int:
    """python -m promote_cli.probes.cast_semantics LIBRARY DIR: record one library's casts."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m promote_cli.probes.cast_semantics", description=main.__doc__)
    parser.add_argument("library", choices=LIBRARIES)
    parser.add_argument("out", help="the directory to write (tests/data/recordings/cast-<library>)")
    args = parser.parse_args(argv)
    if version(args.library) is None:
        parser.error(f"{args.library} is not installed")
    record(args.library, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
