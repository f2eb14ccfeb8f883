"""Plain data classes for the modules on the start-up paths of `promote query` and `promote cast`.

    class Answer(Record):
        framework: str
        hint: dict | None = None
        options: dict = factory(dict)

A subclass lists its fields as annotations, in order, with defaults as class attributes (`factory(f)` for a
fresh mutable value each time) and gets what `dataclasses.dataclass` would give it: `__init__` (positional or
by keyword), `__repr__` and `__eq__` over the fields; `Record, frozen=True` also gets `__hash__` and refuses
assignment; `Record, kw_only=True` takes its fields by keyword only (so a field without a default may follow
one with a default, in a subclass too). It exists because importing `dataclasses` imports `inspect` (about
10 ms, a fifth of a query's whole start-up), and because a dataclass takes about five times as long as a
record to make (near 1 ms each, paid at every start-up: `arrayio`'s classes are records for `promote cast`);
other modules keep using `dataclasses`.
"""

from __future__ import annotations

_MISSING = object()


class factory:  # lower case: it reads like dataclasses.field(default_factory=...)
    """A default made fresh for each instance: `rows: dict = factory(dict)`."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def _make_methods(cls):
    """`__init__` and `__eq__` written out for the fields (as dataclasses does): as fast as hand-written ones."""
    params, body = [], []
    scope = {"_MISSING": _MISSING, "_set": object.__setattr__}
    for name in cls._fields:
        default = cls._defaults.get(name, _MISSING)
        if default is _MISSING:
            params.append(name)
            value = name
        elif isinstance(default, factory):
            scope[f"_make_{name}"] = default.make
            params.append(f"{name}=_MISSING")
            value = f"_make_{name}() if {name} is _MISSING else {name}"
        else:
            scope[f"_default_{name}"] = default
            params.append(f"{name}=_default_{name}")
            value = name
        body.append(f"    _set(self, {name!r}, {value})" if cls._frozen else f"    self.{name} = {value}")
    mine = "".join(f"self.{name}, " for name in cls._fields)
    theirs = "".join(f"other.{name}, " for name in cls._fields)
    if cls._kw_only and params:
        params.insert(0, "*")
    source = (f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
              "def __eq__(self, other):\n"
              "    if other.__class__ is not self.__class__:\n"
              "        return NotImplemented\n"
              f"    return ({mine}) == ({theirs})\n")
    exec(source, scope)  # noqa: S102 - the source is made of the class's own field names
    for method in ("__init__", "__eq__"):
        scope[method].__qualname__ = f"{cls.__qualname__}.{method}"
    return scope["__init__"], scope["__eq__"]


class Record:
    """The base; see the module docstring."""

    _fields: tuple[str, ...] = ()
    _defaults: dict | None = None
    _frozen = False
    _kw_only = False

    def __init_subclass__(cls, frozen: bool = False, kw_only: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        fields = list(cls._fields)
        defaults = dict(cls._defaults or {})
        for name in cls.__dict__.get("__annotations__", {}):  # noqa: RUF063 - inspect is what this avoids
            if name in fields:
                continue
            fields.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
                if isinstance(defaults[name], factory):
                    delattr(cls, name)  # an instance always has its own value
            elif defaults and not (kw_only or cls._kw_only):
                raise TypeError(f"{cls.__name__}.{name}: a field without a default follows one with a default")
        cls._fields, cls._defaults = tuple(fields), defaults
        cls._frozen = frozen or cls._frozen
        cls._kw_only = kw_only or cls._kw_only
        init, eq = _make_methods(cls)
        for name, method in (("__init__", init), ("__eq__", eq)):
            if name not in cls.__dict__:  # a class may write its own
                setattr(cls, name, method)
        if cls._frozen:
            cls.__hash__ = Record._hash
            cls.__setattr__ = Record._refuse_assignment
        else:
            cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass is

    def _refuse_assignment(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def _hash(self) -> int:
        # equal records have equal first fields (a dtype's name): hashing that alone is consistent and cheap
        return hash(getattr(self, self._fields[0])) if self._fields else 0
