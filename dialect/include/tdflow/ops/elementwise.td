//===- tdflow/ops/elementwise.td - standard ops: elementwise ---*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The elementwise family:
// arithmetic, comparison, logic and bitwise ops: n-ary, broadcasting and scalar forms,
// `where`, `bias_add` and the `fused_elementwise` op lowering creates.
// This family's hooks live in tdflow/dialect/hooks/elementwise.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

def TDF_NegativeOp : TDF_FormulaOp<"negative", [NoMemoryEffect, Involution, SameOperandsAndResultType, Elementwise]> {
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
}

def TDF_SquareOp : TDF_FormulaOp<"square", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_ReciprocalOp : TDF_FormulaOp<"reciprocal", [NoMemoryEffect, Involution, SameOperandsAndResultType, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Scalar
//===----------------------------------------------------------------------===//

def TDF_ScalarAddOp : TDF_FormulaOp<"scalar_add", [NoMemoryEffect, Elementwise]> {
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
  let has_check_fn = 1;  // exactly one of has_int_operand, has_float_operand
}

def TDF_ScalarMulOp : TDF_FormulaOp<"scalar_mul", [NoMemoryEffect, Elementwise]> {
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
  let has_check_fn = 1;  // exactly one of has_int_operand, has_float_operand
}

def TDF_ScalarPowOp : TDF_FormulaOp<"scalar_pow", [NoMemoryEffect, Elementwise]> {
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
  let has_check_fn = 1;  // exactly one of has_int_operand, has_float_operand
}

//===----------------------------------------------------------------------===//
// Broadcasting binary
//===----------------------------------------------------------------------===//

def TDF_BroadcastAddOp : TDF_FormulaOp<"broadcast_add", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastSubOp : TDF_FormulaOp<"broadcast_sub", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastMulOp : TDF_FormulaOp<"broadcast_mul", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastDivOp : TDF_FormulaOp<"broadcast_div", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastMaximumOp : TDF_FormulaOp<"broadcast_maximum", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Broadcasting comparison, minimum and power
//
// Comparisons return `i1` (bool) tensors and, as in OneFlow, are `NoGrad`.
//===----------------------------------------------------------------------===//

def TDF_BroadcastEqualOp : TDF_FormulaOp<"broadcast_equal", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastNotEqualOp : TDF_FormulaOp<"broadcast_not_equal", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastLessOp : TDF_FormulaOp<"broadcast_less", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastLessEqualOp : TDF_FormulaOp<"broadcast_less_equal", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastGreaterOp : TDF_FormulaOp<"broadcast_greater", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastGreaterEqualOp : TDF_FormulaOp<"broadcast_greater_equal", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastMinimumOp : TDF_FormulaOp<"broadcast_minimum", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastPowOp : TDF_FormulaOp<"broadcast_pow", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BiasAddOp : TDF_HookedOp<"bias_add", [NoMemoryEffect]> {
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
    TDF_AxisAttr<"a", DefaultValuedAttr<SI32Attr, "0">>:$axis
  );
}

//===----------------------------------------------------------------------===//
// Ops lowering creates
//===----------------------------------------------------------------------===//

def TDF_FusedElementwiseOp : TDF_HookedOp<"fused_elementwise", [NoMemoryEffect, Elementwise, LoweringOnly]> {
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
  let has_check_fn = 1;
}

//===----------------------------------------------------------------------===//
// Scalar
//===----------------------------------------------------------------------===//

