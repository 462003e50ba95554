//===- tdflow/ops/elementwise_math.td - standard ops (part of ops.td) -*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions.
//
// The elementwise math ONNX needs: trigonometric and hyperbolic functions, rounding, sign,
// NaN and infinity tests, softsign, logic, bit operations and the two remainders. Each op is
// declared as OneFlowUserOps.td declares it (mnemonic, operand and result names, `has_*_fn`
// flags, NoGrad), except the two shifts, which OneFlow lacks. Each carries a `formula`: its
// kernels (numpy and CUDA), fusion and gradient are derived from it. Their hooks are in
// tdflow/dialect/hooks/elementwise_math.py and infer from the formula.
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Trigonometric and hyperbolic
//===----------------------------------------------------------------------===//

def TDF_SinOp : TDF_Op<"sin", [NoMemoryEffect, Elementwise]> {
  let summary = "sine";
  let formula = [{ sin(x) }];
  let description = [{
    Computes `y = sin(x)` (radians) element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.sin"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_CosOp : TDF_Op<"cos", [NoMemoryEffect, Elementwise]> {
  let summary = "cosine";
  let formula = [{ cos(x) }];
  let description = [{
    Computes `y = cos(x)` (radians) element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.cos"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_TanOp : TDF_Op<"tan", [NoMemoryEffect, Elementwise]> {
  let summary = "tangent";
  let formula = [{ tan(x) }];
  let description = [{
    Computes `y = tan(x)` (radians) element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.tan"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AsinOp : TDF_Op<"asin", [NoMemoryEffect, Elementwise]> {
  let summary = "inverse sine";
  let formula = [{ asin(x) }];
  let description = [{
    Computes `y = asin(x)`, in `[-pi/2, pi/2]`; NaN outside `[-1, 1]` element by element (float
    tensors).

    Example:

    ```mlir
    %y = "tdflow.asin"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AcosOp : TDF_Op<"acos", [NoMemoryEffect, Elementwise]> {
  let summary = "inverse cosine";
  let formula = [{ acos(x) }];
  let description = [{
    Computes `y = acos(x)`, in `[0, pi]`; NaN outside `[-1, 1]` element by element (float
    tensors).

    Example:

    ```mlir
    %y = "tdflow.acos"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AtanOp : TDF_Op<"atan", [NoMemoryEffect, Elementwise]> {
  let summary = "inverse tangent";
  let formula = [{ atan(x) }];
  let description = [{
    Computes `y = atan(x)`, in `(-pi/2, pi/2)` element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.atan"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SinhOp : TDF_Op<"sinh", [NoMemoryEffect, Elementwise]> {
  let summary = "hyperbolic sine";
  let formula = [{ sinh(x) }];
  let description = [{
    Computes `y = sinh(x) = (exp(x) - exp(-x)) / 2` element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.sinh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_CoshOp : TDF_Op<"cosh", [NoMemoryEffect, Elementwise]> {
  let summary = "hyperbolic cosine";
  let formula = [{ cosh(x) }];
  let description = [{
    Computes `y = cosh(x) = (exp(x) + exp(-x)) / 2` element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.cosh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AsinhOp : TDF_Op<"asinh", [NoMemoryEffect, Elementwise]> {
  let summary = "inverse hyperbolic sine";
  let formula = [{ asinh(x) }];
  let description = [{
    Computes `y = asinh(x) = log(x + sqrt(x^2 + 1))` element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.asinh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AcoshOp : TDF_Op<"acosh", [NoMemoryEffect, Elementwise]> {
  let summary = "inverse hyperbolic cosine";
  let formula = [{ acosh(x) }];
  let description = [{
    Computes `y = acosh(x) = log(x + sqrt(x^2 - 1))`; NaN below 1 element by element (float
    tensors).

    Example:

    ```mlir
    %y = "tdflow.acosh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_AtanhOp : TDF_Op<"atanh", [NoMemoryEffect, Elementwise]> {
  let summary = "inverse hyperbolic tangent";
  let formula = [{ atanh(x) }];
  let description = [{
    Computes `y = atanh(x) = log((1 + x) / (1 - x)) / 2`; +-inf at +-1, NaN outside `[-1, 1]`
    element by element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.atanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Rounding, sign and tests
//===----------------------------------------------------------------------===//

// OneFlow: OneFlow_IdempotentBaseOp<"floor">, whose base adds SameOperandsAndResultType.
def TDF_FloorOp : TDF_Op<"floor", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
  let summary = "round toward minus infinity";
  let formula = [{ floor(x) }];
  let description = [{
    Computes `y = floor(x)`, the largest integer not above `x`, element by element (float
    tensors). Its gradient is zero. Applying it twice changes nothing (`Idempotent`).

    Example:

    ```mlir
    %y = "tdflow.floor"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

// OneFlow: OneFlow_IdempotentBaseOp<"ceil">, whose base adds SameOperandsAndResultType.
def TDF_CeilOp : TDF_Op<"ceil", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
  let summary = "round toward plus infinity";
  let formula = [{ ceil(x) }];
  let description = [{
    Computes `y = ceil(x)`, the smallest integer not below `x`, element by element (float
    tensors). Its gradient is zero. Applying it twice changes nothing (`Idempotent`).

    Example:

    ```mlir
    %y = "tdflow.ceil"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

// OneFlow: OneFlow_IdempotentBaseOp<"round">, whose base adds SameOperandsAndResultType.
def TDF_RoundOp : TDF_Op<"round", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
  let summary = "round to the nearest integer, halves to even";
  let formula = [{ round(x) }];
  let description = [{
    Computes `y = round(x)` element by element (float tensors): the nearest integer, and the
    even one of two at a tie (`round(2.5) = 2`, `round(-0.5) = -0`), as numpy's `rint`, ONNX's
    `Round` and CUDA's `rint`. Its gradient is zero.

    Example:

    ```mlir
    %y = "tdflow.round"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

// OneFlow: OneFlow_IdempotentBaseOp<"sign">, whose base adds SameOperandsAndResultType.
def TDF_SignOp : TDF_Op<"sign", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
  let summary = "sign of each element";
  let formula = [{ sign(x) }];
  let description = [{
    Computes `y = 1` where `x > 0`, `-1` where `x < 0` and `x` itself at zero and NaN, element
    by element, for float and integer tensors. Its gradient is zero.

    Example:

    ```mlir
    %y = "tdflow.sign"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_IsNanOp : TDF_Op<"isnan", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "test for NaN";
  let formula = [{ isnan(in) }];
  let description = [{
    Computes `out = in != in` (true where `in` is NaN) element by element: a float tensor in, an
    `i1` (bool) tensor out.

    Example:

    ```mlir
    %out = "tdflow.isnan"(%in) : (tensor<4x8xf32>) -> tensor<4x8xi1>
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

def TDF_IsInfOp : TDF_Op<"isinf", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "test for an infinity";
  let formula = [{ isinf(in) }];
  let description = [{
    Computes `out = |in| == inf` (true where `in` is plus or minus infinity) element by element:
    a float tensor in, an `i1` (bool) tensor out.

    Example:

    ```mlir
    %out = "tdflow.isinf"(%in) : (tensor<4x8xf32>) -> tensor<4x8xi1>
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

def TDF_SoftsignOp : TDF_Op<"softsign", [NoMemoryEffect, Elementwise]> {
  let summary = "softsign, x / (1 + |x|)";
  let formula = [{ in / (1.0 + abs(in)) }];
  let description = [{
    Computes `out = in / (1 + |in|)` element by element (float tensors), a smooth map onto `(-1,
    1)`. The derived gradient is `1 / (1 + |in|)^2`.

    Example:

    ```mlir
    %out = "tdflow.softsign"(%in) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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


//===----------------------------------------------------------------------===//
// Logic and bits
//===----------------------------------------------------------------------===//

def TDF_LogicalNotOp : TDF_Op<"logical_not", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "logical negation";
  let formula = [{ !x }];
  let description = [{
    Computes `y = !x` element by element: true where `x` is zero (or false). `x` may be a bool
    or number tensor; the result is `i1` (bool).

    Example:

    ```mlir
    %y = "tdflow.logical_not"(%x) : (tensor<4x8xi1>) -> tensor<4x8xi1>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BitwiseNotOp : TDF_Op<"bitwise_not", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "bitwise complement";
  let formula = [{ bitwise_not(x) }];
  let description = [{
    Computes `y = ~x` element by element, for integer tensors (two's complement: `~x = -x - 1`);
    on a bool (`i1`) tensor it is the logical negation.

    Example:

    ```mlir
    %y = "tdflow.bitwise_not"(%x) : (tensor<4x8xi32>) -> tensor<4x8xi32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastLogicalAndOp : TDF_Op<"broadcast_logical_and", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting logical and";
  let formula = [{ x && y }];
  let description = [{
    Computes `z = x && y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both operands
    must have the same element type; the result is `i1` (bool): true where both are nonzero
    (true).

    Example:

    ```mlir
    %z = "tdflow.broadcast_logical_and"(%x, %y) : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastLogicalOrOp : TDF_Op<"broadcast_logical_or", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting logical or";
  let formula = [{ x || y }];
  let description = [{
    Computes `z = x || y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both operands
    must have the same element type; the result is `i1` (bool): true where either is nonzero
    (true).

    Example:

    ```mlir
    %z = "tdflow.broadcast_logical_or"(%x, %y) : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastLogicalXorOp : TDF_Op<"broadcast_logical_xor", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting logical xor";
  let formula = [{ xor(x, y) }];
  let description = [{
    Computes `z = xor(x, y)` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both operands
    must have the same element type; the result is `i1` (bool): true where exactly one is
    nonzero (true).

    Example:

    ```mlir
    %z = "tdflow.broadcast_logical_xor"(%x, %y) : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastBitwiseAndOp : TDF_Op<"broadcast_bitwise_and", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting bitwise and";
  let formula = [{ bitwise_and(x, y) }];
  let description = [{
    Computes `z = x & y` bit by bit, element by element after broadcasting `x` and `y` to a
    common shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches).
    Both operands must have the same element type (integer or bool tensors).

    Example:

    ```mlir
    %z = "tdflow.broadcast_bitwise_and"(%x, %y) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastBitwiseOrOp : TDF_Op<"broadcast_bitwise_or", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting bitwise or";
  let formula = [{ bitwise_or(x, y) }];
  let description = [{
    Computes `z = x | y` bit by bit, element by element after broadcasting `x` and `y` to a
    common shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches).
    Both operands must have the same element type (integer or bool tensors).

    Example:

    ```mlir
    %z = "tdflow.broadcast_bitwise_or"(%x, %y) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastBitwiseXorOp : TDF_Op<"broadcast_bitwise_xor", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting bitwise xor";
  let formula = [{ bitwise_xor(x, y) }];
  let description = [{
    Computes `z = x ^ y` bit by bit, element by element after broadcasting `x` and `y` to a
    common shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches).
    Both operands must have the same element type (integer or bool tensors).

    Example:

    ```mlir
    %z = "tdflow.broadcast_bitwise_xor"(%x, %y) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

// tdflow only (OneFlow has no shift op): ONNX's BitShift and numpy's *_shift.
def TDF_BroadcastBitwiseLeftShiftOp : TDF_Op<"broadcast_bitwise_left_shift", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting bit shift to the left";
  let formula = [{ left_shift(x, y) }];
  let description = [{
    Computes `z = x << y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both operands
    must have the same element type (integer tensors): `z = 0` where `y` is negative or at least
    the width of the type (numpy's rule; C leaves those undefined).

    Example:

    ```mlir
    %z = "tdflow.broadcast_bitwise_left_shift"(%x, %y) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

// tdflow only (OneFlow has no shift op): ONNX's BitShift and numpy's *_shift.
def TDF_BroadcastBitwiseRightShiftOp : TDF_Op<"broadcast_bitwise_right_shift", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting bit shift to the right";
  let formula = [{ right_shift(x, y) }];
  let description = [{
    Computes `z = x >> y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both operands
    must have the same element type (integer tensors): an arithmetic shift; where `y` is
    negative or at least the width of the type, `z` is -1 for a negative `x` and 0 otherwise
    (numpy's rule; C leaves those undefined).

    Example:

    ```mlir
    %z = "tdflow.broadcast_bitwise_right_shift"(%x, %y) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Remainders
//===----------------------------------------------------------------------===//

// PyTorch's gradient (derived): dx = dz, dy = -dz * trunc(x / y).
def TDF_BroadcastFmodOp : TDF_Op<"broadcast_fmod", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting remainder of truncated division (C's fmod)";
  let formula = [{ fmod(x, y) }];
  let description = [{
    Computes `z = x - trunc(x / y) * y` element by element after broadcasting `x` and `y` to a
    common shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches).
    Both operands must have the same element type. The remainder has the sign of `x` (C's
    `fmod`, ONNX's `Mod` with `fmod = 1`). For integers `x fmod 0` is 0; for floats it is NaN.
    The gradient is `dz` for `x` and `-dz * trunc(x / y)` for `y` (PyTorch's).

    Example:

    ```mlir
    %z = "tdflow.broadcast_fmod"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_BroadcastFloorModOp : TDF_Op<"broadcast_floor_mod", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting remainder of floor division (Python's %)";
  let formula = [{ floor_mod(x, y) }];
  let description = [{
    Computes `z = x - floor(x / y) * y` element by element after broadcasting `x` and `y` to a
    common shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches).
    Both operands must have the same element type. The remainder has the sign of `y` (Python's
    `%`, numpy's `remainder`, ONNX's `Mod` with `fmod = 0`), for floats too. For integers `x mod
    0` is 0; for floats it is NaN. The gradient is `dz` for `x` and `-dz * floor(x / y)` for
    `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_floor_mod"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$z
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}
