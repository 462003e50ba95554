//===- ops.td - the standard tdflow op library -----------------*- tablegen -*-===//
//
// OneFlow's own definitions (OneFlowUserOps.td) of the starter ops: same names, operands,
// attributes, defaults, traits and `has_*_fn` flags. tdflow adds `Elementwise` where an op maps
// elements to elements (fusion relies on it) and drops MLIR interface boilerplate.
//
// Every op carries the four hooks OneFlow requires of user ops (logical and physical tensor
// desc inference, data type inference, SBP signatures); extra flags declare extra hooks. The
// Python hooks live in tdflow/dialect/hooks/ (see `tdflow verify` for the contract check).
//
// Examples in descriptions use MLIR's generic op syntax, as `tdflow opt` prints it.
//
//===----------------------------------------------------------------------===//

include "tdflow/Base.td"


//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

def TDF_ReluOp : TDF_Op<"relu", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
  let summary = "rectified linear unit";
  let formula = [{ max(x, 0) }];
  let description = [{
    Computes `y = max(x, 0)` element by element. Applying it twice changes nothing
    (`Idempotent`).

    Example:

    ```mlir
    %y = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_LeakyReluOp : TDF_Op<"leaky_relu", [NoMemoryEffect, Elementwise]> {
  let summary = "leaky rectified linear unit";
  // OneFlow's definition. For 0 < alpha <= 1 the kernel computes it as max(x, x * alpha)
  // (two ufuncs, exact for every input); the gradient keeps the select's meaning at 0
  // (x > 0 ? dy : dy * alpha, PyTorch's convention).
  let formula = [{ x > 0 ? x : x * alpha }];
  let description = [{
    Computes `y = x > 0 ? x : alpha * x` element by element.

    Example:

    ```mlir
    %y = "tdflow.leaky_relu"(%x) {alpha = 2.000000e-01 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$alpha
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SigmoidOp : TDF_Op<"sigmoid", [NoMemoryEffect, Elementwise]> {
  let summary = "logistic sigmoid";
  let formula = [{ sigmoid(x) }];
  let description = [{
    Computes `y = 1 / (1 + exp(-x))` element by element.

    Example:

    ```mlir
    %y = "tdflow.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_TanhOp : TDF_Op<"tanh", [NoMemoryEffect, Elementwise]> {
  let summary = "hyperbolic tangent";
  let formula = [{ tanh(x) }];
  let description = [{
    Computes `y = tanh(x)` element by element.

    Example:

    ```mlir
    %y = "tdflow.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_GeluOp : TDF_Op<"gelu", [NoMemoryEffect, Elementwise]> {
  let summary = "Gaussian error linear unit";
  // OneFlow's erf form: 0.5 x (1 + erf(x / sqrt 2)).
  let formula = [{ 0.5 * in * (1.0 + erf(in * rsqrt(2.0))) }];
  let description = [{
    Computes `out = 0.5 * in * (1 + erf(in / sqrt(2)))` element by element (the exact form,
    not the tanh approximation).

    Example:

    ```mlir
    %out = "tdflow.gelu"(%in) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_ExpOp : TDF_Op<"exp", [NoMemoryEffect, Elementwise]> {
  let summary = "natural exponential";
  let formula = [{ exp(x) }];
  let description = [{
    Computes `y = e^x` element by element.

    Example:

    ```mlir
    %y = "tdflow.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_LogOp : TDF_Op<"log", [NoMemoryEffect, Elementwise]> {
  let summary = "natural logarithm";
  let formula = [{ log(x) }];
  let description = [{
    Computes `y = ln(x)` element by element; `x <= 0` gives `-inf` or NaN as in IEEE
    arithmetic.

    Example:

    ```mlir
    %y = "tdflow.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_SqrtOp : TDF_Op<"sqrt", [NoMemoryEffect, Elementwise]> {
  let summary = "square root";
  let formula = [{ sqrt(x) }];
  let description = [{
    Computes `y = sqrt(x)` element by element.

    Example:

    ```mlir
    %y = "tdflow.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_NegativeOp : TDF_Op<"negative", [NoMemoryEffect, Involution, SameOperandsAndResultType, Elementwise]> {
  let summary = "negation";
  let formula = [{ -x }];
  let description = [{
    Computes `y = -x` element by element. Applying it twice gives `x` back (`Involution`).

    Example:

    ```mlir
    %y = "tdflow.negative"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_SquareOp : TDF_Op<"square", [NoMemoryEffect, Elementwise]> {
  let summary = "square";
  let formula = [{ x * x }];
  let description = [{
    Computes `y = x * x` element by element.

    Example:

    ```mlir
    %y = "tdflow.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_ReciprocalOp : TDF_Op<"reciprocal", [NoMemoryEffect, Involution, SameOperandsAndResultType, Elementwise]> {
  let summary = "reciprocal";
  let formula = [{ 1.0 / x }];
  let description = [{
    Computes `y = 1 / x` element by element. Applying it twice gives `x` back
    (`Involution`).

    Example:

    ```mlir
    %y = "tdflow.reciprocal"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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
// Scalar
//===----------------------------------------------------------------------===//

def TDF_ScalarAddOp : TDF_Op<"scalar_add", [NoMemoryEffect, Elementwise]> {
  let summary = "add a scalar";
  // The scalar is int_operand when has_int_operand is set, else float_operand.
  let formula = [{ in + (has_int_operand ? int_operand : float_operand) }];
  let description = [{
    Adds a scalar to every element: `out = in + s`. The scalar `s` is `float_operand` when
    `has_float_operand` is set, else `int_operand` when `has_int_operand` is set; exactly
    one of the two flags must be true. The result has the input's type.

    Example:

    ```mlir
    %out = "tdflow.scalar_add"(%in) {has_float_operand = true, float_operand = 2.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$has_int_operand,
    DefaultValuedAttr<BoolAttr, "false">:$has_float_operand,
    DefaultValuedAttr<SI64Attr, "0">:$int_operand,
    DefaultValuedAttr<F64Attr, "0.">:$float_operand
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_ScalarMulOp : TDF_Op<"scalar_mul", [NoMemoryEffect, Elementwise]> {
  let summary = "multiply by a scalar";
  let formula = [{ in * (has_int_operand ? int_operand : float_operand) }];
  let description = [{
    Multiplies every element by a scalar: `out = in * s`. The scalar `s` is `float_operand`
    when `has_float_operand` is set, else `int_operand` when `has_int_operand` is set;
    exactly one of the two flags must be true. The result has the input's type.

    Example:

    ```mlir
    %out = "tdflow.scalar_mul"(%in) {has_float_operand = true, float_operand = 2.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$has_int_operand,
    DefaultValuedAttr<BoolAttr, "false">:$has_float_operand,
    DefaultValuedAttr<SI64Attr, "0">:$int_operand,
    DefaultValuedAttr<F64Attr, "0.">:$float_operand
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_ScalarPowOp : TDF_Op<"scalar_pow", [NoMemoryEffect, Elementwise]> {
  let summary = "raise to a scalar power";
  let formula = [{ pow(in, has_int_operand ? int_operand : float_operand) }];
  let description = [{
    Raises every element to a scalar power: `out = in ** s`. The scalar `s` is
    `float_operand` when `has_float_operand` is set, else `int_operand` when
    `has_int_operand` is set; exactly one of the two flags must be true. The result has the
    input's type.

    Example:

    ```mlir
    %out = "tdflow.scalar_pow"(%in) {has_float_operand = true, float_operand = 2.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$has_int_operand,
    DefaultValuedAttr<BoolAttr, "false">:$has_float_operand,
    DefaultValuedAttr<SI64Attr, "0">:$int_operand,
    DefaultValuedAttr<F64Attr, "0.">:$float_operand
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Broadcasting binary
//===----------------------------------------------------------------------===//

def TDF_BroadcastAddOp : TDF_Op<"broadcast_add", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting addition";
  let formula = [{ x + y }];
  let description = [{
    Computes `z = x + y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type.

    Example:

    ```mlir
    %z = "tdflow.broadcast_add"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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

def TDF_BroadcastSubOp : TDF_Op<"broadcast_sub", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting subtraction";
  let formula = [{ x - y }];
  let description = [{
    Computes `z = x - y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type.

    Example:

    ```mlir
    %z = "tdflow.broadcast_sub"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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

def TDF_BroadcastMulOp : TDF_Op<"broadcast_mul", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting multiplication";
  let formula = [{ x * y }];
  let description = [{
    Computes `z = x * y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type.

    Example:

    ```mlir
    %z = "tdflow.broadcast_mul"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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

def TDF_BroadcastDivOp : TDF_Op<"broadcast_div", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting division";
  let formula = [{ x / y }];
  let description = [{
    Computes `z = x / y` element by element after broadcasting `x` and `y` to a common shape
    with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type.

    Example:

    ```mlir
    %z = "tdflow.broadcast_div"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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

def TDF_BroadcastMaximumOp : TDF_Op<"broadcast_maximum", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting maximum";
  let formula = [{ max(x, y) }];
  let description = [{
    Computes `z = max(x, y)` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type.

    Example:

    ```mlir
    %z = "tdflow.broadcast_maximum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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
// Broadcasting comparison, minimum and power
//
// Comparisons return `i1` (bool) tensors and, as in OneFlow, are `NoGrad`.
//===----------------------------------------------------------------------===//

def TDF_BroadcastEqualOp : TDF_Op<"broadcast_equal", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting equality";
  let formula = [{ x == y }];
  let description = [{
    Computes `z = x == y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type; the result is `i1` (bool): `true` where `x`
    equals `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_equal"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
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

def TDF_BroadcastNotEqualOp : TDF_Op<"broadcast_not_equal", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting inequality";
  let formula = [{ x != y }];
  let description = [{
    Computes `z = x != y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type; the result is `i1` (bool): `true` where `x`
    differs from `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_not_equal"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
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

def TDF_BroadcastLessOp : TDF_Op<"broadcast_less", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting less-than";
  let formula = [{ x < y }];
  let description = [{
    Computes `z = x < y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type; the result is `i1` (bool): `true` where `x` is
    less than `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_less"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
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

def TDF_BroadcastLessEqualOp : TDF_Op<"broadcast_less_equal", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting less-than-or-equal";
  let formula = [{ x <= y }];
  let description = [{
    Computes `z = x <= y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type; the result is `i1` (bool): `true` where `x` is
    at most `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_less_equal"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
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

def TDF_BroadcastGreaterOp : TDF_Op<"broadcast_greater", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting greater-than";
  let formula = [{ x > y }];
  let description = [{
    Computes `z = x > y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type; the result is `i1` (bool): `true` where `x` is
    greater than `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_greater"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
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

def TDF_BroadcastGreaterEqualOp : TDF_Op<"broadcast_greater_equal", [NoMemoryEffect, NoGrad, Elementwise]> {
  let summary = "broadcasting greater-than-or-equal";
  let formula = [{ x >= y }];
  let description = [{
    Computes `z = x >= y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type; the result is `i1` (bool): `true` where `x` is
    at least `y`.

    Example:

    ```mlir
    %z = "tdflow.broadcast_greater_equal"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
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

def TDF_BroadcastMinimumOp : TDF_Op<"broadcast_minimum", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting minimum";
  let formula = [{ min(x, y) }];
  let description = [{
    Computes `z = min(x, y)` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type.

    Example:

    ```mlir
    %z = "tdflow.broadcast_minimum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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

def TDF_BroadcastPowOp : TDF_Op<"broadcast_pow", [NoMemoryEffect, Elementwise]> {
  let summary = "broadcasting power";
  let formula = [{ pow(x, y) }];
  let description = [{
    Computes `z = x ** y` element by element after broadcasting `x` and `y` to a common
    shape with numpy's rules (dims are aligned from the right; a dim of 1 stretches). Both
    operands must have the same element type, which is the result's; `functional.pow(x, 2.0)`
    with a Python number runs `scalar_pow` instead.

    Example:

    ```mlir
    %z = "tdflow.broadcast_pow"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
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


def TDF_BiasAddOp : TDF_Op<"bias_add", [NoMemoryEffect]> {
  let summary = "add a bias along one axis";
  let description = [{
    Adds the 1-D tensor `b` to `a` along dimension `axis` (negative counts from the end):
    `out[..., i, ...] = a[..., i, ...] + b[i]`. `b`'s length must equal `a.shape[axis]`.

    Example:

    ```mlir
    %out = "tdflow.bias_add"(%a, %b) {axis = 1 : si32} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$a,
    TDF_Tensor:$b
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


//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def TDF_MatmulOp : TDF_Op<"matmul", [NoMemoryEffect]> {
  let summary = "matrix multiplication";
  let grad = [{
    a: transpose_a ? matmul(b, dout, transpose_a=transpose_b, transpose_b=true, alpha=alpha)
                   : matmul(dout, b, transpose_b=!transpose_b, alpha=alpha);
    b: transpose_b ? matmul(dout, a, transpose_a=true, transpose_b=transpose_a, alpha=alpha)
                   : matmul(a, dout, transpose_a=!transpose_a, alpha=alpha);
    _add_to_output: dout
  }];
  let description = [{
    Computes `out = alpha * op(a) @ op(b) (+ _add_to_output)` for 2-D `a` and `b`, where
    `op` transposes when `transpose_a`/`transpose_b` is set. `_add_to_output`, when given,
    has the result's shape and is accumulated into it.

    Example:

    ```mlir
    %out = "tdflow.matmul"(%a, %b) {transpose_b = true} : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$a,
    TDF_Tensor:$b,
    Optional<TDF_Tensor>:$_add_to_output
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
    DefaultValuedAttr<F64Attr, "1.">:$alpha
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_BatchMatmulOp : TDF_Op<"batch_matmul", [NoMemoryEffect]> {
  let summary = "batched matrix multiplication";
  let grad = [{
    a: transpose_a ? batch_matmul(b, dout, transpose_a=transpose_b, transpose_b=true, alpha=alpha)
                   : batch_matmul(dout, b, transpose_b=!transpose_b, alpha=alpha);
    b: transpose_b ? batch_matmul(dout, a, transpose_a=true, transpose_b=transpose_a, alpha=alpha)
                   : batch_matmul(a, dout, transpose_a=!transpose_a, alpha=alpha);
    _add_to_output: dout
  }];
  let description = [{
    Like `matmul` on the last two dims, for `a` and `b` of the same rank (at least 3) whose
    leading (batch) dims are equal.

    Example:

    ```mlir
    %out = "tdflow.batch_matmul"(%a, %b) : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$a,
    TDF_Tensor:$b,
    Optional<TDF_Tensor>:$_add_to_output
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
    DefaultValuedAttr<F64Attr, "1.">:$alpha
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}


//===----------------------------------------------------------------------===//
// Reductions and normalisation
//===----------------------------------------------------------------------===//

def TDF_ReduceSumOp : TDF_Op<"reduce_sum", [NoMemoryEffect]> {
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
    SI32ArrayAttr:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_ReduceMaxOp : TDF_Op<"reduce_max", [NoMemoryEffect]> {
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
    SI32ArrayAttr:$axis,
    DefaultValuedAttr<BoolAttr, "false">:$keepdims
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SoftmaxOp : TDF_Op<"softmax", [NoMemoryEffect]> {
  let summary = "softmax over the last axis";
  let grad = [{ in: softmax_grad(out, dout) }];
  let description = [{
    Computes `out = exp(in - max(in)) / sum(exp(in - max(in)))` along the last dim.

    Example:

    ```mlir
    %p = "tdflow.softmax"(%logits) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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
  let has_compute_complexity_fn = 1;
}

def TDF_LogSoftmaxOp : TDF_Op<"log_softmax", [NoMemoryEffect]> {
  let summary = "log-softmax over the last axis";
  let grad = [{ in: dprob - exp(prob) * reduce_sum(dprob, axis=[-1], keepdims=true) }];
  let description = [{
    Computes `prob = in - max(in) - log(sum(exp(in - max(in))))` along the last dim (the
    output is named `prob`, as in OneFlow).

    Example:

    ```mlir
    %lp = "tdflow.log_softmax"(%logits) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$prob
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SparseSoftmaxCrossEntropyOp : TDF_Op<"sparse_softmax_cross_entropy", [NoMemoryEffect]> {
  let summary = "softmax cross-entropy with integer labels";
  let grad = [{
    prediction: sparse_softmax_cross_entropy_grad(label, dout, prob, depth=depth)
                + softmax_grad(prob, dprob)
  }];
  let description = [{
    For logits `prediction` of shape `[N, depth]` and integer class indices `label` of shape
    `[N]`, returns `prob = softmax(prediction)` (same shape as `prediction`) and the per-row
    loss `out[i] = -log(prob[i, label[i]])` (shape `[N]`, the prediction's element type).
    `depth` must equal the last dim of `prediction`. `label` is marked as not needing a
    gradient. A label outside `[0, depth)` contributes a loss of 0 and no gradient, on every
    backend: this is OneFlow's rule (its kernels skip such rows), which lets a prediction split
    by class (SBP `S(1)`) compute each shard's part with labels offset by the shard's first
    class. Check labels before the call if one out of range is a bug in your data.

    Example:

    ```mlir
    %prob, %loss = "tdflow.sparse_softmax_cross_entropy"(%logits, %labels) {depth = 10 : si64} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8x10xf32>, tensor<8xf32>)
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
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$depth
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}


//===----------------------------------------------------------------------===//
// Shape and type
//===----------------------------------------------------------------------===//

def TDF_ReshapeOp : TDF_Op<"reshape", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_enumerate_nd_sbp_signatures_fn = 1;
}

def TDF_TransposeOp : TDF_Op<"transpose", [NoMemoryEffect]> {
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
    SI32ArrayAttr:$perm
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_CatOp : TDF_Op<"cat", [NoMemoryEffect]> {
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
    DefaultValuedAttr<SI64Attr, "0">:$axis,
    DefaultValuedAttr<SI64Attr, "0">:$max_dim_size
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
}

def TDF_SliceOp : TDF_Op<"slice", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SliceGradOp : TDF_Op<"slice_grad", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_CastOp : TDF_Op<"cast", [NoMemoryEffect, SupportNonContiguous]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_device_and_stream_infer_fn = 1;
}

def TDF_ConstantOp : TDF_Op<"constant", [NoMemoryEffect, NoGrad]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_nd_sbp_infer_fn = 1;
}

def TDF_DenseConstantOp : TDF_Op<"dense_constant", [NoMemoryEffect, NoGrad]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_get_sbp_fn = 1;
}

def TDF_OnesLikeOp : TDF_Op<"ones_like", [NoMemoryEffect, NoGrad, Idempotent, SameOperandsAndResultType]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_nd_sbp_infer_fn = 1;
}

def TDF_ReduceSumLikeOp : TDF_Op<"reduce_sum_like", [NoMemoryEffect]> {
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
    SI32ArrayAttr:$axis
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_BroadcastLikeOp : TDF_Op<"broadcast_like", [NoMemoryEffect]> {
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
    SI32ArrayAttr:$broadcast_axes
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}


//===----------------------------------------------------------------------===//
// Convolution, pooling, dropout
//===----------------------------------------------------------------------===//

def TDF_Conv2DOp : TDF_Op<"conv2d", [NoMemoryEffect, AttrSizedOperandSegments]> {
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
    SI32ArrayAttr:$padding_before,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$strides,
    SI32ArrayAttr:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "1">:$groups,
    DefaultValuedStrAttr<StrAttr, "">:$tuning_cache
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_MaxPool2DOp : TDF_Op<"max_pool_2d", [NoMemoryEffect]> {
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
    SI32ArrayAttr:$padding,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$stride,
    SI32ArrayAttr:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$return_indices,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_DropoutOp : TDF_Op<"dropout", [NoMemoryEffect]> {
  let summary = "dropout";
  let grad = [{
    in: dropout_grad(dout, mask, scale=1.0 / (1.0 - rate));
    _add_to_output: dout
  }];
  let description = [{
    Zeroes each element with probability `rate` (in `[0, 1)`) and scales the rest by `1 / (1
    - rate)`; `mask` (i1, same shape) records the kept elements. `seed` seeds the random
    generator.

    Example:

    ```mlir
    %out, %mask = "tdflow.dropout"(%x) {rate = 5.000000e-01 : f32, seed = 42 : si64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$in,
    Optional<TDF_Tensor>:$_add_to_output
  );
  let output = (outs
    TDF_Tensor:$out,
    TDF_Tensor:$mask
  );
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$rate,
    DefaultValuedAttr<SI64Attr, "0">:$seed
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
}


//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def TDF_ReluGradOp : TDF_Op<"relu_grad", [NoMemoryEffect, Elementwise]> {
  let summary = "gradient of relu";
  let formula = [{ y > 0 ? dy : 0 }];
  let description = [{
    Computes `dx = y > 0 ? dy : 0` from relu's output `y`.

    Example:

    ```mlir
    %dx = "tdflow.relu_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$y,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_LeakyReluGradOp : TDF_Op<"leaky_relu_grad", [NoMemoryEffect, Elementwise]> {
  let summary = "gradient of leaky_relu";
  let formula = [{ x > 0 ? dy : dy * alpha }];
  let description = [{
    Computes `dx = x > 0 ? dy : alpha * dy`.

    Example:

    ```mlir
    %dx = "tdflow.leaky_relu_grad"(%x, %dy) {alpha = 2.000000e-01 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
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
    DefaultValuedAttr<F32Attr, "0.">:$alpha
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SigmoidGradOp : TDF_Op<"sigmoid_grad", [NoMemoryEffect, Elementwise]> {
  let summary = "gradient of sigmoid";
  let formula = [{ dy * y * (1.0 - y) }];
  let description = [{
    Computes `dx = dy * y * (1 - y)` from sigmoid's output `y`.

    Example:

    ```mlir
    %dx = "tdflow.sigmoid_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$y,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_TanhGradOp : TDF_Op<"tanh_grad", [NoMemoryEffect, Elementwise]> {
  let summary = "gradient of tanh";
  let formula = [{ dy * (1.0 - y * y) }];
  let description = [{
    Computes `dx = dy * (1 - y * y)` from tanh's output `y`.

    Example:

    ```mlir
    %dx = "tdflow.tanh_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$y,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_GeluGradOp : TDF_Op<"gelu_grad", [NoMemoryEffect, Elementwise]> {
  let summary = "gradient of gelu";
  let formula = [{ dy * (0.5 * (1.0 + erf(x * rsqrt(2.0))) + x * rsqrt(2.0 * 3.141592653589793) * exp(-0.5 * x * x)) }];
  let description = [{
    Computes `dx = dy * (Phi(x) + x * phi(x))` where `Phi`/`phi` are the standard normal
    CDF/PDF.

    Example:

    ```mlir
    %dx = "tdflow.gelu_grad"(%x, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_SoftmaxGradOp : TDF_Op<"softmax_grad", [NoMemoryEffect]> {
  let summary = "gradient of softmax";
  let grad = [{
    y: ddx * (dy - reduce_sum(dy * y, axis=[-1], keepdims=true))
       - dy * reduce_sum(ddx * y, axis=[-1], keepdims=true);
    dy: softmax_grad(y, ddx)
  }];
  let description = [{
    Computes `dx = y * (dy - sum(dy * y, last axis))` from softmax's output `y`.

    Example:

    ```mlir
    %dx = "tdflow.softmax_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$y,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

def TDF_DropoutGradOp : TDF_Op<"dropout_grad", [NoMemoryEffect, Elementwise]> {
  let summary = "gradient of dropout";
  let formula = [{ dy * mask * scale }];
  let description = [{
    Computes `dx = dy * mask * scale`; `scale` is `1 / (1 - rate)` of the forward dropout.

    Example:

    ```mlir
    %dx = "tdflow.dropout_grad"(%dy, %mask) {scale = 2.000000e+00 : f32} : (tensor<4x8xf32>, tensor<4x8xi1>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_MaskTensor:$mask
  );
  let output = (outs
    TDF_Tensor:$dx
  );
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$scale
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
}

def TDF_ConvDataGradOp : TDF_Op<"conv_data_grad", [NoMemoryEffect, NoGrad]> {
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
    SI32ArrayAttr:$padding_before,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$strides,
    SI32ArrayAttr:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "0">:$groups
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_ConvFilterGradOp : TDF_Op<"conv_filter_grad", [NoMemoryEffect, NoGrad]> {
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
    SI32ArrayAttr:$padding_before,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$strides,
    SI32ArrayAttr:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "0">:$groups
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_MaxPool2DGradOp : TDF_Op<"max_pool_2d_grad", [NoMemoryEffect, NoGrad]> {
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
    SI32ArrayAttr:$padding,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$stride,
    SI32ArrayAttr:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$return_indices,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}

def TDF_SparseSoftmaxCrossEntropyGradOp : TDF_Op<"sparse_softmax_cross_entropy_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of sparse_softmax_cross_entropy";
  let description = [{
    Computes `prediction_diff = (prob - one_hot(label, depth)) * dy[:, None]`; the result
    has `prob`'s shape.

    Example:

    ```mlir
    %dp = "tdflow.sparse_softmax_cross_entropy_grad"(%labels, %dloss, %prob) {depth = 10 : si64} : (tensor<8xi64>, tensor<8xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$label,
    TDF_Tensor:$dy,
    TDF_Tensor:$prob
  );
  let output = (outs
    TDF_Tensor:$prediction_diff
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$depth
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def TDF_SgdUpdateOp : TDF_Op<"sgd_update", [NoGrad, AttrSizedOperandSegments]> {
  let summary = "stochastic gradient descent step (in place)";
  let description = [{
    Updates `model` in place: `model -= lr * (scale * model_diff * s + l1 * sign(model) + l2
    * model) + lr * weight_decay * model`, with `lr = learning_rate` (a 1-element tensor,
    when given) or `learning_rate_val`, times `learning_rate_scale`, and `s =
    scale_by_tensor` when given. The step is skipped when `skip_if` is non-zero. It has no
    results and must never be removed as dead code (`model` is marked mutable).

    Example:

    ```mlir
    "tdflow.sgd_update"(%w, %dw) {learning_rate_val = 1.000000e-01 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<16x4xf32>, tensor<16x4xf32>) -> ()
    ```
  }];
  let input = (ins
    TDF_Tensor:$model,
    TDF_Tensor:$model_diff,
    Optional<TDF_Tensor>:$model_copy,
    Optional<TDF_Tensor>:$learning_rate,
    Optional<TDF_Tensor>:$scale_by_tensor,
    Optional<TDF_Tensor>:$skip_if
  );
  let output = (outs);
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$learning_rate_val,
    DefaultValuedAttr<F32Attr, "1.">:$learning_rate_scale,
    DefaultValuedAttr<F64Attr, "1.">:$scale,
    DefaultValuedAttr<F32Attr, "0.">:$l1,
    DefaultValuedAttr<F32Attr, "0.">:$l2,
    DefaultValuedAttr<F32Attr, "0.">:$weight_decay
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Ops lowering creates
//===----------------------------------------------------------------------===//

def TDF_FusedElementwiseOp : TDF_Op<"fused_elementwise", [NoMemoryEffect, Elementwise, LoweringOnly]> {
  let summary = "elementwise ops fused into one kernel by fuse-elementwise";
  let description = [{
    One kernel for a chain or DAG of `Elementwise` ops, made by the `fuse-elementwise` pass:
    `expr` is the composed scalar expression over the operands (`in0`, `in1`, ... by
    position), with the fused ops' attributes bound, in the text form the pass prints
    (`add(exp(in0), mul(in1, 2.0))`, functions named as in the expression IR: `where`,
    `cast(x, f32)`, `gt`, `mod`, `pow`...); `ops` names the ops it replaced, in program
    order. The result has the operands' broadcast shape and the element type the expression
    computes (`i1` for a predicate such as `gt(in0, in1)`). Further elementwise producers and
    consumers fuse into it; it is not part of the functional API (`LoweringOnly`).

    Example:

    ```mlir
    %y = "tdflow.fused_elementwise"(%x, %s) {expr = "mul(exp(in0), in1)", ops = ["tdflow.exp", "tdflow.broadcast_mul"]} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    Variadic<TDF_Tensor>:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    StrAttr:$expr,
    OptionalAttr<StrArrayAttr>:$ops
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
}


//===----------------------------------------------------------------------===//
// The ops the models need (issue 13), one file per family, each following this file's
// conventions
//===----------------------------------------------------------------------===//

include "tdflow/ops/math.td"   // elementwise math: abs, rsqrt, erf, silu, softplus, where, ...
include "tdflow/ops/elementwise_math.td"  // trig, rounding, sign, isnan, logic, bits, fmod, ...
include "tdflow/ops/norm.td"   // layer_norm, normalization (batch norm), group_norm
include "tdflow/ops/index.td"  // gather, embedding, narrow, expand, squeeze, tril, arange, ...
include "tdflow/ops/indexing.td"  // argmax, top_k, cumsum, dim_gather, dim_scatter_*, triu, pad
include "tdflow/ops/train.td"  // reductions, pooling, losses and optimizers
include "tdflow/ops/boxing.td"  // SBP boxing: all_reduce, reduce_scatter, all_gather, all_to_all, ...
include "tdflow/ops/canonical.td"  // the standard rewrite rules (canonicalize)
