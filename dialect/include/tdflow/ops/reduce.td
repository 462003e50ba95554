//===- tdflow/ops/reduce.td - standard ops: reduce --------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The reduce family:
// reductions over axes, arg-max, top-k and scans.
// This family's hooks live in tdflow/dialect/hooks/reduce.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Reductions and normalisation
//===----------------------------------------------------------------------===//

def TDF_ReduceSumOp : TDF_HookedOp<"reduce_sum", [NoMemoryEffect]> {
  let summary = "sum over axes";
  let description = [{
    Sums `input_tensor` over the dims listed in `axis` (negative counts from the end; an
    empty list reduces every dim). Reduced dims are dropped, or kept as 1 when `keepdims` is
    set.

    Example:

    ```mlir
    %s = "tdflow.reduce_sum"(%x) {axis = [1 : si32], keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input_tensor
  );
  let output = (outs
    TDF_Tensor:$output_tensor
  );
  let attrs = (ins
    TDF_AxesAttr<"input_tensor", SI32ArrayAttr>:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
}

def TDF_ReduceMaxOp : TDF_HookedOp<"reduce_max", [NoMemoryEffect]> {
  let summary = "maximum over axes";
  let description = [{
    Takes the maximum of `input_tensor` over the dims listed in `axis`, with `reduce_sum`'s
    axis and `keepdims` rules.

    Example:

    ```mlir
    %m = "tdflow.reduce_max"(%x) {axis = [-1 : si32], keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input_tensor
  );
  let output = (outs
    TDF_Tensor:$output_tensor
  );
  let attrs = (ins
    TDF_AxesAttr<"input_tensor", SI32ArrayAttr>:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
}

//===----------------------------------------------------------------------===//
// Shape and type
//===----------------------------------------------------------------------===//

def TDF_ReduceSumLikeOp : TDF_HookedOp<"reduce_sum_like", [NoMemoryEffect]> {
  let summary = "sum over axes to match another tensor's shape";
  let description = [{
    Sums `x` over the dims in `axis` so that the result has `like`'s shape (the reverse of
    `broadcast_like`; the gradient of a broadcast). An empty `axis` requires `x` and `like`
    to have the same shape. `like`'s values are not read and need no gradient.

    Example:

    ```mlir
    %y = "tdflow.reduce_sum_like"(%x, %like) {axis = [0 : si32]} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$like
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    TDF_AxesAttr<"x", SI32ArrayAttr>:$axis
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Arg-max and top-k (along the last dim)
//===----------------------------------------------------------------------===//

def TDF_ArgmaxOp : TDF_HookedOp<"argmax", [NoMemoryEffect, NoGrad]> {
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
}

def TDF_TopKOp : TDF_HookedOp<"top_k", [NoMemoryEffect, NoGrad]> {
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
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

def TDF_CumsumOp : TDF_HookedOp<"cumsum", [NoMemoryEffect]> {
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
    TDF_ScanAxisAttr<"x", SI64Attr>:$dim
  );
}

def TDF_CumProdOp : TDF_HookedOp<"cumprod", [NoMemoryEffect]> {
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
    TDF_ScanAxisAttr<"x", SI64Attr>:$dim
  );
}

def TDF_CumProdGradOp : TDF_HookedOp<"cumprod_grad", [NoMemoryEffect, NoGrad]> {
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
    TDF_ScanAxisAttr<"input", SI64Attr>:$dim
  );
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def TDF_ReduceMinOp : TDF_HookedOp<"reduce_min", [NoMemoryEffect]> {
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
    TDF_AxesAttr<"input_tensor", SI32ArrayAttr>:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
}

def TDF_ReduceProdOp : TDF_HookedOp<"reduce_prod", [NoMemoryEffect]> {
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
    TDF_AxesAttr<"input_tensor", SI32ArrayAttr>:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
}
