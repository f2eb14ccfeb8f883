"""Safe, streaming `.npy` reading and atomic `.npy` writing.

Reading never unpickles: the header is parsed by numpy's own format module
(`numpy.lib.format`, a literal-only parser) and the data is read with plain file
reads into one reusable buffer, a chunk at a time, so memory stays bounded
whatever the file size. Object, structured and sub-array dtypes are refused.

Writing goes to a temporary file in the destination directory, named
`.NAME.promote-tmp-XXXXXXXX` so that it is obviously ours; the file is fsync'ed and
then renamed over the destination. Any exception (KeyboardInterrupt and the
`Terminated` raised on SIGTERM included) removes the temporary file, so an
interrupted write leaves nothing behind and never damages an existing file.

Types numpy itself lacks (bf16, the fp8 formats, int4, ...) come from ml_dtypes.
Output files name them in the header by their ml_dtypes type name
(`'descr': 'bfloat16'`), which `np.dtype()` resolves once ml_dtypes is imported, so
`np.load` gives back the right dtype and `promote cast` reads them without
`--from`. Files written by `np.save` hold such arrays as raw bytes (`|V2`, `|V1`)
or, for float8_e5m2, as the unloadable `'<f1'`; `--from DTYPE` (the `from_`
argument here) says what the stored bits are.
"""

from __future__ import annotations

import ast
import os
import secrets
import signal
import struct
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import ml_dtypes  # noqa: F401  (registers bfloat16, float8_* ... with numpy)
import numpy as np
from numpy.lib import format as npformat

from promote_cli.errors import UsageError

#: Upper bound of one chunk's input bytes when streaming.
DEFAULT_CHUNK_BYTES = 4 << 20

#: Suffix marking a temporary output file of ours.
TEMP_MARK = ".promote-tmp-"

_MAGIC = b"\x93NUMPY"
_HEADER_KEYS = {"descr", "fortran_order", "shape"}
_MAX_HEADER_SIZE = 1 << 20


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM so that clean-up code runs."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by a subprocess test
    raise Terminated(f"terminated by signal {signum}")


def install_sigterm_handler() -> None:
    """Turn SIGTERM into a `Terminated` exception (main thread only)."""
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        pass


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
    if dt.type.__module__ == "numpy" and dt.kind in "biufc":
        return npformat.dtype_to_descr(dt)
    name = getattr(dt.type, "__name__", "")
    try:
        if name and np.dtype(name) == dt:
            return name
    except TypeError:
        pass
    raise UsageError(f"cannot write dtype {dt} to a .npy file")


# --------------------------------------------------------------------------- header


@dataclass(frozen=True)
class NpyHeader:
    """What the header of a `.npy` file says, and where its data starts."""

    path: str
    version: tuple[int, int]
    shape: tuple[int, ...]
    fortran_order: bool
    dtype: np.dtype  # as stored (byte order included); may be |V1/|V2
    offset: int  # where the data starts
    file_size: int
    descr: str = ""  # the raw descr text when numpy could not resolve it

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


def _parse_header_dict(fp, version) -> dict:
    """Our own literal-only header parse, used only for descrs numpy rejects."""
    hlen_fmt = "<H" if version == (1, 0) else "<I"
    raw = fp.read(struct.calcsize(hlen_fmt))
    (hlen,) = struct.unpack(hlen_fmt, raw)
    if hlen > _MAX_HEADER_SIZE:
        raise ValueError("header too large")
    text = fp.read(hlen).decode("utf8" if version >= (3, 0) else "latin1")
    d = ast.literal_eval(text)
    if not isinstance(d, dict) or set(d) != _HEADER_KEYS:
        raise ValueError("header does not hold exactly descr, fortran_order and shape")
    return d


# Descrs numpy writes for ml_dtypes arrays but cannot read back.
_UNREADABLE_DESCRS = {"<f1": "float8_e5m2", "|f1": "float8_e5m2", ">f1": "float8_e5m2"}


