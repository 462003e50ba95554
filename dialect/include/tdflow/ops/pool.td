//===- tdflow/ops/pool.td - standard ops: pool ------------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The pool family:
// max, average and adaptive average pooling, with their gradients.
// This family's hooks live in tdflow/dialect/hooks/pool.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Convolution, pooling, dropout
//===----------------------------------------------------------------------===//

def TDF_MaxPool2DOp : TDF_HookedOp<"max_pool_2d", [NoMemoryEffect]> {
  let summary = "2-D max pooling";
  let grad = [{
    x: max_pool_2d_grad(x, indice, dy, padding=padding, data_format=data_format,
                        kernel_size=kernel_size, stride=stride, dilation=dilation,
                        return_indices=return_indices, ceil_mode=ceil_mode)
  }];
  let description = [{
    Takes the maximum over `kernel_size` windows of `x` (`channels_first`: NCHW,
    `channels_last`: NHWC). Output spatial size per dim is `floor((in + 2*pad -
    dilation*(k-1) - 1) / stride) + 1`, rounded up instead when `ceil_mode` is set (a window
    must still start inside the input or its left padding). `indice` (i64, same shape as
    `y`) holds the flat index of each maximum within its input plane; `padding` must be at
    most half the kernel size.

    Example:

    ```mlir
    %y, %idx = "tdflow.max_pool_2d"(%x) {data_format = "channels_first", dilation = [1 : si32, 1 : si32], kernel_size = [2 : si32, 2 : si32], padding = [0 : si32, 0 : si32], stride = [2 : si32, 2 : si32]} : (tensor<2x16x32x32xf32>) -> (tensor<2x16x16x16xf32>, tensor<2x16x16x16xi64>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y,
    TDF_Tensor:$indice
  );
  let attrs = (ins
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$stride,
    TDF_PairAttr<SI32ArrayAttr, 1>:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$return_indices,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode
  );
  let has_compute_complexity_fn = 1;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def TDF_MaxPool2DGradOp : TDF_HookedOp<"max_pool_2d_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of max_pool_2d";
  let description = [{
    Scatters `dy` back to the positions recorded in `indice`; the result has `x`'s shape and
    type.

    Example:

    ```mlir
    %dx = "tdflow.max_pool_2d_grad"(%x, %idx, %dy) {data_format = "channels_first", dilation = [1 : si32, 1 : si32], kernel_size = [2 : si32, 2 : si32], padding = [0 : si32, 0 : si32], stride = [2 : si32, 2 : si32]} : (tensor<2x16x32x32xf32>, tensor<2x16x16x16xi64>, tensor<2x16x16x16xf32>) -> tensor<2x16x32x32xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$indice,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$stride,
    TDF_PairAttr<SI32ArrayAttr, 1>:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$return_indices,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode
  );
  let has_compute_complexity_fn = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def TDF_AvgPool2DOp : TDF_HookedOp<"avg_pool_2d", [NoMemoryEffect]> {
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
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$stride,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
    DefaultValuedAttr<SI32Attr, "0">:$divisor_override
  );
  let has_compute_complexity_fn = 1;
}

def TDF_AvgPool2DGradOp : TDF_HookedOp<"avg_pool_2d_grad", [NoMemoryEffect]> {
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
    TDF_PairAttr<SI32ArrayAttr, 0>:$padding,
    StrAttr:$data_format,
    TDF_PairAttr<SI32ArrayAttr, 1>:$kernel_size,
    TDF_PairAttr<SI32ArrayAttr, 1>:$stride,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
    DefaultValuedAttr<SI32Attr, "0">:$divisor_override
  );
  let has_compute_complexity_fn = 1;
}

def TDF_AdaptiveAvgPool2DOp : TDF_HookedOp<"adaptive_avg_pool2d", [NoMemoryEffect]> {
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
}

def TDF_AdaptiveAvgPool2DGradOp : TDF_HookedOp<"adaptive_avg_pool2d_grad", [NoMemoryEffect]> {
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
}
