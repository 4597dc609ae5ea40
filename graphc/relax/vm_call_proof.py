"""Which kernel calls of a lowered Relax function can skip the kernel's own argument checks.

The VM checks a function's inputs on entry (VMShapeLower) and allocates intermediates from
the memory plan; when the struct info of a call's arguments proves them to match the
kernel's buffers (dtype, rank, every dimension, 64-byte alignment of planned tensors), the
code generator marks the call unchecked and the VM calls the machine code directly.
"""

from __future__ import annotations

from ..ir.structural import structural_equal
from ..tir import expr as tir_expr
from ..tir.arith import simplify
from ..tir.function import PrimFunc
from ..tir.functor import post_order_visit, substitute
from ..tir.stmt import BufferStore
from . import expr as relax_expr
from .op.registry import Op
from .struct_info import ShapeStructInfo, TensorStructInfo

ALLOC_TENSOR_OPS = ("relax.vm.alloc_tensor", "relax.memory.alloc_tensor")
PACKED_OPS = ("relax.call_packed", "relax.call_pure_packed")


class KernelCallProof:
    """What the bindings `defs` of function `func` prove about its values (filled as code is made)."""

    def __init__(self, defs: dict, func: relax_expr.Function):
        self.defs = defs
        self.checked_vars = _checked_vars(func)
        self._heap_slots: dict | None = None

    def proven(self, prim: PrimFunc, args: list, dyn: bool = False) -> bool:
        """Whether `args` provably match `prim`'s parameters (see `_proven`)."""
        return _proven(prim, args, self, dyn)

    def trusted(self, expr, written: bool = False) -> bool:
        """The run-time value of `expr` is a tensor matching its struct info (and writable, aligned)."""
        if isinstance(expr, relax_expr.Constant):
            return not written
        if not isinstance(expr, relax_expr.Var):
            return False
        value = self.defs.get(expr)
        if value is None:  # a parameter: trusted when the function checks it before use
            return not written and expr in self.checked_vars
        if isinstance(value, relax_expr.Var):
            return self.trusted(value, written)
        if isinstance(value, relax_expr.Call) and isinstance(value.op,
                                                             Op) and value.op.name in ALLOC_TENSOR_OPS:
            offset = value.args[1]
            return isinstance(offset, relax_expr.PrimValue) and isinstance(offset.value, tir_expr.IntImm) \
                and offset.value.value % 64 == 0
        if isinstance(value, relax_expr.Call) and isinstance(value.op, relax_expr.ExternFunc) \
                and value.op.global_symbol == "vm.builtin.reshape":
            return self.trusted(value.args[0], written)
        if _builtin_name(value) == "vm.builtin.alloc_shape_heap":
            return True
        return not written and expr in self.checked_vars

    def heap_slots(self) -> dict:
        """Shape-heap slot -> the symbolic dimension `match_shape` stores there (StoreToHeap)."""
        if self._heap_slots is None:
            self._heap_slots = {}
            for value in self.defs.values():
                if _builtin_name(value) != "vm.builtin.match_shape":
                    continue
                args = _builtin_args(value)
                dims = self.tensor_shape(args[0]) if isinstance(args[0], relax_expr.Var) else None
                ints = [_int_value(a) for a in args[2:]]
                if dims is None or None in ints[:1 + 2 * ints[0]]:
                    continue
                for axis in range(min(ints[0], len(dims))):
                    code, slot = ints[1 + 2 * axis], ints[2 + 2 * axis]
                    if code == 2:
                        self._heap_slots.setdefault(slot, dims[axis])
        return self._heap_slots

    def tensor_shape(self, expr):
        """The dimensions of a tensor or shape value, recovered through make_shape when erased."""
        values = _shape_values(expr.struct_info_) if isinstance(expr, relax_expr.Expr) else None
        if values is not None:
            return values
        value = self.defs.get(expr) if isinstance(expr, relax_expr.Var) else None
        if isinstance(value, relax_expr.Var):
            return self.tensor_shape(value)
        if isinstance(value, relax_expr.Call) and isinstance(value.op,
                                                             Op) and value.op.name in ALLOC_TENSOR_OPS:
            return self.tensor_shape(value.args[2])
        if isinstance(value, relax_expr.ShapeExpr):
            return value.values
        name = _builtin_name(value)
        args = _builtin_args(value) if name else ()
        ints = [_int_value(a) for a in args]
        if name == "vm.builtin.alloc_shape_heap" and ints and ints[0] is not None:
            return (tir_expr.IntImm("int64", ints[0]),)
        if name == "vm.builtin.make_shape" and len(ints) > 1 and ints[1] is not None:
            dims, slots = [], self.heap_slots()
            for i in range(ints[1]):
                code, v = ints[2 + 2 * i: 4 + 2 * i] if len(ints) >= 4 + 2 * i else (None, None)
                if code == 0 and v is not None:
                    dims.append(tir_expr.IntImm("int64", v))
                elif code == 1 and v in slots:
                    dims.append(slots[v])
                else:
                    return None
            return tuple(dims)
        return None


def _builtin_name(value) -> str | None:
    """The `vm.builtin.*` name a call_packed / call_builtin_with_ctx binding calls, else None."""
    if not isinstance(value, relax_expr.Call):
        return None
    if isinstance(value.op, relax_expr.ExternFunc):
        return value.op.global_symbol
    if isinstance(value.op, Op) and value.args and isinstance(value.args[0], relax_expr.ExternFunc):
        return value.args[0].global_symbol
    return None


