"""Finding rule files and resolving `NAME[@VERSION]`.

Rule files are `NAME.toml` or `NAME@VERSION.toml` in the directories of
`PROMOTE_RULES_PATH` (`:`-separated, searched first) and in the rules shipped with
the package. A bare NAME means the file of that name marked `default = true`, else
`NAME.toml`, else the highest version.

Paths are strings here (spelled as `pathlib` spells them), so that a query does not import `pathlib`
(a sixth of its start-up); the functions other modules call return `Path`s, as they always have.
"""

from __future__ import annotations

import os
import re

from promote_cli.errors import RuleFileError, RulesHidden, UsageError, warn
from promote_cli.oracle.loader import build, merge
from promote_cli.oracle.loader import read_toml as _parse_toml
from promote_cli.oracle.model import Ruleset

RULES_PATH_VARIABLE = "PROMOTE_RULES_PATH"
_CACHE: dict[tuple[str, str], Ruleset] = {}  # (PROMOTE_RULES_PATH, spec) -> its ruleset
_RAW: dict = {}  # path -> its TOML
_NOTED: set = set()  # the hiding files already warned about (RulesHidden)


def clear_cache() -> None:
    """Forget loaded rule files (after they changed on disk)."""
    _CACHE.clear()
    _RAW.clear()
    _NOTED.clear()


def read_toml(path) -> dict:
    """A rule file's TOML, parsed once per process (resolving a name may look at it several times)."""
    raw = _RAW.get(path)
    if raw is None:
        raw = _RAW[path] = _parse_toml(path)
    return raw


def builtin_dir():
    """The rules shipped with the package (inside the wheel), or the source tree's `rules/` (a Path)."""
    from pathlib import Path

    return Path(_builtin_dir())


def rule_dirs() -> list:
    """The directories searched for rule files, in order (Paths)."""
    from pathlib import Path

    return [Path(d) for d in _rule_dirs()]


def rule_files() -> dict:
    """Every rule file by its stem (`paddle`, `paddle@2.6`); earlier directories win (Paths)."""
    from pathlib import Path

    return {stem: Path(path) for stem, path in _files().items()}


def _builtin_dir() -> str:
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    packaged = os.path.join(package, "rules")
    if os.path.isdir(packaged):
        return packaged
    return os.path.join(os.path.dirname(package), "rules")


def _spelled(path: str) -> str:
    """`path` as `pathlib` prints it: no empty or `.` parts, no trailing slash (`..` kept)."""
    root = "//" if path.startswith("//") and not path.startswith("///") else "/" if path.startswith("/") else ""
    return root + "/".join(p for p in path.split("/") if p and p != ".") or "."


def _rule_dirs() -> list[str]:
    """The directories of PROMOTE_RULES_PATH (empty entries skipped), then the shipped rules; a UsageError
    naming an entry that is not a directory (a misspelt path would otherwise hide its rule files silently)."""
    extra = []
    for entry in os.environ.get(RULES_PATH_VARIABLE, "").split(os.pathsep):
        if not entry:
            continue
        if not os.path.isdir(entry):
            what = "is not a directory" if os.path.exists(entry) else "does not exist"
            raise UsageError(f"{RULES_PATH_VARIABLE}: {entry!r} {what}")
        extra.append(_spelled(entry))
    return extra + [_builtin_dir()]


def _candidates():
    """(stem, path) of every rule file on the path, earlier directories first."""
    directories = _rule_dirs()
    for directory in directories:
        try:
            entries = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
        except OSError as exc:
            if directory == directories[-1]:  # the shipped rules: a broken installation lists none
                entries = []
            else:
                raise UsageError(f"{RULES_PATH_VARIABLE}: {directory!r} cannot be read: {exc.strerror}") from None
        for name in entries:
            if name.endswith(".toml") and not name.startswith(("_", ".")):
                yield name[: -len(".toml")], name if directory == "." else os.path.join(directory, name)


def _files() -> dict[str, str]:
    return _scan()[0]


def _scan() -> tuple[dict[str, str], dict[str, list[str]]]:
    """Every rule file by its stem (earlier directories win), and the files each of them hides."""
    found: dict[str, str] = {}
    hidden: dict[str, list[str]] = {}
    for stem, path in _candidates():
        if found.setdefault(stem, path) != path:
            hidden.setdefault(stem, []).append(path)
    return found, hidden


def _note_hiding(path: str, hidden: dict[str, list[str]]) -> None:
    """Warn (RulesHidden), once a process, that the file about to be loaded hides others of its name."""
    stem = os.path.basename(path)[: -len(".toml")]
    if stem in hidden and path not in _NOTED:
        _NOTED.add(path)
        for other in hidden[stem]:
            warn(RulesHidden(f"{path} hides {other}"))


def names() -> list[str]:
    """Framework names, sorted."""
    return sorted({stem.split("@", 1)[0] for stem in _files()})


def labels() -> list[str]:
    """`NAME` and `NAME@VERSION` of every rule file, sorted; a file that does not read gives its bare name."""
    out = set()
    for stem, path in _files().items():
        name = stem.split("@", 1)[0]
        out.add(name)
        try:
            version = read_toml(path).get("version")
        except RuleFileError:
            continue
        if version is not None:
            out.add(f"{name}@{version}")
    return sorted(out)


def _version_key(version: str):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-]", version)]


