//===- tdflow/ops/indexing.td - standard ops (part of ops.td) ---*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. Index, scan and padding ops
// ONNX's importer needs (ArgMax/ArgMin, TopK, CumSum/CumProd, GatherElements,
// ScatterElements/ScatterND, GatherND, Trilu, Pad): argmax, top_k, cumsum, cumprod (and
// cumprod_grad), dim_gather, dim_scatter_add_like, dim_scatter_update/add/mul, gather_nd,
// scatter_nd_like, tensor_scatter_nd_update/add, triu and pad, each declared as
// OneFlow's OneFlowUserOps.td declares it (names, operands, attributes, defaults, NoGrad and
// flags); dim_scatter_max and dim_scatter_min are tdflow's own (OneFlow has none).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Arg-max and top-k (along the last dim)
//===----------------------------------------------------------------------===//

def TDF_ArgmaxOp : TDF_Op<"argmax", [NoMemoryEffect, NoGrad]> {
  let summary = "the position of the largest element along the last dim";
  let description = [{
    `numpy.argmax(in, axis=-1)` as `i64`: `out` has shape `in.shape[:-1]`; of equal maxima
    the first wins, and a NaN counts as the largest value (its first occurrence wins), as in
    numpy. `in` needs at least one dim. Another axis is a transpose away; ONNX's ArgMin is
    `argmax` of `-x` (`-1 - x` for integers, which cannot overflow), and its
    `select_last_index` an argmax of the reversed axis.

    Example:

    ```mlir
    %i = "tdflow.argmax"(%x) : (tensor<4x10xf32>) -> tensor<4xi64>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_TopKOp : TDF_Op<"top_k", [NoMemoryEffect, NoGrad]> {
  let summary = "the positions of the k largest elements along the last dim";
  let description = [{
    The `i64` positions of the `min(k, n)` largest elements of each row of the last dim
    (`n` long), largest first; of equal values the lower position comes first (a stable
    sort of the values, descending). tdflow always returns them in that order, so `sorted`
    (OneFlow's attribute) changes nothing. The values are `dim_gather(in, out, dim=-1)`.

    Example:

    ```mlir
    %i = "tdflow.top_k"(%x) {k = 3 : si32, sorted = true} : (tensor<4x10xf32>) -> tensor<4x3xi64>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$k,
    DefaultValuedAttr<BoolAttr, "false">:$sorted
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

def TDF_CumsumOp : TDF_Op<"cumsum", [NoMemoryEffect]> {
  let summary = "running sum along one dim";
  let description = [{
    `numpy.cumsum(x, axis=dim)` in `x`'s element type (halves accumulate in f32); `dim` may
    be negative. The gradient is the running sum of `dy` from the other end (a rule:
    `sum(dy) - cumsum(dy) + dy`). ONNX's `exclusive` and `reverse` are a pad and a reversal
    around it.

    Example:

    ```mlir
    %y = "tdflow.cumsum"(%x) {dim = 1 : si64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    SI64Attr:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_CumProdOp : TDF_Op<"cumprod", [NoMemoryEffect]> {
  let summary = "running product along one dim";
  let grad = [{ x: cumprod_grad(dy, y, x, dim=dim) }];
  let description = [{
    `numpy.cumprod(x, axis=dim)` in `x`'s element type; `dim` may be negative. The gradient
    is `cumprod_grad`, exact also where `x` holds zeros.

    Example:

    ```mlir
    %y = "tdflow.cumprod"(%x) {dim = -1 : si64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    SI64Attr:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_CumProdGradOp : TDF_Op<"cumprod_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of cumprod";
  let description = [{
    `dx[i] = sum over j >= i of dy[j] * prod over k <= j, k != i of input[k]` along `dim`
    (`output`, the forward's result, is read for its shape only: the products are formed
    without dividing, so zeros in `input` give the exact gradient). `dx` has `input`'s shape
    and `dy`'s element type. (NoGrad, as tdflow's other `*_grad` ops of reductions are.)

    Example:

    ```mlir
    %dx = "tdflow.cumprod_grad"(%dy, %y, %x) {dim = 1 : si64} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$output,
    TDF_Tensor:$input
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    SI64Attr:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Element-wise gather and scatter along one dim (PyTorch's gather/scatter)
//===----------------------------------------------------------------------===//

def TDF_DimGatherOp : TDF_Op<"dim_gather", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterAddLikeOp : TDF_Op<"dim_scatter_add_like", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterUpdateOp : TDF_Op<"dim_scatter_update", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterAddOp : TDF_Op<"dim_scatter_add", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterMulOp : TDF_Op<"dim_scatter_mul", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterMaxOp : TDF_Op<"dim_scatter_max", [NoMemoryEffect, NoGrad]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_DimScatterMinOp : TDF_Op<"dim_scatter_min", [NoMemoryEffect, NoGrad]> {
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
    DefaultValuedAttr<SI32Attr, "0">:$dim
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}


//===----------------------------------------------------------------------===//
// Gather and scatter by index tuples (TensorFlow's gather_nd / tensor_scatter_nd_*)
//===----------------------------------------------------------------------===//

def TDF_GatherNdOp : TDF_Op<"gather_nd", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_ScatterNdLikeOp : TDF_Op<"scatter_nd_like", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_TensorScatterNdUpdateOp : TDF_Op<"tensor_scatter_nd_update", [NoMemoryEffect, SupportNonContiguous]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_TensorScatterNdAddOp : TDF_Op<"tensor_scatter_nd_add", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}


//===----------------------------------------------------------------------===//
// Upper triangle and constant padding
//===----------------------------------------------------------------------===//

def TDF_TriuOp : TDF_Op<"triu", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_PadOp : TDF_Op<"pad", [NoMemoryEffect]> {
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
    SI64ArrayAttr:$padding_before,
    SI64ArrayAttr:$padding_after,
    SI64ArrayAttr:$padding,
    DefaultValuedAttr<F64Attr, "0.">:$floating_constant_value,
    DefaultValuedAttr<SI64Attr, "0">:$integral_constant_value
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}
