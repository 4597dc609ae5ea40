"""`upsampling`: scale an image's height and width (TVM's `topi.nn.upsampling`), a resize2d.

>>> from graphc import te, topi
>>> x = te.placeholder((1, 3, 4, 5), "float32", name="x")
>>> [int(d) for d in topi.nn.upsampling(x, 2.0, 1.5).shape]
[1, 3, 8, 8]
"""

from __future__ import annotations

from ... import te
from ...tir import expr as _e
from ...tir import op as _op
from ...tir.arith import Analyzer
from ..image import layout_axes, resize2d


def _scaled(dim, scale: float):
    if isinstance(dim, _e.IntImm):
        return _e.const(int(round(dim.value * scale)), dim.dtype)
    scaled = _op.round(_e.cast(dim, "float64") * _e.const(scale, "float64"))
    return Analyzer().simplify(_e.cast(scaled, dim.dtype))


def upsampling(data: te.Tensor, scale_h: float, scale_w: float, layout: str = "NCHW",
               method: str = "nearest_neighbor", align_corners: bool = False, output_shape=None) -> te.Tensor:
    """`data` resized by `scale_h` x `scale_w` (rounded sizes): nearest neighbor, (bi)linear or
    (bi)cubic, sampling at `asymmetric` coordinates (`align_corners` aligns the corners)."""
    axes = layout_axes(layout)
    if output_shape is not None:
        size = (output_shape[axes["H"]], output_shape[axes["W"]])
    else:
        size = (_scaled(data.shape[axes["H"]], scale_h), _scaled(data.shape[axes["W"]], scale_w))
    if method.startswith("bi"):
        method = method[2:]
    mode = "align_corners" if align_corners else "asymmetric"
    return resize2d(data, (0.0,) * 4, size, layout=layout, method=method, coordinate_transformation_mode=mode)


__all__ = ["upsampling"]
