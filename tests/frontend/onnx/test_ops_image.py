"""Image operators against ONNX's reference implementation: Resize and Upsample with scales,
sizes and rois given at run time (graph inputs) as well as constant, AffineGrid, volumetric
GridSample, SpaceToDepth's modes."""

import numpy as np
import pytest
from onnx_testing import check_node, rand


@pytest.mark.parametrize("const_inputs", [(), (1, 2, 3)])
def test_resize_tf_crop_and_resize_roi(const_inputs):
    x = rand(1, 1, 5, 6)
    roi = np.array([0.2, 0.7, 0.9, 1.2], "float32")  # axes 3, 2: starts then ends
    check_node(
        "Resize",
        [x, roi, None, np.array([4, 3], "int64")],
        {"coordinate_transformation_mode": "tf_crop_and_resize", "mode": "linear", "axes": [3, 2],
         "extrapolation_value": 2.0},
        opset=19,
        const_inputs=const_inputs,
        rtol=1e-4,
    )


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_resize_keep_aspect_ratio_run_time_sizes(policy):
    x = rand(1, 2, 4, 6)
    check_node(
        "Resize",
        [x, None, None, np.array([7, 5], "int64")],
        {"mode": "nearest", "keep_aspect_ratio_policy": policy, "axes": [2, 3]},
        opset=19,
    )


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_run_time_scales(mode):
    x = rand(2, 3, 5, 4)
    check_node(
        "Resize",
        [x, None, np.array([0.7, 1.6], "float32")],
        {"mode": mode, "axes": [3, 2], "coordinate_transformation_mode": "half_pixel_symmetric"},
        opset=19,
        rtol=1e-4,
        atol=1e-5,
    )


def test_resize_run_time_scales_must_keep_batch_and_channels():
    x = rand(1, 2, 3, 3)
    with pytest.raises(Exception, match="match_cast|shape|size"):
        check_node("Resize", [x, None, np.array([1, 2, 2, 2], "float32")], {"mode": "nearest"}, opset=19)


def test_upsample_run_time_scales():
    x = rand(1, 2, 2, 3)
    for const_inputs in [(), (1,)]:
        check_node("Upsample", [x, np.array([1, 1, 2, 3], "float32")], {"mode": "nearest"}, opset=9,
                   const_inputs=const_inputs)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("const_inputs", [(), (1,)])
def test_affine_grid(align, const_inputs):
    theta2 = rand(2, 2, 3, seed=4)
    check_node("AffineGrid", [theta2, np.array([2, 3, 4, 5], "int64")], {"align_corners": align}, opset=20,
               const_inputs=const_inputs, rtol=1e-5, atol=1e-6)
    theta3 = rand(1, 3, 4, seed=5)
    check_node("AffineGrid", [theta3, np.array([1, 1, 3, 1, 4], "int64")], {"align_corners": align},
               opset=20, const_inputs=const_inputs, rtol=1e-5, atol=1e-6)


def test_affine_grid_rejects_bad_theta():
    with pytest.raises(Exception, match="theta .* must be shaped"):
        check_node("AffineGrid", [rand(1, 3, 3), np.array([1, 1, 4, 5], "int64")], opset=20,
                   const_inputs=(1,))


@pytest.mark.parametrize(
    "mode,padding", [("linear", "zeros"), ("nearest", "border"), ("linear", "reflection")]
)
def test_grid_sample_volumetric(mode, padding):
    grid = rand(2, 2, 3, 4, 3, seed=6, low=-1.2, high=1.2)
    for align in (0, 1):
        attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
        check_node("GridSample", [rand(2, 2, 3, 4, 5), grid], attrs, opset=20, rtol=1e-4, atol=1e-5)


def test_grid_sample_volumetric_rejects_cubic():
    with pytest.raises(Exception, match="mode='cubic' is not supported for 5-d"):
        check_node("GridSample", [rand(1, 1, 2, 2, 2), rand(1, 2, 2, 2, 3)], {"mode": "cubic"}, opset=20)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes(mode):
    check_node("SpaceToDepth", [rand(2, 3, 4, 6)], {"blocksize": 2, "mode": mode}, opset=28)


def test_conv_transpose_3d():
    attrs = {"strides": [1, 2, 1], "pads": [1, 0, 0, 0, 1, 1], "output_padding": [0, 1, 0]}
    check_node("ConvTranspose", [rand(1, 2, 3, 2, 3), rand(2, 3, 2, 3, 2, seed=1), rand(3, seed=2)], attrs,
               rtol=1e-4, atol=1e-5)


