"""records.Record gives plain data classes what dataclasses would: fields in order, defaults, fresh mutable
defaults, equality by value, frozen ones hashable and read-only."""

from __future__ import annotations

import pytest

from promote_cli.records import Record, factory


class Point(Record):
    x: int
    y: int = 0
    tags: list = factory(list)


class Frozen(Record, frozen=True):
    name: str
    bits: int = 8


class Labelled(Point):
    label: str = ""


def test_fields_by_position_and_keyword_with_defaults():
    p = Point(1, y=2)
    assert (p.x, p.y, p.tags) == (1, 2, [])
    assert Point(x=3).y == 0 and Point(1, 2, ["a"]).tags == ["a"]
    assert Point._fields == ("x", "y", "tags") and Labelled._fields == ("x", "y", "tags", "label")
    assert Labelled(1, label="l").label == "l"


def test_a_factory_default_is_fresh_for_each_instance():
    a, b = Point(1), Point(1)
    a.tags.append("t")
    assert b.tags == [] and "tags" not in Point.__dict__


def test_wrong_arguments_are_type_errors():
    with pytest.raises(TypeError):
        Point()
    with pytest.raises(TypeError):
        Point(1, 2, [], 4)
    with pytest.raises(TypeError):
        Point(1, z=2)


def test_equality_by_value_and_repr():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(1, 3) and Point(1) != Labelled(1)
    assert repr(Point(1)) == "Point(x=1, y=0, tags=[])"
    with pytest.raises(TypeError):
        hash(Point(1))  # mutable and compared by value: unhashable, as a dataclass is


def test_frozen_records_hash_by_value_and_refuse_assignment():
    assert hash(Frozen("i8")) == hash(Frozen("i8", 8)) and {Frozen("i8"): 1}[Frozen("i8")] == 1
    with pytest.raises(AttributeError):
        Frozen("i8").bits = 16


def test_a_field_without_a_default_after_one_with_is_refused():
    with pytest.raises(TypeError):
        class Bad(Record):
            a: int = 0
            b: int


class Report(Record, kw_only=True):
    name: str
    stats: dict = factory(dict)


class CastLike(Report):
    mode: str  # no default, after fields with defaults: allowed by keyword only
    seconds: float = 0.0


def test_keyword_only_records_take_keywords_only_and_in_subclasses_too():
    r = CastLike(mode="tosa", name="w")
    assert (r.name, r.stats, r.mode, r.seconds) == ("w", {}, "tosa", 0.0)
    assert CastLike._fields == ("name", "stats", "mode", "seconds") and r == CastLike(name="w", mode="tosa")
    with pytest.raises(TypeError):
        Report("w")
    with pytest.raises(TypeError):
        CastLike(name="w")  # mode is still required


def test_a_method_the_class_writes_is_kept():
    class Named(Record):
        name: str
        note: str = ""

        def __eq__(self, other):
            return isinstance(other, Named) and self.name == other.name

    assert Named("a", "x") == Named("a", "y") and Named("a") != Named("b")
