//===- tdflow/ops/norm.td - standard ops (part of ops.td) ------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. Each op is declared as
// OneFlow's OneFlowUserOps.td declares it (operands, results, attributes, defaults, flags).
// Their gradients are Python rules in dialect/hooks/norm.py, written with standard ops
// (reduce_sum, reshape, fused_elementwise), so they need no *_grad ops of their own and are
// themselves differentiable.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def TDF_LayerNormOp : TDF_HookedOp<"layer_norm", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let summary = "layer normalization over the trailing axes";
  let description = [{
    Normalizes `x` over the axes from `begin_norm_axis` on (negative counts from the end):
    `mean` and `inv_variance = 1 / sqrt(var + epsilon)` (biased variance) have shape
    `x.shape[:begin_norm_axis]`, and `y = (x - mean) * inv_variance`, then `* gamma` when
    `scale` and `+ beta` when `center`; `gamma` and `beta` have shape
    `x.shape[begin_params_axis:]`. `scale` requires `gamma` and `center` requires `beta`
    (and a given `gamma`/`beta` requires its flag). Operands are sized by
    `operandSegmentSizes` (x, beta, gamma). The functional API follows OneFlow's
    `layer_norm(x, begin_norm_axis, begin_params_axis, epsilon=1e-5)`, or takes `beta` and
    `gamma` by keyword with the op's attributes.

    Example:

    ```mlir
    %y, %mean, %inv = "tdflow.layer_norm"(%x, %beta, %gamma) {begin_norm_axis = 1 : si64, begin_params_axis = 1 : si64, center = true, epsilon = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, scale = true} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    Optional<TDF_Tensor>:$beta,
    Optional<TDF_Tensor>:$gamma
  );
  let output = (outs
    TDF_Tensor:$y,
    TDF_Tensor:$mean,
    TDF_Tensor:$inv_variance
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$center,
    DefaultValuedAttr<BoolAttr, "false">:$scale,
    TDF_AxisAttr<"x", DefaultValuedAttr<SI64Attr, "0">>:$begin_norm_axis,
    TDF_AxisAttr<"x", DefaultValuedAttr<SI64Attr, "0">>:$begin_params_axis,
    DefaultValuedAttr<F64Attr, "0.">:$epsilon
  );
  let signature = [{
    Tensor (Tensor x, Int64 begin_norm_axis, Int64 begin_params_axis, Double epsilon=1e-05) => LayerNorm
    Tensor (Tensor x, *, Tensor beta=None, Tensor gamma=None, Bool center=False, Bool scale=False, Int64 begin_norm_axis=0, Int64 begin_params_axis=0, Double epsilon=0.0) => LayerNorm
  }];
}

// OneFlow declares `normalization` through OneFlow_NormalizationBaseOp (traits NoMemoryEffect,
// AttrSizedOperandSegments, AttrSizedResultSegments). tdflow leaves out
// AttrSizedResultSegments: with it every program would need a resultSegmentSizes attribute,
// and the results are unambiguous without one (y alone, or y, mean and inv_variance).
def TDF_NormalizationOp : TDF_HookedOp<"normalization", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let summary = "batch normalization (training and inference), moving statistics in place";
  let description = [{
    Normalizes `x` per channel, the channel being dim `axis` (1 for NCHW): `gamma`, `beta`,
    `moving_mean`, `moving_variance`, `mean` and `inv_variance` have shape `[C]`.

    With `training = true` the statistics are the batch's, over every dim but `axis`: `mean`
    and `inv_variance = 1 / sqrt(var + epsilon)` (biased variance), and
    `y = (x - mean) * inv_variance * gamma + beta (+ _add_to_output)`. When given,
    `moving_mean` and `moving_variance` are updated in place as OneFlow's kernels do:
    `moving_mean = moving_mean * momentum + mean * (1 - momentum)` and
    `moving_variance = moving_variance * momentum + unbiased_var * (1 - momentum)`, with
    `unbiased_var = var * n / (n - 1)` over the `n` elements per channel (PyTorch's
    `momentum` is OneFlow's `1 - momentum`; the functional API's default `momentum = 0.9`
    is PyTorch's 0.1).

    With `training = false` the moving statistics are used and left unchanged:
    `y = (x - moving_mean) / sqrt(moving_variance + epsilon) * gamma + beta`; the `mean` and
    `inv_variance` results then hold `moving_mean` and `1 / sqrt(moving_variance + epsilon)`.
    `moving_mean` and `moving_variance` are marked mutable and take no gradient.

    Example:

    ```mlir
    %y, %mean, %inv = "tdflow.normalization"(%x, %mm, %mv, %gamma, %beta) {axis = 1 : si32, epsilon = 1.000000e-05 : f32, momentum = 0.899999976 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, training = true} : (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    Optional<TDF_Tensor>:$moving_mean,
    Optional<TDF_Tensor>:$moving_variance,
    TDF_Tensor:$gamma,
    TDF_Tensor:$beta,
    Optional<TDF_Tensor>:$_add_to_output
  );
  let output = (outs
    TDF_Tensor:$y,
    Optional<TDF_Tensor>:$mean,
    Optional<TDF_Tensor>:$inv_variance
  );
  let attrs = (ins
    TDF_AxisAttr<"x", DefaultValuedAttr<SI32Attr, "0">>:$axis,
    DefaultValuedAttr<F32Attr, "0.">:$epsilon,
    DefaultValuedAttr<BoolAttr, "false">:$training,
    DefaultValuedAttr<F32Attr, "0.">:$momentum
  );
  let signature = [{
    Tensor (Tensor x, Tensor moving_mean=None, Tensor moving_variance=None, Tensor gamma=None, Tensor beta=None, Int32 axis=1, Float epsilon=1e-05, Float momentum=0.9, Bool training=False) => Normalization
    Tensor (Tensor x, Tensor moving_mean=None, Tensor moving_variance=None, Tensor gamma=None, Tensor beta=None, Tensor _add_to_output=None, *, Int32 axis=1, Float epsilon=1e-05, Float momentum=0.9, Bool training=False) => Normalization
  }];
  let has_input_arg_modify_fn = 1;
}

def TDF_GroupNormOp : TDF_HookedOp<"group_norm", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let summary = "group normalization";
  let description = [{
    Splits the channels of `x` (dim 1 for `data_format = "channels_first"`, the last dim for
    `"channels_last"`) into `num_groups` groups and normalizes each sample's group:
    `mean` and `inv_variance = 1 / sqrt(var + epsilon)` (biased variance) have shape
    `[N, num_groups]`; `y = (x - mean) * inv_variance`, then `* gamma + beta` per channel
    when `affine` (`gamma` and `beta` of shape `[C]`, both required then), then the
    `activation`: `"none"` or `"silu"` (`y * sigmoid(y)`). `C` must be a multiple of
    `num_groups`. Operands are sized by `operandSegmentSizes` (x, beta, gamma).

    Example:

    ```mlir
    %y, %mean, %inv = "tdflow.group_norm"(%x, %beta, %gamma) {affine = true, epsilon = 1.000000e-05 : f64, num_groups = 2 : si32, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    Optional<TDF_Tensor>:$beta,
    Optional<TDF_Tensor>:$gamma
  );
  let output = (outs
    TDF_Tensor:$y,
    TDF_Tensor:$mean,
    TDF_Tensor:$inv_variance
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$affine,
    DefaultValuedAttr<SI32Attr, "0">:$num_groups,
    DefaultValuedAttr<F64Attr, "0.">:$epsilon,
    DefaultValuedAttr<StrAttr, "\"channels_first\"">:$data_format,
    DefaultValuedAttr<StrAttr, "\"none\"">:$activation
  );
  let signature = [{
    Tensor (Tensor x, *, Tensor beta=None, Tensor gamma=None, Bool affine=False, Int32 num_groups=1, Double epsilon=1e-05, String data_format="channels_first", String activation="none") => GroupNorm
  }];
}
