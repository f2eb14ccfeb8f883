"""Reading one rule file: TOML in, a validated and compiled `Ruleset` out.

Everything a file says is checked here, once, with errors of the form
`FILE: KEY: what is wrong`; `engine.py` can then answer without re-checking.
The schema is documented in docs/rules.md.
"""

from __future__ import annotations

import os
import stat
import string
import sys

from promote_cli.errors import RuleFileError, UsageError, one_line
from promote_cli.oracle import exprcache
from promote_cli.oracle.checked import Expr, ExprError, from_source
from promote_cli.oracle.model import (
    REFUSE,
    Clause,
    ExpressionRules,
    ExprOperator,
    Lattice,
    NAry,
    OperandPolicy,
    Option,
    Ruleset,
    Table,
    TypeMap,
)
from promote_cli.vocab import dtypes, operands
from promote_cli.vocab import operators as operators_vocab
from promote_cli.vocab.dtypes import DType
from promote_cli.vocab.operands import PYTHON, WEAK, Operand

SCHEMA = 2          # the newest schema this promote reads
SCHEMAS = (1, 2)    # every schema it reads; a file without `schema` is schema 1
TOP_KEYS = {"schema", "name", "version", "default", "description", "source", "follows", "extends", "types",
            "unsupported_type", "notes", "probe", "operands", "options", "ops", "tables", "lattices",
            "rules", "after", "sets", "op_lists", "let", "nary", "maps", "claims", "expressions", "messages",
            "opgroups"}
SCHEMA2_KEYS = ("sets", "op_lists", "let", "nary", "maps", "expressions", "messages", "opgroups")
MERGED_KEYS = ("tables", "lattices", "options", "ops", "sets", "op_lists", "let", "maps", "expressions", "messages",
               "opgroups")
RESERVED = frozenset({"a", "b", "op", "result", "true", "false", "True", "False"})
#: `kind:WORD` in a set: the file's types of these vocabulary kinds.
KIND_WORDS = {**{k: (k,) for k in dtypes.KINDS}, "int": ("signed", "unsigned")}
NARY_METHODS = ("fold", "join", "sequence", "grouped")
#: the operand forms a `grouped` N-ary answer may group by (each has a dtype)
GROUP_FORMS = ("tensor", "0d", "weak")
FORM_POLICIES = {"rank0": ("distinct", "tensor"), "weak": ("distinct", "tensor", "refuse"),
                 "python": ("distinct", "refuse")}
OPTION_TYPES = ("bool", "dtype", "choice", "int")
#: the properties a file may claim in `[claims]`; `promote check` proves or refutes each (oracle/properties.py)
CLAIMS = ("commutative", "associative", "lossless", "consistent")
CLAUSE_KEYS = {"name", "ops", "if", "symmetric", "result", "refuse", "weak", "reason"}

# Function names an expression may call; engine.py implements them.
FUNCTIONS = frozenset(("is_bool", "is_int", "is_signed", "is_unsigned", "is_float", "is_complex", "kind", "priority",
             "is_tensor", "is_rank0", "is_python", "is_weak", "has_value", "value", "fits", "dtype", "bits", "exp_bits", "man_bits",
             "signed_int", "unsigned_int", "smallest_int", "smallest_float", "complex_of", "real_of",
             "weak", "strong", "py", "table", "refuses", "join", "mapped", "max", "min", "abs"))
MESSAGE_FIELDS = {"a", "b", "op", "op_group", "result"}


