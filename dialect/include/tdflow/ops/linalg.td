//===- tdflow/ops/linalg.td - standard ops: linalg --------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The linalg family:
// matrix products.
// This family's hooks live in tdflow/dialect/hooks/linalg.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def TDF_MatmulOp : TDF_HookedOp<"matmul", [NoMemoryEffect]> {
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
  let has_compute_complexity_fn = 1;
}

def TDF_MatmulBiasOp : TDF_HookedOp<"matmul_bias", [NoMemoryEffect, LoweringOnly]> {
  let summary = "matrix multiplication with a last-axis bias, fused by fuse-elementwise";
  let description = [{
    Computes `out = alpha * op(a) @ op(b) + bias` for 2-D `a` and `b` and a 1-D `bias` of
    the result's column count, broadcast over the rows: the product is written into `out`
    and the bias added there in place, so the bits are those of `matmul` followed by a
    last-axis `bias_add` (OneFlow's `fused_matmul_bias`), in one launch instead of two. Made
    on the CPU by `fuse-elementwise` from a `matmul` whose only user is such a `bias_add`;
    not part of the functional API (`LoweringOnly`).

    Example:

    ```mlir
    %out = "tdflow.matmul_bias"(%a, %b, %bias) : (tensor<8x16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$a,
    TDF_Tensor:$b,
    TDF_Tensor:$bias
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
    DefaultValuedAttr<F64Attr, "1.">:$alpha
  );
  let has_compute_complexity_fn = 1;
}

def TDF_BatchMatmulOp : TDF_HookedOp<"batch_matmul", [NoMemoryEffect]> {
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
  let has_compute_complexity_fn = 1;
}
