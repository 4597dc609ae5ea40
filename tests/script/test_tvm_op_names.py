"""Every name in TVM's relax.op namespace is a graphc operator or is reported as not supported."""

import pytest

from graphc.script import relax as R

# TVM's relax.op and relax.op.nn/image/memory/builtin/vm/ccl/grad names (python/tvm/relax/op)
TVM_OPS = """
assert_op call_builtin_with_ctx call_dps_packed call_inplace_packed call_pure_packed call_tir
call_tir_inplace call_tir_with_grad hint_on_device invoke_closure invoke_pure_closure make_closure
null_value print shape_of shape_to_tensor tensor_to_shape to_vdevice add bitwise_and bitwise_or bitwise_xor
divide equal floor_divide log_add_exp floor_mod greater greater_equal left_shift less less_equal
logical_and logical_or logical_xor maximum minimum mod multiply not_equal power right_shift subtract
arange full full_like hamming_window ones ones_like eye eye_like tril triu zeros zeros_like astype
wrap_param dynamic_strided_slice strided_slice take einsum linear matmul outer broadcast_to
collapse_sum_like collapse_sum_to concat expand_dims flatten flip gather_elements gather_nd index_put
index_tensor meshgrid layout_transform one_hot permute_dims repeat reshape scatter_elements scatter_nd
slice_scatter split squeeze stack tile masked_fill dequantize quantize multinomial_from_uniform argmax
argmin where bucketize nonzero unique argsort sort topk cumprod cumsum max mean min prod std sum variance
ewise_fma abs acos acosh asin asinh atan atanh bitwise_not ceil clip cos cosh erf exp floor isfinite
isinf isnan log logical_not negative round rsqrt sigmoid sign sin sinh sqrt square tan tanh trunc
nn.adaptive_avg_pool1d nn.adaptive_avg_pool2d nn.adaptive_avg_pool3d nn.attention nn.attention_bias
nn.attention_var_len nn.avg_pool1d nn.avg_pool2d nn.avg_pool3d nn.batch_flatten nn.batch_norm nn.conv1d
nn.conv1d_transpose nn.conv2d nn.conv2d_transpose nn.conv3d nn.conv3d_transpose
nn.cross_entropy_with_logits nn.dropout nn.gelu nn.gelu_tanh nn.group_norm nn.instance_norm
nn.layer_norm nn.leakyrelu nn.log_softmax nn.max_pool1d nn.max_pool2d nn.max_pool3d nn.nll_loss nn.pad
nn.pixel_shuffle nn.prelu nn.relu nn.relu6 nn.rms_norm nn.selu nn.silu nn.softmax nn.softplus
image.resize2d image.resize3d image.grid_sample image.affine_grid memory.alloc_storage memory.alloc_tensor
memory.kill_storage memory.kill_tensor memory.view memory.ensure_zero_offset builtin.alloc_tensor
builtin.stop_lift_params vm.alloc_storage vm.alloc_tensor vm.kill_object vm.call_tir_dyn ccl.allreduce
ccl.allgather ccl.broadcast_from_worker0 ccl.scatter_from_worker0 grad.no_grad grad.start_checkpoint
grad.end_checkpoint grad.nll_loss_backward grad.max_pool2d_backward grad.avg_pool2d_backward
grad.take_backward
""".split()


def _lookup(name):
    value = R
    for part in name.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("name", TVM_OPS)
def test_every_tvm_operator_exists_or_is_reported(name):
    try:
        value = _lookup(name)
    except AttributeError as err:
        assert f"R.{name} is not supported by graphc" in str(err)
        return
    assert callable(value), name