def read_header(path: str | os.PathLike) -> NpyHeader:
    """Parse and validate the header of the `.npy` file at `path`.

    Raises UsageError for anything that is not a plain numeric array file:
    pickled/object arrays, structured dtypes, strings, bad headers, truncated data.
    """
    path = os.fspath(path)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fp:
            if fp.read(len(_MAGIC)) != _MAGIC:
                raise UsageError(f"{path}: not a .npy file (no NUMPY magic)")
            fp.seek(0)
            try:
                version = npformat.read_magic(fp)
            except ValueError as e:
                raise UsageError(f"{path}: not a .npy file: {e}") from None
            start = fp.tell()
            descr_text = ""
            try:
                if version == (1, 0):
                    shape, fortran, dtype = npformat.read_array_header_1_0(
                        fp, max_header_size=_MAX_HEADER_SIZE
                    )
                elif version == (2, 0):
                    shape, fortran, dtype = npformat.read_array_header_2_0(
                        fp, max_header_size=_MAX_HEADER_SIZE
                    )
                elif version == (3, 0):
                    from numpy.lib import _format_impl

                    shape, fortran, dtype = _format_impl._read_array_header(
                        fp, version, max_header_size=_MAX_HEADER_SIZE
                    )
                else:
                    raise UsageError(f"{path}: unsupported .npy format version {version}")
            except (ValueError, TypeError, SyntaxError) as e:
                # numpy writes float8_e5m2 arrays with descr '<f1' but cannot read it
                fp.seek(start)
                try:
                    d = _parse_header_dict(fp, version)
                except (ValueError, SyntaxError, struct.error, UnicodeDecodeError):
                    d = None
                if d is None or d["descr"] not in _UNREADABLE_DESCRS:
                    raise UsageError(f"{path}: invalid .npy header: {e}") from None
                descr_text = d["descr"]
                shape, fortran = d["shape"], d["fortran_order"]
                if not (isinstance(shape, tuple) and all(isinstance(s, int) and s >= 0 for s in shape)):
                    raise UsageError(f"{path}: invalid .npy header: bad shape {shape!r}")
                if not isinstance(fortran, bool):
                    raise UsageError(f"{path}: invalid .npy header: bad fortran_order")
                dtype = np.dtype(_UNREADABLE_DESCRS[descr_text])
            offset = fp.tell()
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise UsageError(f"{path}: holds Python objects (a pickled array); refusing to read it")
    if dtype.names is not None or dtype.subdtype is not None:
        raise UsageError(f"{path}: holds a structured dtype {dtype}; only plain numeric arrays can be cast")
    if dtype.kind in "USMmO":
        raise UsageError(f"{path}: holds {dtype} values, not numbers")
    header = NpyHeader(path, version, tuple(shape), bool(fortran), dtype, offset, size, descr_text)
    if offset + header.nbytes > size:
        raise UsageError(
            f"{path}: truncated: the header promises {header.nbytes} data bytes, "
            f"the file holds {size - offset}"
        )
    return header


# --------------------------------------------------------------------------- source dtype


