"""Compiled rule expressions kept in the rule file's cache entry (`tomlcache.py`), so that loading a rule file
need not import the expression parser nor check, inline and compile each expression again.

A ruleset's expressions go into the entry of the file it was loaded from, beside that file's parsed TOML, as
`{"of": KEY, "sites": {SITE: [text, checked source, names read]}}`: for each expression of the file
(`rules[2] (name).if`), its text, its checked source (lets inlined, products checked) and the names it reads.
The entry's format already names the loader, the compiler and the vocabulary they were made with (its stamp);
KEY names the data they were made from: the file's own SHA-256 when the ruleset is that file alone (the very
dict its entry gave), else (a file merged with its `extends` chain) the SHA-256 of the merged data and the
vocabulary's dtype names. The loader still checks every other part of the file; each cached expression is
compiled again and accepted only as `checked.from_source` allows. Expressions that are not what this code
writes (another KEY, another text at a site, a site missing, source reading names the rules may not) are
ignored: the file is compiled as without a cache and its entry written again.
"""

from __future__ import annotations

from promote_cli import tomlcache


class Stale(Exception):
    """A cached entry that does not fit the file being loaded: compile without it."""


def key(raw: dict, path, type_names) -> str | None:
    """What the compiled expressions of the ruleset `raw`, loaded from the rule file `path` with the vocabulary
    `type_names`, follow from besides the entry's format; None when the cache is off, `path` was not read
    through it, or the data is not plain JSON data (a TOML date)."""
    entry = tomlcache.loaded(path)
    if entry is None:
        return None
    if raw is entry["toml"]:
        return entry["sha256"]
    import json

    try:
        text = json.dumps([sorted(type_names), raw], sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return tomlcache.sha256(text.encode("utf-8", "surrogatepass"))


def read(path, key: str) -> dict | None:
    """The expressions kept for `key` in the entry of `path` (site -> [text, source, names]), or None."""
    kept = (tomlcache.loaded(path) or {}).get("expressions")
    if not isinstance(kept, dict) or kept.get("of") != key:
        return None
    sites = kept.get("sites")
    return sites if isinstance(sites, dict) else None


def write(path, key: str, sites: dict) -> None:
    tomlcache.store(path, "expressions", {"of": key, "sites": sites})


def cached(sites: dict, site: str, text: str) -> tuple[str, list]:
    """The (checked source, names) kept for the expression `text` at `site`; Stale when the entry has none."""
    hit = sites.get(site)
    if not (isinstance(hit, list) and len(hit) == 3 and hit[0] == text):
        raise Stale(site)
    return hit[1], hit[2]
