"""`astype`: convert a tensor's elements to another dtype (legalized to `topi.cast`);
`decode_float` / `encode_float`: narrow float formats (float8, float4) held as uint8 bits.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.BlockBuilder().normalize(relax.op.astype(x, "int32")).struct_info
R.Tensor((2, 3), dtype="int32")
>>> relax.BlockBuilder().normalize(relax.op.encode_float(x, "float8_e4m3fn")).struct_info
R.Tensor((2, 3), dtype="uint8")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ..expr import Call
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, canonical_dtype
from .infer import op_label, tensor_arg
from .registry import Op, OpPatternKind
from .te_legalize import register_topi_op


def _infer_astype(call, bb):
    x = tensor_arg(call, 0, "x")
    dtype = call.attrs["dtype"]
    if dtype == UNKNOWN_DTYPE:
        raise TypeInferenceError(f"{op_label(call)} expects a target dtype, got none")
    if x.shape_values is not None:
        return TensorStructInfo(x.shape_values, dtype, vdevice=x.vdevice)
    return TensorStructInfo(dtype=dtype, ndim=x.ndim, vdevice=x.vdevice)


register_topi_op("relax.astype", 1, _infer_astype, topi.cast, prim_name="cast",
                 pattern=OpPatternKind.kElemWise, attrs={"dtype": "the target dtype"},
                 description="Convert elements to dtype.")


def astype(x, dtype: str) -> Call:
    """`x` with its elements converted to `dtype`."""
    return Call(Op.get("relax.astype"), [x], {"dtype": canonical_dtype(dtype)})


def _format(call) -> str:
    fmt = call.attrs["format"]
    if fmt not in topi.FLOAT_FORMATS:
        raise TypeInferenceError(f"{op_label(call)} expects format in {sorted(topi.FLOAT_FORMATS)}, "
                                 f"got {fmt!r}")
    return fmt


def _with_dtype(x: TensorStructInfo, dtype: str) -> TensorStructInfo:
    if x.shape_values is not None:
        return TensorStructInfo(x.shape_values, dtype, vdevice=x.vdevice)
    return TensorStructInfo(dtype=dtype, ndim=x.ndim, vdevice=x.vdevice)


def _infer_decode_float(call, bb):
    x = tensor_arg(call, 0, "x")
    _format(call)
    if not x.is_unknown_dtype and x.dtype != "uint8":
        raise TypeInferenceError(f"{op_label(call)} expects x to hold uint8 bit patterns, got {x}")
    return _with_dtype(x, call.attrs["dtype"])


def _infer_encode_float(call, bb):
    x = tensor_arg(call, 0, "x")
    _format(call)
    if not x.is_unknown_dtype and not x.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op_label(call)} expects x to have a float dtype, got {x}")
    return _with_dtype(x, "uint8")


register_topi_op("relax.decode_float", 1, _infer_decode_float, topi.decode_float, rename={"format": "fmt"},
                 pattern=OpPatternKind.kElemWise,
                 attrs={"format": "the narrow float format of the bits (topi.FLOAT_FORMATS)",
                        "dtype": "the result dtype"},
                 description="The values of narrow-float bit patterns (uint8) as a regular float dtype.")
register_topi_op("relax.encode_float", 1, _infer_encode_float, topi.encode_float, rename={"format": "fmt"},
                 pattern=OpPatternKind.kElemWise,
                 attrs={"format": "the narrow float format (topi.FLOAT_FORMATS)",
                        "saturate": "clamp finite overflow to the largest value (else inf or NaN)",
                        "round_mode": "E8M0 only: up, down or nearest (others round to nearest even)"},
                 description="The narrow-float bit patterns (uint8) of float values, rounded to nearest "
                             "even.")


def decode_float(x, format: str, dtype: str = "float32") -> Call:  # noqa: A002 - ONNX's word
    """The values whose `format` bit patterns the uint8 tensor `x` holds, as `dtype`."""
    return Call(Op.get("relax.decode_float"), [x], {"format": str(format), "dtype": canonical_dtype(dtype)})


def encode_float(x, format: str, saturate: bool = True, round_mode: str = "nearest") -> Call:  # noqa: A002
    """The `format` bit patterns (uint8) of the float tensor `x`."""
    return Call(Op.get("relax.encode_float"), [x], {"format": str(format), "saturate": bool(saturate),
                                                     "round_mode": str(round_mode)})


def _infer_reinterpret(call, bb):
    x = tensor_arg(call, 0, "x")
    dtype = call.attrs["dtype"]
    if not x.is_unknown_dtype and _bits(x.dtype) != _bits(dtype):
        raise TypeInferenceError(f"{op_label(call)} reads bits as a dtype of the same width: {x.dtype} "
                                 f"has {_bits(x.dtype)} bits, {dtype} has {_bits(dtype)}")
    return _with_dtype(x, dtype)


def _bits(dtype: str) -> int:
    return 8 if dtype == "bool" else int("".join(c for c in dtype.split("_")[0] if c.isdigit()))


register_topi_op("relax.reinterpret", 1, _infer_reinterpret, topi.reinterpret,
                 pattern=OpPatternKind.kElemWise, attrs={"dtype": "the dtype the bits are read as"},
                 description="The bits of each element read as another dtype of the same width.")


def reinterpret(x, dtype: str) -> Call:
    """`x`'s bit patterns read as `dtype`, a dtype of the same width (ONNX's BitCast).

    >>> from graphc import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    >>> relax.BlockBuilder().normalize(relax.op.reinterpret(x, "int32")).struct_info
    R.Tensor((4,), dtype="int32")
    """
    return Call(Op.get("relax.reinterpret"), [x], {"dtype": canonical_dtype(dtype)})


__all__ = ["astype", "decode_float", "encode_float", "reinterpret"]
