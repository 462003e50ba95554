//===- tdflow/ops/math.td - standard ops (part of ops.td) ------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions.
//
// Elementwise math the models need (issue 13): abs, rsqrt, erf, silu, fast_gelu, softplus,
// scalar_div, where and add_n, each as OneFlowUserOps.td declares it (same mnemonic, operand,
// result and attribute names, defaults and `has_*_fn` flags). The elementwise ones carry a
// `formula`: their kernels, fusion and gradients are derived from it. Their hooks are in
// tdflow/dialect/hooks/math_ops.py, add_n's kernel in tdflow/runtime/kernels/math_ops.py.
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

// OneFlow: OneFlow_IdempotentBaseOp<"abs">, whose base adds SameOperandsAndResultType.
def TDF_AbsOp : TDF_Op<"abs", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
  let summary = "absolute value";
  // The derived gradient is the sign of x (0 at 0, as PyTorch's).
  let formula = [{ abs(x) }];
  let description = [{
    Computes `y = |x|` element by element, for float and integer tensors. Applying it twice
    changes nothing (`Idempotent`).

    Example:

    ```mlir
    %y = "tdflow.abs"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_RsqrtOp : TDF_Op<"rsqrt", [NoMemoryEffect, Elementwise]> {
  let summary = "reciprocal square root";
  let formula = [{ rsqrt(x) }];
  let description = [{
    Computes `y = 1 / sqrt(x)` element by element (float tensors): `inf` at 0, NaN below 0.

    Example:

    ```mlir
    %y = "tdflow.rsqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_ErfOp : TDF_Op<"erf", [NoMemoryEffect, Elementwise]> {
  let summary = "Gauss error function";
  let formula = [{ erf(x) }];
  let description = [{
    Computes `y = erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt` element by
    element (float tensors).

    Example:

    ```mlir
    %y = "tdflow.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_SiluOp : TDF_Op<"silu", [NoMemoryEffect, Elementwise]> {
  let summary = "sigmoid linear unit (swish)";
  // OneFlow's kernel: x / (1 + exp(-x)).
  let formula = [{ in * sigmoid(in) }];
  // functional_api.yaml: "Tensor (Tensor x) => Silu" (the operand is `in`).
  let signature = [{
    Tensor (Tensor x)
  }];
  let description = [{
    Computes `out = in * sigmoid(in) = in / (1 + exp(-in))` element by element (float
    tensors). The functional form is `silu(x)`.

    Example:

    ```mlir
    %out = "tdflow.silu"(%in) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_FastGeluOp : TDF_Op<"fast_gelu", [NoMemoryEffect, Elementwise]> {
  let summary = "Gaussian error linear unit, tanh approximation";
  // OneFlow's FastGeluFunctor: alpha = sqrt(2 / pi), beta = 0.044715.
  let formula = [{ 0.5 * in * (1.0 + tanh(0.7978845608028654 * (in + 0.044715 * in * in * in))) }];
  // functional_api.yaml: "Tensor (Tensor x) => FastGelu" (the operand is `in`).
  let signature = [{
    Tensor (Tensor x)
  }];
  let description = [{
    Computes `out = 0.5 * in * (1 + tanh(sqrt(2 / pi) * (in + 0.044715 * in^3)))` element by
    element (float tensors): the tanh approximation of `gelu` (PyTorch's
    `gelu(approximate="tanh")`). The functional form is `fast_gelu(x)`.

    Example:

    ```mlir
    %out = "tdflow.fast_gelu"(%in) : (tensor<4x8xf32>) -> tensor<4x8xf32>
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

def TDF_SoftplusOp : TDF_Op<"softplus", [NoMemoryEffect, Elementwise]> {
  let summary = "softplus, linear above a threshold";
  // OneFlow's SoftplusFunctor (and PyTorch's): x where beta * x > threshold, else
  // log(1 + exp(beta * x)) / beta.
  let formula = [{ x * beta > threshold ? x : log(1.0 + exp(x * beta)) / beta }];
  let description = [{
    Computes `y = log(1 + exp(beta * x)) / beta` element by element (float tensors), and
    `y = x` where `beta * x > threshold`, for numerical stability (the two agree to within
    `exp(-threshold)` there).

    Example:

    ```mlir
    %y = "tdflow.softplus"(%x) {beta = 1.000000e+00 : f64, threshold = 2.000000e+01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$x
  );
  let output = (outs
    TDF_Tensor:$y
  );
  let attrs = (ins
    DefaultValuedAttr<F64Attr, "1.">:$beta,
    DefaultValuedAttr<F64Attr, "20.">:$threshold
  );
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Scalar
//===----------------------------------------------------------------------===//

def TDF_ScalarDivOp : TDF_Op<"scalar_div", [NoMemoryEffect, Elementwise]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}


//===----------------------------------------------------------------------===//
// Select and sum
//===----------------------------------------------------------------------===//

def TDF_WhereOp : TDF_Op<"where", [NoMemoryEffect, Elementwise]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_input_arg_modify_fn = 1;
}

def TDF_AddNOp : TDF_Op<"add_n", [NoMemoryEffect]> {
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
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}
