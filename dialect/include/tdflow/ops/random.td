//===- tdflow/ops/random.td - standard ops: random --------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The random family:
// dropout and its gradient.
// This family's hooks live in tdflow/dialect/hooks/random.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Convolution, pooling, dropout
//===----------------------------------------------------------------------===//

def TDF_DropoutOp : TDF_HookedOp<"dropout", [NoMemoryEffect]> {
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
  let has_check_fn = 1;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def TDF_DropoutGradOp : TDF_FormulaOp<"dropout_grad", [NoMemoryEffect, SameOperandsShape, Elementwise]> {
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
  let has_check_fn = 1;
}
