"""What the array-file layer does with paths: open regular files only, compare files by
identity, and show any path on one printable line.

Every file a cast reads is opened here (`open_regular`): it is stat'ed first and opened
only if it is a regular file, with `O_NONBLOCK` and `O_NOCTTY`, and the open descriptor is
checked again with `fstat`. A FIFO, a device, a socket or a directory is refused with a
one-line error before any byte is read, so no input can block a cast or have side effects
on open.
"""

from __future__ import annotations

import os
import stat

from promote_cli.errors import UsageError
from promote_cli.records import Record

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def kind_of(mode: int) -> str:
    """'a FIFO', 'a directory', ... for a non-regular file's st_mode."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def os_message(err: OSError) -> str:
    """An OSError's reason alone (never the file names it carries, which may be a
    temporary file's)."""
    return err.strerror or type(err).__name__


class FileId(Record, frozen=True):
    """A file's identity (device and inode) and the state a reader relies on."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileId:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    @property
    def key(self) -> tuple[int, int]:
        return (self.dev, self.ino)


#: The files `promote cast` reads as checkpoints (tensor by tensor), and the index of a directory of shards.
SAFETENSORS_SUFFIX, NPZ_SUFFIX = ".safetensors", ".npz"
INDEX_NAME = "model.safetensors.index.json"


def is_checkpoint(path) -> bool:
    """Whether `path` is a checkpoint: a `.safetensors` or `.npz` file, or a directory holding `.safetensors`
    files or an index (by names alone: nothing is opened)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        try:
            return any(n.endswith(SAFETENSORS_SUFFIX) or n == INDEX_NAME for n in os.listdir(path))
        except OSError:
            return False
    return path.lower().endswith((SAFETENSORS_SUFFIX, NPZ_SUFFIX))


def stat_regular(path: str) -> os.stat_result:
    """`os.stat(path)` if (after following symlinks) it is a regular file; anything else (missing, a FIFO,
    a device, a directory, a symlink loop) is a one-line UsageError naming `path`."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {os_message(e)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path}: is {kind_of(st.st_mode)}; only regular files are read")
    return st


def open_regular(path: str, what: str = "input") -> tuple[int, os.stat_result]:
    """Open `path` read-only if (after following symlinks) it is a regular file (`stat_regular`).

    Returns the descriptor and its fstat; nothing that could block is ever opened.
    """
    st = stat_regular(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {os_message(e)}") from None
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            raise UsageError(f"{path}: was replaced while being opened")
    except BaseException:
        os.close(fd)
        raise
    return fd, fst


def pread_into(fd: int, view: memoryview, offset: int) -> int:
    """Read up to len(view) bytes at `offset` into `view`; the number read (0 at the end)."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], offset)
    data = os.pread(fd, len(view), offset)  # pragma: no cover - systems without preadv
    view[: len(data)] = data
    return len(data)
