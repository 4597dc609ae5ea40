"""ONNX's own backend test suite (`onnx.backend.test.BackendTest`) on graphc's ONNX backend.

What runs here: the nine light models (with their shipped expected outputs), the "simple"
models, the PyTorch operator models and the converted PyTorch layers, and a representative
subset of the node cases, one or a few per operator family.
All node cases (about 1,900) run in `benchmarks/onnx_conformance.py`, against ONNX Runtime in
the same run: compiling each of them takes too long for the test suite's budget. The cases
that cannot pass by design are excluded with their reasons in exclusions.py.
"""

import re
import warnings

import onnx.backend.test
from exclusions import EXCLUDED

from graphc.frontend.onnx.backend import GraphcBackend

# the representative node cases: every converter family, constant and run-time operands
NODE_CASES = [
    r"test_(abs|neg|exp|sqrt|tanh|erf|sigmoid|floor|ceil|round|sign|reciprocal|isnan|isinf)",
    r"test_(add|sub|mul|div|pow|mod_mixed_sign_int32|max_example|min_example|sum_example|mean_example)",
    r"test_(equal|less|greater|and2d|or2d|xor2d|not_2d|bitshift_right_uint8|bitwise_and_i32_2d|where_example)",
    r"test_(clip|clip_splitbounds|cast_FLOAT_to_DOUBLE|cast_FLOAT_to_FLOAT8E4M3FN|cast_FLOAT8E5M2_to_FLOAT"
    r"|cast_FLOAT_to_INT4|castlike_FLOAT_to_DOUBLE)",
    r"test_(reshape_negative_dim|reshape_zero_dim|reshape_allowzero_reordered|flatten_axis1|transpose_all_permutations_0"
    r"|squeeze|unsqueeze_axis_1|unsqueeze_negative_axes|concat_2d_axis_negative_1|split_equal_parts_1d_opset18"
    r"|slice|slice_neg_steps|slice_negative_axes|gather_0|gather_negative_indices|gather_elements_negative_indices"
    r"|gathernd_example_int32_batch_dim1|scatter_elements_with_reduction_max|scatternd_add|expand_dim_changed"
    r"|tile|constant_pad|reflect_pad|edge_pad|center_crop_pad_crop|depthtospace_crd_mode_example|spacetodepth"
    r"|triu_one_row|tril_neg|onehot_negative_indices|shape_start_1_end_negative_1|size"
    r"|constantofshape_int_zeros|eyelike_with_dtype)",
    r"test_(reduce_sum_keepdims_random|reduce_mean_do_not_keepdims_random|reduce_max_negative_axes_keepdims_random"
    r"|reduce_log_sum_exp_keepdims_random|reduce_l2_keep_dims_random|reduce_sum_empty_axes_input_noop"
    r"|argmax_keepdims_select_last_index|argmin_no_keepdims_example|cumsum_1d_reverse_exclusive|cumprod_2d_axis_0"
    r"|top_k|top_k_smallest)",
    r"test_(relu|leakyrelu|elu|selu|celu|prelu_broadcast|thresholdedrelu|hardsigmoid|hardswish|softplus|softsign|mish"
    r"|gelu_tanh_1|shrink|softmax_axis_1|logsoftmax_axis_0|hardmax_axis_1|softmax_axis_0_opset11)",
    r"test_(conv_with_strides_and_asymmetric_padding|convtranspose|convtranspose_output_shape|maxpool_2d_ceil"
    r"|maxpool_2d_same_upper|averagepool_2d_pads_count_include_pad|globalaveragepool|lppool_2d_default"
    r"|batchnorm_example|instancenorm_example|layer_normalization_3d_axis_negative_1_epsilon"
    r"|group_normalization_example|rms_normalization_3d_axis_negative_1_epsilon|lrn|lpnormalization_2d)",
    r"test_(matmul_3d|gemm_all_attributes|einsum_batch_matmul|resize_upsample_sizes_nearest"
    r"|resize_downsample_sizes_linear_pytorch_half_pixel|gridsample_bilinear|attention_3d|attention_4d_causal"
    r"|flexattention|linear_attention_linear_expanded)",
    r"test_(quantizelinear|quantizelinear_blocked_asymmetric|dequantizelinear_axis|dequantizelinear_int4"
    r"|dynamicquantizelinear|qlinearmatmul_2D_uint8_float32|matmulinteger|convinteger_with_padding)",
    r"test_(if|if_seq|scan9_sum|sequence_insert_at_back|split_to_sequence_nokeepdims|sequence_map_add_2_sequences_expanded"
    r"|optional_get_element_tensor|identity_sequence|blackmanwindow|hannwindow_symmetric)",
]
LIGHT_MODELS = (
    r"test_(bvlc_alexnet|densenet121|inception_v1|inception_v2|resnet50|shufflenet|squeezenet|vgg19|zfnet512)"
)
PYTORCH = (
    r"test_(operator_[a-z0-9_]+|(AvgPool|MaxPool|Conv|ConvTranspose|BatchNorm|Linear|Embedding|PReLU|LeakyReLU|ELU"
    r"|SELU|Softmax|LogSoftmax|Softplus|Softsign|Tanh|Sigmoid|ReLU|ReflectionPad|ReplicationPad|ZeroPad|PixelShuffle"
    r"|GLU|Softmin)[a-z0-9_]*)"
)
SIMPLE = (
    r"test_(single_relu_model|sequence_model[1-7]|expand_shape_model[1-4]|shrink|sign_model)"
)

WANTED = re.compile(
    "|".join(
        [rf"^{p}(_expanded)?_cpu$" for p in NODE_CASES]
        + [rf"^{LIGHT_MODELS}_cpu$", rf"^{SIMPLE}_cpu$", rf"^{PYTORCH}_cpu$"]
    )
)


def _selected_cases() -> dict:
    """BackendTest's TestCase classes with only the selected, not excluded, cases left (the
    others are removed rather than skipped: they run in the conformance benchmark)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the node-case generators' own numpy warnings
        cases = onnx.backend.test.BackendTest(GraphcBackend, __name__).test_cases
    excluded = {f"{name}_cpu" for name in EXCLUDED}
    for cls in cases.values():
        for name in [n for n in vars(cls) if n.startswith("test_")]:
            if not WANTED.match(name) or name in excluded:
                delattr(cls, name)
    return {name: cls for name, cls in cases.items() if any(n.startswith("test_") for n in vars(cls))}


globals().update(_selected_cases())
