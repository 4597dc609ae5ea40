"""Sequences and optionals: SequenceConstruct/Empty/At/Insert/Erase/Length, SplitToSequence,
ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement.

A sequence is a list of values whose length is known at import (a Relax tuple where it
crosses the function boundary: a graph input with element shapes in `shape_dict`, or an
output). A sequence whose length is known only at run time (one carried through a loop the
VM runs, a split into a number of pieces read from a tensor) is a Relax value of
`ObjectStructInfo` (a tuple in the VM) that the `vm.builtin.sequence_*` builtins work on; the
importer remembers its elements' dtype and rank. An optional is its value, or None when
empty.
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from .common import Emitting, int_list, ndim_of, norm_axis, shape_of
from .registry import converter

op = Emitting(relax.op)


def is_run_time(value) -> bool:
    """Whether `value` is a sequence of a length known only at run time."""
    return isinstance(value, relax.Expr) and isinstance(value.struct_info, relax.ObjectStructInfo)


def run_time_sequence(importer, expr, dtype: str, ndim: int = -1):
    """`expr` (a VM tuple of tensors) bound as a run-time sequence of `dtype`/`ndim` elements."""
    var = expr if isinstance(expr, relax.Var) else importer.emit(expr)
    _elements(importer)[var] = (dtype, ndim)
    return var


def element_info(importer, value) -> tuple | None:
    """(dtype, rank) of the elements of a sequence, a list or a run-time one: the rank -1 if
    it is unknown or differs between elements, None (and the dtype too) if the sequence has
    no element yet; None if nothing is known."""
    if isinstance(value, list):
        if not value:
            return (None, None)  # no element yet: the first one inserted decides
        infos = {(v.struct_info.dtype, v.struct_info.ndim) for v in value if hasattr(v, "struct_info")}
        if len(infos) == 1:
            return infos.pop()
        dtypes = {d for d, _ in infos}
        return (dtypes.pop(), -1) if len(dtypes) == 1 else None
    return _elements(importer).get(value)


def _elements(importer) -> dict:
    table = getattr(importer, "_sequence_elements", None)
    if table is None:
        table = importer._sequence_elements = {}
    return table


def _packed(node, name: str, *args, sinfo):
    return node.importer.emit(relax.op.call_pure_packed(name, *args, sinfo_args=sinfo))


def _run_time_info(node, value) -> tuple[str, int]:
    info = element_info(node.importer, value)
    if info is None or info[0] is None:
        raise node.error("the element type of this run-time sequence is unknown")
    return info[0], -1 if info[1] is None else info[1]


def _sequence(node, index: int) -> list:
    value = node.value(index)
    if isinstance(value, relax.Tuple):
        return list(value.fields)
    if isinstance(value, relax.Expr) and isinstance(value.struct_info, relax.TupleStructInfo):
        return [
            node.importer.emit(relax.TupleGetItem(value, i)) for i in range(len(value.struct_info.fields))
        ]
    if not isinstance(value, list):
        raise node.error(f"input {index} is not a sequence")
    return list(value)


def _position(node, index: int, length: int, default: int, insert: bool = False) -> int:
    if not node.has_input(index):
        return default
    value = node.const(index, "the position")
    pos = int_list(value, node, "position")[0]
    limit = length + (1 if insert else 0)
    if not -length <= pos < limit:
        raise node.error(f"position {pos} is out of range for a sequence of {length}")
    return pos + length if pos < 0 else pos


@converter("SequenceConstruct", since=11)
def sequence_construct(node):
    return [node.input(i) for i in range(len(node.inputs))]


@converter("SequenceEmpty", since=11)
def sequence_empty(node):
    node.attr("dtype", None)
    return []


@converter("SequenceAt", since=11)
def sequence_at(node):
    if is_run_time(node.value(0)):
        seq = node.value(0)
        dtype, ndim = _run_time_info(node, seq)
        pos = node.input(1)
        out = _packed(node, "vm.builtin.sequence_at", seq, pos, node.where,
                      sinfo=relax.TensorStructInfo(dtype=dtype, ndim=ndim))
        return node.importer.refine(out, "seq") if ndim >= 0 else out
    seq = _sequence(node, 0)
    return seq[_position(node, 1, len(seq), 0)]


@converter("SequenceInsert", since=11)
def sequence_insert(node):
    if is_run_time(node.value(0)):
        seq, tensor = node.value(0), node.input(1)
        _, ndim = element_info(node.importer, seq) or (None, -1)
        dtype = tensor.struct_info.dtype
        if ndim is None:  # the first element decides
            ndim = tensor.struct_info.ndim
        elif tensor.struct_info.ndim != ndim:
            ndim = -1
        has_pos = node.has_input(2)
        pos = node.input(2) if has_pos else relax.const(0, "int64")
        out = _packed(node, "vm.builtin.sequence_insert", seq, tensor, relax.PrimValue(int(has_pos)), pos,
                      node.where, sinfo=relax.ObjectStructInfo())
        return run_time_sequence(node.importer, out, dtype, ndim)
    seq = _sequence(node, 0)
    if node.has_input(2) and node.const(2) is None:
        return _insert_at_run_time(node, seq, node.input(1), node.input(2))
    pos = _position(node, 2, len(seq), len(seq), insert=True)
    return seq[:pos] + [node.input(1)] + seq[pos:]


def _insert_at_run_time(node, seq: list, tensor, position):
    """Insert at a position computed at run time: the sequence's length is still known, and
    each slot of the result is an `If` choosing the inserted tensor, the element at its own
    index, or the one before it (elements may differ in shape)."""
    importer = node.importer
    n = len(seq)
    pos = op.reshape(op.astype(position, "int64"), relax.ShapeExpr([]))
    pos = op.where(op.less(pos, relax.const(0, "int64")), op.add(pos, relax.const(n, "int64")), pos)
    in_range = op.logical_and(
        op.less_equal(relax.const(0, "int64"), pos), op.less_equal(pos, relax.const(n, "int64"))
    )
    message = f"{node.where}: the position is out of range for a sequence of {n} (accepted: [-{n}, {n}])"
    importer.emit(relax.op.assert_op(in_range, format=message))

    def choose(cond, a, b):
        if a is None:
            return b
        if b is None:
            return a
        chosen = importer.emit(relax.If(cond, relax.SeqExpr([], a), relax.SeqExpr([], b)))
        return importer.refine(chosen, "seq")

    out = []
    for i in range(n + 1):
        here = op.equal(pos, relax.const(i, "int64"))
        before = op.less(relax.const(i, "int64"), pos)  # the slot is before the insertion
        rest = choose(before, seq[i] if i < n else None, seq[i - 1] if i > 0 else None)
        out.append(choose(here, tensor, rest))
    return out


@converter("SequenceErase", since=11)
def sequence_erase(node):
    if is_run_time(node.value(0)):
        seq = node.value(0)
        dtype, ndim = _run_time_info(node, seq)
        has_pos = node.has_input(1)
        pos = node.input(1) if has_pos else relax.const(0, "int64")
        out = _packed(node, "vm.builtin.sequence_erase", seq, relax.PrimValue(int(has_pos)), pos, node.where,
                      sinfo=relax.ObjectStructInfo())
        return run_time_sequence(node.importer, out, dtype, ndim)
    seq = _sequence(node, 0)
    pos = _position(node, 1, len(seq), len(seq) - 1)
    return seq[:pos] + seq[pos + 1 :]


@converter("SequenceLength", since=11)
def sequence_length(node):
    if is_run_time(node.value(0)):
        return _packed(node, "vm.builtin.sequence_length", node.value(0),
                       sinfo=relax.TensorStructInfo([], "int64"))
    return np.asarray(len(_sequence(node, 0)), dtype="int64")


@converter("SplitToSequence", since=11)
def split_to_sequence(node):
    x = node.input(0)
    axis = norm_axis(node.attr("axis"), ndim_of(x), node)
    keepdims = bool(node.attr("keepdims"))
    dim = shape_of(x)[axis]
    if not isinstance(dim, tir.IntImm):
        raise node.error(f"splitting the symbolic size {dim} into a sequence is not supported")
    n = int(dim.value)
    if not node.has_input(1):
        parts = [op.strided_slice(x, [axis], [i], [i + 1]) for i in range(n)]
        return [op.squeeze(p, [axis]) if not keepdims else p for p in parts]
    if node.const(1) is None:
        return _split_at_run_time(node, x, axis, n)
    split = node.const(1, "split").reshape(-1).tolist()
    if len(split) == 1 and node.const(1).ndim == 0:
        size = int(split[0])
        split = [size] * (n // size) + ([n % size] if n % size else [])
    out, start = [], 0
    for s in split:
        out.append(op.strided_slice(x, [axis], [start], [start + int(s)]))
        start += int(s)
    return out


@converter("ConcatFromSequence", since=11)
def concat_from_sequence(node):
    if is_run_time(node.value(0)):
        seq = node.value(0)
        dtype, ndim = _run_time_info(node, seq)
        new_axis = bool(node.attr("new_axis", 0))
        if ndim < 0:
            raise node.error("concatenating a run-time sequence whose elements' rank is unknown")
        rank = ndim + (1 if new_axis else 0)
        axis = norm_axis(node.attr("axis"), rank, node)
        sinfo = relax.TensorStructInfo(dtype=dtype, ndim=rank)
        out = _packed(node, "vm.builtin.concat_from_sequence", seq, relax.PrimValue(axis),
                      relax.PrimValue(int(new_axis)), node.where, sinfo=sinfo)
        return node.importer.refine(out, "concat")
    seq = _sequence(node, 0)
    if not seq:
        raise node.error("concatenating an empty sequence")
    new_axis = bool(node.attr("new_axis", 0))
    rank = ndim_of(seq[0]) + (1 if new_axis else 0)
    axis = norm_axis(node.attr("axis"), rank, node)
    if new_axis:
        return op.stack(seq, axis=axis)
    return op.concat(seq, axis=axis) if len(seq) > 1 else seq[0]


@converter("Optional", since=15)
def optional(node):
    node.attr("type", None)
    return node.value(0) if node.has_input(0) else None


@converter("OptionalHasElement", since=15)
def optional_has_element(node):
    return np.asarray(node.has_input(0) and node.value(0) is not None)


@converter("OptionalGetElement", since=15)
def optional_get_element(node):
    value = node.value(0)
    if value is None:
        raise node.error("the optional is empty")
    return value


def _split_at_run_time(node, x, axis: int, n: int) -> list:
    """A 1-d split computed at run time: as many pieces as it has elements, of sizes the VM
    reads (a split that does not add up to the axis is refused when the model runs)."""
    from .common import dynamic_slice

    split = node.input(1)
    if ndim_of(split) != 1:  # a scalar: the number of pieces is known only at run time
        out = _packed(node, "vm.builtin.split_to_sequence", x, split, relax.PrimValue(axis), node.where,
                      sinfo=relax.ObjectStructInfo())
        return run_time_sequence(node.importer, out, x.struct_info.dtype, ndim_of(x))
    sizes = node.ints(1, "split")
    total = relax.const(n, "int64")
    summed = op.sum(op.astype(split, "int64"))
    message = f"{node.where}: the split sizes must add up to the axis' length {n}"
    node.importer.emit(relax.op.assert_op(op.equal(summed, total), format=message))
    out, start = [], tir.const(0, "int64")
    for size in sizes:
        out.append(dynamic_slice(node, x, [axis], [start], [start + size], [tir.const(1, "int64")]))
        start = start + size
    return out


@converter("SequenceMap", since=17)
def sequence_map(node):
    """The body applied to each element of the sequences (of one length, known at import), a
    tensor input passed whole to every application; each body output becomes a sequence."""
    from .control_flow import _unrolled_body

    importer = node.importer
    body = node.attr("body")
    values = [node.value(i) for i in range(len(node.inputs))]
    sequences = {i: _sequence(node, i) for i, v in enumerate(values) if not _is_tensor(v)}
    lengths = {len(s) for s in sequences.values()}
    if len(lengths) != 1:
        raise node.error(f"the input sequences have different lengths {sorted(lengths)}")
    length = lengths.pop()
    names = [i.name for i in body.input]
    outputs: list[list] = [[] for _ in body.output]
    for k in range(length):
        bindings = {}
        for i, name in enumerate(names):
            bindings[name] = sequences[i][k] if i in sequences else values[i]
        outs = _unrolled_body(node, body, {n: importer.bind(v) for n, v in bindings.items()})
        for j, value in enumerate(outs):
            outputs[j].append(value)
    return tuple(outputs)


def _is_tensor(value) -> bool:
    if isinstance(value, list):
        return False
    return not (isinstance(value, relax.Expr) and isinstance(value.struct_info, relax.TupleStructInfo))