@dataclass(frozen=True)
class Source:
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
    """

    def __init__(self, header: NpyHeader, source: Source, chunk_bytes: int = DEFAULT_CHUNK_BYTES):
        self.header = header
        self.source = source
        item = max(header.dtype.itemsize, 1)
        self.chunk_elems = max(1, chunk_bytes // item)
        self.largest_chunk_bytes = 0

    def _read_exact(self, fp, view: memoryview, nbytes: int) -> None:
        """Fill view[:nbytes] from fp; a short file is a UsageError."""
        got = 0
        while got < nbytes:
            r = fp.readinto(view[got:nbytes])
            if not r:
                raise UsageError(f"{self.header.path}: truncated while reading data")
            got += r

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
        remaining = h.count
        if remaining == 0:
            return
        buf = bytearray(min(remaining, self.chunk_elems) * h.dtype.itemsize)
        view = memoryview(buf)
        with open(h.path, "rb", buffering=0) as fp:
            fp.seek(h.offset)
            while remaining:
                n = min(remaining, self.chunk_elems)
                self._read_exact(fp, view, n * h.dtype.itemsize)
                yield self._native(buf, n)
                remaining -= n

    def prefetched(self, keep: int = 1) -> Iterator[np.ndarray]:
        """Like iterating, but a background thread reads ahead into reused buffers while
        the caller works on the current chunk (file reads release the GIL). Each chunk
        stays valid until `keep` more chunks have been asked for. Errors of the
        reading thread (a truncated file) are raised here; closing the generator early
        stops the thread."""
        import queue
        import threading

        h = self.header
        item = h.dtype.itemsize
        if h.count == 0:
            return
        nbytes = min(h.count, self.chunk_elems) * item
        free: queue.Queue = queue.Queue()
        ready: queue.Queue = queue.Queue()
        keep = max(1, keep)
        for _ in range(keep + 1):
            free.put(bytearray(nbytes))
        stop = threading.Event()

        def read() -> None:
            try:
                remaining = h.count
                with open(h.path, "rb", buffering=0) as fp:
                    fp.seek(h.offset)
                    while remaining:
                        buf = free.get()
                        if buf is None or stop.is_set():
                            return
                        n = min(remaining, self.chunk_elems)
                        self._read_exact(fp, memoryview(buf), n * item)
                        ready.put((buf, n))
                        remaining -= n
                ready.put(None)
            except BaseException as e:  # handed to the consumer
                ready.put(e)

        thread = threading.Thread(target=read, name="promote-npy-reader", daemon=True)
        thread.start()
        from collections import deque

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


def read_npy(path: str | os.PathLike, from_: str | None = None) -> np.ndarray:
    """Read a whole `.npy` file safely (small files: tests, the Python API)."""
    h = read_header(path)
    s = resolve_source(h, from_)
    out = np.empty(h.count, dtype=s.native)
    pos = 0
    for chunk in ChunkReader(h, s):
        out[pos : pos + chunk.size] = chunk
        pos += chunk.size
    return out.reshape(h.shape, order="F" if h.fortran_order else "C")


# --------------------------------------------------------------------------- writing


def header_bytes(shape: tuple[int, ...], fortran_order: bool, dtype: np.dtype) -> bytes:
    """A complete `.npy` header (magic included) for the given array metadata."""
    import io

    d = {"descr": descr_of(dtype), "fortran_order": bool(fortran_order), "shape": tuple(shape)}
    buf = io.BytesIO()
    try:
        npformat.write_array_header_1_0(buf, d)
    except ValueError:
        buf = io.BytesIO()
        npformat.write_array_header_2_0(buf, d)
    return buf.getvalue()


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when `a` and `b` name the same file (symlinks and hard links too)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_output(dst: str | os.PathLike, *, force: bool = False, protect: tuple = ()):
    """Write `dst` atomically: yields a binary file object on a temporary file.

    On normal exit the data is fsync'ed and the file renamed to `dst`; an existing
    `dst` is replaced only with `force` (never when it is one of `protect`). On any
    exception, KeyboardInterrupt included, the temporary file is removed and `dst`
    is left as it was.
    """
    dst = os.fspath(dst)
    for p in protect:
        if os.path.lexists(dst) and same_file(dst, p):
            raise UsageError(f"{dst}: refusing to overwrite the input file")
        if os.path.abspath(dst) == os.path.abspath(os.fspath(p)):
            raise UsageError(f"{dst}: refusing to overwrite the input file")
    if not force and os.path.lexists(dst):
        raise UsageError(f"{dst}: already exists (use --force to overwrite)")
    if os.path.isdir(dst):
        raise UsageError(f"{dst}: is a directory")
    directory = os.path.dirname(os.path.abspath(dst)) or "."
    base = os.path.basename(dst)
    tmp = os.path.join(directory, f".{base}{TEMP_MARK}{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:
        raise UsageError(f"{dst}: cannot create output: {e.strerror or e}") from None
    done = False
    try:
        with os.fdopen(fd, "wb") as fp:
            yield fp
            fp.flush()
            os.fsync(fp.fileno())
        if force:
            os.replace(tmp, dst)
        else:
            # link() fails if dst appeared meanwhile: never clobber without --force
            try:
                os.link(tmp, dst)
            except FileExistsError:
                raise UsageError(f"{dst}: already exists (use --force to overwrite)") from None
            except OSError:  # file system without hard links
                if os.path.lexists(dst):
                    raise UsageError(f"{dst}: already exists (use --force to overwrite)") from None
                os.replace(tmp, dst)
            else:
                os.unlink(tmp)
        done = True
        _fsync_dir(directory)
    finally:
        if not done:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_npy(dst: str | os.PathLike, array: np.ndarray, *, force: bool = False) -> None:
    """Write a whole array atomically, ml_dtypes types named so `np.load` resolves them."""
    a = np.asarray(array)
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    flat = a.ravel(order="F" if fortran else "C")
    with atomic_output(dst, force=force) as fp:
        fp.write(header_bytes(a.shape, fortran, a.dtype))
        if flat.size:
            fp.write(memoryview(np.ascontiguousarray(flat).view(np.uint8)))
