"""image_regions: col2im, deform_conv2d, roi_align and max_pool2d_indices struct info and errors
(their numerics are checked against ONNX's reference in tests/frontend/onnx)."""

import pytest

from graphc import relax
from graphc.errors import TypeInferenceError

R = relax


def test_col2im_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((2, 12, 9), "float32"))
    call = R.op.image_regions.col2im(x, (5, 6), (2, 3), strides=(2, 1), dilations=(1, 2), pads=(1, 0, 0, 1))
    assert str(bb.normalize(call).struct_info) == 'R.Tensor((2, 2, 5, 6), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="multiple of the block size 5"):
        bb.normalize(R.op.image_regions.col2im(x, (5, 6), (5, 1)))
    with pytest.raises(TypeInferenceError, match="one size per image axis"):
        bb.normalize(R.op.image_regions.col2im(x, (5, 6), (2,)))


def test_deform_conv2d_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((1, 4, 5, 5), "float32"))
    w = R.Var("w", R.TensorStructInfo((6, 2, 3, 3), "float32"))
    offset = R.Var("o", R.TensorStructInfo((1, 18, 3, 3), "float32"))
    mask = R.Var("m", R.TensorStructInfo((1, 9, 3, 3), "float32"))
    call = R.op.image_regions.deform_conv2d(x, w, offset, mask, groups=2)
    assert str(bb.normalize(call).struct_info) == 'R.Tensor((1, 6, 3, 3), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="times groups"):
        bb.normalize(R.op.image_regions.deform_conv2d(x, w, offset, mask))
    with pytest.raises(TypeInferenceError, match="offset_groups . KH . KW . 2 channels"):
        bb.normalize(R.op.image_regions.deform_conv2d(x, w, offset, mask, groups=2, offset_groups=2))


def test_roi_align_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((2, 3, 8, 8), "float32"))
    rois = R.Var("r", R.TensorStructInfo((5, 4), "float32"))
    index = R.Var("i", R.TensorStructInfo((5,), "int64"))
    call = R.op.image_regions.roi_align(x, rois, index, (2, 3))
    assert str(bb.normalize(call).struct_info) == 'R.Tensor((5, 3, 2, 3), dtype="float32")'
    with pytest.raises(TypeInferenceError, match=r"rois to be shaped \(R, 4\)"):
        three = R.Var("r", R.TensorStructInfo((5, 3), "float32"))
        bb.normalize(R.op.image_regions.roi_align(x, three, index, (2, 2)))
    with pytest.raises(TypeInferenceError, match="sampling_ratio >= 0"):
        bb.normalize(R.op.image_regions.roi_align(x, rois, index, (2, 2), sampling_ratio=-1))
    with pytest.raises(TypeInferenceError, match="mode to be one of"):
        bb.normalize(R.op.image_regions.roi_align(x, rois, index, (2, 2), mode="min"))


def test_max_pool2d_indices_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((1, 2, 6, 6), "float32"))
    call = R.op.image_regions.max_pool2d_indices(x, (3, 3), (2, 2), strides=(2, 2))
    assert str(bb.normalize(call).struct_info) == 'R.Tensor((1, 2, 3, 3), dtype="int64")'
    with pytest.raises(TypeInferenceError, match="storage_order 0 or 1"):
        bb.normalize(R.op.image_regions.max_pool2d_indices(x, (3, 3), (2, 2), storage_order=2))
    with pytest.raises(TypeInferenceError, match="expects 2 kernel"):
        bb.normalize(R.op.image_regions.max_pool2d_indices(x, (3, 3), (2, 2, 2)))
