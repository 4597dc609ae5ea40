"""Type-keyed dispatch: nearest class in the MRO wins, answers are cached per class."""

import pytest

from graphc.ir.dispatch import TypeTable, dispatch, method_table, rule_table


class Base:
    pass


class Middle(Base):
    pass


class Leaf(Middle):
    pass


class Other:
    pass


def test_rule_table_takes_the_nearest_base():
    rules = rule_table({Base: "base", Middle: "middle"})
    assert rules[Leaf] == "middle"
    assert rules[Base] == "base"
    assert rules[Other] is None


def test_type_table_resolves_each_class_once():
    asked = []

    def resolve(base):
        asked.append(base)
        return "found" if base is Middle else None

    table = TypeTable(resolve)
    assert table[Leaf] == "found" and table[Leaf] == "found"
    assert asked == [Leaf, Middle]


def test_a_class_without_a_rule_is_remembered_as_none():
    asked = []
    table = TypeTable(lambda base: asked.append(base))
    assert table[Other] is None and table[Other] is None
    assert asked == [Other, object]


def test_fallback_sees_the_class_itself():
    table = TypeTable(lambda base: None, fallback=lambda cls: cls.__name__)
    assert table[Leaf] == "Leaf"


def test_rule_table_sees_rules_registered_after_a_clear():
    rules = {Base: "base"}
    table = rule_table(rules)
    assert table[Leaf] == "base"
    rules[Leaf] = "leaf"
    table.clear()
    assert table[Leaf] == "leaf"
    assert table[Middle] == "base"


class Visitor:
    def visit_Base(self, node):
        return "base"

    def visit_Leaf(self, node):
        return "leaf"

    def show_Middle(self, node):
        return "shown middle"


class Derived(Visitor):
    def visit_Middle(self, node):
        return "derived middle"


def test_method_table_is_per_class_and_prefix():
    assert method_table(Visitor)[Middle](Visitor(), Middle()) == "base"
    assert method_table(Derived)[Middle](Derived(), Middle()) == "derived middle"
    assert method_table(Visitor, "show_")[Leaf](Visitor(), Leaf()) == "shown middle"
    assert method_table(Visitor, "show_")[Base] is None
    assert method_table(Visitor) is method_table(Visitor)


def test_dispatch_calls_the_nearest_method_and_names_what_it_cannot_visit():
    assert dispatch(Visitor(), Leaf()) == "leaf"
    assert dispatch(Derived(), Leaf()) == "leaf"
    assert dispatch(Derived(), Middle()) == "derived middle"
    with pytest.raises(TypeError, match="Visitor cannot visit statement Other"):
        dispatch(Visitor(), Other(), "statement")