def _int_value(arg) -> int | None:
    """The value of a constant integer PrimValue argument, else None."""
    if isinstance(arg, relax_expr.PrimValue) and isinstance(arg.value, tir_expr.IntImm):
        return int(arg.value.value)
    return None


def _builtin_args(value) -> tuple:
    if isinstance(value.op, relax_expr.ExternFunc):
        return tuple(value.args)
    if value.op.name == "relax.call_builtin_with_ctx":
        packed = value.args[1]
        return tuple(packed.fields) if isinstance(packed, relax_expr.Tuple) else (packed,)
    return tuple(value.args[1:])


def _checked_vars(func: relax_expr.Function) -> set:
    """Vars whose dtype, rank and every dimension the function checks at run time (VMShapeLower)."""
    info, shape = set(), set()

    def visit(expr):
        if isinstance(expr, relax_expr.SeqExpr):
            for block in expr.blocks:
                for b in block.bindings:
                    visit(b.value)
            visit(expr.body)
        elif isinstance(expr, relax_expr.If):
            visit(expr.true_branch)
            visit(expr.false_branch)
        elif isinstance(expr, relax_expr.Call) and expr.args:
            op = expr.op
            name = op.global_symbol if isinstance(op, relax_expr.ExternFunc) else None
            args = expr.args
            if isinstance(op, Op) and op.name in PACKED_OPS and isinstance(args[0], relax_expr.ExternFunc):
                name, args = args[0].global_symbol, args[1:]
            if name == "vm.builtin.check_tensor_info" and args:
                info.add(args[0])
                sinfo = args[0].struct_info_
                if isinstance(sinfo, TensorStructInfo) and sinfo.ndim == 0:
                    shape.add(args[0])
            elif name == "vm.builtin.match_shape" and args:
                shape.add(args[0])

    visit(func.body)
    return info & shape


def _shape_values(sinfo):
    if isinstance(sinfo, TensorStructInfo):
        return getattr(sinfo, "shape_values", None)
    if isinstance(sinfo, ShapeStructInfo):
        return sinfo.values
    return None


def _same_dim(a, b) -> bool:
    if isinstance(a, tir_expr.IntImm) and isinstance(b, tir_expr.IntImm):
        return a.value == b.value
    if isinstance(a, tir_expr.IntImm) or isinstance(b, tir_expr.IntImm):
        return False
    return a is b or structural_equal(a, b, map_free_vars=False)


def _proven(prim: PrimFunc, args: list, gen: KernelCallProof, dyn: bool = False) -> bool:
    """Whether the Relax struct info of `args` proves them to match `prim`'s parameters.

    Each buffer's dtype and rank must equal its argument's, each constant dimension must be
    the same constant, and each symbolic dimension must map to one Relax dimension
    consistently; then the kernel's own checks can be skipped (the VM checked the inputs).
    """
    params = list(prim.params)
    flat: list = []  # (kind, expr or PrimExpr)
    for i, a in enumerate(args):
        if dyn and i == len(args) - 1:
            values = gen.tensor_shape(a)
            if values is None:
                return False
            flat.extend(("dim", v) for v in values)
        else:
            flat.append(("expr", a))
    if len(flat) != len(params):
        return False
    env: dict = {}
    for param, (kind, value) in zip(params, flat):  # scalars first: they name dims directly
        if param in prim.buffer_map:
            continue
        if kind == "expr":
            if not isinstance(value, relax_expr.PrimValue):
                return False
            value = value.value
        if not str(param.dtype).startswith("int64") and not isinstance(value, tir_expr.IntImm):
            return False
        env[param] = value
    deferred = []
    for param, (kind, value) in zip(params, flat):
        buf = prim.buffer_map.get(param)
        if buf is None:
            continue
        if kind != "expr":
            return False
        sinfo = value.struct_info_
        if not isinstance(sinfo, TensorStructInfo) or not gen.trusted(value, written=_is_output(prim, buf)):
            return False
        if str(sinfo.dtype) != str(buf.dtype) or buf.strides:
            return False
        shape = gen.tensor_shape(value)
        if shape is None or len(shape) != len(buf.shape):
            return False
        if buf.elem_offset is not None and not (isinstance(buf.elem_offset, tir_expr.IntImm)
                                                and buf.elem_offset.value == 0):
            return False
        for bdim, rdim in zip(buf.shape, shape):
            if isinstance(bdim, tir_expr.IntImm):
                if not (isinstance(rdim, tir_expr.IntImm) and rdim.value == bdim.value):
                    return False
            elif isinstance(bdim, tir_expr.Var):
                bound = env.get(bdim)
                if bound is None:
                    env[bdim] = rdim
                elif not _same_dim(bound, rdim):
                    return False
            else:
                deferred.append((bdim, rdim))
    for bdim, rdim in deferred:
        if not _same_dim(simplify(substitute(bdim, env)), rdim):
            return False
    return True


def _is_output(prim: PrimFunc, buf) -> bool:
    found = []

    def visit(node):
        if isinstance(node, BufferStore) and node.buffer.data is buf.data:
            found.append(node)

    post_order_visit(prim.body, visit)
    return bool(found)
