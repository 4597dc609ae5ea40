"""Relax: the dataflow graph IR (expressions, struct info, BlockBuilder, operators, analyses).

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         gv = bb.emit_output(relax.op.nn.relu(x))
...     _ = bb.emit_func_output(gv)
>>> relax.analysis.well_formed(bb.get())
True
"""

from . import analysis, op, transform
from .block_builder import BlockBuilder, BlockBuilderError
from .expr import (
    Attrs,
    Binding,
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    DataTypeImm,
    Expr,
    ExternFunc,
    Function,
    GlobalVar,
    If,
    LeafExpr,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
    const,
    is_leaf,
    set_struct_info,
)
from .expr_functor import ExprMutator, ExprVisitor
from .op.registry import Op, OpPatternKind
from .pipeline import get_pipeline
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    erase_to_well_defined,
    get_dtype,
    get_ndim,
    is_base_of,
    struct_info_lca,
)

__all__ = [
    "Attrs", "Binding", "BindingBlock", "BlockBuilder", "BlockBuilderError", "Call", "Constant",
    "DataTypeImm", "DataflowBlock", "DataflowVar", "Expr", "ExprMutator", "ExprVisitor", "ExternFunc",
    "FuncStructInfo", "Function", "GlobalVar", "If", "LeafExpr", "MatchCast", "ObjectStructInfo", "Op",
    "OpPatternKind", "PrimStructInfo", "PrimValue", "SeqExpr", "ShapeExpr", "ShapeStructInfo", "StringImm",
    "StructInfo", "TensorStructInfo", "Tuple", "TupleGetItem", "TupleStructInfo", "Var", "VarBinding",
    "analysis", "const", "get_pipeline", "erase_to_well_defined", "get_dtype", "get_ndim", "is_base_of",
    "is_leaf", "op", "set_struct_info", "struct_info_lca", "transform",
]


def __getattr__(name):
    # The VM lives in graphc.vm (it never imports the compiler); TVM spells it relax.VirtualMachine.
    if name in ("VirtualMachine", "Executable"):
        from .. import vm

        return getattr(vm, name)
    if name == "build":  # TVM's relax.build: VM lowering, kernels, bytecode
        from .vm_build import build

        return build
    if name == "frontend":  # model authoring (relax.frontend.nn) loads on first use
        import importlib

        return importlib.import_module(".frontend", __name__)
    raise AttributeError(f"module 'graphc.relax' has no attribute {name!r}")
