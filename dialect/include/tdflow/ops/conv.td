//===- tdflow/ops/conv.td - standard ops: conv ------------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The conv family:
// 2-D convolution and its two gradients.
// This family's hooks live in tdflow/dialect/hooks/conv.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Convolution, pooling, dropout
//===----------------------------------------------------------------------===//

def TDF_Conv2DOp : TDF_HookedOp<"conv2d", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let summary = "2-D convolution";
  let grad = [{
    in: conv_data_grad(dout, weight, in, num_spatial_dims=2, padding_before=padding_before,
                       data_format=data_format, kernel_size=kernel_size, strides=strides,
                       dilation_rate=dilation_rate, groups=groups);
    weight: conv_filter_grad(dout, in, num_spatial_dims=2, padding_before=padding_before,
                             data_format=data_format, kernel_size=kernel_size, strides=strides,
                             dilation_rate=dilation_rate, groups=groups);
    bias: reduce_sum(dout, axis=data_format == "channels_first" ? [0, 2, 3] : [0, 1, 2]);
    _add_to_output: dout
  }];
  let description = [{
    Convolves `in` (`NCHW` when `data_format` is `"channels_first"`, `NHWC` when
    `"channels_last"`) with `weight` (`[filters, C/groups, kH, kW]`, or `[filters, kH, kW,
    C/groups]` for channels_last), adding `bias` (`[filters]`) when given. Output spatial
    size per dim is `(in + 2*pad - dilation*(k-1) - 1) / stride + 1` with `pad =
    padding_before`. Operands are sized by `operandSegmentSizes` (in, weight, bias,
    _add_to_output).

    Example:

    ```mlir
    %y = "tdflow.conv2d"(%x, %w, %b) {data_format = "channels_first", dilation_rate = [1 : si32, 1 : si32], filters = 16 : si32, kernel_size = [3 : si32, 3 : si32], operandSegmentSizes = array<i32: 1, 1, 1, 0>, padding_before = [1 : si32, 1 : si32], strides = [1 : si32, 1 : si32]} : (tensor<2x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<2x16x32x32xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in,
    TDF_Tensor:$weight,
    Optional<TDF_Tensor>:$bias,
    Optional<TDF_Tensor>:$_add_to_output
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$filters,
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding_before,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$strides,
    TDF_PairAttr<SI32ArrayAttr, 1>:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "1">:$groups,
    DefaultValuedStrAttr<StrAttr, "">:$tuning_cache
  );
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def TDF_ConvDataGradOp : TDF_HookedOp<"conv_data_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of a convolution with respect to its input";
  let description = [{
    Computes the gradient of `conv2d`'s input from the output gradient `dy` and the
    `filter`; the result has `x_like`'s shape and type (`x_like`'s values are not read).
    `num_spatial_dims` must be 2 and `groups` at least 1.

    Example:

    ```mlir
    %dx = "tdflow.conv_data_grad"(%dy, %w, %x) {data_format = "channels_first", dilation_rate = [1 : si32, 1 : si32], groups = 1 : si32, kernel_size = [3 : si32, 3 : si32], num_spatial_dims = 2 : si32, padding_before = [1 : si32, 1 : si32], strides = [1 : si32, 1 : si32]} : (tensor<2x16x32x32xf32>, tensor<16x3x3x3xf32>, tensor<2x3x32x32xf32>) -> tensor<2x3x32x32xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$filter,
    TDF_Tensor:$x_like,
    Optional<TDF_Tensor>:$_add_to_output
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$num_spatial_dims,
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding_before,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$strides,
    TDF_PairAttr<SI32ArrayAttr, 1>:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "0">:$groups
  );
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_ConvFilterGradOp : TDF_HookedOp<"conv_filter_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of a convolution with respect to its filter";
  let description = [{
    Computes the gradient of `conv2d`'s weight from the output gradient `dy` and the input
    `x`; the result is `[C_out, C_in/groups, kH, kW]` (channels_first) with `C_out = dy`'s
    channel dim.

    Example:

    ```mlir
    %dw = "tdflow.conv_filter_grad"(%dy, %x) {data_format = "channels_first", dilation_rate = [1 : si32, 1 : si32], groups = 1 : si32, kernel_size = [3 : si32, 3 : si32], num_spatial_dims = 2 : si32, padding_before = [1 : si32, 1 : si32], strides = [1 : si32, 1 : si32]} : (tensor<2x16x32x32xf32>, tensor<2x3x32x32xf32>) -> tensor<16x3x3x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$filter_diff
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$num_spatial_dims,
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding_before,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$strides,
    TDF_PairAttr<SI32ArrayAttr, 1>:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "0">:$groups
  );
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
}
