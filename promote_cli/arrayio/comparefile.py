"""`promote cast --compare FILE --to DTYPE`: how many of a `.npy` file's or a safetensors checkpoint's values each
library's cast semantics converts differently (`numerics/compare.py`), read a chunk at a time."""

from __future__ import annotations

import numpy as np

from promote_cli.errors import UsageError
from promote_cli.numerics.compare import ClassRow, Tally
from promote_cli.vocab.dtypes import DTYPES
from promote_cli.vocab.numpy_types import numpy_dtype


def compare_npy(path, to, from_=None, saturate: bool = True) -> tuple[str, str, list[ClassRow]]:
    """(source type, target type, rows): per value class, how many of a `.npy` file's values the semantics
    convert differently to `to`; the file is read a chunk at a time (memory stays bounded)."""
    from promote_cli.arrayio import npy
    from promote_cli.numerics.legality import dtype_name

    dst = dtype_name(to)
    with npy.NpyInput(path) as f:
        source = npy.resolve_source(f.header, None if from_ is None else dtype_name(from_))
        t = Tally(source.canonical, dst, saturate)
        for chunk in npy.ChunkReader(f.header, source, fd=f.fd):
            t.add(chunk)
    return source.canonical, dst, t.rows()


#: bytes of a tensor read at a time by `compare_checkpoint`
CHUNK_BYTES = 16 << 20


def compare_checkpoint(path, to, from_=None, saturate: bool = True) -> list[tuple[str, str, int, list[ClassRow]]]:
    """[(source type, target type, tensors, rows)]: per source type of a safetensors checkpoint (a file, or a
    directory of shards), per value class, how many of its tensors' values the semantics convert differently
    to `to`. The tensors compared are those of dtype `from_`, or else of every float type the semantics know;
    each is read `CHUNK_BYTES` at a time."""
    import os

    from promote_cli.arrayio import checkpoint
    from promote_cli.arrayio.files import open_regular
    from promote_cli.numerics.legality import dtype_name
    from promote_cli.numerics.semantics import SOURCES

    dst = dtype_name(to)
    want = {dtype_name(from_)} if from_ is not None else {s for s in SOURCES if DTYPES[s].kind == "float"}
    path = os.fspath(path)
    if path.lower().endswith(".npz"):
        raise UsageError(f"{path}: --compare reads .npy files and safetensors checkpoints, not .npz archives")
    files = [os.path.join(path, n) for n in checkpoint._directory(path)[0]] if os.path.isdir(path) else [path]
    tallies: dict[str, Tally] = {}
    tensors: dict[str, int] = {}
    for f in files:
        _, header, _ = checkpoint._read(f)
        fd, _ = open_regular(f)
        try:
            for t in header.tensors:
                if t.dtype not in want or t.dtype == dst:
                    continue
                tally = tallies.get(t.dtype) or tallies.setdefault(t.dtype, Tally(t.dtype, dst, saturate))
                tensors[t.dtype] = tensors.get(t.dtype, 0) + 1
                dt = numpy_dtype(t.dtype).newbyteorder("<")
                step = CHUNK_BYTES - CHUNK_BYTES % dt.itemsize
                for at in range(0, t.nbytes, step):
                    n = min(step, t.nbytes - at)
                    data = os.pread(fd, n, header.data_start + t.begin + at)
                    if len(data) != n:
                        raise UsageError(f"{f}: tensor {t.name!r} is truncated")
                    tally.add(np.frombuffer(data, dt).astype(dt.newbyteorder("=")))
        finally:
            os.close(fd)
    if not tallies:
        raise UsageError(f"{path}: no tensor of {', '.join(sorted(want))} to compare")
    return [(s, dst, tensors[s], tallies[s].rows()) for s in tallies]
