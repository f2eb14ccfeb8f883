"""Parsed TOML files (rule files, the dtype vocabulary) kept as JSON in a per-user cache directory, so that
start-up need not load and run a TOML parser.

The directory is `$PROMOTE_CACHE_DIR`, else `$XDG_CACHE_HOME/promote`, else `~/.cache/promote`;
`PROMOTE_CACHE_DIR=` (empty) turns the cache off. An entry is named by the SHA-256 of the file's bytes and
holds that digest, the cache format and the parser's Python version next to the parsed dict; it is only
the TOML parser's output, so whoever reads it validates it exactly as a freshly parsed file. An entry
is used only when it is a regular file (not a link) owned by this user in a directory owned by this user,
writable by no one else, that parses as JSON and carries the expected digest and format; anything else is
ignored and the file parsed again (and the entry rewritten, atomically). Failing to write is never an error.
Writing an entry keeps the directory at `MAX_ENTRIES` entries (the oldest written go first) and removes the
temporary files of writes that never finished (`prune`).

`read_json` and `write_json` are those checks and that atomic write for any entry: the cache of compiled rule
expressions (`oracle/exprcache.py`) keeps its entries beside these, with the same guarantees.

The package ships entries of the same kinds for its own rule files and vocabulary in `promote_cli/compiled/`
(made by `tools/compiled_rules.py`, which checks that they are current), so that even a first run, or a run
with the cache off or unwritable, parses no TOML: `read_shipped` reads one, and it is used only when it holds
what a cache entry for that very file would (the file's SHA-256, the format), under a tag of its own.
"""

from __future__ import annotations

import os
import stat
import sys

FORMAT = 1
MAX_ENTRY_BYTES = 16 << 20
#: the deepest nesting of lists and tables an entry may hold: more than a parsed rule file needs, less than what
#: would exhaust the stack of whoever walks it (a JSON text nests far deeper than a TOML parser's output can)
MAX_ENTRY_DEPTH = 200
_TAG = f"{FORMAT}/py{sys.version_info[0]}.{sys.version_info[1]}"
SHIPPED_TAG = f"{FORMAT}/shipped"  # a parsed TOML file does not depend on the Python version that parsed it
SHIPPED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compiled")


def cache_dir() -> str | None:
    """The cache directory, or None when the cache is off (`PROMOTE_CACHE_DIR=`)."""
    env = os.environ.get("PROMOTE_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "promote")


def loads(data: bytes, parse) -> dict:
    """`parse()` (the dict a TOML file of bytes `data` parses to), from the entries shipped with the package or
    the cache when they hold it."""
    digest = sha256(data)
    payload = read_shipped(digest + ".json")
    if (payload is not None and payload.get("format") == SHIPPED_TAG and payload.get("sha256") == digest
            and isinstance(payload.get("toml"), dict)):
        return payload["toml"]
    if cache_dir() is None:
        return parse()
    payload = read_json(digest + ".json")
    if (payload is not None and payload.get("format") == _TAG and payload.get("sha256") == digest
            and isinstance(payload.get("toml"), dict)):
        return payload["toml"]
    raw = parse()
    write_json(digest + ".json", {"format": _TAG, "sha256": digest, "toml": raw}, check_key="toml")
    return raw


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
    payload = _read_entry(os.path.join(directory, name), own=True)
    # nested deeper than a parser's output ever is: whoever walked it (a deep copy, a validator) would run out
    # of stack (the shipped entries are the package's own, made by tools/compiled_rules.py, and skip this walk)
    return payload if payload is not None and shallow(payload) else None


def _read_entry(path: str, own: bool) -> dict | None:
    """A JSON object from a regular file of bounded size (with `own`: this user's, writable by no one else)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES
                or own and (info.st_uid != os.getuid() or info.st_mode & 0o022)):
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


def read_shipped(name: str) -> dict | None:
    """The JSON object of the shipped entry `name` (in `SHIPPED_DIR`), or None unless it is a regular file
    (not a link) of bounded size that parses as a JSON object. The caller checks what the object holds, as
    for a cache entry."""
    return _read_entry(os.path.join(SHIPPED_DIR, name), own=False)


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


def _entry_name(name: str) -> bool:
    """A name this cache gives its entries (a SHA-256 in hex, then `.json` or `.expr.json`), or a temporary
    file of one (`ENTRY.PID.tmp`)."""
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
                if not _entry_name(e.name) or e.name == keep:
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
