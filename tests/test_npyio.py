"""Safe streaming .npy reading and atomic writing (promote_cli.arrayio.npy)."""

from __future__ import annotations

import os
import tracemalloc

import ml_dtypes
import numpy as np
import pytest
from numpy.lib import format as npformat

from promote_cli.arrayio import npy as npyio
from promote_cli.errors import UsageError


def _save_with_version(path, arr, version):
    """Write `arr` with an explicit .npy header version (1.0, 2.0 or 3.0), laid out as
    numpy.lib.format describes it (magic, version, little-endian header length, header)."""
    fortran = arr.flags.f_contiguous and not arr.flags.c_contiguous
    d = {"descr": npformat.dtype_to_descr(arr.dtype), "fortran_order": fortran, "shape": arr.shape}
    text = repr(d).encode("utf-8" if version >= (3, 0) else "latin-1") + b"\n"
    length = len(text).to_bytes(2 if version == (1, 0) else 4, "little")
    with open(path, "wb") as fp:
        fp.write(b"\x93NUMPY" + bytes(version) + length + text)
        fp.write(arr.ravel(order="F" if fortran else "C").tobytes())


def _leftovers(directory):
    return [n for n in os.listdir(directory) if npyio.TEMP_MARK in n]


# --------------------------------------------------------------------------- header variants

ARRAYS = {
    "f32-little": np.arange(24, dtype="<f4").reshape(2, 3, 4) / 7,
    "f32-big": (np.arange(24, dtype=">f4") / 7).reshape(4, 6),
    "i16-big": np.arange(-50, 50, dtype=">i2"),
    "c64-big": (np.arange(6) + 1j).astype(">c8"),
    "u64": np.array([0, 2**64 - 1, 12345], dtype="<u8"),
    "bool": np.array([[True, False], [False, True]]),
    "fortran": np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),
    "fortran-big": np.asfortranarray(np.arange(12, dtype=">f8").reshape(3, 4)),
    "0d": np.array(3.5, dtype=np.float16),
    "empty": np.zeros((0, 3), dtype=np.float32),
    "empty-1d": np.zeros(0, dtype=np.int8),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_read_matches_numpy(tmp_path, name):
    arr = ARRAYS[name]
    p = tmp_path / "a.npy"
    np.save(p, arr)
    h = npyio.read_header(p)
    assert h.shape == arr.shape
    assert h.dtype == np.load(p).dtype
    got = npyio.read_npy(p)
    ref = np.load(p, allow_pickle=False)
    assert got.shape == ref.shape
    assert got.dtype.isnative
    assert np.array_equal(got, ref)
    assert h.fortran_order == (arr.flags.f_contiguous and not arr.flags.c_contiguous and arr.ndim > 1)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_header_versions(tmp_path, version):
    arr = np.arange(10, dtype=">f4").reshape(2, 5)
    p = tmp_path / "v.npy"
    _save_with_version(p, arr, version)
    h = npyio.read_header(p)
    assert h.version == version
    assert np.array_equal(npyio.read_npy(p), np.load(p))


def test_bf16_saved_by_numpy_needs_from(tmp_path):
    arr = np.array([1.5, -2.0, 3.0e38, np.nan], dtype=ml_dtypes.bfloat16)
    p = tmp_path / "b.npy"
    np.save(p, arr)  # numpy stores it as '<V2'
    assert npyio.read_header(p).dtype.type is np.void
    with pytest.raises(UsageError, match="--from"):
        npyio.resolve_source(npyio.read_header(p))
    got = npyio.read_npy(p, from_="bf16")
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    assert got.view(np.uint16).tolist() == arr.view(np.uint16).tolist()


@pytest.mark.parametrize("store", ["<u2", ">u2", "<i2"])
def test_from_reinterprets_integer_storage(tmp_path, store):
    bits = np.array([0x3FC0, 0xC000, 0x7F80, 0x0001], dtype=np.uint16)  # 1.5, -2, inf, tiny
    p = tmp_path / "u.npy"
    np.save(p, bits.astype(store))
    got = npyio.read_npy(p, from_="bf16")
    assert got.view(np.uint16).tolist() == bits.tolist()


def test_fp8_as_v1_and_u1(tmp_path):
    x = np.array([0.5, -448, 3], dtype=ml_dtypes.float8_e4m3fn)
    p = tmp_path / "f8.npy"
    np.save(p, x)  # '|V1'
    assert npyio.read_npy(p, from_="f8e4m3").view(np.uint8).tolist() == x.view(np.uint8).tolist()
    np.save(p, x.view(np.uint8))
    assert npyio.read_npy(p, from_="f8e4m3").view(np.uint8).tolist() == x.view(np.uint8).tolist()


