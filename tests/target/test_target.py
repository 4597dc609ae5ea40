"""Target parsing, defaults, scoping and errors."""

import pytest

from graphc.errors import TargetError
from graphc.target import Target
from graphc.target.target import host_cpu


def test_plain_llvm_uses_host_defaults():
    t = Target("llvm")
    name, features, triple = host_cpu()
    assert (t.kind, t.mcpu, t.mattr, t.triple) == ("llvm", name, features, triple)
    assert t.keys == ("cpu",) and t.opt_level == 3
    assert str(t) == "llvm"


def test_options_parse_and_round_trip():
    t = Target("llvm -mcpu=znver4 -mattr=+avx2,-avx512f -opt-level=2")
    assert t.mcpu == "znver4" and t.mattr == ("+avx2", "-avx512f") and t.opt_level == 2
    assert Target(str(t)) == t
    assert str(t) == "llvm -mattr=+avx2,-avx512f -mcpu=znver4 -opt-level=2"


def test_dict_form():
    t = Target({"kind": "llvm", "mcpu": "skylake", "mattr": ["+avx2"]})
    assert t.mcpu == "skylake" and t.mattr == ("+avx2",)
    assert Target(t.export()) == t


def test_gpu_kinds_parse():
    t = Target("cuda -arch=sm_80")
    assert (t.kind, t.arch, t.keys) == ("cuda", "sm_80", ("cuda", "gpu"))
    assert Target("opencl").keys == ("opencl", "gpu")
    assert Target("nvptx -mcpu=sm_75").mcpu == "sm_75"


def test_current_and_with():
    assert Target.current() is None
    with Target("llvm -opt-level=1") as t:
        assert Target.current() is t
        with Target("cuda"):
            assert Target.current().kind == "cuda"
        assert Target.current() is t
    assert Target.current() is None


@pytest.mark.parametrize(
    "text, words",
    [
        ("tpu", ["unknown target kind", "llvm", "cuda"]),
        ("llvm -foo=1", ["no option -foo", "-mcpu"]),
        ("llvm mcpu", ["-key=value"]),
        ("llvm -opt-level=x", ["integer"]),
        ("llvm -mattr=avx2", ["+ or -"]),
        ("", ["empty target"]),
    ],
)
def test_errors_list_valid_choices(text, words):
    with pytest.raises(TargetError) as info:
        Target(text)
    for word in words:
        assert word in str(info.value)


def test_dict_without_kind_and_bad_type():
    with pytest.raises(TargetError, match="'kind'"):
        Target({"mcpu": "x"})
    with pytest.raises(TargetError, match="string, dict or Target"):
        Target(3)