def _pool_indices(x, k):
    """MaxPool's values and flat indices of x (N, C, H, W) for a k x k kernel of stride k."""
    n, c, h, w = x.shape
    values = np.zeros((n, c, h // k, w // k), x.dtype)
    index = np.zeros(values.shape, "int64")
    for a in range(n):
        for b in range(c):
            for i in range(h // k):
                for j in range(w // k):
                    window = x[a, b, i * k:(i + 1) * k, j * k:(j + 1) * k]
                    di, dj = np.unravel_index(np.argmax(window), window.shape)
                    values[a, b, i, j] = window[di, dj]
                    index[a, b, i, j] = ((a * c + b) * h + i * k + di) * w + j * k + dj
    return values, index


@pytest.mark.parametrize("const_inputs", [(), (2,)])
def test_max_unpool(const_inputs):
    values, index = _pool_indices(rand(2, 2, 4, 6), 2)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    check_node("MaxUnpool", [values, index], attrs, opset=11)
    check_node("MaxUnpool", [values, index, np.array([2, 2, 5, 7], "int64")], attrs, opset=11,
               const_inputs=const_inputs)


def test_max_unpool_index_out_of_range_errors():
    values, index = _pool_indices(rand(1, 1, 2, 2), 2)
    with pytest.raises(Exception, match="index|range|bound"):
        check_node("MaxUnpool", [values, index + 4], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11)


@pytest.mark.parametrize("const_inputs", [(), (1, 2)])
def test_col2im(const_inputs):
    # image 5 x 6, blocks 2 x 3, strides (2, 1), dilations (1, 2), pads (1, 0, 0, 1): 3 x 3 blocks
    attrs = {"strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 0, 1]}
    x = rand(2, 2 * 6, 9)
    check_node("Col2Im", [x, np.array([5, 6], "int64"), np.array([2, 3], "int64")], attrs, opset=18,
               const_inputs=const_inputs, rtol=1e-5, atol=1e-6)


def test_col2im_3d():
    x = rand(1, 2 * 4, 18)  # image 3 x 4 x 3, blocks 2 x 2 x 1 of stride 1: 2 x 3 x 3 of them
    check_node("Col2Im", [x, np.array([3, 4, 3], "int64"), np.array([2, 2, 1], "int64")], opset=18,
               const_inputs=(1, 2), rtol=1e-5, atol=1e-6)


def test_deform_conv_groups_mask_bias():
    x = rand(2, 4, 5, 6)
    w = rand(6, 2, 2, 3, seed=1)  # group 2
    offset = rand(2, 2 * 2 * 3 * 2, 3, 2, seed=2, low=-1.5, high=1.5)  # offset_group 2, stride (2, 3)
    mask = rand(2, 2 * 2 * 3, 3, 2, seed=3, low=0.0, high=1.0)
    attrs = {"group": 2, "offset_group": 2, "strides": [2, 3], "pads": [1, 1, 0, 1], "dilations": [1, 2]}
    check_node("DeformConv", [x, w, offset, rand(6, seed=4), mask], attrs, opset=19, rtol=1e-4, atol=1e-5)
    check_node("DeformConv", [x, w, offset], attrs, opset=19, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,coord", [("avg", "half_pixel"), ("max", "output_half_pixel")])
def test_roi_align(mode, coord):
    x = rand(2, 3, 6, 7)
    rois = np.array([[0.5, 1.0, 4.0, 5.5], [-1.0, 0.0, 9.0, 3.0], [2.0, 2.0, 2.2, 2.1]], "float32")
    attrs = {"mode": mode, "coordinate_transformation_mode": coord, "output_height": 3, "output_width": 2,
             "sampling_ratio": 2, "spatial_scale": 0.9}
    check_node("RoiAlign", [x, rois, np.array([1, 0, 1], "int64")], attrs, opset=16, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("coord", ["half_pixel", "output_half_pixel"])
def test_roi_align_adaptive_sampling(mode, coord):
    """sampling_ratio 0: ceil(region size / bins) samples per bin, per region; a degenerate
    region (no samples under half_pixel) is 0."""
    x = rand(2, 3, 6, 7)
    rois = np.array([[0.5, 1.0, 4.0, 5.5], [0.0, 0.0, 7.0, 6.0], [2.0, 2.0, 2.2, 2.1], [3, 3, 3, 3],
                     [1.0, 4.0, 0.5, 2.0]], "float32")
    attrs = {"mode": mode, "coordinate_transformation_mode": coord, "output_height": 3, "output_width": 2,
             "sampling_ratio": 0}
    index = np.array([1, 0, 1, 0, 1], "int64")
    check_node("RoiAlign", [x, rois, index], attrs, opset=16, rtol=1e-4, atol=1e-5)
    check_node("RoiAlign", [x, rois * 0.5, index], dict(attrs, spatial_scale=2.0, output_height=2), opset=16,
               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("order", [0, 1])
def test_max_pool_indices(order):
    x = rand(2, 3, 5, 6)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 0, 1], "storage_order": order}
    check_node("MaxPool", [x], attrs, opset=12, num_outputs=2)
    attrs = {"kernel_shape": [2, 2], "dilations": [2, 1], "ceil_mode": 1, "strides": [2, 2]}
    check_node("MaxPool", [x], attrs, opset=12, num_outputs=2)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias(mode):
    x = rand(1, 2, 6, 5)
    attrs = {"mode": mode, "antialias": 1}
    for const_inputs in [(2,), ()]:  # constant and run-time scales: the window follows the scale
        check_node("Resize", [x, None, np.array([1, 1, 0.45, 0.7], "float32")], attrs, opset=18,
                   const_inputs=const_inputs, rtol=1e-4, atol=1e-5)
    sizes = np.array([1, 2, 3, 2], "int64")
    check_node("Resize", [x, None, None, sizes], attrs, opset=18, rtol=1e-4, atol=1e-5)
