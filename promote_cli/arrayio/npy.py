"""Safe, streaming `.npy` reading and the `.npy` header format.

Reading never unpickles and never trusts the header: a file is opened only if it is a
regular file (`files.open_regular`), and its header and data are read through that one
open descriptor, so a file replaced meanwhile cannot mix into the data. The header is
parsed by a bounded literal parser (`literal.parse`, linear time, limited depth) and
validated as NumPy would and stricter (`validate_header`): exactly the keys `descr`,
`fortran_order` and `shape`; a shape that is a tuple of at most `MAX_DIMS` non-negative
ints (not bools) whose byte count fits in an `intp`; a `fortran_order` that is a bool; a
`descr` that is a simple dtype string. The file must hold exactly the data the header
promises: fewer bytes is "truncated", more is refused too (several arrays written one
after the other into one file, or a header that lies about the shape). The data is read a
chunk at a time into reusable buffers, so memory stays bounded whatever the file size,
and the file's size and times are checked again after the last chunk: a file changed in
place while it was read is an error, never a mixed output. Object, structured and
sub-array dtypes are refused.

Types numpy itself lacks (bf16, the fp8 formats, int4, ...) come from ml_dtypes.
Output files name them in the header by their ml_dtypes type name
(`'descr': 'bfloat16'`), which `np.dtype()` resolves once ml_dtypes is imported, so
`np.load` gives back the right dtype and `promote cast` reads them without
`--from`. Files written by `np.save` hold such arrays as raw bytes (`|V2`, `|V1`)
or, for float8_e5m2, as the unloadable `'<f1'`; `--from DTYPE` (the `from_`
argument here) says what the stored bits are.

Writing (atomic, never replacing anything but a regular file) is `atomic.py`'s; its
names are re-exported here.
"""

from __future__ import annotations

import os
import re
import struct
import warnings
from typing import Iterator

import ml_dtypes  # noqa: F401  (registers bfloat16, float8_* ... with numpy)
import numpy as np

from promote_cli.arrayio import literal
from promote_cli.arrayio.atomic import (  # noqa: F401  (re-exported)
    TEMP_MARK,
    OutputTarget,
    Terminated,
    atomic_output,
    check_interrupted,
    check_output,
    install_sigterm_handler,
    restore_handlers,
    same_file,
)
from promote_cli.arrayio.files import FileId, open_regular, os_message, pread_into
from promote_cli.errors import UsageError
from promote_cli.records import Record

#: Upper bound of one chunk's input bytes when streaming.
DEFAULT_CHUNK_BYTES = 4 << 20

#: The most dimensions an array may have: NumPy's own limit (64 since NumPy 2, 32 before).
MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32

#: The longest header text read (NumPy itself refuses more than 10,000 bytes by default).
MAX_HEADER_SIZE = 1 << 16

_MAGIC = b"\x93NUMPY"
_HEADER_KEYS = frozenset({"descr", "fortran_order", "shape"})
_LENGTH_FORMAT = {(1, 0): "<H", (2, 0): "<I", (3, 0): "<I"}
_ALIGN = 64
_MAX_BYTES = int(np.iinfo(np.intp).max)
# A simple dtype string: an optional byte order and a type code or name ('<f4', '|V2',
# 'bfloat16', 'float8_e4m3fn', '<M8[D]' to be refused by kind); no commas or parentheses
# (structured and sub-array syntax).
_SIMPLE_DESCR = re.compile(r"[<>|=]?[A-Za-z][A-Za-z0-9_]{0,31}(\[[0-9]{0,4}[A-Za-z]{1,2}\])?")
# Descrs numpy writes for ml_dtypes arrays but cannot read back.
_UNREADABLE_DESCRS = {"<f1": "float8_e5m2", "|f1": "float8_e5m2", ">f1": "float8_e5m2"}


# --------------------------------------------------------------------------- dtypes


def _numpy_dtype(canonical: str) -> np.dtype:
    from promote_cli.vocab.numpy_types import numpy_dtype

    return np.dtype(numpy_dtype(canonical))


def _canonical_of(dt: np.dtype) -> str:
    from promote_cli.vocab.numpy_types import canonical_of

    return canonical_of(dt)


