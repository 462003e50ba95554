//===- tdflow/ops/index.td - standard ops: index ----------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The index family:
// gather and scatter: by index, by index tuples, along one dim, embeddings and one-hot.
// This family's hooks live in tdflow/dialect/hooks/index.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Gathering and scattering rows
//===----------------------------------------------------------------------===//

def TDF_GatherOp : TDF_HookedOp<"gather", [NoMemoryEffect]> {
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
    TDF_AxisAttr<"in", DefaultValuedAttr<SI64Attr, "0">>:$axis
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_UnsortedSegmentSumLikeOp : TDF_HookedOp<"unsorted_segment_sum_like", [NoMemoryEffect]> {
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
    TDF_AxisAttr<"like", DefaultValuedAttr<SI64Attr, "0">>:$axis
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_EmbeddingOp : TDF_HookedOp<"embedding", [NoMemoryEffect]> {
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
  let has_input_arg_modify_fn = 1;
}

def TDF_EmbeddingGradOp : TDF_HookedOp<"embedding_grad", [NoMemoryEffect, NoGrad]> {
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
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Generated tensors
//===----------------------------------------------------------------------===//

def TDF_OneHotOp : TDF_HookedOp<"one_hot", [NoMemoryEffect, NoGrad]> {
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
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise gather and scatter along one dim (PyTorch's gather/scatter)
//===----------------------------------------------------------------------===//

def TDF_DimGatherOp : TDF_HookedOp<"dim_gather", [NoMemoryEffect]> {
  let summary = "pick one element per position along a dim (torch.gather)";
  let grad = [{ input: dim_scatter_add_like(input, index, doutput, dim=dim) }];
  let description = [{
    `output[p] = input[p with its dim-th coordinate replaced by index[p]]`
    (`numpy.take_along_axis`, ONNX's GatherElements): `index` is an integer tensor of
    `input`'s rank, no larger than `input` in any dim but `dim`; `output` has `index`'s
    shape and `input`'s element type. Indices must lie in `[0, input.shape[dim])` (ONNX's
    negative ones are wrapped by the importer). The gradient adds `doutput` back at the
    indices (`dim_scatter_add_like`); `index` takes none.

    Example:

    ```mlir
    %out = "tdflow.dim_gather"(%x, %idx) {dim = 1 : si32} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input,
    TDF_Tensor:$index
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"input", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterAddLikeOp : TDF_HookedOp<"dim_scatter_add_like", [NoMemoryEffect]> {
  let summary = "add src into zeros shaped like another tensor, at indices along a dim";
  let grad = [{ src: dim_gather(doutput, index, dim=dim) }];
  let description = [{
    The gradient of `dim_gather`: zeros of `like`'s shape and `src`'s element type, with
    `src[p]` added at `p` with its dim-th coordinate replaced by `index[p]`; repeated
    indices accumulate. `index` and `src` have one shape. `like`'s values are not read;
    `like` and `index` take no gradient.

    Example:

    ```mlir
    %out = "tdflow.dim_scatter_add_like"(%x, %idx, %d) {dim = 1 : si32} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$like,
    TDF_Tensor:$index,
    TDF_Tensor:$src
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"like", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterUpdateOp : TDF_HookedOp<"dim_scatter_update", [NoMemoryEffect]> {
  let summary = "write src into a copy of input at indices along a dim";
  let grad = [{
    input: dim_scatter_update(doutput, index, src * 0.0, dim=dim);
    src: dim_gather(doutput, index, dim=dim)
  }];
  let description = [{
    `output = input.copy(); output[p with its dim-th coordinate replaced by index[p]] =
    src[p]` for every position `p` of `index` (PyTorch's `scatter`, ONNX's ScatterElements
    without reduction): `index` and `src` have one shape, of `input`'s rank and no larger
    than it in any dim but `dim`; indices lie in `[0, input.shape[dim])`. Where indices
    repeat, the last position written (row-major) wins on the CPU; the GPU picks any (ONNX
    leaves it undefined). The gradient passes `doutput` to `input` except where written,
    and gathers it back for `src`; `index` takes none.

    Example:

    ```mlir
    %out = "tdflow.dim_scatter_update"(%x, %idx, %s) {dim = 0 : si32} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input,
    TDF_Tensor:$index,
    TDF_Tensor:$src
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"input", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterAddOp : TDF_HookedOp<"dim_scatter_add", [NoMemoryEffect]> {
  let summary = "add src into a copy of input at indices along a dim";
  let grad = [{
    input: doutput;
    src: dim_gather(doutput, index, dim=dim)
  }];
  let description = [{
    As `dim_scatter_update`, but `src[p]` is added (`numpy.add.at`): repeated indices
    accumulate (ONNX's ScatterElements with `reduction = "add"`).

    Example:

    ```mlir
    %out = "tdflow.dim_scatter_add"(%x, %idx, %s) {dim = 1 : si32} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input,
    TDF_Tensor:$index,
    TDF_Tensor:$src
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"input", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterMulOp : TDF_HookedOp<"dim_scatter_mul", [NoMemoryEffect]> {
  let summary = "multiply src into a copy of input at indices along a dim";
  // d(src) divides by src: exact where src has no zeros (a zero's own gradient would need
  // the product of the others at its position)
  let grad = [{
    input: dim_scatter_mul(doutput, index, src, dim=dim);
    src: dim_gather(doutput * output, index, dim=dim) / src
  }];
  let description = [{
    As `dim_scatter_update`, but `input`'s element is multiplied by `src[p]`
    (`numpy.multiply.at`): repeated indices multiply in turn (ONNX's ScatterElements with
    `reduction = "mul"`). The gradient of `src` divides by `src`, so it is exact only where
    `src` is nonzero.

    Example:

    ```mlir
    %out = "tdflow.dim_scatter_mul"(%x, %idx, %s) {dim = 1 : si32} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input,
    TDF_Tensor:$index,
    TDF_Tensor:$src
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"input", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterMaxOp : TDF_HookedOp<"dim_scatter_max", [NoMemoryEffect, NoGrad]> {
  let summary = "the larger of input and src at indices along a dim (tdflow's own)";
  let description = [{
    As `dim_scatter_update`, but the element becomes the maximum of itself and `src[p]`
    (`numpy.maximum.at`; ONNX's ScatterElements and ScatterND with `reduction = "max"`).
    OneFlow has no such op. NoGrad: where `input` and `src` tie, no one side wins, and ONNX
    needs it for inference only.

    Example:

    ```mlir
    %out = "tdflow.dim_scatter_max"(%x, %idx, %s) {dim = 1 : si32} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input,
    TDF_Tensor:$index,
    TDF_Tensor:$src
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"input", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterMinOp : TDF_HookedOp<"dim_scatter_min", [NoMemoryEffect, NoGrad]> {
  let summary = "the smaller of input and src at indices along a dim (tdflow's own)";
  let description = [{
    As `dim_scatter_max` with the minimum (`numpy.minimum.at`; ONNX's `reduction = "min"`).
    OneFlow has no such op; NoGrad for the same reason.

    Example:

    ```mlir
    %out = "tdflow.dim_scatter_min"(%x, %idx, %s) {dim = 1 : si32} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input,
    TDF_Tensor:$index,
    TDF_Tensor:$src
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_AxisAttr<"input", DefaultValuedAttr<SI32Attr, "0">>:$dim
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Gather and scatter by index tuples (TensorFlow's gather_nd / tensor_scatter_nd_*)
//===----------------------------------------------------------------------===//

def TDF_GatherNdOp : TDF_HookedOp<"gather_nd", [NoMemoryEffect]> {
  let summary = "pick slices of params by tuples of indices into its leading dims";
  let grad = [{ params: scatter_nd_like(params, indices, dout) }];
  let description = [{
    `indices` is an integer tensor whose last dim `k` (at most `params.ndim`) holds index
    tuples into `params`' first `k` dims: `out[m...] = params[indices[m..., 0], ...,
    indices[m..., k-1]]`, so `out` has shape `indices.shape[:-1] + params.shape[k:]` and
    `params`' element type (ONNX's GatherND with `batch_dims = 0`; the importer handles
    batch dims and negative indices). Each index must lie in its dim. The gradient adds
    `dout` back at the tuples (`scatter_nd_like`); `indices` takes none.

    Example:

    ```mlir
    %out = "tdflow.gather_nd"(%p, %idx) : (tensor<4x5x3xf32>, tensor<6x2xi64>) -> tensor<6x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$params,
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_ScatterNdLikeOp : TDF_HookedOp<"scatter_nd_like", [NoMemoryEffect]> {
  let summary = "add slices into zeros shaped like another tensor, at index tuples";
  let grad = [{ updates: gather_nd(dout, indices) }];
  let description = [{
    The gradient of `gather_nd`: zeros of `like`'s shape and `updates`' element type, with
    each slice `updates[m...]` added at `indices[m...]` (a tuple into `like`'s first `k`
    dims); repeated tuples accumulate. `updates` has shape `indices.shape[:-1] +
    like.shape[k:]`. `like`'s values are not read.

    Example:

    ```mlir
    %out = "tdflow.scatter_nd_like"(%p, %idx, %u) : (tensor<4x5x3xf32>, tensor<6x2xi64>, tensor<6x3xf32>) -> tensor<4x5x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$like,
    TDF_Tensor:$indices,
    TDF_Tensor:$updates
  );
  let output = (outs
    TDF_Tensor:$out
  );
}

def TDF_TensorScatterNdUpdateOp : TDF_HookedOp<"tensor_scatter_nd_update", [NoMemoryEffect, SupportNonContiguous]> {
  let summary = "write slices into a copy of params at index tuples";
  // `* 0.0` zeroes the written slices' gradient (NaN there only where dout is not finite)
  let grad = [{
    params: tensor_scatter_nd_update(dout, gather_nd(dout, indices) * 0.0, indices);
    updates: gather_nd(dout, indices)
  }];
  let description = [{
    `out = params.copy(); out[indices[m...]] = updates[m...]` for every index tuple (ONNX's
    ScatterND without reduction): shapes as in `scatter_nd_like`, element types equal.
    Where tuples repeat, the last written (row-major) wins on the CPU and on the GPU (ONNX
    leaves it undefined). The gradient passes `dout` to `params` except at the written
    slices, and gathers it for `updates`; `indices` takes none.

    Example:

    ```mlir
    %out = "tdflow.tensor_scatter_nd_update"(%p, %u, %idx) : (tensor<4x5x3xf32>, tensor<6x3xf32>, tensor<6x2xi64>) -> tensor<4x5x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$params,
    TDF_Tensor:$updates,
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_TensorScatterNdAddOp : TDF_HookedOp<"tensor_scatter_nd_add", [NoMemoryEffect]> {
  let summary = "add slices into a copy of params at index tuples";
  let grad = [{
    params: dout;
    updates: gather_nd(dout, indices)
  }];
  let description = [{
    As `tensor_scatter_nd_update`, but the slices are added (`numpy.add.at`): repeated tuples
    accumulate (ONNX's ScatterND with `reduction = "add"`; its mul, max and min reductions
    are `dim_scatter_*` ops on the data flattened to `[rows, rest]`).

    Example:

    ```mlir
    %out = "tdflow.tensor_scatter_nd_add"(%p, %u, %idx) : (tensor<4x5x3xf32>, tensor<6x3xf32>, tensor<6x2xi64>) -> tensor<4x5x3xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$params,
    TDF_Tensor:$updates,
    TDF_Tensor:$indices
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_input_arg_modify_fn = 1;
}
