"""Legacy TE-schedule names: thread_axis works, create_schedule explains the graphc way."""

import pytest

from graphc import te
from graphc.errors import ScheduleError
from graphc.tir import IterType


def test_thread_axis_tag_first():
    tx = te.thread_axis("threadIdx.x")
    assert tx.iter_type == IterType.THREAD_INDEX and tx.thread_tag == "threadIdx.x" and tx.dom is None


def test_thread_axis_with_domain_and_name():
    bx = te.thread_axis((0, 64), "blockIdx.x", name="bx")
    assert bx.var.name == "bx" and bx.dom.extent.value == 64


def test_create_schedule_names_the_graphc_way():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(ScheduleError, match="tir.Schedule"):
        te.create_schedule([B.op])
