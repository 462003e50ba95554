//===- tdflow/ops/index.td - standard ops (part of ops.td) ------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. Indexing, shape and mask ops
// the models need: gather, embedding, narrow, expand, expand_dims, squeeze, tril,
// fused_scale_tril, arange and one_hot, with the gradient ops OneFlow's gradients use
// (unsorted_segment_sum_like, embedding_grad, narrow_grad). Each is declared as OneFlow's
// OneFlowUserOps.td declares it: names, operands, attributes, defaults, NoGrad and flags.
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Gathering and scattering rows
//===----------------------------------------------------------------------===//

def TDF_GatherOp : TDF_Op<"gather", [NoMemoryEffect]> {
  let summary = "pick slices of a tensor along one axis by integer indices";
  let grad = [{ in: unsorted_segment_sum_like(dout, indices, in, axis=axis) }];
  let description = [{
    `numpy.take(in, indices, axis)`: the result has shape
    `in.shape[:axis] + indices.shape + in.shape[axis+1:]` and `in`'s element type. `axis`
    may be negative (it counts from the end of `in`'s dims); `indices` is an integer tensor
    of any shape whose values must lie in `[0, in.shape[axis])` (OneFlow's CPU kernel
    checks the same; a value outside is an error naming the op). `indices` takes no
    gradient; the gradient of `in` adds `dout`'s slices back at their indices
    (`unsorted_segment_sum_like`), so a repeated index accumulates.

    Example:

    ```mlir
    %out = "tdflow.gather"(%x, %idx) {axis = 0 : si64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in,
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$axis
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_UnsortedSegmentSumLikeOp : TDF_Op<"unsorted_segment_sum_like", [NoMemoryEffect]> {
  let summary = "sum slices into the segments their ids name, shaped like another tensor";
  let grad = [{ data: gather(dout, segment_ids, axis=axis) }];
  let description = [{
    The gradient of `gather`: `out` has `like`'s shape and `data`'s element type, is zero
    except that every slice of `data` along `axis .. axis + segment_ids.ndim` is added at
    row `segment_ids[...]` of `out`'s dim `axis` (`numpy.add.at`): repeated ids accumulate.
    `data` must have shape `like.shape[:axis] + segment_ids.shape + like.shape[axis+1:]`;
    ids outside `[0, like.shape[axis])` are skipped, as in OneFlow. `like`'s values are not
    read; `segment_ids` and `like` take no gradient.

    Example:

    ```mlir
    %out = "tdflow.unsorted_segment_sum_like"(%d, %idx, %like) {axis = 0 : si64} : (tensor<2x3x4xf32>, tensor<2x3xi64>, tensor<10x4xf32>) -> tensor<10x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$data,
    TDF_Tensor:$segment_ids,
    TDF_Tensor:$like
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$axis
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_EmbeddingOp : TDF_Op<"embedding", [NoMemoryEffect]> {
  let summary = "look up rows of an embedding table";
  let grad = [{
    weight: embedding_grad(dout, weight, indices, padding_idx=padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq)
  }];
  let description = [{
    `out = weight[indices]` for a 2-D table `weight` of shape `[num_embeddings, dim]` and an
    integer tensor `indices` of any shape: `out` has shape `indices.shape + [dim]` and
    `weight`'s element type. Indices must lie in `[0, num_embeddings)`. `padding_idx` (when
    in `[0, num_embeddings)`; -1: none) and `scale_grad_by_freq` only change the gradient
    (`embedding_grad`): the padding row gets none, and each row's gradient is divided by
    how often its index occurs.

    Example:

    ```mlir
    %out = "tdflow.embedding"(%w, %tok) {padding_idx = -1 : si64, scale_grad_by_freq = false} : (tensor<64x16xf32>, tensor<4x8xi64>) -> tensor<4x8x16xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$weight,
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "-1">:$padding_idx,
    DefaultValuedAttr<BoolAttr, "false">:$scale_grad_by_freq
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_EmbeddingGradOp : TDF_Op<"embedding_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of embedding";
  let description = [{
    `dx` has `weight`'s shape and `dy`'s element type: zero, plus `dy[p]` added to row
    `indices[p]` for every position `p` (`dy` has shape `indices.shape + [dim]`), except
    that the row `padding_idx` (when in `[0, num_embeddings)`) stays zero; with
    `scale_grad_by_freq` each row is divided by the number of times its index occurs.
    `weight`'s values are not read. (NoGrad, as tdflow's other `*_grad` ops of
    reductions are.)

    Example:

    ```mlir
    %dw = "tdflow.embedding_grad"(%dy, %w, %tok) {padding_idx = 0 : si64, scale_grad_by_freq = true} : (tensor<4x8x16xf32>, tensor<64x16xf32>, tensor<4x8xi64>) -> tensor<64x16xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$weight,
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "-1">:$padding_idx,
    DefaultValuedAttr<BoolAttr, "false">:$scale_grad_by_freq
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}


//===----------------------------------------------------------------------===//
// Narrowing, expanding, adding and removing dims
//===----------------------------------------------------------------------===//

def TDF_NarrowOp : TDF_Op<"narrow", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI64Attr, "0">:$dim,
    DefaultValuedAttr<SI64Attr, "0">:$start,
    DefaultValuedAttr<SI64Attr, "0">:$length
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_NarrowGradOp : TDF_Op<"narrow_grad", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI64Attr, "0">:$dim,
    DefaultValuedAttr<SI64Attr, "0">:$start,
    DefaultValuedAttr<SI64Attr, "0">:$length
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_ExpandOp : TDF_Op<"expand", [NoMemoryEffect, SupportNonContiguous]> {
  let summary = "broadcast to a larger shape";
  let description = [{
    Broadcasts `in` to `expand_shape` (PyTorch's `expand`, numpy's `broadcast_to`): `in`'s
    dims are aligned with the last ones of `expand_shape`, and each must equal its
    counterpart or be 1; a `-1` in `expand_shape` keeps `in`'s dim there. The element type
    is kept. The gradient sums `dout` over the dims that were broadcast (a rule).

    Example:

    ```mlir
    %out = "tdflow.expand"(%x) {expand_shape = [2, 3, 4]} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    ShapeAttr:$expand_shape
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_ExpandDimsOp : TDF_Op<"expand_dims", [NoMemoryEffect]> {
  let summary = "insert a dim of size 1";
  let grad = [{ in: reshape(dout, shape=in.shape) }];
  let description = [{
    Inserts a dim of size 1 at position `axis` of the result (`numpy.expand_dims`); a
    negative `axis` counts from the end of the result's `in.ndim + 1` dims.

    Example:

    ```mlir
    %out = "tdflow.expand_dims"(%x) {axis = 1 : si32} : (tensor<4x8xf32>) -> tensor<4x1x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$axis
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SqueezeOp : TDF_Op<"squeeze", [NoMemoryEffect]> {
  let summary = "remove dims of size 1";
  let grad = [{ in: reshape(dout, shape=in.shape) }];
  let description = [{
    Removes the dims listed in `axes` (negative ones count from the end), each of which
    must have size 1 (`numpy.squeeze(in, axis=axes)`); an empty `axes` removes none.

    Example:

    ```mlir
    %out = "tdflow.squeeze"(%x) {axes = [0 : si32, -1 : si32]} : (tensor<1x4x1xf32>) -> tensor<4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    SI32ArrayAttr:$axes
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Causal masks
//===----------------------------------------------------------------------===//

def TDF_TrilOp : TDF_Op<"tril", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_FusedScaleTrilOp : TDF_Op<"fused_scale_tril", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Generated tensors
//===----------------------------------------------------------------------===//

def TDF_ArangeOp : TDF_Op<"arange", [NoMemoryEffect, NoGrad]> {
  let summary = "evenly spaced values in [start, limit)";
  // Keyword-only, and `nd_sbp` (required, as in OneFlow) defaults to one device's `[]`.
  let signature = [{
    Tensor (*, DataType dtype, Int64 integer_start=0, Int64 integer_delta=0, Int64 integer_limit=0, Double float_start=0.0, Double float_delta=0.0, Double float_limit=0.0, StringList nd_sbp=[]) => Arange
  }];
  let description = [{
    A 1-D tensor of element type `dtype` holding `start, start + delta, ...` up to, not
    including, `limit` (`numpy.arange`): `integer_start`, `integer_delta` and
    `integer_limit` for an integer `dtype`, `float_start`, `float_delta` and `float_limit`
    for a floating-point one. `delta` must not be 0; the length is
    `max(0, ceil((limit - start) / delta))`. `nd_sbp` is OneFlow's placement of the result
    (one entry per device-hierarchy dim, empty on one device), kept as OneFlow declares it;
    `UserSourceOpTickInput` is OneFlow's optional control input for source ops.

    Example:

    ```mlir
    %pos = "tdflow.arange"() {dtype = i64, integer_start = 0 : si64, integer_delta = 1 : si64, integer_limit = 8 : si64, nd_sbp = []} : () -> tensor<8xi64>
    ```
  }];
  let input = (ins
    Optional<TDF_Tensor>:$UserSourceOpTickInput
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$integer_start,
    DefaultValuedAttr<SI64Attr, "0">:$integer_delta,
    DefaultValuedAttr<SI64Attr, "0">:$integer_limit,
    DefaultValuedAttr<F64Attr, "0.">:$float_start,
    DefaultValuedAttr<F64Attr, "0.">:$float_delta,
    DefaultValuedAttr<F64Attr, "0.">:$float_limit,
    OneFlow_DataType:$dtype,
    StrArrayAttr:$nd_sbp
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_nd_sbp_infer_fn = 1;
}

def TDF_OneHotOp : TDF_Op<"one_hot", [NoMemoryEffect, NoGrad]> {
  let summary = "one-hot encoding of integer indices";
  let description = [{
    `out[..., k] = on if indices[...] == k else off` for `k` in `[0, depth)`: `out` has
    shape `indices.shape + [depth]` and element type `dtype`; `on`/`off` are
    `floating_on_value`/`floating_off_value` for a floating-point `dtype`, else
    `integer_on_value`/`integer_off_value`. Indices must lie in `[0, depth)` (OneFlow's
    kernel checks the same). `indices` takes no gradient.

    Example:

    ```mlir
    %oh = "tdflow.one_hot"(%labels) {depth = 10 : si64, dtype = f32, floating_on_value = 1.000000e+00 : f64} : (tensor<8xi64>) -> tensor<8x10xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$depth,
    DefaultValuedAttr<F64Attr, "0.">:$floating_on_value,
    DefaultValuedAttr<SI64Attr, "0">:$integer_on_value,
    DefaultValuedAttr<F64Attr, "0.">:$floating_off_value,
    DefaultValuedAttr<SI64Attr, "0">:$integer_off_value,
    OneFlow_DataType:$dtype
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}