def descr_of(dt: np.dtype) -> str:
    """The header `descr` for an output dtype (native byte order).

    numpy's own types use numpy's descr ('<f2'); ml_dtypes types (bf16, fp8, int4,
    ...) use their type name, which `np.dtype()` accepts once ml_dtypes is imported.
    """
    dt = np.dtype(dt)
    if dt.type.__module__ == "numpy" and dt.kind in "biufc" and dt.names is None and dt.subdtype is None:
        return dt.str
    name = getattr(dt.type, "__name__", "")
    try:
        if name and np.dtype(name) == dt:
            return name
    except TypeError:
        pass
    raise UsageError(f"cannot write dtype {dt} to a .npy file")


def _dtype_of_descr(descr: str) -> np.dtype:
    """np.dtype(descr), or a ValueError; never a warning turned error, never another exception."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.dtype(descr)
        except Exception as e:  # np.dtype raises TypeError, ValueError, SyntaxError, ...
            raise ValueError(f"descr {descr!r} is not a dtype") from e


# --------------------------------------------------------------------------- header


class NpyHeader(Record, frozen=True):
    """What the header of a `.npy` file says, and where its data starts."""

    path: str
    version: tuple[int, int]
    shape: tuple[int, ...]
    fortran_order: bool
    dtype: np.dtype  # as stored (byte order included); may be |V1/|V2
    offset: int  # where the data starts
    file_size: int
    descr: str = ""  # the raw descr text when numpy could not resolve it
    ident: FileId | None = None  # the file the header was read from

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


def check_shape(shape, itemsize: int) -> tuple[int, ...]:
    """`shape` if it is one NumPy can hold: a tuple of at most MAX_DIMS non-negative ints
    (bools are not ints here) whose element count times `itemsize` fits in an intp;
    otherwise a ValueError saying what is wrong."""
    if not isinstance(shape, tuple):
        raise ValueError(f"shape is a {type(shape).__name__}, not a tuple")
    if len(shape) > MAX_DIMS:
        raise ValueError(f"shape has {len(shape)} dimensions; at most {MAX_DIMS}")
    n = max(itemsize, 1)
    for d in shape:
        if type(d) is not int:
            raise ValueError(f"shape holds {d!r}, not an integer")
        if d < 0:
            raise ValueError(f"shape holds the negative size {d}")
        n *= d
        if n > _MAX_BYTES:
            raise ValueError("shape holds more bytes than an array can address")
    return shape


def validate_header(d) -> tuple[tuple[int, ...], bool, np.dtype, str]:
    """Check a parsed header dict; (shape, fortran_order, dtype, raw descr or '').

    A ValueError says what is wrong; a `UsageError` refuses a well-formed header of a
    dtype that cannot be cast (objects, structured, strings, dates).
    """
    if not isinstance(d, dict):
        raise ValueError(f"the header is a {type(d).__name__}, not a dict")
    if set(d) != _HEADER_KEYS:
        keys = ", ".join(sorted(repr(k) for k in d))
        raise ValueError(f"the header holds the keys {{{keys}}}, not exactly 'descr', 'fortran_order', 'shape'")
    fortran = d["fortran_order"]
    if not isinstance(fortran, bool):
        raise ValueError(f"fortran_order is {fortran!r}, not True or False")
    descr = d["descr"]
    raw = ""
    if isinstance(descr, (list, tuple)):
        raise UsageError("holds a structured dtype; only plain numeric arrays can be cast")
    if not isinstance(descr, str):
        raise ValueError(f"descr is a {type(descr).__name__}, not a dtype string")
    if not _SIMPLE_DESCR.fullmatch(descr):
        raise ValueError(f"descr {descr[:40]!r} is not a simple dtype")
    if descr in _UNREADABLE_DESCRS:
        raw = descr
        dtype = np.dtype(_UNREADABLE_DESCRS[descr])
    else:
        dtype = _dtype_of_descr(descr)
    if dtype.hasobject:
        raise UsageError("holds Python objects (a pickled array); refusing to read it")
    if dtype.names is not None or dtype.subdtype is not None:
        raise UsageError(f"holds a structured dtype {dtype}; only plain numeric arrays can be cast")
    if dtype.kind in "USMmO":
        raise UsageError(f"holds {dtype} values, not numbers")
    if dtype.itemsize == 0:
        raise ValueError(f"descr {descr!r} has zero-byte elements")
    shape = check_shape(d["shape"], dtype.itemsize)
    return shape, fortran, dtype, raw


def _read_exact_at(fd: int, offset: int, n: int, path: str) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        r = pread_into(fd, view[got:], offset + got)
        if not r:
            break
        got += r
    return bytes(buf[:got])


def parse_header(fd: int, path: str, st: os.stat_result) -> NpyHeader:
    """Read and validate the header of the open regular file `fd` (stat `st`)."""
    return header_of(lambda offset, n: _read_exact_at(fd, offset, n, path), path, st.st_size, FileId.of(st))


def header_of(read_at, path: str, size: int, ident: FileId | None = None) -> NpyHeader:
    """Read and validate the header of `.npy` data of `size` bytes: `read_at(offset, n)` gives up to `n` bytes
    at `offset`, asked for in order, each read starting where the last one ended (so a stream, such as a
    member of a `.npz` file, can answer it), the last one ending where the data starts."""
    try:
        head = read_at(0, len(_MAGIC) + 2)
        if head[: len(_MAGIC)] != _MAGIC:
            raise UsageError(f"{path}: not a .npy file (no NUMPY magic)")
        if len(head) < len(_MAGIC) + 2:
            raise UsageError(f"{path}: not a .npy file: truncated header")
        version = (head[6], head[7])
        fmt = _LENGTH_FORMAT.get(version)
        if fmt is None:
            raise UsageError(f"{path}: unsupported .npy format version {version[0]}.{version[1]}")
        lsize = struct.calcsize(fmt)
        raw_len = read_at(8, lsize)
        if len(raw_len) < lsize:
            raise UsageError(f"{path}: not a .npy file: truncated header")
        (hlen,) = struct.unpack(fmt, raw_len)
        if hlen > MAX_HEADER_SIZE:
            raise UsageError(f"{path}: invalid .npy header: {hlen} bytes long (at most {MAX_HEADER_SIZE})")
        offset = 8 + lsize + hlen
        raw = read_at(8 + lsize, hlen)
    except OSError as e:
        raise UsageError(f"{path}: {os_message(e)}") from None
    if len(raw) < hlen:
        raise UsageError(f"{path}: not a .npy file: truncated header")
    try:
        text = raw.decode("utf-8" if version >= (3, 0) else "latin-1")
        d = literal.parse(text)
        shape, fortran, dtype, descr = validate_header(d)
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from None
    except (ValueError, UnicodeDecodeError) as e:  # LiteralError is a ValueError
        raise UsageError(f"{path}: invalid .npy header: {e}") from None
    header = NpyHeader(path, version, shape, fortran, dtype, offset, size, descr, ident)
    have = size - offset
    if header.nbytes > have:
        raise UsageError(
            f"{path}: truncated: the header promises {header.nbytes} data bytes, the file holds {have}"
        )
    if header.nbytes < have:
        raise UsageError(
            f"{path}: {have - header.nbytes} bytes after the {header.nbytes} data bytes the header promises "
            f"(a header that lies about the shape, or several arrays in one file); refusing to guess"
        )
    return header


class NpyInput:
    """An open `.npy` input: the descriptor every read goes through, and its header.

    Use as a context manager; `close()` closes the descriptor."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.fd, st = open_regular(self.path)
        try:
            self.header = parse_header(self.fd, self.path, st)
        except BaseException:
            os.close(self.fd)
            raise

    @property
    def ident(self) -> FileId:
        return self.header.ident

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> NpyInput:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_header(path: str | os.PathLike) -> NpyHeader:
    """Parse and validate the header of the `.npy` file at `path`.

    Raises UsageError for anything that is not a plain numeric array file of exactly the
    size its header promises: pickled/object arrays, structured dtypes, strings, bad or
    lying headers, truncated data, a FIFO, a device or a directory.
    """
    with NpyInput(path) as f:
        return f.header


