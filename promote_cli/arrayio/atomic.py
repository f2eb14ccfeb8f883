"""Atomic output files that replace nothing but the regular file they were meant to.

`check_output(dst, force=...)` decides, before anything is written, what writing `dst`
will do: create a new file, or (with `force`) replace the regular file that is there now.
It refuses a directory, a FIFO, a device, a socket, and a symbolic link to any of those
or to nothing; a symbolic link to a regular file is followed, with `force`, and its
target replaced (the link stays). The answer, an `OutputTarget`, records the identity of
the file to replace.

`atomic_output(dst, target=...)` writes to a temporary file in the directory of the file
it will replace, named `.NAME.promote-tmp-XXXXXXXX` so that it is obviously ours, created
`0600`. On success the data is fsync'ed, the temporary file gets the replaced file's mode
(and owner, where permitted) or the usual `0666 & ~umask` for a new file, and it takes
the destination's name only if the destination is still what `check_output` saw: a new
file is linked in place (which fails if anything appeared there meanwhile), a replaced
file must still be the same regular file. Any exception (KeyboardInterrupt and the
`Terminated` raised on SIGTERM included) removes the temporary file, so an interrupted
write leaves nothing behind and never damages an existing file. Errors name the
destination, never the temporary file.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
from contextlib import contextmanager

from promote_cli.arrayio.files import FileId, kind_of, os_message
from promote_cli.errors import UsageError
from promote_cli.records import Record

#: Suffix marking a temporary output file of ours.
TEMP_MARK = ".promote-tmp-"

# os.write, by a name of this module's own (tests simulate a full disk with it).
_write = os.write

# Room left in a 255-byte file name for the temporary name's dot, mark and random part.
_TEMP_BASE_MAX = 200


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM so that clean-up code runs."""


# The signal received and not yet acted on (see `install_sigterm_handler`).
_pending: int | None = None


def _defer(signum, frame):
    """Note the signal; `check_interrupted` raises it at the next safe point. A second
    one while the first is pending raises at once (the user insists)."""
    global _pending
    if _pending is not None:
        _raise(signum)
    _pending = signum


def _raise(signum: int):
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(f"terminated by signal {signum}")


def check_interrupted() -> None:
    """Raise KeyboardInterrupt or `Terminated` if SIGINT or SIGTERM arrived since the
    handlers were installed. Called between chunks, between files and before an output
    takes its name: an exception raised there never leaves a lock of the reading and
    writing threads held (one raised at an arbitrary point could, and then the clean-up
    would wait forever), and nothing is written after the signal."""
    global _pending
    if _pending is not None:
        signum, _pending = _pending, None
        _raise(signum)


def install_sigterm_handler() -> dict:
    """Defer SIGINT and SIGTERM to `check_interrupted` (main thread only): they then raise
    KeyboardInterrupt or `Terminated` at the next safe point, a chunk's time at most.
    Returns the handlers replaced, for `restore_handlers`."""
    global _pending
    _pending = None
    previous = {}
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, _defer)
    except ValueError:  # not the main thread
        pass
    return previous


def restore_handlers(previous: dict) -> None:
    """Put back the handlers `install_sigterm_handler` replaced."""
    for signum, handler in previous.items():
        try:
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        except (ValueError, TypeError):
            pass


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when `a` and `b` name the same file (symlinks and hard links too)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class OutputTarget(Record, frozen=True):
    """What writing an output will do, decided before anything is written."""

    path: str  # as given (for messages)
    write_path: str  # the name that will be (re)placed: `path`, or a symlink's target
    replaces: FileId | None = None  # the regular file there now (None: a new file)
    mode: int = 0  # the replaced file's permission bits
    uid: int = -1
    gid: int = -1

    @property
    def key(self) -> tuple:
        """Identifies the file this output will be: the replaced file's (dev, inode), or
        the directory's (dev, inode) and the new name."""
        if self.replaces is not None:
            return ("file",) + self.replaces.key
        directory = os.path.dirname(self.write_path) or "."
        try:
            st = os.stat(directory)
        except OSError as e:
            raise UsageError(f"{self.path}: cannot create output: {os_message(e)}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{self.path}: cannot create output: {directory} is not a directory")
        return ("new", st.st_dev, st.st_ino, os.path.basename(self.write_path))


def check_output(dst: str | os.PathLike, *, force: bool = False) -> OutputTarget:
    """What writing `dst` would do; a one-line UsageError when it must not be written."""
    dst = os.fspath(dst)
    if not dst:
        raise UsageError("empty output path")
    if dst.endswith(os.sep) or os.path.basename(dst) in (".", ".."):
        raise UsageError(f"{dst}: names a directory, not an output file")
    try:
        lst = os.lstat(dst)
    except FileNotFoundError:
        return OutputTarget(dst, dst)
    except OSError as e:
        raise UsageError(f"{dst}: {os_message(e)}") from None
    st, write_path = lst, dst
    if stat.S_ISLNK(lst.st_mode):
        try:
            st = os.stat(dst)
        except OSError as e:
            raise UsageError(f"{dst}: is a symbolic link that leads nowhere ({os_message(e)}); not written through") from None
        write_path = os.path.realpath(dst)
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{dst}: is a directory")
    if not stat.S_ISREG(st.st_mode):
        via = "a symbolic link to " if write_path != dst else ""
        raise UsageError(f"{dst}: is {via}{kind_of(st.st_mode)}; only a regular file is ever replaced")
    if not force:
        raise UsageError(f"{dst}: already exists (use --force to overwrite)")
    return OutputTarget(dst, write_path, FileId.of(st), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)


