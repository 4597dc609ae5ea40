"""The global function registry: registering, looking up, replacing and removing functions."""

import pytest

import graphc
from graphc.runtime import registry, tensor


@pytest.fixture
def name(request):
    name = f"test.registry.{request.node.name}"
    yield name
    if registry.get_global_func(name, allow_missing=True) is not None:
        registry.remove_global_func(name)


def test_decorator_forms_and_lookup(name):
    @graphc.register_func(name)
    def triple(x):
        return x * 3

    assert graphc.get_global_func(name) is triple and triple(2) == 6
    assert name in registry.list_global_func_names()
    registry.remove_global_func(name)
    registry.register_func(name, lambda x: x + 1)  # the call form
    assert graphc.get_global_func(name)(1) == 2


def test_bare_decorator_uses_the_function_name():
    @graphc.register_func
    def test_registry_bare(x):
        return x

    try:
        assert graphc.get_global_func("test_registry_bare") is test_registry_bare
    finally:
        registry.remove_global_func("test_registry_bare")


def test_missing_and_duplicate_names(name):
    assert graphc.get_global_func(name, allow_missing=True) is None
    with pytest.raises(ValueError, match=f"no global function named '{name}'.*graphc.register_func"):
        graphc.get_global_func(name)
    graphc.register_func(name, abs)
    with pytest.raises(ValueError, match="already registered; pass override=True"):
        graphc.register_func(name, round)
    graphc.register_func(name, round, override=True)
    assert graphc.get_global_func(name) is round
    with pytest.raises(TypeError, match="expects a callable"):
        graphc.register_func(name, 3, override=True)
    with pytest.raises(KeyError, match="no global function named 'test.registry.none'"):
        registry.remove_global_func("test.registry.none")


def test_vm_builtins_are_global_functions():
    shape_of = graphc.get_global_func("vm.builtin.shape_of")
    assert tuple(shape_of(tensor([[1, 2, 3]], dtype="int32"))) == (1, 3)
    assert graphc.register_global_func is graphc.register_func  # TVM's newer spelling
