"""Legacy TE names: te.thread_axis."""


from graphc import te
from graphc.tir import IterType


def test_thread_axis_tag_first():
    tx = te.thread_axis("threadIdx.x")
    assert tx.iter_type == IterType.THREAD_INDEX and tx.thread_tag == "threadIdx.x" and tx.dom is None


def test_thread_axis_with_domain_and_name():
    bx = te.thread_axis((0, 64), "blockIdx.x", name="bx")
    assert bx.var.name == "bx" and bx.dom.extent.value == 64
