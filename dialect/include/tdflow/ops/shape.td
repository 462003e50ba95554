//===- tdflow/ops/shape.td - standard ops: shape ----------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The shape family:
// reshaping, transposing, casting, concatenating, broadcasting and constants.
// This family's hooks live in tdflow/dialect/hooks/shape.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Shape and type
//===----------------------------------------------------------------------===//

def TDF_ReshapeOp : TDF_HookedOp<"reshape", [NoMemoryEffect]> {
  let summary = "reshape";
  let grad = [{ in: reshape(dout, shape=in.shape) }];
  let description = [{
    Returns `in`'s elements in a tensor of shape `shape`. One dim may be `-1`: it is
    inferred from the element count. The element counts must match.

    Example:

    ```mlir
    %r = "tdflow.reshape"(%x) {shape = [2, -1]} : (tensor<4x8xf32>) -> tensor<2x16xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    ShapeAttr:$shape
  );
  let has_enumerate_nd_sbp_signatures_fn = 1;
}

def TDF_TransposeOp : TDF_HookedOp<"transpose", [NoMemoryEffect]> {
  let summary = "permute dimensions";
  let description = [{
    Permutes the dims of `input`: `output.shape[i] = input.shape[perm[i]]`. `perm` must be a
    permutation of `0..rank-1`.

    Example:

    ```mlir
    %t = "tdflow.transpose"(%x) {perm = [1 : si32, 0 : si32]} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$input
  );
  let output = (outs
    TDF_Tensor:$output
  );
  let attrs = (ins
    TDF_PermAttr<"input", SI32ArrayAttr>:$perm
  );
}

def TDF_CatOp : TDF_HookedOp<"cat", [NoMemoryEffect]> {
  let summary = "concatenate along an axis";
  let description = [{
    Concatenates one or more tensors of equal rank and element type along `axis` (negative
    counts from the end); the other dims must agree. `max_dim_size`, when positive, bounds
    the result's `axis` dim. The functional name is `concat`.

    Example:

    ```mlir
    %c = "tdflow.cat"(%a, %b) {axis = 0 : si64} : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>
    ```
  }];
  let input = (ins
    Variadic<TDF_Tensor>:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    TDF_AxisAttr<"in", DefaultValuedAttr<SI64Attr, "0">>:$axis,
    DefaultValuedAttr<SI64Attr, "0">:$max_dim_size
  );
  let has_check_fn = 1;
}

def TDF_CastOp : TDF_HookedOp<"cast", [NoMemoryEffect, SupportNonContiguous]> {
  let summary = "convert the element type";
  let grad = [{ in: cast(dout, dtype=in.dtype) }];
  let description = [{
    Converts every element of `in` to `dtype` (written as a type: `f16`, `i64`, ...); the
    shape is kept. `pin_memory` asks for page-locked host memory when the result lives on
    the CPU.

    Example:

    ```mlir
    %h = "tdflow.cast"(%x) {dtype = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    OneFlow_DataType:$dtype,
    DefaultValuedAttr<BoolAttr, "false">:$pin_memory
  );
  let has_device_and_stream_infer_fn = 1;
}

def TDF_ConstantOp : TDF_HookedOp<"constant", [NoMemoryEffect, NoGrad]> {
  let summary = "a tensor filled with one value";
  let description = [{
    Creates a tensor of shape `shape` and element type `dtype` filled with `floating_value`
    when `is_floating_value` is set, else with `integer_value`. `UserSourceOpTickInput` is
    OneFlow's optional control input for source ops. (OneFlow's `complex_value`,
    `is_complex_value` and `nd_sbp` are omitted: tdflow has no complex dtype and runs on one
    device.)

    Example:

    ```mlir
    %c = "tdflow.constant"() {dtype = f32, floating_value = 1.000000e+00 : f64, is_floating_value = true, shape = [4, 8]} : () -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    Optional<TDF_Tensor>:$UserSourceOpTickInput
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<F64Attr, "0.">:$floating_value,
    DefaultValuedAttr<SI64Attr, "0">:$integer_value,
    DefaultValuedAttr<BoolAttr, "false">:$is_floating_value,
    OneFlow_DataType:$dtype,
    ShapeAttr:$shape
  );
  let has_nd_sbp_infer_fn = 1;
}

def TDF_DenseConstantOp : TDF_HookedOp<"dense_constant", [NoMemoryEffect, NoGrad]> {
  let summary = "a constant tensor given element by element";
  let description = [{
    Returns the tensor held by `value`, an MLIR dense elements attribute: inline
    (`dense<[1, 2, 3]> : tensor<3xi64>`, a splat `dense<0.5> : tensor<4xf32>`) or a blob of the
    module's `dialect_resources` section (`dense_resource<w> : tensor<64x3xf32>`), as MLIR's
    `arith.constant` holds it. The result's type is the attribute's. Imported models carry their
    weights and folded shapes this way (OneFlow keeps such tensors as frozen variables).

    Example:

    ```mlir
    %c = "tdflow.dense_constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    ```
  }];
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    ElementsAttr:$value
  );
}

def TDF_OnesLikeOp : TDF_HookedOp<"ones_like", [NoMemoryEffect, NoGrad, Idempotent, SameOperandsAndResultType]> {
  let summary = "a tensor of ones shaped like another";
  let description = [{
    Returns a tensor of ones with `like`'s shape and element type; `like`'s values are not
    read.

    Example:

    ```mlir
    %o = "tdflow.ones_like"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$like
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_nd_sbp_infer_fn = 1;
}

def TDF_BroadcastLikeOp : TDF_HookedOp<"broadcast_like", [NoMemoryEffect]> {
  let summary = "broadcast to another tensor's shape";
  let description = [{
    Broadcasts `x` to `like`'s shape; `broadcast_axes` lists the dims of `like` that `x`
    lacks (empty: numpy broadcasting rules). `like`'s values are not read and need no
    gradient.

    Example:

    ```mlir
    %y = "tdflow.broadcast_like"(%b, %x) {broadcast_axes = [0 : si32]} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
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
    TDF_AxesAttr<"like", SI32ArrayAttr>:$broadcast_axes
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Narrowing, expanding, adding and removing dims
//===----------------------------------------------------------------------===//

def TDF_ExpandOp : TDF_HookedOp<"expand", [NoMemoryEffect, SupportNonContiguous]> {
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
}

def TDF_ExpandDimsOp : TDF_HookedOp<"expand_dims", [NoMemoryEffect]> {
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
    TDF_AxisAttr<"in", DefaultValuedAttr<SI32Attr, "0">, 1>:$axis
  );
}

def TDF_SqueezeOp : TDF_HookedOp<"squeeze", [NoMemoryEffect]> {
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
    TDF_AxesAttr<"in", SI32ArrayAttr>:$axes
  );
}

//===----------------------------------------------------------------------===//
// Generated tensors
//===----------------------------------------------------------------------===//

def TDF_ArangeOp : TDF_HookedOp<"arange", [NoMemoryEffect, NoGrad]> {
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
  let has_nd_sbp_infer_fn = 1;
}