# --------------------------------------------------------------------------- source dtype


class Source(Record, frozen=True):
    """How to turn stored bytes into native arrays of a canonical dtype."""

    canonical: str
    stored: np.dtype  # dtype to view the raw bytes with (byte order included)
    native: np.dtype  # dtype of the arrays handed out
    swap: bool  # bytes must be swapped first


def resolve_source(header: NpyHeader, from_: str | None = None) -> Source:
    """Decide the canonical source dtype of a file, honouring `--from`."""
    st = header.dtype
    swap = st.byteorder == ">" if np.little_endian else st.byteorder == "<"
    native_st = st.newbyteorder("=") if swap else st
    raw_void = st.type is np.void
    if from_ is None:
        if raw_void:
            raise UsageError(
                f"{header.path}: holds raw {st.itemsize}-byte values ({st.str}); say what they "
                f"are with --from (e.g. --from bf16 for |V2, --from f8e4m3 for |V1)"
            )
        try:
            canonical = _canonical_of(native_st)
        except (UsageError, KeyError, TypeError, ValueError):
            raise UsageError(f"{header.path}: dtype {st} is not a numeric type promote knows") from None
        return Source(canonical, st, native_st, swap)
    want = _numpy_dtype(from_)
    if want.itemsize != st.itemsize:
        raise UsageError(
            f"{header.path}: --from {from_} needs {want.itemsize}-byte elements, "
            f"the file stores {st.itemsize}-byte {st}"
        )
    same = native_st == want
    raw = raw_void or (st.type.__module__ == "numpy" and st.kind in "ui")
    if not (same or raw):
        raise UsageError(
            f"{header.path}: --from {from_} reinterprets raw bits (|V, uint or int storage); "
            f"the file already holds {st}"
        )
    # For a byte-ordered integer store, swap to native first, then view as `want`.
    return Source(from_, st, want, swap)