def test_e5m2_saved_by_numpy_reads_without_from(tmp_path):
    # np.save writes float8_e5m2 with descr '<f1', which np.load itself cannot read back.
    x = np.array([1, -2, 57344], dtype=ml_dtypes.float8_e5m2)
    p = tmp_path / "e5.npy"
    np.save(p, x)
    got = npyio.read_npy(p)
    assert got.dtype == np.dtype(ml_dtypes.float8_e5m2)
    assert got.view(np.uint8).tolist() == x.view(np.uint8).tolist()


def test_from_checks_width_and_kind(tmp_path):
    p = tmp_path / "f.npy"
    np.save(p, np.zeros(3, np.float32))
    with pytest.raises(UsageError, match="2-byte"):
        npyio.read_npy(p, from_="bf16")
    np.save(p, np.zeros(3, np.float16))
    with pytest.raises(UsageError, match="reinterprets raw bits"):
        npyio.read_npy(p, from_="bf16")
    assert npyio.read_npy(p, from_="f16").dtype == np.float16  # naming the stored type is fine


# --------------------------------------------------------------------------- refusals


def test_pickled_object_array_refused(tmp_path):
    p = tmp_path / "o.npy"
    np.save(p, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(UsageError, match="Python objects"):
        npyio.read_header(p)


@pytest.mark.parametrize(
    "arr,match",
    [
        (np.zeros(2, dtype=[("a", "<f4"), ("b", "<i2")]), "structured"),
        (np.array(["x", "y"]), "not numbers"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "not numbers"),
    ],
)
def test_non_numeric_refused(tmp_path, arr, match):
    p = tmp_path / "s.npy"
    np.save(p, arr)
    with pytest.raises(UsageError, match=match):
        npyio.read_header(p)


def test_garbage_and_truncated_refused(tmp_path):
    p = tmp_path / "g.npy"
    p.write_bytes(b"hello world, not an array")
    with pytest.raises(UsageError, match="not a .npy file"):
        npyio.read_header(p)
    np.save(p, np.arange(100, dtype=np.float64))
    data = p.read_bytes()
    p.write_bytes(data[:-8])
    with pytest.raises(UsageError, match="truncated"):
        npyio.read_header(p)
    p.write_bytes(data[:40])
    with pytest.raises(UsageError):
        npyio.read_header(p)
    with pytest.raises(UsageError):
        npyio.read_header(tmp_path / "missing.npy")


def test_header_that_is_code_is_not_evaluated(tmp_path):
    p = tmp_path / "evil.npy"
    header = "{'descr': __import__('os').system('false'), 'fortran_order': False, 'shape': (1,), }"
    header = header.ljust(118) + "\n"
    p.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\0" * 8)
    with pytest.raises(UsageError, match="invalid .npy header"):
        npyio.read_header(p)


# --------------------------------------------------------------------------- writing


@pytest.mark.parametrize("name", ["bf16", "f8e4m3", "f8e5m2", "i4", "f16"])
def test_written_narrow_types_load_back_with_numpy(tmp_path, name):
    from promote_cli.vocab.numpy_types import numpy_dtype

    dt = numpy_dtype(name)
    x = np.arange(-3, 3).astype(dt).reshape(2, 3)
    x = np.asfortranarray(x)
    p = tmp_path / "w.npy"
    npyio.write_npy(p, x)
    loaded = np.load(p, allow_pickle=False)
    assert loaded.dtype == dt
    assert loaded.flags.f_contiguous
    assert loaded.astype(np.float32).tolist() == x.astype(np.float32).tolist()
    # and our reader needs no --from for them
    assert npyio.read_npy(p).dtype == dt


def test_written_header_is_numpys_layout(tmp_path):
    for shape, fortran, dt in [((64, 33), False, np.float16), ((), False, np.int8), ((0, 3), True, np.uint64)]:
        b = npyio.header_bytes(shape, fortran, np.dtype(dt))
        assert b[6:8] == b"\x01\x00" and len(b) % 64 == 0 and b.endswith(b"\n")
        p = tmp_path / "h.npy"
        p.write_bytes(b + bytes(int(np.prod(shape)) * np.dtype(dt).itemsize))
        with open(p, "rb") as fp:
            version = npformat.read_magic(fp)
            assert npformat.read_array_header_1_0(fp) == (shape, fortran, np.dtype(dt))
        assert version == (1, 0)
        h = npyio.read_header(p)
        assert (h.shape, h.fortran_order, h.dtype) == (shape, fortran, np.dtype(dt))


def test_more_dimensions_than_numpy_holds_are_refused(tmp_path):
    shape = (1,) * (npyio.MAX_DIMS + 1)
    with pytest.raises(ValueError, match="dimensions"):
        npyio.header_bytes(shape, False, np.dtype(np.float32))
    npyio.header_bytes(shape[1:], False, np.dtype(np.float32))  # the limit itself is fine


def test_atomic_output_exception_leaves_nothing(tmp_path):
    dst = tmp_path / "out.npy"
    with pytest.raises(RuntimeError):
        with npyio.atomic_output(dst) as fp:
            fp.write(b"partial")
            raise RuntimeError("boom")
    assert not dst.exists()
    assert _leftovers(tmp_path) == []


def test_atomic_output_keyboard_interrupt_keeps_old_file(tmp_path):
    dst = tmp_path / "out.npy"
    dst.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with npyio.atomic_output(dst, force=True) as fp:
            fp.write(b"new partial")
            raise KeyboardInterrupt
    assert dst.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_atomic_output_force_and_existing(tmp_path):
    dst = tmp_path / "out.npy"
    dst.write_bytes(b"old")
    with pytest.raises(UsageError, match="--force"):
        with npyio.atomic_output(dst) as fp:
            fp.write(b"new")
    assert dst.read_bytes() == b"old"
    with npyio.atomic_output(dst, force=True) as fp:
        fp.write(b"new")
    assert dst.read_bytes() == b"new"
    assert _leftovers(tmp_path) == []


def test_atomic_output_never_replaces_protected_input(tmp_path):
    src = tmp_path / "in.npy"
    src.write_bytes(b"input")
    link = tmp_path / "link.npy"
    link.symlink_to(src)
    hard = tmp_path / "hard.npy"
    os.link(src, hard)
    for dst in (src, link, hard, tmp_path / "." / "in.npy"):
        with pytest.raises(UsageError, match="input"):
            with npyio.atomic_output(dst, force=True, protect=(src,)) as fp:
                fp.write(b"x")
    assert src.read_bytes() == b"input"
    assert _leftovers(tmp_path) == []


# --------------------------------------------------------------------------- streaming


def test_chunks_are_bounded_and_complete(tmp_path):
    arr = np.arange(300_001, dtype=">f4")
    p = tmp_path / "big.npy"
    np.save(p, arr)
    h = npyio.read_header(p)
    r = npyio.ChunkReader(h, npyio.resolve_source(h), chunk_bytes=64 << 10)
    parts = [c.copy() for c in r]
    assert r.largest_chunk_bytes <= 64 << 10
    assert len(parts) == -(-arr.nbytes // (64 << 10))
    assert np.array_equal(np.concatenate(parts), arr)


def test_streaming_memory_is_bounded(tmp_path):
    n = 4 << 20  # 16 MiB of f32
    p = tmp_path / "m.npy"
    with open(p, "wb") as fp:
        fp.write(npyio.header_bytes((n,), False, np.dtype(np.float32)))
        block = np.arange(1 << 20, dtype=np.float32)
        for _ in range(4):
            fp.write(block.tobytes())
    h = npyio.read_header(p)
    reader = npyio.ChunkReader(h, npyio.resolve_source(h), chunk_bytes=256 << 10)
    tracemalloc.start()
    try:
        count, last = 0, None
        for c in reader:
            count += c.size
            last = float(c[-1])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, last) == (n, float((1 << 20) - 1))
    assert peak < 2 << 20, f"peak {peak} bytes while streaming a {n * 4} byte file"


@pytest.mark.parametrize("keep", [1, 3])
def test_prefetched_chunks_equal_plain_chunks(tmp_path, keep):
    arr = np.arange(100_003, dtype=">i4")
    p = tmp_path / "p.npy"
    np.save(p, arr)
    h = npyio.read_header(p)
    plain = [c.copy() for c in npyio.ChunkReader(h, npyio.resolve_source(h), chunk_bytes=8 << 10)]
    reader = npyio.ChunkReader(h, npyio.resolve_source(h), chunk_bytes=8 << 10)
    window, ahead = [], []
    for chunk in reader.prefetched(keep=keep):
        ahead.append(chunk)
        window.append(chunk.copy())
        if len(ahead) > keep:  # a chunk stays valid while `keep` more are asked for
            assert np.array_equal(ahead.pop(0), window[-keep - 1])
    assert len(window) == len(plain)
    assert all(np.array_equal(a, b) for a, b in zip(window, plain))


def test_prefetched_reports_a_truncated_file(tmp_path):
    p = tmp_path / "cut.npy"
    np.save(p, np.arange(50_000, dtype="<f4"))
    h = npyio.read_header(p)
    with open(p, "r+b") as fp:  # the file shrinks after its header was read
        fp.truncate(p.stat().st_size - 1000)
    with pytest.raises(Exception, match="truncated"):
        for _ in npyio.ChunkReader(h, npyio.resolve_source(h), chunk_bytes=8 << 10).prefetched():
            pass
