"""`promote cast --semantics`: ml_dtypes, PyTorch and ONNX Runtime casts, bit-exact with the libraries'
recorded outputs (tests/data/recordings/cast-*, written by promote_cli.probes.cast_semantics)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from promote_cli.numerics import semantics
from promote_cli.probes import cast_semantics as probe
from promote_cli.vocab.numpy_types import numpy_dtype

RECORDINGS = Path(__file__).parent / "data" / "recordings"
DATA = {lib: probe.load(RECORDINGS / f"cast-{lib}") for lib in semantics.LIBRARIES}
CASES = [(lib, src, key) for lib in semantics.LIBRARIES for src in probe.SOURCES
         for key in DATA[lib][1][src].files if key != "input"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}->{c[2]}")
def test_bit_exact_with_recorded_library(case):
    lib, src, key = case
    dst, _, nosat = key.partition(":")
    z = DATA[lib][1][src]
    bits, expected = z["input"], z[key]
    y = semantics.library_cast(bits.view(numpy_dtype(src)), src, dst, lib, saturate=not nosat)
    got = y.view(expected.dtype)
    bad = got != expected
    assert not bad.any(), (f"{int(bad.sum())} of {bits.size} differ: inputs {[hex(int(b)) for b in bits[bad][:6]]}, "
                           f"{lib} {expected[bad][:6].tolist()}, ours {got[bad][:6].tolist()}")


def test_recordings_cover_the_known_conversions():
    for lib in semantics.LIBRARIES:
        manifest, data = DATA[lib]
        assert manifest["library"] == lib and manifest["version"]
        for src in semantics.SOURCES:
            outs = {k.partition(":")[0] for k in data[src].files if k != "input"}
            assert outs == set(semantics.DESTINATIONS) - {src}
