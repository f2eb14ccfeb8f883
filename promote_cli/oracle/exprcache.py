"""Compiled rule expressions kept in the per-user cache, so that loading a rule file need not import the
expression parser nor check, inline and compile each expression again.

Entries live beside the parsed-TOML entries (`tomlcache.read_json`/`write_json`: a directory of this user's
that no one else can write, regular files only, atomic writes; `PROMOTE_CACHE_DIR=` turns both off). An entry
is named by the SHA-256 of everything its contents follow from: the rule file as merged with its `extends`
chain, the vocabulary's dtype names, the Python version and the source of the modules that check and compile
expressions (`expr.py`, `checked.py`, `loader.py`), so that a change to any of them selects another entry.
It holds, for each expression of the file (`rules[2] (name).if`), its text, its checked source (lets
inlined, products checked) and the names it reads. The loader still checks every other part of the file;
each cached expression is compiled again and accepted only as `checked.from_source` allows. An entry that
is not what this code writes (truncated, corrupted, another format, another file's, source reading names
the rules may not) is ignored: the file is compiled as without a cache and the entry written again. Like the
parsed-TOML entries, an entry is read only from a directory and a file of the user's own that no one else
can write, so whoever could forge a well-formed one could already run code as that user.

The package ships such entries for its own rule files (`promote_cli/compiled/`, see `tomlcache.py`), named by
`shipped_key` (the same inputs under a tag without the Python version: each source is compiled again here)
and read by `read_shipped`; they are checked exactly as cache entries are, and a rule file whose content,
vocabulary or compiler differs from what they were made from selects no shipped entry.
"""

from __future__ import annotations

import os
import sys

from promote_cli import tomlcache

FORMAT = 1
_TAG = f"expr{FORMAT}/py{sys.version_info[0]}.{sys.version_info[1]}"
SHIPPED_TAG = f"expr{FORMAT}/shipped"
_COMPILER_MODULES = ("expr.py", "checked.py", "loader.py")
_compiler_digest: list[str | None] = []


class Stale(Exception):
    """A cached entry that does not fit the file being loaded: compile without it."""


def _compiler() -> str | None:
    """The SHA-256 of the compiler's source (once per process); None when it cannot be read."""
    if not _compiler_digest:
        here = os.path.dirname(os.path.abspath(__file__))
        try:
            parts = []
            for name in _COMPILER_MODULES:
                with open(os.path.join(here, name), "rb") as f:
                    parts.append(f.read())
            _compiler_digest.append(tomlcache.sha256(b"\0".join(parts)))
        except OSError:
            _compiler_digest.append(None)
    return _compiler_digest[0]


def key(raw: dict, type_names) -> str | None:
    """The entry name for a merged rule file `raw` read with the vocabulary `type_names`; None when the
    cache is off or the file is not plain JSON data (a TOML date)."""
    if tomlcache.cache_dir() is None:
        return None
    return _key(_TAG, raw, type_names)


def shipped_key(raw: dict, type_names) -> str | None:
    """The name of the shipped entry for a merged rule file `raw` read with the vocabulary `type_names`."""
    return _key(SHIPPED_TAG, raw, type_names)


def _key(tag: str, raw: dict, type_names) -> str | None:
    compiler = _compiler()
    if compiler is None:
        return None
    import json

    try:
        text = json.dumps([tag, compiler, sorted(type_names), raw], sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return tomlcache.sha256(text.encode("utf-8", "surrogatepass"))


def read(name: str) -> dict | None:
    """The expressions of entry `name` (site -> [text, source, names]), or None when there is no such entry
    or it is not in this format."""
    payload = tomlcache.read_json(name + ".expr.json")
    if payload is None or payload.get("format") != _TAG or payload.get("key") != name:
        return None
    sites = payload.get("expressions")
    return sites if isinstance(sites, dict) else None


def read_shipped(name: str) -> dict | None:
    """The expressions of the shipped entry `name`, or None (as `read`)."""
    payload = tomlcache.read_shipped(name + ".expr.json")
    if payload is None or payload.get("format") != SHIPPED_TAG or payload.get("key") != name:
        return None
    sites = payload.get("expressions")
    return sites if isinstance(sites, dict) else None


def write(name: str, sites: dict) -> None:
    tomlcache.write_json(name + ".expr.json", {"format": _TAG, "key": name, "expressions": sites})


def cached(sites: dict, site: str, text: str) -> tuple[str, list]:
    """The (checked source, names) kept for the expression `text` at `site`; Stale when the entry has none."""
    hit = sites.get(site)
    if not (isinstance(hit, list) and len(hit) == 3 and hit[0] == text):
        raise Stale(site)
    return hit[1], hit[2]