class _Sink:
    """The temporary file, as a binary file (unbuffered: every write reaches the file or
    fails) whose write errors name the destination."""

    def __init__(self, fd: int, dst: str):
        self._fd = fd
        self._dst = dst

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        try:
            while done < len(view):
                n = _write(self._fd, view[done:])
                if n <= 0:  # a write that makes no progress would loop forever
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += n
        except OSError as e:
            raise UsageError(f"{self._dst}: cannot write output: {os_message(e)}") from None
        return done

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self._fd


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


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _protected(protect) -> set:
    keys = set()
    for p in protect:
        if isinstance(p, FileId):
            keys.add(p.key)
            continue
        try:
            keys.add(_identity(os.stat(p)))
        except OSError:
            pass
    return keys


def _put_new(tmp: str, target: OutputTarget, force: bool) -> None:
    """Give `tmp` the name `target.write_path`, which must not exist."""
    dst = target.write_path
    taken = (
        f"{target.path}: appeared while the output was written (two outputs on one file?); left as it is"
        if force
        else f"{target.path}: already exists (use --force to overwrite)"
    )
    try:
        os.link(tmp, dst)  # fails if anything appeared there meanwhile
    except FileExistsError:
        raise UsageError(taken) from None
    except OSError:  # a file system without hard links
        if os.path.lexists(dst):
            raise UsageError(taken) from None
        os.rename(tmp, dst)
    else:
        os.unlink(tmp)


@contextmanager
def atomic_output(dst: str | os.PathLike, *, force: bool = False, protect: tuple = (), target: OutputTarget | None = None):
    """Write `dst` atomically: yields a binary file object on a temporary file.

    `target` is `check_output(dst, force=force)`'s answer (computed here when not given).
    An existing `dst` is replaced only with `force`, only if it is a regular file (or a
    symlink to one) and never when it is one of `protect` (paths or `FileId`s). On any
    exception, KeyboardInterrupt included, the temporary file is removed and `dst` is left
    as it was.
    """
    dst = os.fspath(dst)
    if target is None:
        target = check_output(dst, force=force)
    force = target.replaces is not None or force
    if target.replaces is not None and target.replaces.key in _protected(protect):
        raise UsageError(f"{dst}: refusing to overwrite the input file")
    directory = os.path.dirname(target.write_path) or "."
    base = os.path.basename(target.write_path)[:_TEMP_BASE_MAX]
    tmp = os.path.join(directory, f".{base}{TEMP_MARK}{os.urandom(4).hex()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600 if target.replaces is not None else 0o666)
    except OSError as e:
        raise UsageError(f"{dst}: cannot create output: {os_message(e)}") from None
    done = False
    try:
        try:
            yield _Sink(fd, dst)
            try:
                os.fsync(fd)
                if target.replaces is not None:
                    try:
                        os.fchown(fd, target.uid, target.gid)
                    except OSError:  # not permitted: the owner stays ours
                        pass
                    os.fchmod(fd, target.mode & 0o1777)
            except OSError as e:
                raise UsageError(f"{dst}: cannot write output: {os_message(e)}") from None
        finally:
            os.close(fd)
        check_interrupted()  # nothing takes its name after a signal
        try:
            if target.replaces is None:
                _put_new(tmp, target, force)
            else:
                try:
                    now = os.lstat(target.write_path)
                except FileNotFoundError:
                    _put_new(tmp, target, force)
                else:
                    if not stat.S_ISREG(now.st_mode) or _identity(now) != target.replaces.key:
                        raise UsageError(f"{dst}: was replaced while the output was written; left as it is")
                    os.replace(tmp, target.write_path)
        except OSError as e:
            raise UsageError(f"{dst}: cannot write output: {os_message(e)}") from None
        done = True
        _fsync_dir(directory)
    finally:
        if not done:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_texts(files: dict, protect: tuple = ()) -> None:
    """Write several text files (path -> text, UTF-8) atomically, as `atomic_output` writes one, replacing only
    regular files (`force`): every path checked and every file written to its temporary file before the first
    takes its name, so that a failure leaves none of them. A path that names one of `protect` (the inputs), or
    the same file as another output, is a one-line UsageError."""
    from contextlib import ExitStack

    targets, names = {}, {}
    for path in files:
        target = check_output(path, force=True)
        for other in protect:
            if target.replaces is not None and same_file(path, other):
                raise UsageError(f"{path}: refusing to overwrite an input ({os.fspath(other)})")
        if target.key in names:  # another name (a symbolic link, ./x) of an output already asked for
            raise UsageError(f"{path}: the same file as {names[target.key]}; each output needs a file of its own")
        names[target.key] = path
        targets[path] = target
    with ExitStack() as stack:  # every temporary file written before any takes its name: a failure leaves none
        for path, text in files.items():
            stack.enter_context(atomic_output(path, force=True, target=targets[path])).write(text.encode("utf-8"))
