"""`SplitHostDevice`: a GPU PrimFunc becomes host code that launches device kernels.

Each kernel region (a thread scope with none above it, see `analysis.thread_scope`) of a
function `f` is moved into a new PrimFunc `f_kernel` (then `f_kernel_1`, ...) whose parameters
are what the region uses from outside: the data pointers of the buffers it touches, then the
scalars (symbolic shapes, host loop and let variables). In its place the host keeps

    T.device_launch("f_kernel", index, grid_x, grid_y, grid_z, block_x, block_y, block_z,
                    dyn_shared_bytes, *arguments)

with the grid and block sizes the region launches, written in host variables, so symbolic
extents are computed on the host at run time. The host function keeps `f`'s parameters and
name and gets the attribute "tir.device_host"; the kernels get "calling_conv": "kernel",
"kernel_param_dtypes" (element types of pointers, types of scalars), "kernel_written"
(which pointers they store through), "kernel_nonneg" (scalars that are never negative: symbolic
shapes, loop variables) and "thread_extent" (tag -> extent, in kernel params).

What is left on the host may compute scalars, assert, loop and branch, and allocate "global"
memory (which becomes `T.device_alloc` / `T.device_free` of device memory). A load or store
left on the host means loops were never bound to threads: that is an error naming the
buffer, as TVM's "Did you forget to bind?".

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(a: T.handle, b: T.handle):
...     n = T.int32()
...     A = T.match_buffer(a, (n,), "float32")
...     B = T.match_buffer(b, (n,), "float32")
...     bx = T.launch_thread("blockIdx.x", (n + 63) // 64)
...     tx = T.launch_thread("threadIdx.x", 64)
...     if T.likely(bx * 64 + tx < n):
...         B[bx * 64 + tx] = A[bx * 64 + tx] * T.float32(2)
... ''').with_attr("global_symbol", "double")
>>> host, kernels = split_host_device(f)
>>> print(host.body)
T.evaluate(T.device_launch("double_kernel", 0, (n + 63) // 64, 1, 1, 64, 1, 1, 0, A, B, n))
>>> [p.name for p in kernels[0].params], kernels[0].attrs["kernel_param_dtypes"]
(['A', 'B', 'n'], ['float32', 'float32', 'int32'])
"""

from __future__ import annotations

from ...errors import CodegenError
from ...ir.dtype import DataType
from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..analysis.thread_scope import THREAD_TAGS, is_thread_scope, launch_extents
from ..expr import Call, IntImm, const
from ..function import PrimFunc
from ..functor import StmtExprVisitor, StmtMutator
from ..op import device_alloc, device_free, device_launch
from ..stmt import Allocate, Evaluate, LetStmt, SeqStmt

LAUNCH_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


class _Uses(StmtExprVisitor):
    """Vars a region uses and defines; buffers it loads and stores (by data var)."""

    def __init__(self):
        self.used: dict = {}
        self.defined: set = set()
        self.dtypes: dict = {}  # data var -> element dtype of its first access
        self.written: set = set()

    def visit_Var(self, op):
        self.used.setdefault(op, None)

    def visit_buffer_use(self, buffer):
        self.used.setdefault(buffer.data, None)
        self.dtypes.setdefault(buffer.data, str(DataType(buffer.dtype).element_of()))

    def visit_BufferStore(self, op):
        self.written.add(op.buffer.data)
        super().visit_BufferStore(op)

    def visit_Call(self, op):
        if op.op in ("tir.address_of", "tir.call_extern"):
            for arg in op.args:  # a pointer passed on may be written
                if type(arg).__name__ == "BufferLoad":
                    self.written.add(arg.buffer.data)
        super().visit_Call(op)

    def visit_For(self, op):
        self.defined.add(op.loop_var)
        super().visit_For(op)

    def visit_LetStmt(self, op):
        self.defined.add(op.var)
        super().visit_LetStmt(op)

    def visit_Allocate(self, op):
        self.defined.add(op.buffer_var)
        super().visit_Allocate(op)

    def visit_AttrStmt(self, op):
        if is_thread_scope(op):
            self.defined.add(op.node.var)
        super().visit_AttrStmt(op)

    def visit_Let(self, op):
        self.defined.add(op.var)
        super().visit_Let(op)


