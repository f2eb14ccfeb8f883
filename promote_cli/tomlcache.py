"""The per-user cache: one entry per TOML file (a rule file, the dtype vocabulary) holding what start-up would
otherwise compute from it, so that a warm run loads neither a TOML parser nor the rule-expression compiler.

The directory is `$PROMOTE_CACHE_DIR`, else `$XDG_CACHE_HOME/promote`, else `~/.cache/promote`;
`PROMOTE_CACHE_DIR=` (empty) turns the cache off. An entry is named by the SHA-256 of the file's bytes and the
format (`entry_name`: installations sharing the directory, another version or another Python, keep entries of
their own rather than rewriting each other's), and holds

    format       `tag()`: the format's number, the interpreter (`sys.implementation.cache_tag`) and a stamp of
                 the files whose output the entry keeps (`STAMPED`: the loader, the expression compiler, this
                 module, the vocabulary), as installed: each one's size, mtime and ctime in nanoseconds
    sha256       the file's digest
    toml         the dict the TOML parser made of it
    expressions  (a rule file, once a ruleset was built from it) its rule expressions checked and compiled
                 (`oracle/exprcache.py`)

The stamp makes an upgrade, an edited loader or compiler, or another vocabulary select no older entry: any write to
a file, or its replacement, changes its ctime, which no program can set back (editing a file and restoring its size
and mtime still changes the stamp). It costs a `stat` of each file once per process, a small part of what reading
and hashing their source would. An entry is checked, never trusted: it is used only when it is a regular file (not
a link) owned by this user in a directory owned by this user, writable by no one else, of bounded size and nesting,
that parses as JSON and carries the expected format and digest; the TOML is validated exactly as a freshly parsed
file, and every compiled expression compiled again and accepted only as `checked.from_source` allows (the rules'
names and functions, nothing else; forging an entry in this user's own directory already takes running code as this
user). Anything else is ignored, the file parsed (and compiled) again and the entry rewritten, atomically. Failing
to write is never an error. Writing an entry keeps the directory at `MAX_ENTRIES` entries (the oldest written go
first) and removes the temporary files of writes that never finished (`prune`).

Nothing of this is shipped with the package: the first run (and a run with the cache off or unwritable)
parses and compiles what it loads.
"""

from __future__ import annotations

import os
import stat
import sys

FORMAT = 2
MAX_ENTRY_BYTES = 16 << 20
#: the deepest nesting of lists and tables an entry may hold: more than a parsed rule file needs, less than what
#: would exhaust the stack of whoever walks it (a JSON text nests far deeper than a TOML parser's output can)
MAX_ENTRY_DEPTH = 200
_HERE = os.path.dirname(os.path.abspath(__file__))
#: the files an entry's contents follow from besides the TOML file itself (paths inside the package)
STAMPED = ("tomlcache.py", "vocab/dtypes.toml", "oracle/loader.py", "oracle/expr.py", "oracle/checked.py",
           "oracle/exprcache.py")
_tag: list[str | None] = []
#: path of a TOML file read in this process -> its entry (as read, or as made and written)
_LOADED: dict[str, dict] = {}