def TDF_ScalarDivOp : TDF_FormulaOp<"scalar_div", [NoMemoryEffect, Elementwise]> {
  let summary = "divide by a scalar";
  let formula = [{ in / (has_int_operand ? int_operand : float_operand) }];
  let description = [{
    Divides every element by a scalar: `out = in / s`. The scalar `s` is `float_operand`
    when `has_float_operand` is set, else `int_operand` when `has_int_operand` is set;
    exactly one of the two flags must be true. The result has the input's type; on integer
    tensors (with an integer scalar) the quotient is truncated toward zero, as C's.

    Example:

    ```mlir
    %out = "tdflow.scalar_div"(%in) {has_float_operand = true, float_operand = 2.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
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
  let has_check_fn = 1;  // exactly one of has_int_operand, has_float_operand
}

//===----------------------------------------------------------------------===//
// Select and sum
//===----------------------------------------------------------------------===//

def TDF_WhereOp : TDF_FormulaOp<"where", [NoMemoryEffect, Elementwise]> {
  let summary = "elementwise select by a condition, broadcasting";
  // The gradient (derived) flows to x where the condition holds and to y elsewhere; the
  // condition takes none (its modify_input_arg hook, as OneFlow's).
  let formula = [{ !condition ? y : x }];
  let description = [{
    Computes `out = condition ? x : y` element by element after broadcasting the three
    operands to a common shape with numpy's rules. `condition` is a bool (`i1`) or
    integer tensor (nonzero is true); `x` and `y` must have the same element type, which is
    the result's. No gradient flows into `condition`.

    Example:

    ```mlir
    %out = "tdflow.where"(%c, %x, %y) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  // OneFlow declares the condition as OneFlow_Tensor; tdflow narrows it to a mask (bool or
  // number) so that the derived kernel does not require it to have x's element type.
  let input = (ins
    TDF_MaskTensor:$condition,
    TDF_Tensor:$x,
    TDF_Tensor:$y
  );
  let output = (outs
    TDF_Tensor:$out
  );
  // The formula gives shape, dtype (x's and y's) and SBP; a check says what it cannot: the
  // condition is bool or integer and x and y have one type.
  let has_check_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_AddNOp : TDF_HookedOp<"add_n", [NoMemoryEffect]> {
  let summary = "sum of several tensors";
  // functional_api.yaml: "Tensor (TensorTuple inputs, *, Bool inplace=False) => AddN";
  // tdflow has no in-place form of add_n, so `inplace` is left out.
  let signature = [{
    Tensor (TensorTuple inputs)
  }];
  let description = [{
    Computes `out = in[0] + in[1] + ... + in[n-1]`: one or more tensors of the same shape and
    element type, added in order. The gradient of every input is the result's gradient.
    The functional form is `add_n(inputs)`.

    Example:

    ```mlir
    %out = "tdflow.add_n"(%a, %b, %c) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    Variadic<TDF_Tensor>:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_check_fn = 1;
}

//===----------------------------------------------------------------------===//
// Logic and bits
//===----------------------------------------------------------------------===//

def TDF_LogicalNotOp : TDF_FormulaOp<"logical_not", [NoMemoryEffect, NoGrad, Elementwise]> {
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
}

def TDF_BitwiseNotOp : TDF_FormulaOp<"bitwise_not", [NoMemoryEffect, NoGrad, Elementwise]> {
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
}

def TDF_BroadcastLogicalAndOp : TDF_FormulaOp<"broadcast_logical_and", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastLogicalOrOp : TDF_FormulaOp<"broadcast_logical_or", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastLogicalXorOp : TDF_FormulaOp<"broadcast_logical_xor", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastBitwiseAndOp : TDF_FormulaOp<"broadcast_bitwise_and", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastBitwiseOrOp : TDF_FormulaOp<"broadcast_bitwise_or", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastBitwiseXorOp : TDF_FormulaOp<"broadcast_bitwise_xor", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

// tdflow only (OneFlow has no shift op): ONNX's BitShift and numpy's *_shift.
def TDF_BroadcastBitwiseLeftShiftOp : TDF_FormulaOp<"broadcast_bitwise_left_shift", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

// tdflow only (OneFlow has no shift op): ONNX's BitShift and numpy's *_shift.
def TDF_BroadcastBitwiseRightShiftOp : TDF_FormulaOp<"broadcast_bitwise_right_shift", [NoMemoryEffect, NoGrad, SameOperandsElementType, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Remainders
//===----------------------------------------------------------------------===//

// PyTorch's gradient (derived): dx = dz, dy = -dz * trunc(x / y).
def TDF_BroadcastFmodOp : TDF_FormulaOp<"broadcast_fmod", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}

def TDF_BroadcastFloorModOp : TDF_FormulaOp<"broadcast_floor_mod", [NoMemoryEffect, SameOperandsElementType, Elementwise]> {
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
}