class _Splitter(StmtMutator):
    """Replaces each kernel region of the host body by its launch."""

    def __init__(self, func: PrimFunc, name: str, first_index: int = 0):
        self.func, self.name, self.first_index = func, name, first_index
        self.kernels: list[PrimFunc] = []
        self.param_order = {buf.data: k for k, buf in enumerate(func.buffer_map.values())}
        self.written: set = set()
        # symbolic shapes and host loop variables from 0 are never negative (kernels index with them)
        dims = (d for buf in func.buffer_map.values() for d in (*buf.shape, *buf.strides))
        self.nonneg = set(_vars_of(*dims))

    def visit_AttrStmt(self, op):
        if not is_thread_scope(op):
            return super().visit_AttrStmt(op)
        return Evaluate(self.extract(op))

    def visit_For(self, op):
        if isinstance(op.min, IntImm) and op.min.value >= 0:
            self.nonneg.add(op.loop_var)
        return super().visit_For(op)

    def extract(self, root) -> Call:
        count = len(self.kernels)
        index = self.first_index + count
        kname = f"{self.name}_kernel" if count == 0 else f"{self.name}_kernel_{count}"
        uses = _Uses()
        uses.visit_stmt(root)
        free = [v for v in uses.used if v not in uses.defined]
        handles = sorted((v for v in free if DataType(v.dtype).is_handle),
                         key=lambda v: self.param_order.get(v, len(self.param_order)))
        scalars = [v for v in free if not DataType(v.dtype).is_handle]
        dtypes = [uses.dtypes.get(h) or getattr(h, "type_annotation", None) or "float32" for h in handles]
        dtypes += [v.dtype for v in scalars]
        extents = launch_extents(root)
        for tag, ext in extents.items():
            inner = [v for v in _vars_of(ext) if v in uses.defined]
            if inner:
                raise CodegenError(f"{kname}: the extent {ext} of {tag} depends on {inner[0].name}, which is "
                                   "defined inside the kernel; thread extents must be known at launch")
        written = [h for h in handles if h in uses.written]
        self.written.update(written)
        attrs = {
            "global_symbol": kname,
            "calling_conv": "kernel",
            "tir.noalias": bool(self.func.attrs.get("tir.noalias", True)),
            "kernel_param_dtypes": dtypes,
            "kernel_written": [h.name for h in written],
            "kernel_nonneg": [v.name for v in scalars if v in self.nonneg],
            "thread_extent": {tag: extents[tag] for tag in LAUNCH_TAGS if tag in extents},
        }
        self.kernels.append(PrimFunc([*handles, *scalars], root, None, None, attrs))
        grid = [extents.get(t, const(1)) for t in LAUNCH_TAGS[:3]]
        block = [extents.get(t, const(1)) for t in LAUNCH_TAGS[3:]]
        return device_launch(kname, index, *grid, *block, 0, *handles, *scalars)


def _vars_of(*exprs) -> list:
    from ..analysis.var_use import used_vars

    return used_vars(*exprs)


class _CheckHost(StmtExprVisitor):
    """Host code may not touch memory: a load or store there was never bound to threads."""

    def __init__(self, name: str):
        self.name = name

    def visit_buffer_use(self, buffer):
        raise CodegenError(
            f"{self.name}: buffer {buffer.name} is accessed outside any loop bound to blockIdx/threadIdx, "
            "so this kernel would run on the host, which a GPU target cannot do. Apply the GPU default "
            "schedules (graphc.dlight.gpu) or a schedule that binds the loops, e.g. "
            "sch.bind(loop, 'blockIdx.x') and sch.bind(inner, 'threadIdx.x') (Did you forget to bind?)"
        )

    def visit_Call(self, op):
        if op.op in ("tir.tvm_storage_sync", "tir.tvm_thread_allreduce") or op.op.startswith("tir.tvm_warp"):
            raise CodegenError(f"{self.name}: {op.op} is used outside any thread-bound loop")
        super().visit_Call(op)


class _HostMemory(StmtMutator):
    """Global allocations on the host become device memory; others are errors."""

    def __init__(self, name: str):
        self.name = name

    def visit_Allocate(self, op: Allocate):
        body = self.visit_stmt(op.body)
        if op.scope not in ("global", ""):
            raise CodegenError(f"{self.name}: buffer {op.buffer_var.name} in {op.scope!r} memory is "
                               "allocated "
                               "outside the kernel (above every thread-bound loop); allocate it inside "
                               "the loop bound to blockIdx (compute_at) or make it 'global'")
        nbytes = const(DataType(op.dtype).itemsize, "int64")
        for extent in op.extents:
            nbytes = nbytes * extent.astype("int64") if extent.dtype != "int64" else nbytes * extent
        alloc = device_alloc(nbytes)
        free = Evaluate(device_free(op.buffer_var))
        return LetStmt(op.buffer_var, alloc, SeqStmt.flatten(body, free))


def split_host_device(func: PrimFunc, name: str | None = None,
                      first_index: int = 0) -> tuple[PrimFunc, list[PrimFunc]]:
    """(host function, kernels) of `func`, named after `name` or its global_symbol; the launches
    number the kernels from `first_index` (their position in the module's device code)."""
    name = name or func.attrs.get("global_symbol", "main")
    splitter = _Splitter(func, name, first_index)
    body = splitter.visit_stmt(func.body)
    _CheckHost(name).visit_stmt(body)
    body = _HostMemory(name).visit_stmt(body)
    host = func.with_body(body).with_attr("tir.device_host", True)
    host = host.with_attr("tir.device_written", [v.name for v in splitter.written])
    return host, splitter.kernels


def split_host_device_module(mod: IRModule) -> IRModule:
    """Every PrimFunc of `mod` split into host code and kernels (kernels added to the module)."""
    funcs: dict = {}
    count = 0
    for gv, func in mod.items():
        if not isinstance(func, PrimFunc):
            funcs[gv.name_hint] = func
            continue
        name = func.attrs.get("global_symbol", gv.name_hint)
        host, kernels = split_host_device(func, name, count)
        count += len(kernels)
        funcs[gv.name_hint] = host
        for kernel in kernels:
            funcs[kernel.attrs["global_symbol"]] = kernel
    return IRModule(funcs)


@module_pass(opt_level=0, name="SplitHostDevice")
class SplitHostDevice:
    """Split every PrimFunc into host code (launches) and device kernels, added to the module."""

    def transform_module(self, mod, ctx):
        return split_host_device_module(mod)


__all__ = ["LAUNCH_TAGS", "THREAD_TAGS", "SplitHostDevice", "split_host_device",
           "split_host_device_module"]
