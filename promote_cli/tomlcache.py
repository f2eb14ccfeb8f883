"""Parsed TOML files (rule files, the dtype vocabulary) kept as JSON in a per-user cache directory, so that
start-up need not load and run a TOML parser.

The directory is `$PROMOTE_CACHE_DIR`, else `$XDG_CACHE_HOME/promote`, else `~/.cache/promote`;
`PROMOTE_CACHE_DIR=` (empty) turns the cache off. An entry is named by the SHA-256 of the file's bytes and
holds that digest, the cache format and the parser's Python version next to the parsed dict; it is only
the TOML parser's output, so whoever reads it validates it exactly as a freshly parsed file. An entry
is used only when it is a regular file (not a link) owned by this user in a directory owned by this user,
writable by no one else, that parses as JSON and carries the expected digest and format; anything else is
ignored and the file parsed again (and the entry rewritten, atomically). Failing to write is never an error.
"""

from __future__ import annotations

import os
import stat
import sys

FORMAT = 1
MAX_ENTRY_BYTES = 16 << 20
_TAG = f"{FORMAT}/py{sys.version_info[0]}.{sys.version_info[1]}"


def cache_dir() -> str | None:
    """The cache directory, or None when the cache is off (`PROMOTE_CACHE_DIR=`)."""
    env = os.environ.get("PROMOTE_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "promote")


def loads(data: bytes, parse) -> dict:
    """`parse()` (the dict a TOML file of bytes `data` parses to), from the cache when it holds it."""
    directory = cache_dir()
    if directory is None:
        return parse()
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    entry = os.path.join(directory, digest + ".json")
    raw = _read(directory, entry, digest)
    if raw is None:
        raw = parse()
        _write(directory, entry, digest, raw)
    return raw


def _private_dir(directory: str) -> bool:
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def _read(directory: str, entry: str, digest: str) -> dict | None:
    if not _private_dir(directory):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(entry, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022
                or info.st_size > MAX_ENTRY_BYTES):
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
    if (not isinstance(payload, dict) or payload.get("format") != _TAG or payload.get("sha256") != digest
            or not isinstance(payload.get("toml"), dict)):
        return None
    return payload["toml"]


def _write(directory: str, entry: str, digest: str, raw: dict) -> None:
    import json

    try:
        text = json.dumps({"format": _TAG, "sha256": digest, "toml": raw}, ensure_ascii=False)
        if json.loads(text)["toml"] != raw:  # not plain JSON data (a NaN, a date): not cached
            return
    except (TypeError, ValueError, RecursionError):
        return
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not _private_dir(directory):
            return
        temp = f"{entry}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(temp, entry)
    except OSError:
        try:
            os.unlink(temp)
        except (OSError, NameError):
            pass