class _Checker:
    """Collects the file name for error messages."""

    def __init__(self, path: str):
        self.path = path
        self.seen: dict[str, Operand] = {}  # operand spellings already parsed (tables repeat them)
        self.messages: dict[str, str] = {}  # the file's [messages]
        self.used: set[str] = set()  # ... those a message site named

    def fail(self, key: str, message: str):
        raise RuleFileError(one_line(f"{self.path}: {key}: {message}"))  # a key or a text quoted may hold a newline

    def table_of(self, raw, key: str) -> dict:
        if not isinstance(raw, dict):
            self.fail(key, f"expected a table, got {type(raw).__name__}")
        return raw

    def str_of(self, raw, key: str, default: str | None = None) -> str:
        if raw is None and default is not None:
            return default
        if not isinstance(raw, str):
            self.fail(key, f"expected a string, got {type(raw).__name__ if raw is not None else 'nothing'}")
        return raw

    def list_of(self, raw, key: str) -> list:
        if not isinstance(raw, list):
            self.fail(key, f"expected a list, got {type(raw).__name__}")
        return raw

    def unknown_keys(self, raw: dict, allowed, key: str):
        extra = sorted(set(raw) - set(allowed))
        if extra:
            self.fail(f"{key}{'.' if key else ''}{extra[0]}",
                      f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def dtype(self, raw, key: str) -> DType:
        found = dtypes.find(raw) if isinstance(raw, str) else None
        if found is None:
            self.fail(key, f"unknown dtype {raw!r}{dtypes.suggest(str(raw))}")
        return found

    def operand(self, raw, key: str) -> Operand:
        if not isinstance(raw, str):
            self.fail(key, f"expected an operand string, got {type(raw).__name__}")
        known = self.seen.get(raw)
        if known is not None:
            return known
        try:
            self.seen[raw] = operands.parse(raw)
        except UsageError as exc:
            self.fail(key, str(exc))
        return self.seen[raw]

    def text(self, raw, key: str, default: str | None = None) -> str:
        """A message: a string, or `{ message = "NAME" }`, the file's `[messages]` entry NAME."""
        if not isinstance(raw, dict):
            return self.str_of(raw, key, default)
        self.unknown_keys(raw, {"message"}, key)
        name = raw.get("message")
        if not isinstance(name, str) or name not in self.messages:
            self.fail(f"{key}.message", f"{one_line(str(name))!r} names no message of this file "
                                        f"([messages]: {', '.join(self.messages) or 'none'})")
        self.used.add(name)
        return self.messages[name]

    def refusal(self, key: str, refuse_if, raw, fields, lists=()) -> str | None:
        """The `refuse` message that goes with a `refuse_if` expression (None when neither is given)."""
        if (refuse_if is None) != (raw is None):
            self.fail(key, "refuse_if and refuse go together")
        return None if raw is None else self.template(raw, f"{key}.refuse", fields, lists)

    def template(self, raw, key: str, fields, lists=()) -> str:
        """A message template (a string or a `[messages]` reference); `{NAME}` must be one of `fields`;
        `{SET:or}`/`{SET:and}` only for `lists`."""
        text = self.text(raw, key)
        try:
            parts = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
        except ValueError as exc:
            self.fail(key, f"bad message template: {exc}")
        for name, spec, conv in parts:
            if name not in fields:
                self.fail(key, f"unknown placeholder {{{name}}} (allowed: {', '.join(sorted(fields))})")
            if conv or (spec and not (spec in ("or", "and") and name in lists)):
                self.fail(key, f"placeholder {{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}: "
                               "only a type set takes a format, :or or :and")
        return text


#: The largest rule file read (the shipped ones are a few tens of kB).
MAX_RULE_FILE_BYTES = 8 << 20


def read_toml(path) -> dict:
    """A rule file's TOML. Only a regular file of bounded size is read (a FIFO, a device or a link to
    one is refused without blocking); it must be UTF-8; every failure is one RuleFileError line."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RuleFileError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RuleFileError(f"{path}: not a regular file")
        if info.st_size > MAX_RULE_FILE_BYTES:
            raise RuleFileError(f"{path}: too large for a rule file ({info.st_size} bytes; "
                                f"the limit is {MAX_RULE_FILE_BYTES})")
        chunks, size = [], 0
        while size <= MAX_RULE_FILE_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise RuleFileError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if size > MAX_RULE_FILE_BYTES:
        raise RuleFileError(f"{path}: too large for a rule file (over {MAX_RULE_FILE_BYTES} bytes)")
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RuleFileError(f"{path}: not UTF-8 (byte {exc.start}, line {line})") from None
    from promote_cli import tomlcache

    return tomlcache.loads(data, lambda: parse_toml(text, path), path)


def parse_toml(text: str, path) -> dict:
    """A rule file's text parsed as TOML (one RuleFileError line when it is not TOML)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(f"{path}: not valid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise RuleFileError(f"{path}: not valid TOML: nested too deeply") from None


def _probe_exists(name: str) -> bool:
    """Whether promote_cli.probes has a module of that name (already imported, or its file is there)."""
    if f"promote_cli.probes.{name}" in sys.modules:
        return True
    try:
        package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        return os.path.isfile(os.path.join(package, "probes", f"{name}.py"))
    except OSError:  # a name too long for a file name
        return False


def merge(base: dict, override: dict) -> dict:
    """A file with `extends`: the base's keys, replaced by the file's; named sections merge by name."""
    merged = dict(base)
    for key, value in override.items():
        if key == "expressions" and isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = _merged_expressions(base[key], value)
        elif key in MERGED_KEYS and isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
        else:
            merged[key] = value
    merged.pop("extends", None)
    merged.pop("default", None)
    if "default" in override:
        merged["default"] = override["default"]
    return merged


def _merged_expressions(base: dict, override: dict) -> dict:
    """`[expressions]` with `extends`: its keys by name, the `defaults`' keys by name (``KEY = false`` leaves
    the base's key out, and with it the base's ``KEY = false`` in groups and operators, which left out that
    default), and each group's and operator's keys by name (a file that changes one operator says only that)."""
    merged = {**base, **override}
    left_out: set = set()
    mine, theirs = override.get("defaults"), base.get("defaults")
    if isinstance(mine, dict) and isinstance(theirs, dict):
        left_out = {k for k, v in mine.items() if v is False and k in theirs}
        merged["defaults"] = {k: v for k, v in {**theirs, **mine}.items() if k not in left_out}
    for key in ("groups", "operators"):
        mine, theirs = override.get(key) or {}, base.get(key)
        if not isinstance(theirs, dict) or not isinstance(mine, dict):
            continue
        blocks = {**theirs, **{k: {**theirs[k], **v} if isinstance(v, dict) and isinstance(theirs.get(k), dict) else v
                               for k, v in mine.items()}}
        merged[key] = {k: {f: x for f, x in v.items() if not (x is False and f in left_out)} if isinstance(v, dict)
                       else v for k, v in blocks.items()}
    return merged


def build(raw: dict, path: str, cache: bool = False) -> Ruleset:
    """Validate and compile a (merged) rule-file dict. With `cache`, its compiled expressions come from (and
    go to) the cache entry of the rule file `path` (`exprcache.py`); every other part of the file is checked
    either way."""
    name = exprcache.key(raw, path, dtypes.DTYPES) if cache else None
    sites = exprcache.read(path, name) if name is not None else None
    if sites is not None:
        try:
            return _build(raw, path, sites)[0]
        except exprcache.Stale:
            pass
    rs, compiled = _build(raw, path, None)
    if name is not None:
        exprcache.write(path, name, compiled)
    return rs


def _build(raw: dict, path: str, sites: dict | None) -> tuple[Ruleset, dict]:
    """The ruleset, and what its expressions compiled to (site -> [text, source, names]); the expressions
    come from `sites` (a cache entry) when given."""
    check = _Checker(path)
    check.unknown_keys(raw, TOP_KEYS, "")
    schema = raw.get("schema", 1)
    if schema not in SCHEMAS:
        check.fail("schema", f"this promote reads schemas {', '.join(map(str, SCHEMAS))}, "
                             f"the file is written for {schema!r}")
    if schema < 2:
        for key in SCHEMA2_KEYS:
            if key in raw:
                check.fail(key, "needs schema = 2")
    name = check.str_of(raw.get("name"), "name")
    if not name or "@" in name or not name.replace("-", "").replace("_", "").isalnum():
        check.fail("name", f"{name!r} is not a framework name (letters, digits, - and _)")
    version = str(check.str_of(raw.get("version"), "version"))
    default = raw.get("default", False)
    if not isinstance(default, bool):
        check.fail("default", "expected true or false")
    follows = check.str_of(raw.get("follows"), "follows", "spec")
    if follows not in ("spec", "implementation"):
        check.fail("follows", f"expected 'spec' or 'implementation', got {follows!r}")

    check.messages = _messages(check, raw.get("messages", {}))
    sets = _Sets(check, raw.get("sets", {}))
    types = sets.expand(check.list_of(raw.get("types"), "types"), "types")
    sets.types = types
    sets.resolve_all()
    notes = tuple(check.str_of(n, f"notes[{i}]") for i, n in enumerate(check.list_of(raw.get("notes", []), "notes")))
    probe = raw.get("probe")
    if probe is not None and (not isinstance(probe, str) or not probe.isidentifier() or not _probe_exists(probe)):
        check.fail("probe", f"expected the name of a module in promote_cli.probes, got {probe!r}")

    policy = _operand_policy(check, raw.get("operands", {}))
    options = _options(check, raw.get("options", {}), sets)
    ops, op_index = _ops(check, raw.get("ops"))
    op_lists = _op_lists(check, raw.get("op_lists", {}), ops)
    tables = {n: _table(check, n, t, sets) for n, t in check.table_of(raw.get("tables", {}), "tables").items()}
    lattices = _lattices(check, check.table_of(raw.get("lattices", {}), "lattices"), options)
    maps = _maps(check, raw.get("maps", {}), options, sets)
    for name in set(maps) & set(lattices):
        check.fail(f"maps.{name}", f"{name!r} is already the name of a lattice")

    rs = Ruleset(
        name=name, version=version, path=path,
        description=check.str_of(raw.get("description"), "description", ""),
        source=check.str_of(raw.get("source"), "source", ""),
        follows=follows, default=default, types=types,
        unsupported_type=check.template(raw.get("unsupported_type", f"{name} has no {{dtype}} type"),
                                        "unsupported_type", {"dtype"}),
        notes=notes, probe=probe, operands=policy, options=options, ops=ops,
        tables=tables, lattices=lattices, rules=[], after=[], op_index=op_index,
        schema=schema, sets=sets.done, op_lists=op_lists, type_set=frozenset(types), maps=maps,
    )
    _check_types(check, rs)
    scope = _Scope(check, rs, sites)
    if sites is None:  # lets matter only to compiling; a cache entry holds expressions with them inlined
        scope.lets = _lets(check, raw.get("let", {}), scope)
    for phase in ("rules", "after"):
        clauses = check.list_of(raw.get(phase, []), phase)
        seen = set()
        for index, item in enumerate(clauses):
            clause = _clause(check, rs, scope, phase, index, item)
            if clause.name in seen:
                check.fail(f"{phase}[{index}].name", f"duplicate rule name {clause.name!r}")
            seen.add(clause.name)
            getattr(rs, phase).append(clause)
    rs.nary = _nary(check, raw.get("nary"), rs, scope)
    rs.claims = _claims(check, raw.get("claims", {}))
    if "expressions" in raw:
        rs.expressions = _expressions(check, raw["expressions"], rs, scope)
    if "opgroups" in raw:
        from promote_cli.oracle.opgroups import opgroups

        rs.opgroups, rs.op_names = opgroups(check, raw["opgroups"], rs, scope, MESSAGE_FIELDS)
    unused = [name for name in check.messages if name not in check.used]
    if unused:
        check.fail(f"messages.{unused[0]}", "no message site names it (`{ message = \"" + unused[0] + "\" }`)")
    return rs, scope.compiled


def _messages(check: _Checker, raw) -> dict[str, str]:
    """`[messages]`: NAME = "text", a message written once and named wherever it is said (each use is checked
    as a template where it is used)."""
    raw = check.table_of(raw, "messages")
    for name, text in raw.items():
        if not name.isidentifier():
            check.fail(f"messages.{one_line(name)}", "a message name is an identifier")
        check.str_of(text, f"messages.{name}")
    return dict(raw)


def _claims(check: _Checker, raw) -> dict[str, bool]:
    """`[claims]`: properties the file says its rules have (true) or lack (false), checked by `promote check`."""
    raw = check.table_of(raw, "claims")
    check.unknown_keys(raw, CLAIMS, "claims")
    for key, value in raw.items():
        if not isinstance(value, bool):
            check.fail(f"claims.{key}", f"expected true or false, got {value!r}")
    return {key: raw[key] for key in CLAIMS if key in raw}


def type_set(raw: dict, name: str, path: str) -> tuple[DType, ...]:
    """The dtypes of the set `name` of a rule file's TOML, without building the rest of the file."""
    check = _Checker(path)
    sets = _Sets(check, raw.get("sets", {}))
    if name not in sets.raw:
        check.fail("sets", f"the file has no set {name!r}")
    sets.types = sets.expand(check.list_of(raw.get("types"), "types"), "types")
    return sets.get(name, (), f"sets.{name}")


class _Sets:
    """Named type sets: lists of dtypes, other sets (union), `kind:KIND` and `-NAME` (removal)."""

    def __init__(self, check: _Checker, raw):
        self.check = check
        self.raw = check.table_of(raw, "sets")
        for name in self.raw:
            if not name.isidentifier() or name in RESERVED:
                check.fail(f"sets.{name}", "a set name is an identifier other than a, b, op, result, true, false")
            if dtypes.find(name) is not None:
                check.fail(f"sets.{name}", f"{name!r} is already a dtype name")
        self.done: dict[str, tuple[DType, ...]] = {}
        self.types: tuple[DType, ...] | None = None

    def get(self, name: str, stack: tuple[str, ...], key: str) -> tuple[DType, ...]:
        found = self.done.get(name)
        if found is not None:
            return found
        if name in stack:
            self.check.fail(key, f"set {stack[0]} is built from itself: {' -> '.join(stack + (name,))}")
        found = self.done[name] = self.expand(self.check.list_of(self.raw[name], f"sets.{name}"),
                                              f"sets.{name}", stack + (name,))
        return found

    def expand(self, items: list, key: str, stack: tuple[str, ...] = ()) -> tuple[DType, ...]:
        out: list[DType] = []
        seen: set[str] = set()
        for index, item in enumerate(items):
            where = f"{key}[{index}]"
            word = self.check.str_of(item, where).strip()
            remove = word.startswith("-")
            word = word[1:].strip() if remove else word
            if word.startswith("kind:"):
                if self.types is None:
                    self.check.fail(where, "`types` lists dtypes and sets of dtypes; kind: selects from `types`")
                kinds = KIND_WORDS.get(word[5:])
                if kinds is None:
                    self.check.fail(where, f"unknown kind {word[5:]!r} (kinds: {', '.join(KIND_WORDS)})")
                members = tuple(d for d in self.types if d.kind in kinds)
            elif word in self.raw:
                members = self.get(word, stack, where)
            else:
                members = (self.check.dtype(word, where),)
                if not remove and members[0].name in seen:
                    self.check.fail(where, f"duplicate dtype {members[0]}")
            if remove:
                gone = {d.name for d in members}
                out = [d for d in out if d.name not in gone]
                seen -= gone
            else:
                for d in members:
                    if d.name not in seen:
                        seen.add(d.name)
                        out.append(d)
        return tuple(out)

    def resolve_all(self):
        for name in self.raw:
            members = self.get(name, (), f"sets.{name}")
            stray = [d.name for d in members if d not in self.types]
            if stray:
                self.check.fail(f"sets.{name}", f"{', '.join(stray)} not in the file's types")


def _op_lists(check: _Checker, raw, ops) -> dict[str, tuple[str, ...]]:
    """Named lists of op groups: groups, other lists (union) and `-NAME` (removal)."""
    raw = check.table_of(raw, "op_lists")
    if raw and ops is None:
        check.fail("op_lists", "the file declares no [ops] groups")
    done: dict[str, tuple[str, ...]] = {}

    def get(name: str, stack: tuple[str, ...]) -> tuple[str, ...]:
        if name in done:
            return done[name]
        if name in stack:
            check.fail(f"op_lists.{stack[0]}", f"built from itself: {' -> '.join(stack + (name,))}")
        key = f"op_lists.{name}"
        out: list[str] = []
        for index, item in enumerate(check.list_of(raw[name], key)):
            word = check.str_of(item, f"{key}[{index}]").strip()
            remove = word.startswith("-")
            word = word[1:].strip() if remove else word
            if word in raw:
                members = get(word, stack + (name,))
            elif word in ops:
                members = (word,)
                if not remove and word in out:
                    check.fail(f"{key}[{index}]", f"op group {word!r} is already in the list")
            else:
                check.fail(f"{key}[{index}]", f"{word!r} is neither an op group nor an op list "
                                              f"(groups: {', '.join(ops)})")
            if remove:
                out = [g for g in out if g not in members]
            else:
                out.extend(g for g in members if g not in out)
        done[name] = tuple(out)
        return done[name]

    for name in raw:
        if not name.isidentifier() or name in RESERVED:
            check.fail(f"op_lists.{name}", "an op list name is an identifier other than a, b, op, result")
        if name in ops:
            check.fail(f"op_lists.{name}", f"{name!r} is already an op group")
        get(name, ())
    return done


def _operand_policy(check: _Checker, raw) -> OperandPolicy:
    raw = check.table_of(raw, "operands")
    check.unknown_keys(raw, set(FORM_POLICIES) | {"refuse_message"}, "operands")
    policy = OperandPolicy()
    for key, allowed in FORM_POLICIES.items():
        if key not in raw:
            continue
        value = raw[key]
        if key == "python" and isinstance(value, dict):
            check.unknown_keys(value, operands.PY_KINDS, "operands.python")
            value = {kind: check.operand(v, f"operands.python.{kind}") for kind, v in value.items()}
            for kind, op in value.items():
                if op.form == operands.PYTHON:
                    check.fail(f"operands.python.{kind}", "a Python scalar must map to a tensor or weak operand")
        elif value not in allowed:
            check.fail(f"operands.{key}", f"expected one of {', '.join(allowed)}"
                       + (" or a table of kinds" if key == "python" else "") + f", got {value!r}")
        setattr(policy, key, value)
    policy.refuse_message = check.text(raw.get("refuse_message"), "operands.refuse_message", "")
    return policy


def _options(check: _Checker, raw, sets: _Sets) -> dict[str, Option]:
    options = {}
    for name, spec in check.table_of(raw, "options").items():
        key = f"options.{name}"
        if not name.isidentifier():
            check.fail(key, "an option name must be an identifier")
        spec = check.table_of(spec, key)
        check.unknown_keys(spec, {"type", "default", "values", "hint", "doc"}, key)
        kind = spec.get("type")
        if kind not in OPTION_TYPES:
            check.fail(f"{key}.type", f"expected one of {', '.join(OPTION_TYPES)}, got {kind!r}")
        values = check.list_of(spec.get("values", []), f"{key}.values")
        if kind == "dtype":
            values = sets.expand(values, f"{key}.values")
        elif kind == "choice":
            if not values:
                check.fail(f"{key}.values", "a choice option lists its values")
            values = tuple(str(v) for v in values)
        else:
            values = tuple(values)
        option = Option(name, kind, None, values, (), check.str_of(spec.get("doc"), f"{key}.doc", ""))
        if "default" not in spec:
            check.fail(f"{key}.default", "missing")
        try:
            option.default = option.parse(spec["default"])
            hints = check.list_of(spec.get("hint", []), f"{key}.hint")
            option.hint = tuple(option.parse(h) for h in hints)
        except UsageError as exc:
            check.fail(f"{key}.default/hint", str(exc))
        if kind == "bool" and not option.hint:
            option.hint = (True, False)
        options[name] = option
    return options


def _ops(check: _Checker, raw):
    if raw is None:
        return None, {}
    index: dict[str, str] = {}
    ops = {}
    for group, spec in check.table_of(raw, "ops").items():
        key = f"ops.{group}"
        if not group.isidentifier():
            check.fail(key, "an op group name must be an identifier")
        spec = check.table_of(spec, key)
        check.unknown_keys(spec, {"names", "doc"}, key)
        names = check.list_of(spec.get("names"), f"{key}.names")
        if not names:
            check.fail(f"{key}.names", "an op group needs at least one name")
        for i, op in enumerate(names):
            op = check.str_of(op, f"{key}.names[{i}]")
            if op in index:
                check.fail(f"{key}.names[{i}]", f"op {op!r} is already in group {index[op]!r}")
            index[op] = group
        ops[group] = tuple(names)
    return ops, index


def _table(check: _Checker, name: str, raw, sets: _Sets) -> Table:
    key = f"tables.{name}"
    raw = check.table_of(raw, key)
    check.unknown_keys(raw, {"columns", "rows", "commutative", "refusal", "reason", "reasons"}, key)
    marker = check.str_of(raw.get("refusal"), f"{key}.refusal", "x")
    raw_columns = raw.get("columns")
    if isinstance(raw_columns, str) and raw_columns in sets.raw:  # columns = "SET": the set's dtypes
        raw_columns = [d.name for d in sets.done[raw_columns]]
    columns = [check.operand(c, f"{key}.columns[{i}]") for i, c in
               enumerate(check.list_of(raw_columns, f"{key}.columns"))]
    col_names = tuple(str(c) for c in columns)
    if len(set(col_names)) != len(col_names):
        dup = next(c for c in col_names if col_names.count(c) > 1)
        check.fail(f"{key}.columns", f"duplicate column {dup}")
    rows: dict[str, tuple] = {}
    for row_key, cells in check.table_of(raw.get("rows"), f"{key}.rows").items():
        row_op = str(check.operand(row_key, f"{key}.rows.{row_key}"))
        if row_op in rows:
            check.fail(f"{key}.rows.{row_key}", f"duplicate row {row_op}")
        cells = check.list_of(cells, f"{key}.rows.{row_key}")
        if len(cells) != len(col_names):
            check.fail(f"{key}.rows.{row_key}",
                       f"{len(cells)} cells for {len(col_names)} columns (missing or extra cells)")
        parsed = []
        for col, cell in zip(col_names, cells):
            if cell == marker:
                parsed.append(REFUSE)
            else:
                parsed.append(check.operand(cell, f"{key}.rows.{row_key} (column {col})"))
        rows[row_op] = tuple(parsed)
    commutative = raw.get("commutative", False)
    if not isinstance(commutative, bool):
        check.fail(f"{key}.commutative", "expected true or false")
    table = Table(name, col_names, rows, commutative,
                  check.text(raw.get("reason"), f"{key}.reason", "no promotion between {a} and {b}"), marker)
    for row, cells in rows.items():
        for col, cell in zip(col_names, cells):
            table.cells[(row, col)] = cell
    if commutative:
        if set(rows) != set(col_names):
            check.fail(key, "a commutative table has the same rows as columns")
        for (row, col), cell in table.cells.items():
            mirror = table.cells[(col, row)]
            if str(cell) != str(mirror):
                check.fail(f"{key}.rows.{row}",
                           f"column {col} says {_cell(cell, marker)} but row {col}, column {row} says "
                           f"{_cell(mirror, marker)} (the table is declared commutative)")
    check.template(table.reason, f"{key}.reason", {"a", "b", "table"})
    _cell_reasons(check, key, raw.get("reasons"), table)
    return table


def _cell_reasons(check: _Checker, key: str, raw, table: Table) -> None:
    """`[tables.NAME.reasons]`: "ROW COLUMN" = the reason of that refused cell (and of its mirror in a
    commutative table), instead of the table's `reason`."""
    if raw is None:
        return
    for cell_key, text in check.table_of(raw, f"{key}.reasons").items():
        where = f"{key}.reasons.{cell_key}"
        names = str(cell_key).split()
        if len(names) != 2:
            check.fail(where, "a reason's key is 'ROW COLUMN', two operands")
            continue
        row, col = (str(check.operand(n, where)) for n in names)
        if table.cells.get((row, col)) is not REFUSE:
            check.fail(where, f"row {row}, column {col} is not a refused cell of the table")
            continue
        text = check.template(text, where, {"a", "b", "table"})
        table.reasons[(row, col)] = text
        if table.commutative:
            table.reasons[(col, row)] = text


def _cell(cell, marker: str) -> str:
    return marker if cell is REFUSE else str(cell)


def _lattices(check: _Checker, raw: dict, options: dict[str, Option]) -> dict[str, Lattice]:
    """Every lattice, bases before the lattices built on them, choices after the lattices they pick."""
    done: dict[str, Lattice] = {}

    def get(name: str, stack: tuple[str, ...]) -> Lattice:
        if name in done:
            return done[name]
        key = f"lattices.{name}"
        if name in stack:
            check.fail(key, f"built on itself: {' -> '.join(stack + (name,))}")
        spec = check.table_of(raw[name], key)
        for ref in ([spec["base"]] if "base" in spec else []) + list(check.table_of(spec.get("pick", {}),
                                                                                  f"{key}.pick").values()):
            if not isinstance(ref, str) or ref not in raw:
                check.fail(key, f"{ref!r} names no lattice of this file ({', '.join(raw)})")
            get(ref, stack + (name,))
        done[name] = _lattice(check, name, spec, done, options)
        return done[name]

    for name in raw:
        get(name, ())
    return {name: done[name] for name in raw}


def _lattice(check: _Checker, name: str, raw: dict, done: dict[str, Lattice], options: dict[str, Option]) -> Lattice:
    key = f"lattices.{name}"
    if "option" in raw or "pick" in raw:
        return _lattice_choice(check, name, raw, done, options)
    check.unknown_keys(raw, {"edges", "reason", "weak", "base"}, key)
    base = done[raw["base"]] if "base" in raw else None
    if base is not None and base.option is not None:
        check.fail(f"{key}.base", f"{base.name} is a choice of lattices, not a lattice")
    edges: dict[str, tuple[str, ...]] = dict(base.edges) if base else {}
    nodes: dict[str, Operand] = dict(base.nodes) if base else {}
    for node, succ in check.table_of(raw.get("edges", {} if base else None), f"{key}.edges").items():
        op = check.operand(node, f"{key}.edges.{node}")
        nodes[str(op)] = op
        targets = []
        for i, s in enumerate(check.list_of(succ, f"{key}.edges.{node}")):
            t = check.operand(s, f"{key}.edges.{node}[{i}]")
            nodes[str(t)] = t
            targets.append(str(t))
        if base is not None and base.edges.get(str(op)) == tuple(targets):
            check.fail(f"{key}.edges.{node}", f"repeats the successors {base.name} gives it (a lattice with a base "
                                              "lists only the nodes whose successors differ)")
        edges[str(op)] = tuple(targets)
    for node in nodes:
        edges.setdefault(node, ())
    weak: dict[str, Operand] = dict(base.weak) if base else {}
    for node, value in check.table_of(raw.get("weak", {}), f"{key}.weak").items():
        where = f"{key}.weak.{node}"
        op = check.operand(node, where)
        if str(op) not in nodes:
            check.fail(where, f"{op} is not a node of the lattice")
        if op.form not in (PYTHON, WEAK):
            check.fail(where, f"{op} is not a weak node (py:KIND or weak:DTYPE)")
        weak[str(op)] = Operand(WEAK, check.dtype(value, where))
    for node, op in nodes.items():
        if op.form == WEAK:
            weak.setdefault(node, op)
        elif op.form == PYTHON and node not in weak:
            check.fail(f"{key}.weak", f"the weak node {node} declares no default dtype (weak = {{ \"{node}\" = ... }})")
    upper: dict[str, frozenset[str]] = {}

    def closure(node: str, path: tuple[str, ...]) -> frozenset[str]:
        if node in upper:
            return upper[node]
        if node in path:
            check.fail(f"{key}.edges", f"cycle through {' -> '.join(path + (node,))}")
        found = {node}
        for nxt in edges[node]:
            found |= closure(nxt, path + (node,))
        upper[node] = frozenset(found)
        return upper[node]

    for node in edges:
        closure(node, ())
    default_reason = base.reason if base else "no common type for {a} and {b}"
    reason = check.template(raw.get("reason", default_reason), f"{key}.reason", {"a", "b"})
    if base is not None and "reason" in raw and reason == base.reason:
        check.fail(f"{key}.reason", f"repeats the reason of {base.name}, which a lattice with a base inherits")
    lattice = Lattice(name, edges, reason, upper, nodes, weak)
    _joins(check, key, lattice)
    return lattice


def _joins(check: _Checker, key: str, lattice: Lattice):
    """The least upper bound of every pair; a pair with common upper bounds but no least one is a defect."""
    upper, order = lattice.upper, list(lattice.edges)
    for i, x in enumerate(order):
        for y in order[i:]:
            if y in upper[x]:
                least = y
            elif x in upper[y]:
                least = x
            else:
                common = upper[x] & upper[y]
                if not common:
                    continue
                found = [c for c in common if common <= upper[c]]
                if len(found) != 1:
                    minimal = sorted(c for c in common if not any(d != c and c in upper[d] for d in common))
                    check.fail(key, f"{x} and {y} have no least upper bound: {' and '.join(minimal)} are both "
                                    "minimal common upper bounds (a diamond without a join)")
                least = found[0]
            lattice.joins[(x, y)] = lattice.joins[(y, x)] = least


def _lattice_choice(check: _Checker, name: str, raw: dict, done: dict[str, Lattice],
                    options: dict[str, Option]) -> Lattice:
    option, pick = _choice(check, f"lattices.{name}", raw, options, done, "lattice")
    return Lattice(name, {}, "", option=option, pick=pick)


def _choice(check: _Checker, key: str, raw: dict, options: dict[str, Option], pool: dict, what: str):
    """(option name, {option value: name in pool}) of a `option = ..., pick = {...}` section."""
    check.unknown_keys(raw, {"option", "pick"}, key)
    option = options.get(check.str_of(raw.get("option"), f"{key}.option"))
    if option is None:
        check.fail(f"{key}.option", f"{raw['option']!r} is not an option of this file ({', '.join(options) or 'none'})")
    if option.type not in ("bool", "choice"):
        check.fail(f"{key}.option", f"a {what} is picked by a bool or choice option, {option.name} is a {option.type}")
    pick = {}
    for value, target in check.table_of(raw.get("pick"), f"{key}.pick").items():
        try:
            parsed = option.parse(value)
        except UsageError as exc:
            check.fail(f"{key}.pick.{value}", str(exc))
        if not isinstance(target, str) or target not in pool:
            check.fail(f"{key}.pick.{value}", f"{target!r} names no {what} of this file ({', '.join(pool)})")
        if pool[target].option is not None:
            check.fail(f"{key}.pick.{value}", f"{target} is itself a choice")
        pick[parsed] = target
    every = (True, False) if option.type == "bool" else option.values
    missing = [option.show(v) for v in every if v not in pick]
    if missing:
        check.fail(f"{key}.pick", f"no {what} for {option.name} = {', '.join(missing)}")
    return option.name, pick


def _maps(check: _Checker, raw, options: dict[str, Option], sets: _Sets) -> dict[str, TypeMap]:
    """Type maps (`FROM = "TO"`, FROM a dtype or a set), and maps picked by an option."""
    raw = check.table_of(raw, "maps")
    maps: dict[str, TypeMap] = {}
    for name, spec in raw.items():
        key = f"maps.{name}"
        spec = check.table_of(spec, key)
        if "option" in spec or "pick" in spec:
            continue
        pairs: dict[str, DType] = {}
        for source, target in spec.items():
            to = check.dtype(target, f"{key}.{source}")
            if to not in sets.types:
                check.fail(f"{key}.{source}", f"{to} is not in the file's types")
            for d in sets.expand([source], f"{key}.{source}"):
                if d.name in pairs:
                    check.fail(f"{key}.{source}", f"{d} is mapped twice")
                pairs[d.name] = to
        maps[name] = TypeMap(name, pairs)
    for name, spec in raw.items():
        if "option" in spec or "pick" in spec:
            option, pick = _choice(check, f"maps.{name}", spec, options, maps, "map")
            maps[name] = TypeMap(name, {}, option, pick)
    return {name: maps[name] for name in raw}


def _check_types(check: _Checker, rs: Ruleset):
    """Every dtype a table cell or a lattice can give is one of the file's types."""
    for name, table in rs.tables.items():
        for (row, col), cell in table.cells.items():
            if cell is not REFUSE and cell.dtype is not None and cell.dtype not in rs.type_set:
                check.fail(f"tables.{name}.rows.{row}", f"column {col} gives {cell}, which is not in the file's types")
    for name, lattice in rs.lattices.items():
        for node, op in [*lattice.nodes.items(), *lattice.weak.items()]:
            if op.dtype is not None and op.dtype not in rs.type_set:
                check.fail(f"lattices.{name}", f"{node} gives {op}, whose dtype is not in the file's types")


class _Scope:
    """The names rule expressions may use, and how table/lattice references are checked and compiled."""

    def __init__(self, check: _Checker, rs: Ruleset, sites: dict | None = None):
        self.rs = rs
        self.sites = sites  # compiled expressions from the cache, by site
        self.compiled: dict[str, list] = {}  # what each expression compiled to, for the cache
        owners: dict[str, str] = {}
        for section, names in (("options", rs.options), ("sets", rs.sets), ("op_lists", rs.op_lists)):
            for name in names:
                if name in owners:
                    check.fail(f"{section}.{name}", f"{name!r} is already a name in [{owners[name]}]")
                if name in RESERVED or name in dtypes.DTYPES or name in FUNCTIONS:
                    check.fail(f"{section}.{name}", f"{name!r} is a name the rules already know")
                owners[name] = section
        self.names = frozenset(RESERVED - {"result"} | set(dtypes.DTYPES) | set(owners))
        self.names_with_result = self.names | {"result"}
        self.lets: dict = {}

    def check_call(self, text: str, node):
        import ast

        from promote_cli.oracle.expr import REFERENCE_FUNCTIONS

        what = REFERENCE_FUNCTIONS.get(node.func.id)
        if what is None:
            return
        where = {"table": self.rs.tables, "lattice": self.rs.lattices, "map": self.rs.maps}[what]
        first = node.args[0] if node.args else None
        if not isinstance(first, ast.Constant) or first.value not in where:
            raise ExprError(f"{text!r} names no {what} of this file ({', '.join(where) or 'none defined'})")

    def rewrite_call(self, node):
        """`join('CHOICE', ...)` -> `join(_pick('CHOICE', OPTION), ...)`: the option's value picks the
        lattice (or the map, for `mapped`)."""
        import ast

        from promote_cli.oracle.expr import REFERENCE_FUNCTIONS

        what = REFERENCE_FUNCTIONS.get(node.func.id)
        if what in ("lattice", "map"):
            chosen = (self.rs.lattices if what == "lattice" else self.rs.maps)[node.args[0].value]
            if chosen.option is not None:
                first = node.args[0]
                pick = ast.Call(ast.Name("_pick", ast.Load()), [first, ast.Name(chosen.option, ast.Load())], [])
                for new in (pick, pick.func, pick.args[1]):
                    ast.copy_location(new, first)
                node.args[0] = pick
        return node

    def field(self, check: _Checker, key: str, spec: dict, name: str, names, longest: int | None = None):
        """The expression `spec[name]` compiled at `KEY.NAME` (None when absent); RuleFileError for a value that is
        no string, longer than `longest` characters, or an expression that strays."""
        if name not in spec:
            return None
        text = check.str_of(spec[name], f"{key}.{name}")
        if longest is not None and len(" ".join(text.split())) > longest:
            check.fail(f"{key}.{name}", f"longer than {longest} characters: name a part of it in [let]")
        try:
            return self.compile(f"{key}.{name}", text, names)
        except ExprError as exc:
            check.fail(f"{key}.{name}", str(exc))

    def compile(self, site: str, text, names: frozenset[str], functions: frozenset[str] = FUNCTIONS) -> Expr:
        """The expression `text` at `site` (`rules[2] (name).if`), reading `names` and calling `functions`:
        from the cache entry when there is one (exprcache.Stale when it does not fit), else checked and
        compiled (ExprError when it strays)."""
        if self.sites is not None:
            source, used = exprcache.cached(self.sites, site, text)
            found = from_source(text, source, used, names | functions)
            if found is None:
                raise exprcache.Stale(site)
            return found
        from promote_cli.oracle.expr import compile_checked

        found, source = compile_checked(text, names, functions, self.lets, self.check_call, self.rewrite_call)
        self.compiled[site] = [text, source, sorted(found.names)]
        return found


def _lets(check: _Checker, raw, scope: _Scope) -> dict:
    from promote_cli.oracle.expr import define_lets

    raw = check.table_of(raw, "let")
    for key, text in raw.items():
        check.str_of(text, f"let.{key}")
    try:
        return define_lets(raw, scope.names_with_result, FUNCTIONS, scope.check_call, scope.rewrite_call)
    except ExprError as exc:
        check.fail("let", str(exc))


def _clause(check: _Checker, rs: Ruleset, scope: _Scope, phase: str, index: int, raw) -> Clause:
    key = f"{phase}[{index}]"
    raw = check.table_of(raw, key)
    check.unknown_keys(raw, CLAUSE_KEYS, key)
    name = check.str_of(raw.get("name"), f"{key}.name")
    key = f"{phase}[{index}] ({name})"
    ops = raw.get("ops")
    if ops is not None:
        ops = [ops] if isinstance(ops, str) and rs.schema >= 2 else check.list_of(ops, f"{key}.ops")
        if rs.ops is None:
            check.fail(f"{key}.ops", "the file declares no [ops] groups")
        groups: list[str] = []
        for op in ops:
            if not isinstance(op, str):
                check.fail(f"{key}.ops", f"expected op group names, got {type(op).__name__}")
            if op in rs.op_lists:
                groups.extend(rs.op_lists[op])
            elif op in rs.ops:
                groups.append(op)
            else:
                lists = f"; op lists: {', '.join(rs.op_lists)}" if rs.op_lists else ""
                check.fail(f"{key}.ops", f"unknown op group {op!r} (groups: {', '.join(rs.ops)}{lists})")
        ops = frozenset(groups)
    if ("result" in raw) == ("refuse" in raw):
        check.fail(key, "a rule has either `result` or `refuse`")
    symmetric = raw.get("symmetric", False)
    if not isinstance(symmetric, bool):
        check.fail(f"{key}.symmetric", "expected true or false")
    fields = MESSAGE_FIELDS | set(rs.options) | set(rs.sets)

    def expr(field_name: str) -> Expr | None:
        if field_name not in raw:
            return None
        try:
            names = scope.names_with_result if phase == "after" or field_name == "weak" else scope.names
            return scope.compile(f"{key}.{field_name}", raw[field_name], names)
        except ExprError as exc:
            check.fail(f"{key}.{field_name}", str(exc))

    refuse = raw.get("refuse")
    if refuse is not None:
        refuse = check.template(refuse, f"{key}.refuse", fields, rs.sets)
    reason = check.template(raw.get("reason", ""), f"{key}.reason", fields, rs.sets) if "reason" in raw else ""
    return Clause(name, ops, expr("if"), symmetric, expr("result"), refuse, expr("weak"), reason)


def _nary(check: _Checker, raw, rs: Ruleset, scope: _Scope) -> NAry:
    if raw is None:
        return NAry()
    lattices, maps = rs.lattices, rs.maps
    raw = check.table_of(raw, "nary")
    check.unknown_keys(raw, {"method", "lattice", "map", "strong_first", "order", "knows", "keeps", "groups", "when",
                             "doc"}, "nary")
    method = raw.get("method")
    if method not in NARY_METHODS:
        check.fail("nary.method", f"expected one of {', '.join(NARY_METHODS)}, got {method!r}")
    check.str_of(raw.get("doc", ""), "nary.doc")
    strong_first = raw.get("strong_first", False)
    if not isinstance(strong_first, bool):
        check.fail("nary.strong_first", "expected true or false")
    lattice, mapping = raw.get("lattice"), raw.get("map")
    if method == "join" and lattice is not None:
        if lattice not in lattices:
            check.fail("nary.lattice", f"{lattice!r} names no lattice of this file ({', '.join(lattices) or 'none'})")
        if mapping is not None and mapping not in maps:
            check.fail("nary.map", f"{mapping!r} names no map of this file ({', '.join(maps) or 'none'})")
    elif mapping is not None:
        check.fail("nary.map", "only a join on a lattice reads a map")
    elif lattice is not None:
        check.fail("nary", "only the join method reads a lattice and a map")
    when = None
    if "when" in raw:  # where the method answers (the op, the options); elsewhere the default fold
        try:
            when = scope.compile("nary.when", check.str_of(raw["when"], "nary.when"), scope.names - {"a", "b"})
        except ExprError as exc:
            check.fail("nary.when", str(exc))
    groups = raw.get("groups")
    if method == "grouped":
        groups = tuple(check.list_of(groups, "nary.groups"))
        if not groups or any(g not in GROUP_FORMS for g in groups) or len(set(groups)) != len(groups):
            check.fail("nary.groups", f"expected distinct operand forms from {', '.join(GROUP_FORMS)}, got {list(groups)}")
    elif groups is not None:
        check.fail("nary.groups", "only the grouped method reads groups")
    if method != "sequence":
        for key in ("order", "knows", "keeps"):
            if key in raw:
                check.fail(f"nary.{key}", "only the sequence method reads order, knows and keeps")
        return NAry(method, lattice, mapping, strong_first, groups=groups or (), when=when)
    order = tuple(check.list_of(raw.get("order", []), "nary.order"))
    for index, spelling in enumerate(order):
        if not isinstance(spelling, str) or check.operand(spelling, f"nary.order[{index}]") is None:
            check.fail(f"nary.order[{index}]", f"expected an operand spelling, got {spelling!r}")
    if len(set(order)) != len(order):
        check.fail("nary.order", "an operand is listed twice")
    if "knows" not in raw:
        check.fail("nary.knows", "the sequence method needs `knows`: when a's common type answers for b")
    expressions = {}
    for key in ("knows", "keeps"):
        if key in raw:
            text = check.str_of(raw[key], f"nary.{key}")
            try:
                expressions[key] = scope.compile(f"nary.{key}", text, scope.names | {"rank"}, FUNCTIONS | {"rank"})
            except ExprError as exc:
                check.fail(f"nary.{key}", str(exc))
    return NAry(method, None, None, strong_first, order, expressions["knows"], expressions.get("keeps"), when=when)


EXPR_OPERATOR_KEYS = {"op", "promotion", "promotion_if", "both_python", "skip_after", "result", "refuse_if", "refuse", "literal_range", "condition",
                      "condition_refuse", "doc"}
#: the keys an operator may leave out (`KEY = false`) when it would inherit them
EXPR_OPTIONAL_KEYS = EXPR_OPERATOR_KEYS - {"op"}
#: names an operator's expressions see besides the rule names: a Python scalar's value (0 when unknown)
EXPR_NAMES = frozenset({"a_value", "b_value"})


def _operator_specs(check: _Checker, raw: dict) -> dict[str, dict]:
    """Each operator's keys, inherited and its own (docs/rules.md, "Saying it once"): `[expressions.defaults]`
    for every binary operator and call, then each `[expressions.groups.NAME]` that lists the operator, then
    its own `[expressions.operators.NAME]` block, each later one overriding; `KEY = false` leaves an inherited
    key out. The operators are those with a block (in the file's order), then those only a group lists."""
    allowed = operators_vocab.OPERATOR_NAMES
    own = check.table_of(raw.get("operators", {}), "expressions.operators")
    defaults = check.table_of(raw.get("defaults", {}), "expressions.defaults")
    check.unknown_keys(defaults, EXPR_OPERATOR_KEYS, "expressions.defaults")
    declared = {}
    for name, spec in own.items():
        key = f"expressions.operators.{one_line(name)}"
        if name not in allowed:
            check.fail(key, f"unknown operator (operators: {', '.join(allowed)})")
        spec = check.table_of(spec, key)
        check.unknown_keys(spec, EXPR_OPERATOR_KEYS, key)
        declared[name] = spec
    inherited: dict[str, dict] = {}  # operator -> key -> (value, the group that set it)
    for group, spec in check.table_of(raw.get("groups", {}), "expressions.groups").items():
        key = f"expressions.groups.{one_line(group)}"
        spec = check.table_of(spec, key)
        check.unknown_keys(spec, EXPR_OPERATOR_KEYS | {"operators"}, key)
        members = check.list_of(spec.get("operators"), f"{key}.operators")
        if not members:
            check.fail(f"{key}.operators", "a group lists the operators it is shared by")
        for index, name in enumerate(members):
            where = f"{key}.operators[{index}]"
            if name not in allowed:
                check.fail(where, f"unknown operator {one_line(str(name))!r} (operators: {', '.join(allowed)})")
            if members.index(name) != index:
                check.fail(where, f"{name!r} is listed twice")
            declared.setdefault(name, {})
            mine = inherited.setdefault(name, {})
            for field, value in spec.items():
                if field == "operators":
                    continue
                if field in mine:
                    check.fail(f"{key}.{field}", f"{name!r} already takes {field} from group {mine[field][1]!r}")
                mine[field] = (value, group)
    specs = {}
    for name, spec in declared.items():
        merged = {} if name in operators_vocab.UNARY.values() else dict(defaults)
        layers = [(f"expressions.groups.{one_line(group)}", {field: value})
                  for field, (value, group) in inherited.get(name, {}).items()]
        for where, layer in [*layers, (f"expressions.operators.{one_line(name)}", spec)]:
            for field, value in layer.items():
                if value is not False or field not in EXPR_OPTIONAL_KEYS:
                    merged[field] = value
                elif merged.pop(field, None) is None:
                    check.fail(f"{where}.{field}", f"false leaves out an inherited key, and {name!r} inherits no "
                                                   f"{field}")
        specs[name] = merged
    return specs


def _expressions(check: _Checker, raw, rs: Ruleset, scope: _Scope) -> ExpressionRules:
    """`[expressions]`: how `promote expr` evaluates in this framework."""
    raw = check.table_of(raw, "expressions")
    check.unknown_keys(raw, {"literals", "operators", "defaults", "groups", "literal_range_message",
                             "unsigned_literals_wrap", "doc"}, "expressions")
    wrap = raw.get("unsigned_literals_wrap", False)
    if not isinstance(wrap, bool):
        check.fail("expressions.unsigned_literals_wrap", "expected true or false")
    doc = check.str_of(raw.get("doc", ""), "expressions.doc")
    literals = {}
    lit_raw = check.table_of(raw.get("literals", {}), "expressions.literals")
    check.unknown_keys(lit_raw, operators_vocab.LITERAL_KINDS, "expressions.literals")
    for kind, spelling in lit_raw.items():
        key = f"expressions.literals.{kind}"
        operand = check.operand(spelling, key)
        if operand.form == PYTHON and (kind == "long" or operand.pykind != kind):
            check.fail(key, f"{kind} literals cannot be the Python scalar {operand}")
        if operand.dtype is not None and operand.dtype not in rs.type_set:
            check.fail(key, f"{operand.dtype} is not one of the file's types")
        literals[kind] = operand
    message = check.template(raw.get("literal_range_message", "Python integer {value} out of bounds for {dtype}"),
                             "expressions.literal_range_message", {"value", "dtype"})
    operators = {}
    fields = MESSAGE_FIELDS | set(rs.options) | set(rs.sets)
    for name, spec in _operator_specs(check, raw).items():
        key = f"expressions.operators.{one_line(name)}"
        op = spec.get("op")
        if op is None and name not in operators_vocab.UNARY.values():
            check.fail(f"{key}.op", "a binary operator or a call names the ruleset op that promotes its operands")
        if op is not None:
            op = check.str_of(op, f"{key}.op")
            if rs.ops is not None and op not in rs.op_index:
                check.fail(f"{key}.op", f"{op!r} is not an op of this file (ops: {', '.join(map(repr, rs.op_index))})")

        def expr(field_name: str, extra=frozenset()):
            return scope.field(check, key, spec, field_name, scope.names_with_result | EXPR_NAMES | extra)

        refuse_if = expr("refuse_if")
        refuse = check.refusal(key, refuse_if, spec.get("refuse"), fields, rs.sets)
        condition = expr("condition", frozenset({"cond"}))
        condition_refuse = spec.get("condition_refuse")
        if (condition is None) != (condition_refuse is None) or (condition is not None and name != "where"):
            check.fail(key, "condition and condition_refuse go together, in where only")
        if condition_refuse is not None:
            condition_refuse = check.template(condition_refuse, f"{key}.condition_refuse", {"cond", "op"})
        operators[name] = ExprOperator(name, op, expr("result"), refuse_if, refuse or "", expr("literal_range"),
                                       condition, condition_refuse or "", check.str_of(spec.get("doc", ""), f"{key}.doc"),
                                       expr("promotion"), expr("both_python"))
        spec_op = operators[name]
        spec_op.promotion_if = expr("promotion_if")
        if spec_op.promotion_if is not None and spec_op.promotion is None:
            check.fail(f"{key}.promotion_if", "promotion_if says when `promotion` applies: give promotion too")
        skip = check.list_of(spec.get("skip_after", []), f"{key}.skip_after")
        after_names = {clause.name for clause in rs.after}
        for index, clause_name in enumerate(skip):
            if clause_name not in after_names:
                check.fail(f"{key}.skip_after[{index}]", f"{clause_name!r} names no [[after]] clause of this file")
        spec_op.skip_after = frozenset(skip)
        if operators[name].both_python is not None and name not in operators_vocab.CALLS:
            check.fail(f"{key}.both_python", "only a call meets two Python scalars (an operator leaves them to Python)")
    return ExpressionRules(literals, operators, message, doc, wrap)
