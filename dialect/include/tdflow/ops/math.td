//===- tdflow/ops/math.td - standard ops: math ------------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The math family:
// unary math functions and activations, and their gradients.
// This family's hooks live in tdflow/dialect/hooks/math.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

def TDF_ReluOp : TDF_FormulaOp<"relu", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
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
}

def TDF_LeakyReluOp : TDF_FormulaOp<"leaky_relu", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_SigmoidOp : TDF_FormulaOp<"sigmoid", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_TanhOp : TDF_FormulaOp<"tanh", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_GeluOp : TDF_FormulaOp<"gelu", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_ExpOp : TDF_FormulaOp<"exp", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_LogOp : TDF_FormulaOp<"log", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_SqrtOp : TDF_FormulaOp<"sqrt", [NoMemoryEffect, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def TDF_ReluGradOp : TDF_FormulaOp<"relu_grad", [NoMemoryEffect, SameOperandsShape, SameOperandsElementType, Elementwise]> {
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
}

def TDF_LeakyReluGradOp : TDF_FormulaOp<"leaky_relu_grad", [NoMemoryEffect, SameOperandsShape, SameOperandsElementType, Elementwise]> {
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
}

def TDF_SigmoidGradOp : TDF_FormulaOp<"sigmoid_grad", [NoMemoryEffect, SameOperandsShape, SameOperandsElementType, Elementwise]> {
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
}

def TDF_TanhGradOp : TDF_FormulaOp<"tanh_grad", [NoMemoryEffect, SameOperandsShape, SameOperandsElementType, Elementwise]> {
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
}

def TDF_GeluGradOp : TDF_FormulaOp<"gelu_grad", [NoMemoryEffect, SameOperandsShape, SameOperandsElementType, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

// OneFlow: OneFlow_IdempotentBaseOp<"abs">, whose base adds SameOperandsAndResultType.
def TDF_AbsOp : TDF_FormulaOp<"abs", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
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
}

def TDF_RsqrtOp : TDF_FormulaOp<"rsqrt", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_ErfOp : TDF_FormulaOp<"erf", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_SiluOp : TDF_FormulaOp<"silu", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_FastGeluOp : TDF_FormulaOp<"fast_gelu", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_SoftplusOp : TDF_FormulaOp<"softplus", [NoMemoryEffect, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Trigonometric and hyperbolic
//===----------------------------------------------------------------------===//

def TDF_SinOp : TDF_FormulaOp<"sin", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_CosOp : TDF_FormulaOp<"cos", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_TanOp : TDF_FormulaOp<"tan", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_AsinOp : TDF_FormulaOp<"asin", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_AcosOp : TDF_FormulaOp<"acos", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_AtanOp : TDF_FormulaOp<"atan", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_SinhOp : TDF_FormulaOp<"sinh", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_CoshOp : TDF_FormulaOp<"cosh", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_AsinhOp : TDF_FormulaOp<"asinh", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_AcoshOp : TDF_FormulaOp<"acosh", [NoMemoryEffect, Elementwise]> {
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
}

def TDF_AtanhOp : TDF_FormulaOp<"atanh", [NoMemoryEffect, Elementwise]> {
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
}

//===----------------------------------------------------------------------===//
// Rounding, sign and tests
//===----------------------------------------------------------------------===//

// OneFlow: OneFlow_IdempotentBaseOp<"floor">, whose base adds SameOperandsAndResultType.
def TDF_FloorOp : TDF_FormulaOp<"floor", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
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
}

// OneFlow: OneFlow_IdempotentBaseOp<"ceil">, whose base adds SameOperandsAndResultType.
def TDF_CeilOp : TDF_FormulaOp<"ceil", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
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
}

// OneFlow: OneFlow_IdempotentBaseOp<"round">, whose base adds SameOperandsAndResultType.
def TDF_RoundOp : TDF_FormulaOp<"round", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
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
}

// OneFlow: OneFlow_IdempotentBaseOp<"sign">, whose base adds SameOperandsAndResultType.
def TDF_SignOp : TDF_FormulaOp<"sign", [NoMemoryEffect, Idempotent, SameOperandsAndResultType, Elementwise]> {
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
}

def TDF_IsNanOp : TDF_FormulaOp<"isnan", [NoMemoryEffect, NoGrad, Elementwise]> {
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
}

def TDF_IsInfOp : TDF_FormulaOp<"isinf", [NoMemoryEffect, NoGrad, Elementwise]> {
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
}

def TDF_SoftsignOp : TDF_FormulaOp<"softsign", [NoMemoryEffect, Elementwise]> {
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
}
