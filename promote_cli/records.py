"""Plain data classes for the modules on `promote query`'s start-up path.

    class Answer(Record):
        framework: str
        hint: dict | None = None
        options: dict = factory(dict)

A subclass lists its fields as annotations, in order, with defaults as class attributes (`factory(f)` for a
fresh mutable value each time) and gets what `dataclasses.dataclass` would give it: `__init__` (positional or
by keyword), `__repr__` and `__eq__` over the fields; `Record, frozen=True` also gets `__hash__` and refuses
assignment. It exists because importing `dataclasses` imports `inspect` (about 10 ms, a fifth of a query's
whole start-up); modules that a query does not load keep using `dataclasses`.
"""

from __future__ import annotations

_MISSING = object()


class factory:  # noqa: N801 - reads like dataclasses.field(default_factory=...)
    """A default made fresh for each instance: `rows: dict = factory(dict)`."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


class Record:
    """The base; see the module docstring."""

    _fields: tuple[str, ...] = ()
    _defaults: dict = {}
    _frozen = False

    def __init_subclass__(cls, frozen: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        fields = list(cls._fields)
        defaults = dict(cls._defaults)
        for name in cls.__dict__.get("__annotations__", {}):
            if name in fields:
                continue
            fields.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
                if isinstance(defaults[name], factory):
                    delattr(cls, name)  # an instance always has its own value
            elif defaults:
                raise TypeError(f"{cls.__name__}.{name}: a field without a default follows one with a default")
        cls._fields, cls._defaults = tuple(fields), defaults
        cls._frozen = frozen or cls._frozen
        if cls._frozen:
            cls.__hash__ = Record._hash
            cls.__setattr__ = Record._refuse_assignment
        else:
            cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass is

    def __init__(self, *args, **kwargs):
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, {len(args)} given")
        values = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in self._defaults and name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        put = object.__setattr__
        for name in fields:
            value = values.get(name, _MISSING)
            if value is _MISSING:
                value = self._defaults.get(name, _MISSING)
                if value is _MISSING:
                    raise TypeError(f"{type(self).__name__}() is missing the argument {name!r}")
                if isinstance(value, factory):
                    value = value.make()
            put(self, name, value)

    def _refuse_assignment(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        for name in self._fields:
            if getattr(self, name) != getattr(other, name):
                return False
        return True

    def _hash(self) -> int:
        return hash(tuple(getattr(self, name) for name in self._fields))