# --------------------------------------------------------------------------- reading


class ChunkReader:
    """Iterate over the data of a `.npy` file as native arrays, a chunk at a time.

    Each chunk is a 1-D view on one reusable buffer (or a byte-swapped copy of it):
    consume it before asking for the next. The element order is the file's (C or
    Fortran flat order). `largest_chunk_bytes` records the biggest read done.

    Reads go through `fd` (the descriptor the header was read from, `NpyInput.fd`) with
    positioned reads; without one the path is opened again and must still be the file the
    header was read from. After the last chunk the file's size and times are checked
    against the header's: a file changed while it was read is an error.
    """

    def __init__(self, header: NpyHeader, source: Source, chunk_bytes: int = DEFAULT_CHUNK_BYTES, fd: int | None = None,
                 start: int = 0, stop: int | None = None):
        self.header = header
        self.source = source
        self.fd = fd
        item = max(header.dtype.itemsize, 1)
        self.chunk_elems = max(1, chunk_bytes // item)
        self.largest_chunk_bytes = 0
        # the elements start..stop of the file (in its order): all of them unless told
        self.start = start
        self.stop = header.count if stop is None else stop

    def _open(self) -> tuple[int, bool]:
        """The descriptor to read from, and whether it is ours to close."""
        if self.fd is not None:
            return self.fd, False
        fd, st = open_regular(self.header.path)
        ident = self.header.ident
        if ident is not None and (st.st_dev, st.st_ino) != ident.key:
            os.close(fd)
            raise UsageError(f"{self.header.path}: was replaced after its header was read")
        return fd, True

    def _read_exact(self, fd: int, view: memoryview, nbytes: int, offset: int) -> None:
        """Fill view[:nbytes] from the file at `offset`; a short file is a UsageError."""
        got = 0
        while got < nbytes:
            try:
                r = pread_into(fd, view[got:nbytes], offset + got)
            except OSError as e:
                raise UsageError(f"{self.header.path}: cannot read: {os_message(e)}") from None
            if not r:
                raise UsageError(f"{self.header.path}: truncated while reading data (changed while being read?)")
            got += r

    def _check_unchanged(self, fd: int) -> None:
        ident = self.header.ident
        if ident is None:
            return
        try:
            now = FileId.of(os.fstat(fd))
        except OSError as e:
            raise UsageError(f"{self.header.path}: cannot read: {os_message(e)}") from None
        if now != ident:
            raise UsageError(f"{self.header.path}: changed while being read; nothing written from it")

    def _native(self, buf, n: int) -> np.ndarray:
        """The first n stored elements of buf as a native-order array of the source dtype."""
        s = self.source
        self.largest_chunk_bytes = max(self.largest_chunk_bytes, n * self.header.dtype.itemsize)
        arr = np.frombuffer(buf, dtype=s.stored, count=n)
        if s.swap:
            arr = arr.byteswap().view(arr.dtype.newbyteorder("="))
        if arr.dtype != s.native:
            arr = arr.view(s.native)
        return arr

    def __iter__(self) -> Iterator[np.ndarray]:
        h = self.header
        remaining = self.stop - self.start
        item = h.dtype.itemsize
        fd, own = self._open()
        try:
            if remaining:
                buf = bytearray(min(remaining, self.chunk_elems) * item)
                view = memoryview(buf)
                pos = h.offset + self.start * item
                while remaining:
                    n = min(remaining, self.chunk_elems)
                    self._read_exact(fd, view, n * item, pos)
                    pos += n * item
                    if n == remaining:
                        self._check_unchanged(fd)
                    yield self._native(buf, n)
                    remaining -= n
            else:
                self._check_unchanged(fd)
        finally:
            if own:
                os.close(fd)

    def prefetched(self, keep: int = 1) -> Iterator[np.ndarray]:
        """Like iterating, but a background thread reads ahead into reused buffers while
        the caller works on the current chunk (file reads release the GIL). Each chunk
        stays valid until `keep` more chunks have been asked for. Errors of the
        reading thread (a truncated file) are raised here; closing the generator early
        stops the thread."""
        import queue
        import threading
        from collections import deque

        h = self.header
        item = h.dtype.itemsize
        count = self.stop - self.start
        if count == 0:
            yield from self
            return
        fd, own = self._open()
        nbytes = min(count, self.chunk_elems) * item
        free: queue.Queue = queue.Queue()
        ready: queue.Queue = queue.Queue()
        keep = max(1, keep)
        for _ in range(keep + 1):
            free.put(bytearray(nbytes))
        stop = threading.Event()

        def read() -> None:
            try:
                remaining = count
                pos = h.offset + self.start * item
                while remaining:
                    buf = free.get()
                    if buf is None or stop.is_set():
                        return
                    n = min(remaining, self.chunk_elems)
                    self._read_exact(fd, memoryview(buf), n * item, pos)
                    pos += n * item
                    if n == remaining:
                        self._check_unchanged(fd)
                    ready.put((buf, n))
                    remaining -= n
                ready.put(None)
            except BaseException as e:  # handed to the consumer
                ready.put(e)

        thread = threading.Thread(target=read, name="promote-npy-reader", daemon=True)
        thread.start()
        held: deque = deque()
        try:
            while True:
                while len(held) >= keep:
                    free.put(held.popleft())
                got = ready.get()
                if got is None:
                    return
                if isinstance(got, BaseException):
                    raise got
                buf, n = got
                held.append(buf)
                yield self._native(buf, n)
        finally:
            stop.set()
            free.put(None)
            thread.join()
            if own:
                os.close(fd)


def read_npy(path: str | os.PathLike, from_: str | None = None) -> np.ndarray:
    """Read a whole `.npy` file safely (small files: tests, the Python API)."""
    with NpyInput(path) as f:
        h = f.header
        s = resolve_source(h, from_)
        out = np.empty(h.count, dtype=s.native)
        pos = 0
        for chunk in ChunkReader(h, s, fd=f.fd):
            out[pos : pos + chunk.size] = chunk
            pos += chunk.size
    return out.reshape(h.shape, order="F" if h.fortran_order else "C")


# --------------------------------------------------------------------------- writing


def header_bytes(shape: tuple[int, ...], fortran_order: bool, dtype: np.dtype) -> bytes:
    """A complete `.npy` header (magic included) for the given array metadata, as NumPy
    writes it (version 1.0, or 2.0 when longer than 65535 bytes; padded with spaces and a
    newline to a multiple of 64 bytes). The shape is checked as a header read is."""
    dtype = np.dtype(dtype)
    shape = check_shape(tuple(int(d) if not isinstance(d, bool) else d for d in shape), dtype.itemsize)
    text = f"{{'descr': {descr_of(dtype)!r}, 'fortran_order': {bool(fortran_order)!r}, 'shape': {shape!r}, }}"
    body = text.encode("latin-1")
    for version, fmt in (((1, 0), "<H"), ((2, 0), "<I")):
        lsize = struct.calcsize(fmt)
        pad = -(len(_MAGIC) + 2 + lsize + len(body) + 1) % _ALIGN
        hlen = len(body) + pad + 1
        if hlen < 1 << (8 * lsize):
            return _MAGIC + bytes(version) + struct.pack(fmt, hlen) + body + b" " * pad + b"\n"
    raise ValueError("header too long")  # pragma: no cover - shapes are bounded by MAX_DIMS


def write_npy(dst: str | os.PathLike, array: np.ndarray, *, force: bool = False) -> None:
    """Write a whole array atomically, ml_dtypes types named so `np.load` resolves them."""
    a = np.asarray(array)
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    flat = a.ravel(order="F" if fortran else "C")
    head = header_bytes(a.shape, fortran, a.dtype)
    with atomic_output(dst, force=force) as fp:
        fp.write(head)
        if flat.size:
            fp.write(memoryview(np.ascontiguousarray(flat).view(np.uint8)))