def cache_dir() -> str | None:
    """The cache directory, or None when the cache is off (`PROMOTE_CACHE_DIR=`)."""
    env = os.environ.get("PROMOTE_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "promote")


def tag() -> str | None:
    """The `format` of this installation's entries (computed once per process); None when a stamped file
    cannot be stat'ed (then nothing is cached)."""
    if not _tag:
        try:
            stamp = []
            for name in STAMPED:
                info = os.stat(os.path.join(_HERE, name))
                stamp.append(f"{info.st_size}.{info.st_mtime_ns}.{info.st_ctime_ns}")
            _tag.append(f"{FORMAT}/{sys.implementation.cache_tag}/{'-'.join(stamp)}")
        except OSError:
            _tag.append(None)
    return _tag[0]


def loads(data: bytes, parse, path=None) -> dict:
    """`parse()` (the dict a TOML file of bytes `data` parses to), from the file's entry when it holds it. With
    `path` (the file's), the entry is remembered for `loaded(path)`."""
    if cache_dir() is None or tag() is None:
        return parse()
    digest = sha256(data)
    payload = read_json(entry_name(digest))
    if not (payload is not None and payload.get("format") == tag() and payload.get("sha256") == digest
            and isinstance(payload.get("toml"), dict)):
        payload = {"format": tag(), "sha256": digest, "toml": parse()}
        write_json(entry_name(digest), payload, check_key="toml")
    if path is not None:
        _LOADED[os.fspath(path)] = payload
    return payload["toml"]


def entry_name(digest: str) -> str:
    """The name of the entry of a file whose bytes have the SHA-256 `digest`, in this installation's format."""
    return f"{sha256(f'{tag()}/{digest}'.encode('utf-8', 'surrogateescape'))}.json"


def loaded(path) -> dict | None:
    """The entry of the TOML file `path` as this process last read it through `loads` (its `toml` the very dict
    `loads` returned), or None when the cache is off or the file was not read so."""
    return _LOADED.get(os.fspath(path)) if cache_dir() is not None else None


def store(path, part: str, value) -> None:
    """Keep `value` as `part` of the entry of the TOML file `path` (read through `loads`), rewriting it."""
    payload = loaded(path)
    if payload is None:
        return
    payload = {**payload, part: value}
    _LOADED[os.fspath(path)] = payload
    write_json(entry_name(payload["sha256"]), payload, check_key="toml")


def sha256(data: bytes) -> str:
    """The hex SHA-256 of `data` (the C module alone when the interpreter has it: `hashlib` also loads
    OpenSSL, a few milliseconds of start-up)."""
    try:
        from _sha256 import sha256 as _sha
    except ImportError:  # pragma: no cover - Python 3.12 renamed it; hashlib has it everywhere
        from hashlib import sha256 as _sha
    return _sha(data).hexdigest()


def _private_dir(directory: str) -> bool:
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def read_json(name: str) -> dict | None:
    """The JSON object of the entry `name`, or None unless the cache is on, its directory is this user's
    and writable by no one else, and the entry is a regular file (not a link) of this user, writable by no
    one else, of bounded size, that parses as a JSON object nested at most MAX_ENTRY_DEPTH deep. The caller
    checks what the object holds."""
    directory = cache_dir()
    if directory is None or not _private_dir(directory):
        return None
    payload = _read_entry(os.path.join(directory, name))
    # nested deeper than a parser's output ever is: whoever walked it (a deep copy, a validator) would run out
    # of stack
    return payload if payload is not None and shallow(payload) else None


def _read_entry(path: str) -> dict | None:
    """A JSON object from a regular file of this user's, writable by no one else, of bounded size."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES
                or info.st_uid != os.getuid() or info.st_mode & 0o022):
            return None
        data = os.read(fd, MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    import json

    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def shallow(value, limit: int = MAX_ENTRY_DEPTH) -> bool:
    """Whether lists and dicts nest at most `limit` deep in `value` (walked level by level, without recursion)."""
    level, depth = [value], 0
    while True:
        containers = [node for node in level if isinstance(node, (dict, list))]
        if not containers:
            return True
        depth += 1
        if depth > limit:
            return False
        level = [item for node in containers for item in (node.values() if isinstance(node, dict) else node)]


def write_json(name: str, payload: dict, check_key: str | None = None) -> None:
    """Store `payload` as the entry `name`, atomically, in a directory made private to this user. Nothing is
    written when `payload` is not plain JSON data (or, with `check_key`, when that part of it does not read
    back equal: a NaN, a date); failing to write is never an error."""
    import json

    directory = cache_dir()
    if directory is None:
        return
    if not shallow(payload):  # it would be ignored when read
        return
    try:
        text = json.dumps(payload, ensure_ascii=False)
        if check_key is not None and json.loads(text)[check_key] != payload[check_key]:
            return
    except (TypeError, ValueError, RecursionError):
        return
    entry = os.path.join(directory, name)
    temp = f"{entry}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not _private_dir(directory):
            return
        try:
            mode = os.lstat(entry).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                return  # a FIFO, a socket, a device or a directory where the entry goes: left as it is
        except FileNotFoundError:
            pass  # (a link is replaced by the entry, never written through)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            data = memoryview(text.encode("utf-8"))
            while data:  # a write may take only part of what it is given
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.replace(temp, entry)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return
    prune(directory, keep=name)


#: the most entries the cache keeps: a new entry (a rule file that changed) removes the oldest beyond these
MAX_ENTRIES = 256
#: a temporary file of a write that never finished is removed once it is this old (seconds)
STALE_TEMP_SECONDS = 3600


def _own_name(name: str) -> bool:
    """A name this cache gives its entries (a SHA-256 in hex, then `.json`; `.expr.json`: the compiled
    expressions that earlier versions kept apart, removed as entries are), or a temporary file of one
    (`ENTRY.PID.tmp`)."""
    base = name
    if base.endswith(".tmp"):
        base, _, pid = base[:-4].rpartition(".")
        if not pid.isdigit():
            return False
    for suffix in (".expr.json", ".json"):
        if base.endswith(suffix):
            digest = base[: -len(suffix)]
            return len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
    return False


def prune(directory: str, keep: str | None = None, now: float | None = None) -> None:
    """Keep the cache at most `MAX_ENTRIES` entries (the newest written; `keep` is never removed) and remove
    temporary files older than `STALE_TEMP_SECONDS`. Only regular files (not links) of this user with the
    cache's own names are removed; anything else in the directory is left as it is. Never an error."""
    import time

    now = time.time() if now is None else now
    entries = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if not _own_name(e.name) or e.name == keep:
                    continue
                try:
                    info = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                    continue
                if e.name.endswith(".tmp"):
                    if now - info.st_mtime > STALE_TEMP_SECONDS:
                        _remove(e.path)
                else:
                    entries.append((info.st_mtime, e.name, e.path))
    except OSError:
        return
    extra = len(entries) + (keep is not None) - MAX_ENTRIES
    if extra > 0:
        for _, _, path in sorted(entries)[:extra]:
            _remove(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
