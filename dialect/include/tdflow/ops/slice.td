//===- tdflow/ops/slice.td - standard ops: slice ----------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The slice family:
// slicing, narrowing, padding and triangular masks, with their gradients.
// This family's hooks live in tdflow/dialect/hooks/slice.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Shape and type
//===----------------------------------------------------------------------===//

def TDF_SliceOp : TDF_HookedOp<"slice", [NoMemoryEffect]> {
  let summary = "strided slice, one (start, stop, step) per dim";
  let grad = [{ x: slice_grad(dy, like_shape=x.shape, start=start, stop=stop, step=step) }];
  let description = [{
    Returns `x[start[0]:stop[0]:step[0], start[1]:stop[1]:step[1], ...]` with Python's and
    numpy's slicing semantics: `start`, `stop` and `step` hold one entry per dim of `x`; a
    negative `start` or `stop` counts from the end of its dim, and out-of-range values are
    clamped to the dim (so `stop = 9223372036854775807` means "to the end"). Each `step`
    must be positive, as in OneFlow (whose functional layer normalises the indices before
    the op sees them). The element type is kept.

    Example:

    ```mlir
    %y = "tdflow.slice"(%x) {start = [0, -6], stop = [4, 8], step = [2, 3]} : (tensor<4x8xf32>) -> tensor<2x2xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    SI64ArrayAttr:$start,
    SI64ArrayAttr:$stop,
    SI64ArrayAttr:$step
  );
}

def TDF_SliceGradOp : TDF_HookedOp<"slice_grad", [NoMemoryEffect]> {
  let summary = "gradient of slice: scatter into zeros";
  let grad = [{ dy: slice(ddx, start=start, stop=stop, step=step) }];
  let description = [{
    Returns a tensor of shape `like_shape` and `dy`'s element type that is zero except at the
    elements `slice` with the same `start`, `stop` and `step` would pick, which hold `dy`
    (`dx = zeros(like_shape); dx[start:stop:step, ...] = dy`). `dy` must have the shape that
    slicing a `like_shape` tensor gives; the indices follow `slice`'s rules.

    Example:

    ```mlir
    %dx = "tdflow.slice_grad"(%dy) {like_shape = [4, 8], start = [0, -6], stop = [4, 8], step = [2, 3]} : (tensor<2x2xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    ShapeAttr:$like_shape,
    SI64ArrayAttr:$start,
    SI64ArrayAttr:$stop,
    SI64ArrayAttr:$step
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Narrowing, expanding, adding and removing dims
//===----------------------------------------------------------------------===//

def TDF_NarrowOp : TDF_HookedOp<"narrow", [NoMemoryEffect]> {
  let summary = "a contiguous stretch of one dim";
  let grad = [{ in: narrow_grad(dout, in, dim=dim, start=start, length=length) }];
  let description = [{
    Returns `in[..., start:start + length, ...]` along dim `dim` (PyTorch's `narrow`); a
    negative `dim` or `start` counts from the end. `length` must be non-negative and the
    stretch must lie inside the dim. The element type is kept.

    Example:

    ```mlir
    %out = "tdflow.narrow"(%x) {dim = 1 : si64, start = 2 : si64, length = 3 : si64} : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    TDF_AxisAttr<"in", DefaultValuedAttr<SI64Attr, "0">>:$dim,
    DefaultValuedAttr<SI64Attr, "0">:$start,
    DefaultValuedAttr<SI64Attr, "0">:$length
  );
}

def TDF_NarrowGradOp : TDF_HookedOp<"narrow_grad", [NoMemoryEffect]> {
  let summary = "gradient of narrow: dy written into zeros shaped like the input";
  let grad = [{ dy: narrow(ddx, dim=dim, start=start, length=length) }];
  let description = [{
    `dx` has `like`'s shape and `dy`'s element type: zero except `dx[..., start:start +
    length, ...] = dy` along dim `dim` (the indices follow `narrow`'s rules). `like`'s
    values are not read and take no gradient.

    Example:

    ```mlir
    %dx = "tdflow.narrow_grad"(%dy, %x) {dim = 1 : si64, start = 2 : si64, length = 3 : si64} : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$like
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    TDF_AxisAttr<"like", DefaultValuedAttr<SI64Attr, "0">>:$dim,
    DefaultValuedAttr<SI64Attr, "0">:$start,
    DefaultValuedAttr<SI64Attr, "0">:$length
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Causal masks
//===----------------------------------------------------------------------===//

def TDF_TrilOp : TDF_HookedOp<"tril", [NoMemoryEffect]> {
  let summary = "the lower triangle of the last two dims";
  let grad = [{ in: tril(dout, diagonal=diagonal) }];
  let description = [{
    Keeps `in[..., i, j]` where `j - i <= diagonal` (`numpy.tril(in, diagonal)` over the
    last two dims) and fills the rest with `floating_fill_value` when
    `is_floating_fill_value` is set, else with `integer_fill_value` (a causal attention
    mask: `diagonal = 0`, fill `-inf`). `in` needs at least two dims; the shape and element
    type are kept.

    Example:

    ```mlir
    %out = "tdflow.tril"(%s) {diagonal = 0 : si64, floating_fill_value = -1.000000e+09 : f64, is_floating_fill_value = true} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$diagonal,
    DefaultValuedAttr<F64Attr, "0.">:$floating_fill_value,
    DefaultValuedAttr<SI64Attr, "0">:$integer_fill_value,
    DefaultValuedAttr<BoolAttr, "false">:$is_floating_fill_value
  );
}

def TDF_FusedScaleTrilOp : TDF_HookedOp<"fused_scale_tril", [NoMemoryEffect]> {
  let summary = "scale, then keep the lower triangle of the last two dims";
  let grad = [{
    in: fused_scale_tril(dout, diagonal=diagonal, floating_scale_value=floating_scale_value,
                         integer_scale_value=integer_scale_value,
                         is_floating_scale_value=is_floating_scale_value)
  }];
  let description = [{
    `out[..., i, j] = in[..., i, j] * scale` where `j - i <= diagonal`, else the fill value
    (`tril` of `in * scale`). The scale is `floating_scale_value` when
    `is_floating_scale_value` is set, else `integer_scale_value`; the fill is
    `floating_fill_value` when `is_floating_fill_value` is set, else `integer_fill_value`.
    `in` needs at least two dims; the shape and element type are kept.

    Example:

    ```mlir
    %out = "tdflow.fused_scale_tril"(%s) {diagonal = 0 : si64, floating_fill_value = -1.000000e+09 : f64, is_floating_fill_value = true, floating_scale_value = 1.250000e-01 : f64, is_floating_scale_value = true} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$diagonal,
    DefaultValuedAttr<F64Attr, "0.">:$floating_fill_value,
    DefaultValuedAttr<SI64Attr, "0">:$integer_fill_value,
    DefaultValuedAttr<BoolAttr, "false">:$is_floating_fill_value,
    DefaultValuedAttr<F64Attr, "1.">:$floating_scale_value,
    DefaultValuedAttr<SI64Attr, "1">:$integer_scale_value,
    DefaultValuedAttr<BoolAttr, "false">:$is_floating_scale_value
  );
}

//===----------------------------------------------------------------------===//
// Upper triangle and constant padding
//===----------------------------------------------------------------------===//

def TDF_TriuOp : TDF_HookedOp<"triu", [NoMemoryEffect]> {
  let summary = "the upper triangle of the last two dims";
  let grad = [{ in: triu(dout, diagonal=diagonal) }];
  let description = [{
    Keeps `in[..., i, j]` where `j - i >= diagonal` and zeroes the rest
    (`numpy.triu(in, diagonal)` over the last two dims). `in` needs at least two dims; the
    shape and element type are kept. (`tril` is its lower counterpart.)

    Example:

    ```mlir
    %out = "tdflow.triu"(%x) {diagonal = 1 : si64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$diagonal
  );
}

def TDF_PadOp : TDF_HookedOp<"pad", [NoMemoryEffect]> {
  let summary = "pad every dim with a constant";
  let description = [{
    `numpy.pad(x, list(zip(padding_before, padding_after)), constant_values=c)`: one entry
    per dim of `x` in each (non-negative); `c` is `floating_constant_value` for a
    floating-point `x`, else `integral_constant_value`. `padding` is OneFlow's legacy
    attribute and is not read. Only constant padding is an op (as in OneFlow): ONNX's
    reflect, edge and wrap modes are gathers of `x` along each dim with indices computed
    when importing, and negative pads are slices. The gradient slices `dy` back to `x`'s
    extent.

    Example:

    ```mlir
    %y = "tdflow.pad"(%x) {padding_before = [0, 1], padding_after = [2, 0], padding = [], floating_constant_value = 0.0 : f64} : (tensor<2x3xf32>) -> tensor<4x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    TDF_DimsAttr<"x", SI64ArrayAttr, 0, "crop with slice">:$padding_before,
    TDF_DimsAttr<"x", SI64ArrayAttr, 0, "crop with slice">:$padding_after,
    SI64ArrayAttr:$padding,
    DefaultValuedAttr<F64Attr, "0.">:$floating_constant_value,
    DefaultValuedAttr<SI64Attr, "0">:$integral_constant_value
  );
}