def _raw(path, files: dict, seen: tuple[str, ...] = ()) -> dict:
    """The file's TOML with its `extends` chain merged in."""
    raw = read_toml(path)
    base = raw.get("extends")
    if base is None:
        return raw
    if not isinstance(base, str):
        raise RuleFileError(f"{path}: extends: expected 'NAME@VERSION'")
    if base in seen:
        raise RuleFileError(f"{path}: extends: cycle through {' -> '.join(seen + (base,))}")
    try:
        base_path = _find(base, files)
    except RuleFileError:
        raise
    except UsageError as exc:
        raise RuleFileError(f"{path}: extends: {exc}") from None
    return merge(_raw(base_path, files, seen + (base,)), raw)


def merge_chain(path) -> dict:
    """A rule file's TOML with its `extends` chain merged in (what the loader builds the ruleset from)."""
    return _raw(path, _files())


def _find(spec: str, files: dict):
    name, _, version = spec.partition("@")
    group = {stem: path for stem, path in files.items() if stem.split("@", 1)[0].lower() == name.lower()}
    if group:  # names are case-insensitive: `-f CANN` is cann
        name = next(iter(group)).split("@", 1)[0]
        spec = f"{name}@{version}" if version else name
    else:
        import difflib  # only for a name that is not known

        close = difflib.get_close_matches(name.lower(), names(), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"unknown framework {name!r}{hint}; known: {', '.join(names())}")
    if version:
        if spec in group:
            return group[spec]
        for path in group.values():
            if str(read_toml(path).get("version")) == version:
                return path
        versions = sorted(str(read_toml(p).get("version")) for p in group.values())
        raise UsageError(f"{name} has no ruleset {version!r}; versions: {', '.join(versions)}")
    raws = {stem: read_toml(path) for stem, path in group.items()}
    defaults = [stem for stem, raw in raws.items() if raw.get("default") is True]
    if len(defaults) > 1:
        claims = " and ".join(str(group[stem]) for stem in defaults)
        raise RuleFileError(f"{group[defaults[1]]}: default: {name} has {len(defaults)} defaults: {claims}")
    if defaults:
        return group[defaults[0]]
    if name in group:
        return group[name]
    newest = max(group, key=lambda stem: _version_key(str(raws[stem].get("version", ""))))
    return group[newest]


def load(spec: str) -> Ruleset:
    """The compiled ruleset for `NAME` or `NAME@VERSION` (cached, for the PROMOTE_RULES_PATH of the time);
    UsageError for no name or an unknown one."""
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError("which framework? give -f NAME (see `promote frameworks`)")
    spec = spec.strip()
    rules_path = os.environ.get(RULES_PATH_VARIABLE, "")
    hit = _CACHE.get((rules_path, spec))
    if hit is not None:
        return hit
    files, hidden = _scan()
    path = _find(spec, files)
    _note_hiding(path, hidden)
    raw = _raw(path, files)
    rs = build(raw, str(path), cache=True)
    file_name = os.path.basename(path)
    stem_name, _, stem_version = file_name[: -len(".toml")].partition("@")
    if rs.name != stem_name:
        raise RuleFileError(f"{path}: name: {rs.name!r} does not match the file name {file_name!r}")
    if stem_version and rs.version != stem_version:
        raise RuleFileError(f"{path}: version: {rs.version!r} does not match the file name {file_name!r}")
    _CACHE[rules_path, spec] = rs
    _CACHE.setdefault((rules_path, str(path)), rs)
    return rs


def load_path(path) -> Ruleset:
    """Load one rule file by path (for checking a file before installing it)."""
    from pathlib import Path

    path = Path(path)
    return build(_raw(path, _files()), str(path), cache=True)


def all_rulesets(errors: list | None = None) -> list[Ruleset]:
    """Every ruleset the installation knows, by name then version.

    With `errors` (a list), a rule file that does not load is appended there as its RuleFileError
    and the others are still listed; without it, the first such error is raised."""
    out = []
    for stem in sorted(_files()):
        try:
            out.append(load(stem if "@" in stem else _stem_spec(stem)))
        except RuleFileError as exc:
            if errors is None:
                raise
            errors.append(exc)
    return out


def shadowed() -> dict:
    """Rule files hidden by a file of the same name earlier on the path (a `PROMOTE_RULES_PATH` file
    named like a shipped one): stem -> the hidden paths (Paths), in path order."""
    from pathlib import Path

    return {stem: [Path(p) for p in paths] for stem, paths in _scan()[1].items()}


def _stem_spec(stem: str) -> str:
    path = _files()[stem]
    version = read_toml(path).get("version")
    return f"{stem}@{version}" if version is not None else stem


def is_default(rs: Ruleset) -> bool:
    return load(rs.name).path == rs.path


def parse_side(side) -> tuple[str, str, dict]:
    """A ruleset with its own options, as `(label, NAME[@VERSION], options)`: from `"NAME[@VERSION][:KEY=VALUE,...]"`
    (a diff side, an expect line's framework) or from `(NAME, {KEY: VALUE})`. The label is how the side is shown
    (the spec string as written)."""
    if isinstance(side, str):
        label = side.strip()
        spec, sep, opts = label.partition(":")
        options = {}
        if sep:
            for pair in opts.split(","):
                key, eq, value = pair.partition("=")
                if not eq or not key.strip():
                    raise UsageError(f"a ruleset's options are KEY=VALUE, got {pair!r} in {side!r}")
                options[key.strip()] = value.strip()
        return label, spec.strip(), options
    if is_pair(side):
        spec, options = side[0].strip(), dict(side[1])
        shown = ",".join(f"{k}={_show(v)}" for k, v in options.items())
        return (f"{spec}:{shown}" if shown else spec), spec, options
    raise UsageError(f"a diff side is 'NAME[@VERSION][:KEY=VALUE,...]' or (NAME, options), got {side!r}")


def is_pair(value) -> bool:
    """Whether `value` is a side given as `(NAME, {KEY: VALUE})`."""
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict)


def _show(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "name", value))
