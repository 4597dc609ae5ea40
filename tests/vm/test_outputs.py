"""graphc.vm.outputs: the "output_structure" grammar, its reader, and executables that carry one."""

import pytest

from graphc.vm import Executable, ExecutableFormatError, NamedOutputs, VirtualMachine
from graphc.vm.bytecode import Arg, Call, FuncEntry, Ret
from graphc.vm.outputs import flatten_named, reader, validate


def test_reader_builds_every_kind():
    structure = ["tuple", [0, ["list", [1, None, ["const", 2.5]]],
                           ["dict", ["k", 3], [2, ["namedtuple", "P", ["a"], [0]]]],
                           ["record", "Out", ["logits"], [1]]]]
    assert validate(structure) == 5
    got = reader(structure)(("a", "b", "c"))
    assert got[:2] == ("a", ["b", None, 2.5])
    assert got[2]["k"] == "c" and got[2][3].a == "a" and type(got[2][3]).__name__ == "P"
    assert isinstance(got[3], NamedOutputs) and got[3].logits == "b" and got[3][0] == "b"
    with pytest.raises(AttributeError, match="Out has no field 'loss'; it has logits"):
        _ = got[3].loss


@pytest.mark.parametrize("bad, message", [
    (-1, "non-negative"),
    (True, "expected an int"),
    (["set", [0]], "expected an int"),
    (["dict", ["a"], [0, 1]], "one key per child"),
    (["dict", [1.5], [0]], "keys are str or int"),
    (["record", "R", [1], [0]], "string field names"),
    (["tuple", 0], "the children are a list"),
    (["const", [1]], "a number or a string"),
])
def test_malformed_structures_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        validate(bad)


def _exe(structure):
    code = [Call(1, 1, (Arg.reg(0), Arg.reg(0))), Ret(Arg.reg(1))]  # make_tuple(x, x)
    main = FuncEntry("vm", "main", ["x"], 2, code, attrs={"output_structure": structure})
    return Executable([main, FuncEntry("builtin", "vm.builtin.make_tuple")], [])


def test_executables_carry_the_structure_through_their_file():
    exe = Executable.from_bytes(_exe(["dict", ["first", "second"], [0, 1]]).to_bytes())
    vm = VirtualMachine(exe)
    assert vm["main"](1.5) == {"first": 1.5, "second": 1.5}
    assert vm.invoke("main", 1.5) == (1.5, 1.5)  # the function's own result underneath
    assert exe(2) == {"first": 2, "second": 2}
    with pytest.raises(ExecutableFormatError, match="function 'main': malformed node"):
        _exe(["dict", ["only_one_key"], [0, 1]])


def test_flatten_named():
    assert flatten_named(NamedOutputs("Out", [("logits", 1), ("hidden", [2, 3])])) == [
        ("logits", 1), ("hidden.0", 2), ("hidden.1", 3)]
