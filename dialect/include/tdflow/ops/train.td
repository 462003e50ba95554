//===- tdflow/ops/train.td - standard ops (part of ops.td) ------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def TDF_ReduceMinOp : TDF_Op<"reduce_min", [NoMemoryEffect]> {
  let summary = "minimum over axes";
  let description = [{
    Takes the minimum of `input_tensor` over the dims listed in `axis`, with `reduce_sum`'s
    axis and `keepdims` rules (an empty list reduces every dim). The gradient goes to the
    minima, split evenly between ties (PyTorch's `amin`).

    Example:

    ```mlir
    %m = "tdflow.reduce_min"(%x) {axis = [-1 : si32], keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input_tensor
  );
  let output = (outs
    TDF_Tensor:$output_tensor
  );
  let attrs = (ins
    SI32ArrayAttr:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_ReduceProdOp : TDF_Op<"reduce_prod", [NoMemoryEffect]> {
  let summary = "product over axes";
  let description = [{
    Multiplies `input_tensor` over the dims listed in `axis`, with `reduce_sum`'s axis and
    `keepdims` rules. The gradient `prod / x` is computed without dividing by zero: with one
    zero in a reduced slice only that element gets the product of the others, with two or
    more every element of the slice gets 0.

    Example:

    ```mlir
    %p = "tdflow.reduce_prod"(%x) {axis = [0 : si32], keepdims = false} : (tensor<4x8xf32>) -> tensor<8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input_tensor
  );
  let output = (outs
    TDF_Tensor:$output_tensor
  );
  let attrs = (ins
    SI32ArrayAttr:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def TDF_AvgPool2DOp : TDF_Op<"avg_pool_2d", [NoMemoryEffect]> {
  let summary = "2-D average pooling";
  let grad = [{
    x: avg_pool_2d_grad(x, dy, padding=padding, data_format=data_format,
                        kernel_size=kernel_size, stride=stride, ceil_mode=ceil_mode,
                        count_include_pad=count_include_pad, divisor_override=divisor_override)
  }];
  let description = [{
    Averages `kernel_size` windows of `x` (`channels_first`: NCHW, `channels_last`: NHWC),
    padded by `padding` zeros on both sides of each spatial dim. Output size per dim is
    `floor((in + 2*pad - k) / stride) + 1`, rounded up instead when `ceil_mode` is set (a
    window must still start inside the input or its left padding). The divisor is
    `divisor_override` when non-zero, else the window's size clipped to the padded input when
    `count_include_pad`, else the number of input elements it covers (PyTorch's rule).
    `padding` must be at most half the kernel size.

    Example:

    ```mlir
    %y = "tdflow.avg_pool_2d"(%x) {data_format = "channels_first", kernel_size = [2 : si32, 2 : si32], padding = [0 : si32, 0 : si32], stride = [2 : si32, 2 : si32]} : (tensor<2x16x32x32xf32>) -> tensor<2x16x16x16xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    SI32ArrayAttr:$padding,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$stride,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
    DefaultValuedAttr<SI32Attr, "0">:$divisor_override
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_AvgPool2DGradOp : TDF_Op<"avg_pool_2d_grad", [NoMemoryEffect]> {
  let summary = "gradient of avg_pool_2d";
  // Linear in dy: its own gradient is the forward pooling of ddx (x gives only a shape).
  let grad = [{
    dy: avg_pool_2d(ddx, padding=padding, data_format=data_format, kernel_size=kernel_size,
                    stride=stride, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                    divisor_override=divisor_override)
  }];
  let description = [{
    Spreads each `dy` element evenly (by `avg_pool_2d`'s divisor) over the input elements of
    its window; the result has `x`'s shape and type.

    Example:

    ```mlir
    %dx = "tdflow.avg_pool_2d_grad"(%x, %dy) {data_format = "channels_first", kernel_size = [2 : si32, 2 : si32], padding = [0 : si32, 0 : si32], stride = [2 : si32, 2 : si32]} : (tensor<2x16x32x32xf32>, tensor<2x16x16x16xf32>) -> tensor<2x16x32x32xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    SI32ArrayAttr:$padding,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$stride,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
    DefaultValuedAttr<SI32Attr, "0">:$divisor_override
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_AdaptiveAvgPool2DOp : TDF_Op<"adaptive_avg_pool2d", [NoMemoryEffect]> {
  let summary = "2-D adaptive average pooling";
  let grad = [{
    x: adaptive_avg_pool2d_grad(x, dy, data_format=data_format, output_size=output_size)
  }];
  let description = [{
    Averages `x` (`channels_first`: NCHW, `channels_last`: NHWC) to an `output_size` spatial
    grid: output cell `i` of a dim of size `in` covers input `[floor(i*in/out),
    ceil((i+1)*in/out))`, so cells may overlap when `out` does not divide `in`. One entry
    means a square output.

    Example:

    ```mlir
    %y = "tdflow.adaptive_avg_pool2d"(%x) {data_format = "channels_first", output_size = [1, 1]} : (tensor<2x16x7x7xf32>) -> tensor<2x16x1x1xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    StrAttr:$data_format,
    SI64ArrayAttr:$output_size
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AdaptiveAvgPool2DGradOp : TDF_Op<"adaptive_avg_pool2d_grad", [NoMemoryEffect]> {
  let summary = "gradient of adaptive_avg_pool2d";
  // Linear in dy: its own gradient is the forward pooling of ddx (x gives only a shape).
  let grad = [{ dy: adaptive_avg_pool2d(ddx, data_format=data_format, output_size=output_size) }];
  let description = [{
    Spreads each `dy` element evenly over the input elements of its cell; the result has
    `x`'s shape and type.

    Example:

    ```mlir
    %dx = "tdflow.adaptive_avg_pool2d_grad"(%x, %dy) {data_format = "channels_first", output_size = [1, 1]} : (tensor<2x16x7x7xf32>, tensor<2x16x1x1xf32>) -> tensor<2x16x7x7xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    StrAttr:$data_format,
    SI64ArrayAttr:$output_size
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def TDF_SoftmaxCrossEntropyOp : TDF_Op<"softmax_cross_entropy", [NoMemoryEffect]> {
  let summary = "softmax cross-entropy with soft (probability) targets";
  let grad = [{
    prediction: softmax_cross_entropy_grad(dout, label, prob) + softmax_grad(prob, dprob)
  }];
  let description = [{
    For logits `prediction` of shape `[..., C]` and float targets `label` of the same shape
    and type, returns `prob = softmax(prediction)` along the last dim and the per-row loss
    `out = -sum(label * log(prob), -1)` (shape `prediction.shape[:-1]`). `label` is marked as
    not needing a gradient, as in OneFlow.

    Example:

    ```mlir
    %prob, %loss = "tdflow.softmax_cross_entropy"(%logits, %targets) : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$prediction,
    TDF_Tensor:$label
  );
  let output = (outs
    TDF_Tensor:$prob,
    TDF_Tensor:$out
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_SoftmaxCrossEntropyGradOp : TDF_Op<"softmax_cross_entropy_grad", [NoMemoryEffect]> {
  let summary = "gradient of softmax_cross_entropy";
  let description = [{
    Computes `prediction_diff = (prob - label) * dy[..., None]`; the result has `prob`'s
    shape.

    Example:

    ```mlir
    %dp = "tdflow.softmax_cross_entropy_grad"(%dloss, %targets, %prob) : (tensor<8xf32>, tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$label,
    TDF_Tensor:$prob
  );
  let output = (outs
    TDF_Tensor:$prediction_diff
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def TDF_AdamUpdateOp : TDF_Op<"adam_update", [NoGrad, AttrSizedOperandSegments]> {
  let summary = "Adam step (in place), as OneFlow's adam_update";
  let description = [{
    Updates `model`, `m` and `v` (and `max_v` with `amsgrad`) in place, as OneFlow's
    AdamUpdateFunctor: `g = scale * model_diff * s + l1 * sign(model) + l2 * model`;
    `m = beta1 * m + (1 - beta1) * g`; `v = beta2 * v + (1 - beta2) * g * g`;
    `max_v = max(max_v, v)` and `v' = max_v` with `amsgrad`, else `v' = v`;
    `model -= lr / bc1 * m / (sqrt(v') / sqrt(bc2) + epsilon) + lr * weight_decay * model`
    (decoupled weight decay, AdamW's). `lr = learning_rate` (a 1-element tensor, when given)
    or `learning_rate_val`, times `learning_rate_scale`; `s = scale_by_tensor` when given;
    `bc1`/`bc2` are the `bias_correction1`/`bias_correction2` tensors when given, else the
    `*_val` attributes, and 1 when `do_bias_correction` is false. The step is skipped when
    `skip_if` is non-zero; `model_copy` receives the new model. It has no results and must
    never be removed as dead code (`model`, `m`, `v`, `max_v` are marked mutable).

    Example:

    ```mlir
    "tdflow.adam_update"(%w, %dw, %m, %v) {learning_rate_val = 1.000000e-03 : f32, bias_correction1_val = 1.000000e-01 : f32, bias_correction2_val = 1.000000e-03 : f32, epsilon = 9.99999993E-9 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0>} : (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>) -> ()
    ```
  }];
  let input = (ins
    TDF_Tensor:$model,
    TDF_Tensor:$model_diff,
    Optional<TDF_Tensor>:$model_copy,
    Optional<TDF_Tensor>:$learning_rate,
    Optional<TDF_Tensor>:$scale_by_tensor,
    Optional<TDF_Tensor>:$skip_if,
    Optional<TDF_Tensor>:$bias_correction1,
    Optional<TDF_Tensor>:$bias_correction2,
    TDF_Tensor:$m,
    TDF_Tensor:$v,
    Optional<TDF_Tensor>:$max_v
  );
  // The tensors in operand order (the required m and v come after optional operands, so
  // everything after model_diff is keyword-only): adam_update(w, dw, m=m, v=v, ...).
  let signature = [{
    Void (Tensor model, Tensor model_diff, *, Tensor? model_copy=None, Tensor? learning_rate=None, Tensor? scale_by_tensor=None, Tensor? skip_if=None, Tensor? bias_correction1=None, Tensor? bias_correction2=None, Tensor m, Tensor v, Tensor? max_v=None, Float learning_rate_val=0.0, Float learning_rate_scale=1.0, Float bias_correction1_val=1.0, Float bias_correction2_val=1.0, Double scale=1.0, Float l1=0.0, Float l2=0.0, Float beta1=0.9, Float beta2=0.999, Float epsilon=0.0, Float weight_decay=0.0, Bool amsgrad=False, Bool do_bias_correction=True) => AdamUpdate
  }];
  let output = (outs);
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$learning_rate_val,
    DefaultValuedAttr<F32Attr, "1.">:$learning_rate_scale,
    DefaultValuedAttr<F32Attr, "1.">:$bias_correction1_val,
    DefaultValuedAttr<F32Attr, "1.">:$bias_correction2_val,
    DefaultValuedAttr<F64Attr, "1.">:$scale,
    DefaultValuedAttr<F32Attr, "0.">:$l1,
    DefaultValuedAttr<F32Attr, "0.">:$l2,
    DefaultValuedAttr<F32Attr, "0.9">:$beta1,
    DefaultValuedAttr<F32Attr, "0.999">:$beta2,
    DefaultValuedAttr<F32Attr, "0.">:$epsilon,
    DefaultValuedAttr<F32Attr, "0.">:$weight_decay,
    DefaultValuedAttr<BoolAttr, "false">:$amsgrad,
    DefaultValuedAttr<BoolAttr, "true">:$do_bias_correction
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}
