"""What the generated code looks like: noalias, alignment facts, vector registers, -mattr."""

import re

import pytest

from graphc import tir
from graphc.target.target import host_cpu


def _add(n=1024, noalias=True):
    A, B, C = (tir.decl_buffer((n,), "float32", nm) for nm in "ABC")
    hs = [tir.Var(nm.lower(), "handle") for nm in "ABC"]
    i = tir.Var("i")
    body = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL, tir.BufferStore(C, A[i] + B[i], (i,)))
    f = tir.PrimFunc(hs, body, buffer_map=dict(zip(hs, (A, B, C))))
    return f if noalias else f.with_attr("tir.noalias", False)


def test_ll_has_noalias_and_alignment(build_func):
    ll = build_func(_add()).get_source("ll")
    assert "noalias" in ll
    assert "!align" in ll
    assert "define" in ll and "@main" in ll


def test_noalias_can_be_turned_off(build_func):
    ll = build_func(_add(noalias=False)).get_source("ll")
    assert "noalias" not in ll


def _vector_registers(asm):
    return {r[0] for r in re.findall(r"\b([xyz])mm\d+", asm)}


@pytest.mark.skipif("+avx2" not in host_cpu()[1], reason="the host has no AVX2")
def test_asm_uses_wide_vectors_and_respects_mattr(build_func):
    asm = build_func(_add()).get_source("asm")
    wide = "z" if "+avx512f" in host_cpu()[1] else "y"
    assert wide in _vector_registers(asm)
    cpu = host_cpu()[0]
    narrow = build_func(_add(), target=f"llvm -mcpu={cpu} -mattr=-avx512f,-avx2,-avx").get_source("asm")
    assert _vector_registers(narrow) == {"x"}
    ymm_only = build_func(_add(), target=f"llvm -mcpu={cpu} -mattr=+avx2,-avx512f").get_source("asm")
    assert "y" in _vector_registers(ymm_only) and "z" not in _vector_registers(ymm_only)


def test_unknown_source_format(build_func):
    with pytest.raises(ValueError, match="'ll' or 'asm'"):
        build_func(_add(8)).get_source("ptx")
